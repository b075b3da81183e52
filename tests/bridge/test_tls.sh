#!/bin/bash
# test_tls.sh
#	cqlbridge over TLS: it uses the cql_fdw foreign server it is given
#	(--server), so a server with sslmode verify-full pointing at the test
#	bed's TLS node carries plan -> apply -> verify of the video schema
#	(migrations/video) end to end, encrypted.  TAP output; skipped when the
#	TLS nodes are not running.
#	tap-needs: tls
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CASSANDRA_RUN_DIR or
# CQL_FDW_CACHE (the test bed's tls-certs), CQLBRIDGE (build/cqlbridge).
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

RUN=${CASSANDRA_RUN_DIR:-${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}/run}
TLS_HOST=${CQL_TLS_HOST:-127.0.0.6}
DB=${BRIDGE_TLS_DB:-bridge_tls_test}
KS=${BRIDGE_TLS_KEYSPACE:-bridge_tls_test}
FS=video_cql
VIDEO=$REPO/migrations/video
if [ ! -f "$RUN/tls-certs/ca.pem" ]; then
	echo "1..0 # SKIP the TLS nodes are not running (scripts/cassandra.sh start tls-nodes)"
	exit 0
fi
BRIDGE_KEYSPACES=("$KS")
bridge_begin tls
tap_plan 9

# the PostgreSQL server process reads the root certificate
cp "$RUN/tls-certs/ca.pem" "$WORK/ca.pem"
datadir=$(psql -X -At -d postgres -c "SHOW data_directory")
owner=$(stat -c %u "$datadir" 2> /dev/null)
[ -n "$owner" ] && [ "$(id -u)" = 0 ] && chown "$owner" "$WORK/ca.pem"
chmod 755 "$WORK"
chmod 644 "$WORK/ca.pem"

fresh_db "$TLS_HOST" "sslmode 'verify-full', sslrootcert '$WORK/ca.pem'"
load_migrations "$VIDEO"
is "$(q "SELECT srvoptions::text FROM pg_foreign_server WHERE srvname = 'cqlbridge'" | grep -o "sslmode=verify-full")" \
	"sslmode=verify-full" "the cqlbridge server requires verified TLS"

plan_into video_rel "$VIDEO/workload.sql" "plan through the TLS server"
apply_and_compare "apply over TLS: schema and every table loaded" "read over TLS"

"$CQLBRIDGE" verify --samples 5 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
ok $rc "verify over TLS: every query gives the same answers"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify.out"

exit $((TAP_FAILED > 0))
