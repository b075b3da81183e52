#!/usr/bin/env bash
#
# scripts/demo.sh - the main job (`make demo`): from nothing to PostgreSQL
# talking to a real Cassandra 5.0 through cql_fdw.
#
#   deps -> build + install -> Cassandra (single node, 127.0.0.1:9042) +
#   PostgreSQL 15 (port 54329; PG_VERSION=18 or 16: the PyPI builds of
#   scripts/pgtrees.sh, port 54318 / 54316) -> CREATE EXTENSION -> a keyspace and table
#   created and filled with cql_execute() from SQL, read back (and written)
#   with cqlsh and through a foreign table -> the hotel example of the
#   Cassandra documentation: its keyspaces, sample data, and the nine
#   application queries Q1-Q9 as SQL, each with its EXPLAIN and rows ->
#   cqlbridge: the normalized hotel schema filled with generated data,
#   plan (query tables derived from the nine queries), apply (created and
#   loaded through cql_fdw), verify (Q1-Q9 with EXPLAIN and rows, every
#   answer compared), sync (a relational change reaches Cassandra).
#
# Usage: demo.sh [--keep | --stop]
#   --stop  (default) stop the services this script started at the end
#   --keep  leave them running; stop later with
#           scripts/cassandra.sh stop && [PG_VERSION=N] scripts/pg.sh stop
# A CQL node already answering on 127.0.0.1:9042 (e.g. the test cluster)
# is used as it is and never stopped.
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"
# shellcheck source=lib_cqlprobe.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cqlprobe.sh"
cd "$REPO"

KEEP=0
for a in "$@"; do
	case $a in
		--keep) KEEP=1 ;;
		--stop) KEEP=0 ;;
		*) die "usage: demo.sh [--keep | --stop]" ;;
	esac
done

CASS_STARTED=0
PG_STARTED=0
finish()
{
	local rc=$?
	if [ "$KEEP" = 1 ]; then
		echo
		echo "Services left running:"
		echo "  Cassandra  127.0.0.1:9042   $VENV/bin/cqlsh 127.0.0.1"
		echo "  PostgreSQL $PG_VERSION port ${PGPORT:-?}    PG_VERSION=$PG_VERSION bash scripts/pg.sh psql"
		echo "Stop them with: bash scripts/cassandra.sh stop && PG_VERSION=$PG_VERSION bash scripts/pg.sh stop"
	else
		[ "$PG_STARTED" = 1 ] && bash scripts/pg.sh stop || true
		[ "$CASS_STARTED" = 1 ] && bash scripts/cassandra.sh stop single || true
		echo "(services stopped; run 'bash scripts/demo.sh --keep' to leave them running)"
	fi
	exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

step() { printf '\n=== %s\n' "$*"; }

step "1. dependencies"
bash scripts/deps.sh

step "2. build and install the extension"
say "PostgreSQL $PG_VERSION: $PG_CONFIG"
[ -x "$PG_CONFIG" ] || [ "$PG_VERSION" = 15 ] || bash scripts/pgtrees.sh install "$PG_VERSION"
make -s PG_CONFIG="$PG_CONFIG"
bash scripts/pg.sh install

step "3. services"
if cql_options_probe 127.0.0.1 9042; then
	say "a CQL node already answers on 127.0.0.1:9042: using it"
else
	CASS_STARTED=1
	bash scripts/cassandra.sh start single
fi
PG_STARTED=1
bash scripts/pg.sh start
eval "$(bash scripts/pg.sh env)"
PSQL=("$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -q)
# cqlsh 6.2.2 warns on stdout that it was "built against 5.0.0": drop that
cqlsh() { "$VENV/bin/cqlsh" 127.0.0.1 9042 "$@" | { grep -v '^WARNING: cqlsh was built against' || true; }; }

step "4. CREATE EXTENSION, server and user mapping"
"${PSQL[@]}" -e <<'SQL'
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER demo_cql FOREIGN DATA WRAPPER cql_fdw
    OPTIONS (host '127.0.0.1', port '9042');
CREATE USER MAPPING FOR CURRENT_USER SERVER demo_cql;
SELECT extname, extversion FROM pg_extension WHERE extname = 'cql_fdw';
SQL

step "5. CQL from SQL: cql_execute() creates a keyspace and a table and inserts"
"${PSQL[@]}" -e <<'SQL'
SELECT cql_execute('demo_cql', $$DROP KEYSPACE IF EXISTS cql_fdw_demo$$);
SELECT cql_execute('demo_cql', $$CREATE KEYSPACE cql_fdw_demo
    WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}$$);
SELECT cql_execute('demo_cql', $$CREATE TABLE cql_fdw_demo.greetings
    (id int PRIMARY KEY, msg text, at timestamp)$$);
SELECT cql_execute('demo_cql', $$INSERT INTO cql_fdw_demo.greetings (id, msg, at)
    VALUES (1, 'hello from PostgreSQL', toTimestamp(now()))$$);
SQL

step "6. the same data through cqlsh (and one row written by cqlsh)"
cqlsh -e "INSERT INTO cql_fdw_demo.greetings (id, msg, at) VALUES (2, 'hello from cqlsh', toTimestamp(now()));"
cqlsh -e "SELECT id, msg FROM cql_fdw_demo.greetings;" | tee "$CACHE/demo-select.txt"
grep -q 'hello from PostgreSQL' "$CACHE/demo-select.txt" ||
	die "the row inserted through cql_execute() is not visible in Cassandra"

step "7. the same table as a foreign table: read and write it with SQL"
"${PSQL[@]}" -e <<'SQL'
IMPORT FOREIGN SCHEMA cql_fdw_demo FROM SERVER demo_cql INTO public;
SELECT id, msg FROM greetings ORDER BY id;
-- Cassandra timestamps have millisecond precision: say so explicitly
INSERT INTO greetings (id, msg, at)
    VALUES (3, 'hello through a foreign table', date_trunc('milliseconds', now()));
EXPLAIN (VERBOSE, COSTS OFF) SELECT msg FROM greetings WHERE id = 3;
SELECT msg FROM greetings WHERE id = 3;
SQL

step "8. the hotel example: Q1-Q9 as SQL over the query-first tables"
# The regression suite sql/hotel.sql doubles as this demo: it creates the
# documented keyspaces, loads sample data, imports them and runs each query
# with its EXPLAIN (every one a single-partition read).
CQL_HOST=127.0.0.1 "$PG_BINDIR/psql" -X -a -v ON_ERROR_STOP=1 -f sql/hotel.sql

step "9. cqlbridge: the relational hotel schema moved to query tables"
# The normalized hotel schema (12 tables) with generated data, and the
# application's nine queries as SQL (migrations/hotel/workload.sql).
# cqlbridge derives the query tables from them (plan), creates and loads
# them through cql_fdw (apply), checks that every query gives the same
# answer from its query table (verify), and keeps them current (sync).
make -s PG_CONFIG="$PG_CONFIG" bridge
BRIDGE=$REPO/build/cqlbridge
GEN=$REPO/build/demo-hotel
for f in migrations/hotel/schema/00[1-5]_*.sql; do
	"${PSQL[@]}" -f "$f"
done
"${PSQL[@]}" -f migrations/hotel/generate.sql -v scale=6 -v rooms=20 -v days=60
"${PSQL[@]}" -f migrations/hotel/schema/006_workload_indexes.sql
"${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
CREATE SERVER IF NOT EXISTS cqlbridge FOREIGN DATA WRAPPER cql_fdw
    OPTIONS (host '127.0.0.1', port '9042');
CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER cqlbridge;
SQL
"$PG_BINDIR/psql" -X -q -c "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS hotel_bridge')" > /dev/null
"$BRIDGE" sync --uninstall -q "$GEN" > /dev/null 2>&1 || true
rm -rf "$GEN"

echo "--- cqlbridge plan (report: $GEN/report.md, model: $GEN/model.txt)"
"$BRIDGE" plan --schema hotel_rel --workload migrations/hotel/workload.sql \
	--keyspace hotel_bridge --foreign-schema hotel_cql --replication-factor 1 -o "$GEN"
echo
echo "--- the model of Q8: the documented key loses reservations, the derived one does not"
sed -n '/^table hotel_bridge.reservations_by_guest_last_name$/,/^$/p' "$GEN/model.txt"

echo "--- cqlbridge apply"
"$BRIDGE" apply "$GEN"

echo
echo "--- cqlbridge verify: Q1-Q9 through the foreign tables (EXPLAIN and rows of one"
echo "    sample each), then every sample compared with the relational answer"
"$BRIDGE" verify --show --samples 10 "$GEN"

echo "--- cqlbridge sync: a relational change reaches Cassandra at COMMIT"
"$BRIDGE" sync "$GEN"
"${PSQL[@]}" -e <<'SQL'
UPDATE hotel_rel.hotel SET name = name || ' (renovated)'
WHERE id = (SELECT min(hotel_id) FROM hotel_rel.hotel_poi);
SELECT poi_name, hotel_id, name FROM hotel_cql.hotels_by_poi_name
WHERE poi_name = (SELECT p.name FROM hotel_rel.point_of_interest p
                  JOIN hotel_rel.hotel_poi hp ON hp.poi_id = p.id
                  ORDER BY hp.hotel_id, p.id LIMIT 1);
SQL
"$BRIDGE" verify -q --samples 5 "$GEN"
"$BRIDGE" sync --uninstall -q "$GEN"

step "done"
version=$(cqlsh -e 'SELECT release_version FROM system.local' | awk '/^ *[0-9]+\.[0-9]+/ { print $1 }')
echo "PostgreSQL wrote through cql_fdw into Cassandra $version, cqlsh read it back,"
echo "the hotel queries Q1-Q9 ran through foreign tables as single-partition reads, and"
echo "cqlbridge moved the relational hotel schema to verified, synchronized query tables."
