#!/bin/bash
# cqlcli_password.sh
#	cqlcli never takes a password from argv (ps shows it to every user):
#	-P is refused with a message pointing at CQL_PASSWORD, the variable
#	works against the auth node, and --require-auth refuses a server that
#	does not ask for the password.  TAP output.
#
# Environment: CQLCLI (build/cqlcli), CQL_HOST, CQL_AUTH_HOST, CQL_AUTH_PORT,
# CQL_USER, CQL_PASSWORD (as for the C integration tests).
cd "$(dirname "$0")/../.." || exit 1
CLI=${CQLCLI:-build/cqlcli}
HOST=${CQL_HOST:-127.0.0.1}
AUTH=${CQL_AUTH_HOST:-127.0.0.4}
APORT=${CQL_AUTH_PORT:-9042}
USER_=${CQL_USER:-cassandra}
PASS=${CQL_PASSWORD:-cassandra}
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

if [ ! -x "$CLI" ]; then
	echo "1..1"
	echo "not ok 1 - $CLI not built (make tools)"
	exit 1
fi
echo "1..9"

out=$("$CLI" -h "$AUTH" -p "$APORT" -u "$USER_" -P "$PASS" -e "SELECT now() FROM system.local" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 2 ] && echo 0 || echo 1) "-P is refused (exit $rc)"
ok $(grep -q CQL_PASSWORD <<< "$out" && echo 0 || echo 1) "... and the message names CQL_PASSWORD"
# (an empty or failed --help would offer nothing: it must be the usage)
help=$("$CLI" --help 2>&1)
rc=$?
[ $rc = 0 ] && grep -q "^usage: cqlcli" <<< "$help" && grep -qF -- "-u, --username USER" <<< "$help" &&
	grep -q CQL_PASSWORD <<< "$help" && ! grep -q -- "-P" <<< "$help"
ok $? "usage no longer offers -P, and names CQL_PASSWORD (--help exit $rc, $(wc -l <<< "$help") lines)"

out=$(CQL_PASSWORD=$PASS "$CLI" -h "$AUTH" -p "$APORT" -u "$USER_" --require-auth \
	-e "SELECT release_version FROM system.local" 2>&1 </dev/null)
ok $? "CQL_PASSWORD authenticates against the auth node"
ok $(grep -q "(1 rows)" <<< "$out" && echo 0 || echo 1) "... and the query runs"

out=$(CQL_PASSWORD=wrong-password "$CLI" -h "$AUTH" -p "$APORT" -u "$USER_" \
	-e "SELECT release_version FROM system.local" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && echo 0 || echo 1) "a wrong CQL_PASSWORD fails (exit $rc)"
ok $(grep -q wrong-password <<< "$out" && echo 1 || echo 0) "... without echoing the password"

out=$(CQL_PASSWORD=$PASS "$CLI" -h "$HOST" -u "$USER_" --require-auth \
	-e "SELECT release_version FROM system.local" 2>&1 </dev/null)
rc=$?
ok $([ $rc = 1 ] && echo 0 || echo 1) "--require-auth refuses the no-auth node (exit $rc)"
ok $(grep -q "did not ask for authentication" <<< "$out" && echo 0 || echo 1) "... saying why"

[ $failed = 0 ]
