#!/bin/bash
# cqlcli_tls.sh
#	cqlcli speaks TLS with libpq's settings (--sslmode, --sslrootcert,
#	--sslcert, --sslkey, or its own CQL_SSLMODE & co.) against the test
#	bed's TLS nodes: verify-full works, mutual TLS works with a client
#	certificate and fails clearly without one, a wrong CA and a plaintext
#	node fail with the reason, a bad sslmode is a usage error, and libpq's
#	PGSSL* variables (a PostgreSQL user's) are not read.  TAP output; skipped when
#	the TLS nodes are not running.
#	tap-needs: tls
#
# Environment: CQLCLI (build/cqlcli), CASSANDRA_RUN_DIR or CQL_FDW_CACHE,
# CQL_HOST (a plaintext node).
cd "$(dirname "$0")/../.." || exit 1
CLI=${CQLCLI:-build/cqlcli}
RUN=${CASSANDRA_RUN_DIR:-${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}/run}
C=$RUN/tls-certs
HOST=${CQL_HOST:-127.0.0.1}
Q="SELECT release_version FROM system.local"
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

if [ ! -f "$C/ca.pem" ]; then
	echo "1..0 # SKIP the TLS nodes are not running (scripts/cassandra.sh start tls-nodes)"
	exit 0
fi
if [ ! -x "$CLI" ]; then
	echo "not ok 1 - $CLI not built (make tools)"
	echo "1..1"
	exit 1
fi

out=$("$CLI" -h 127.0.0.6 --sslmode verify-full --sslrootcert "$C/ca.pem" -e "$Q" 2>&1 </dev/null)
ok $? "verify-full against the tls node"
ok $(grep -q "(1 rows)" <<< "$out" && echo 0 || echo 1) "... and the query runs"

out=$(CQL_SSLMODE=verify-full CQL_SSLROOTCERT=$C/ca.pem CQL_SSLCERT=$C/client.pem CQL_SSLKEY=$C/client.key \
	"$CLI" -h 127.0.0.7 -e "$Q" 2>&1 </dev/null)
ok $? "mutual TLS from the CQL_SSL* environment against the mtls node"

out=$(PGSSLMODE=require PGSSLROOTCERT=$C/ca.pem "$CLI" -h "$HOST" -e "$Q" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 0 ] && grep -q "(1 rows)" <<< "$out" && echo 0 || echo 1) \
	"libpq's PGSSLMODE=require is not read: the plaintext node answers (exit $rc)"

out=$("$CLI" -h 127.0.0.7 --sslmode verify-full --sslrootcert "$C/ca.pem" -e "$Q" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && grep -q "certificate required" <<< "$out" && echo 0 || echo 1) \
	"no client certificate for the mtls node: exit 1, 'certificate required'"

# The node's alert races our first request: the send may meet a reset
# while the alert is still unread.  Every attempt must report the alert.
told=0
for i in $(seq 1 20); do
	out=$("$CLI" -h 127.0.0.7 --sslmode verify-full --sslrootcert "$C/ca.pem" -e "$Q" 2>&1 </dev/null)
	grep -q "certificate required" <<< "$out" && told=$((told + 1))
done
ok $([ $told = 20 ] && echo 0 || echo 1) \
	"20 connects without a client certificate: each says 'certificate required' ($told)"

out=$("$CLI" -h 127.0.0.6 --sslmode verify-ca --sslrootcert "$C/client.pem" -e "$Q" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && grep -q "certificate verify failed" <<< "$out" && echo 0 || echo 1) \
	"a root certificate that did not sign the node's: 'certificate verify failed'"

out=$("$CLI" -h "$HOST" --sslmode require -e "$Q" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && grep -q "does not speak TLS" <<< "$out" && echo 0 || echo 1) \
	"TLS to a plaintext node: 'does not speak TLS'"

out=$("$CLI" -h 127.0.0.6 --sslmode verify-full -e "$Q" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && grep -q "sslrootcert" <<< "$out" && echo 0 || echo 1) \
	"verify-full without a root certificate names sslrootcert"

out=$("$CLI" -h 127.0.0.6 --sslmode prefer -e "$Q" 2>&1 </dev/null)
ok $([ $? = 2 ] && echo 0 || echo 1) "an unknown sslmode is a usage error (exit 2)"

echo "1..$n"
[ "$failed" = 0 ]
