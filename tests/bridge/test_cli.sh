#!/usr/bin/env bash
#
# tests/bridge/test_cli.sh - cqlbridge as DBAs expect a command-line tool.
#
#   in a database whose cql_fdw extension lives in a schema outside the
#   search_path (every call of its functions is schema-qualified):
#     -> --version; -W prompts without echo on a terminal and is a clear
#        error without one; without -W, a server that asks for a password
#        gets a prompt on a terminal and libpq's error at once without one
#     -> the plan directory as DIR or -o DIR for every command; --json -;
#        stream --drop --dry-run
#     -> exit status: 2 for usage errors and errors, 0 for success (1 for
#        differences is tested by test_bridge_e2e.sh)
#     -> plan --replication 'dc1:3,dc2:2' (NetworkTopologyStrategy), and its
#        usage errors; plan --json
#     -> apply --dry-run and sync --dry-run print and change nothing
#     -> apply --table loads one table, streamed (not in chunks), --json
#        reports it; verify --table --json; diff (functions of the
#        extension called in its schema)
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST, CQLBRIDGE,
# BRIDGE_CLI_DB / BRIDGE_CLI_KEYSPACE (default bridge_cli).  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_CLI_DB:-bridge_cli}
KS=${BRIDGE_CLI_KEYSPACE:-bridge_cli}
bridge_begin cli

tap_plan 49

# --- setup: the extension in schema cqlext, not on the search_path ----------------------
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" > /dev/null || bail "cannot create $DB"
q "CREATE SCHEMA cqlext; CREATE EXTENSION cql_fdw SCHEMA cqlext;
   CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$CQL_HOST');
   CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;" > /dev/null || bail "cql_fdw setup failed"
drop_ks() { q "SELECT cqlext.cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null; }
drop_ks || bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
trap 'drop_ks; bridge_cleanup' EXIT
load_migrations "$REPO/migrations/hotel"
is "$(q "SELECT count(*) FROM pg_proc WHERE proname = 'cql_execute' AND pg_function_is_visible(oid)")" 0 \
	"cql_execute is not visible on the search_path"

cat > "$WORK/w.sql" <<'EOF'
-- two queries of the hotel example

-- name: Q2_hotel_by_id
-- params: hotel_id text
SELECT h.id, h.name, h.phone
FROM hotel_rel.hotel h
WHERE h.id = :'hotel_id';

-- name: Q6_reservation_by_confirmation
-- params: confirm_number text
SELECT r.confirm_number, r.hotel_id, r.start_date, r.end_date, r.room_number, r.guest_id
FROM hotel_rel.reservation r
WHERE r.confirm_number = :'confirm_number';
EOF

# --- --version, -W -----------------------------------------------------------------------
want=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$REPO/cql_fdw.control")
is "$("$CQLBRIDGE" --version)" "cqlbridge (cql_fdw) $want" "--version"
is "$("$CQLBRIDGE" plan -V)" "cqlbridge (cql_fdw) $want" "plan -V"
setsid -w "$CQLBRIDGE" plan -W --schema hotel_rel --workload "$WORK/w.sql" -o "$WORK/p0" < /dev/null > /dev/null 2> "$WORK/err"
rc=$?
[ $rc -eq 2 ] && grep -q "^cqlbridge: -W: there is no terminal to prompt for the password on" "$WORK/err" &&
	grep -q "^HINT:  Give the password in PGPASSWORD or ~/.pgpass" "$WORK/err" && [ ! -e "$WORK/p0" ]
ok $? "-W without a terminal: error with a hint, exit 2 (got $rc), nothing written"
# Type the password only once the prompt is there: the prompt turns echo off, so a password
# typed before it (a fixed sleep on a busy machine) would be echoed by the terminal.
: > "$WORK/tty"
(for i in $(seq 1 300); do grep -q "Password for user " "$WORK/tty" && break; sleep 0.1; done
	printf 'se-cret\n') |
	script -qec "'$CQLBRIDGE' plan -q -W -d '$DB' --schema hotel_rel --keyspace $KS --replication-factor 1 --workload '$WORK/w.sql' -o '$WORK/p0'" /dev/null > "$WORK/tty" 2>&1
grep -q "Password for user " "$WORK/tty"
ok $? "-W on a terminal: psql's prompt"
grep -q "se-cret" "$WORK/tty"
[ $? -ne 0 ] && [ -f "$WORK/p0/model.txt" ]
ok $? "-W: the password is not echoed, and the command runs"

# --- a password prompt when the server asks for one (no -W), only on a terminal -------------
# A stand-in server on a free port that asks every client for a password and
# records what it is given (libpq's SSL and GSS requests are answered "no").
cat > "$WORK/askpass.py" <<'PYEOF'
import socket, struct, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4)
print(srv.getsockname()[1], flush=True)
srv.settimeout(600)
def recv(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise EOFError
        b += d
    return b
while True:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        break
    try:
        while True:
            n, code = struct.unpack("!ii", recv(c, 8))
            if code in (80877103, 80877104):
                c.sendall(b"N")
                continue
            recv(c, n - 8)
            break
        c.sendall(b"R" + struct.pack("!ii", 8, 3))
        t = recv(c, 1)
        n, = struct.unpack("!i", recv(c, 4))
        body = recv(c, n - 4)
        if t == b"p":
            open(sys.argv[1], "a").write(body.rstrip(b"\0").decode() + "\n")
        m = b"SFATAL\0C28P01\0Mpassword authentication failed\0\0"
        c.sendall(b"E" + struct.pack("!i", len(m) + 4) + m)
    except (EOFError, OSError):
        pass
    c.close()
PYEOF
: > "$WORK/given"
# Bash unsets ASKPASS_PID once the coprocess has ended, which under set -u
# would end this script: its PID is kept.
coproc ASKPASS { exec python3 "$WORK/askpass.py" "$WORK/given" 2> "$WORK/askpass.err"; }
askpid=$ASKPASS_PID
read -r -t 60 askport <&"${ASKPASS[0]}" || askport=
[ -n "$askport" ] || diag "the stand-in server gave no port: $(cat "$WORK/askpass.err")"
start=$(date +%s)
"$CQLBRIDGE" verify -h 127.0.0.1 -p "$askport" -U alice "$WORK/p0" < /dev/null > /dev/null 2> "$WORK/err"
rc=$?
[ $rc -eq 2 ] && grep -q "no password supplied" "$WORK/err" && [ $(($(date +%s) - start)) -lt 30 ] && [ ! -s "$WORK/given" ]
ok $? "the server asks for a password, stdin is no terminal: libpq's error at once, exit 2 (got $rc), no prompt"
: > "$WORK/tty"
(for i in $(seq 1 300); do grep -q "Password for user alice" "$WORK/tty" && break; sleep 0.1; done
	printf 'se-cret2\n') |
	script -qec "'$CQLBRIDGE' verify -h 127.0.0.1 -p '$askport' -U alice '$WORK/p0'" /dev/null > "$WORK/tty" 2>&1
grep -q "Password for user alice" "$WORK/tty" && grep -qx "se-cret2" "$WORK/given" && ! grep -q "se-cret2" "$WORK/tty" &&
	grep -q "password authentication failed" "$WORK/tty"
ok $? "the server asks for a password, on a terminal: prompted as psql does, sent, not echoed"
kill "$askpid" 2> /dev/null || diag "the stand-in server had ended: $(cat "$WORK/askpass.err")"
wait "$askpid" 2> /dev/null

# --- exit status ---------------------------------------------------------------------------
st()
{
	"$CQLBRIDGE" "$@" > /dev/null 2> "$WORK/err"
	echo $?
}
is "$(st frobnicate)" 2 "an unknown command: exit 2"
is "$(st plan --dry-run)" 2 "--dry-run is not an option of plan: exit 2"
is "$(st sync "$WORK/p0" --json x)" 2 "--json is not an option of sync: exit 2"
is "$(st plan --table x --schema hotel_rel --workload "$WORK/w.sql" -o "$WORK/p1")" 2 "--table is not an option of plan: exit 2"
is "$(st plan -d "$DB" --schema hotel_rel --workload "$WORK/missing.sql" -o "$WORK/p1")" 2 "plan of a missing workload file: exit 2"
is "$(st verify -d "$DB" "$WORK/nodir")" 2 "verify of a missing directory: exit 2"

# --- --replication -------------------------------------------------------------------------
for bad in 'dc1:3,dc2' 'dc1:0' "dc'1:3" 'dc1:3,dc1:2' ''; do
	r=$(st plan --replication "$bad" --schema hotel_rel --workload "$WORK/w.sql" -o "$WORK/p1")
	[ "$r" = 2 ] && grep -q -- "--replication" "$WORK/err"
	ok $? "--replication '$bad': usage error naming the option (exit $r)"
done
is "$(st plan --replication dc1:3 --replication-factor 2 --schema hotel_rel --workload "$WORK/w.sql" -o "$WORK/p1")" 2 \
	"--replication with --replication-factor: exit 2"
"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --keyspace "$KS" --replication 'dc1:3, dc-2.b:2' \
	--workload "$WORK/w.sql" -o "$WORK/nts" 2> "$WORK/err"
ok $? "plan --replication 'dc1:3, dc-2.b:2' succeeds with the extension outside the search_path"
grep -qxF "CREATE KEYSPACE IF NOT EXISTS $KS WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc-2.b': 2};" "$WORK/nts/001_schema.cql"
ok $? "001 creates the keyspace with NetworkTopologyStrategy"
grep -q "^# replication factor 5," "$WORK/nts/model.txt"
ok $? "the size estimate counts all 5 copies"

# --- plan --json -----------------------------------------------------------------------------
rm -rf "$WORK/p0"
"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --keyspace "$KS" --replication-factor 1 \
	--workload "$WORK/w.sql" -o "$WORK/p0" --json "$WORK/plan.json" 2> "$WORK/err"
ok $? "plan --json"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(t["table"]+"="+t["key"]+"/"+str(t["rows"]) for t in d["tables"]))' "$WORK/plan.json" 2>&1)
want=$(awk '/^table / {sub(/.*\./, "", $2); t = $2} /^  key: / {sub(/^  key: /, ""); k = $0} /^  rows / {r = $2; sub(/,/, "", r); printf "%s%s=%s/%s", sep, t, k, r; sep = " "}' "$WORK/p0/model.txt")
is "$got" "$want" "plan.json: every table with its key and rows as in model.txt"

# --- dry runs change nothing -------------------------------------------------------------------
"$CQLBRIDGE" apply --dry-run "$WORK/p0" > "$WORK/dry.out" 2> "$WORK/err"
ok $? "apply --dry-run"
grep -qxF "  CREATE KEYSPACE IF NOT EXISTS $KS WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};" "$WORK/dry.out" &&
	grep -q "^001_schema.cql: would run these 3 CQL statements on server \"cqlbridge\"" "$WORK/dry.out" &&
	grep -q "^  $KS.hotels: 3 rows at plan time, streamed; nothing recorded$" "$WORK/dry.out"
ok $? "apply --dry-run prints the CQL statements and how each table would load"
[ "$(q "SELECT to_regnamespace('${KS}_cql') IS NULL AND to_regclass('cqlbridge.apply_progress') IS NULL")" = t ] &&
	[ "$(q "SELECT count(*) FROM cqlext.cql_query('cqlbridge', 'SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ''$KS''')")" = 0 ]
ok $? "after apply --dry-run: no keyspace, no foreign schema, no progress table"

# --- apply --table, --json; streamed with the extension outside the search_path -----------------
"$CQLBRIDGE" apply "$WORK/p0" --table hotels --json "$WORK/apply.json" > /dev/null 2> "$WORK/apply.err"
ok $? "apply --table hotels"
grep -q "streamed in 1 batch" "$WORK/apply.err" && ! grep -q "chunks" "$WORK/apply.err"
ok $? "the table is streamed (cql_bridge_cursor_rows found in its schema)"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%d:%s" % (t["table"], t["rows"], t["mode"]) for t in d["tables"]))' "$WORK/apply.json" 2>&1)
is "$got" "$KS.hotels:3:streamed" "apply.json: one table, its rows and mode"
is "$(q "SELECT string_agg(target, ',') FROM cqlbridge.apply_progress")" "$KS.hotels" "only hotels was loaded"
is "$(st apply "$WORK/p0" --table nosuch)" 2 "apply --table naming no table: exit 2"
grep -q "names no table of .*003_load.sql" "$WORK/err" && grep -q "^HINT:  The tables of .*: $KS.hotels, $KS.reservations." "$WORK/err"
ok $? "... and the message lists the tables"

"$CQLBRIDGE" apply -q "$WORK/p0" > /dev/null 2>&1
ok $? "apply of the rest"
"$CQLBRIDGE" apply --dry-run "$WORK/p0" > "$WORK/dry2.out" 2>&1
grep -q "^  $KS.reservations: [0-9]* rows at plan time, streamed; recorded: [0-9]* rows, finished (skipped)$" "$WORK/dry2.out"
ok $? "apply --dry-run after the load shows the recorded progress"

# --- verify --table --json ---------------------------------------------------------------------
"$CQLBRIDGE" verify "$WORK/p0" --table reservations --json "$WORK/verify.json" > "$WORK/verify.out" 2>&1
ok $? "verify --table reservations: exit 0"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%s" % (q["query"], q["result"]) for q in d["queries"]), d["passed"])' "$WORK/verify.json" 2>&1)
is "$got" "Q6_reservation_by_confirmation:pass True" "verify.json: only the table's query, passed"

# --- the plan directory as -o DIR or DIR, for every command; --json - ---------------------------
"$CQLBRIDGE" verify -o "$WORK/p0" --table reservations --json - > "$WORK/verify2.json" 2> "$WORK/verify2.err"
rc=$?
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s:%s" % (q["query"], q["result"]) for q in d["queries"]), d["passed"])' "$WORK/verify2.json" 2>&1)
is "$rc:$got" "0:Q6_reservation_by_confirmation:pass True" "verify -o DIR --json -: the JSON report alone on stdout"
grep -q "give the same answers" "$WORK/verify2.err"
ok $? "... and the text report on stderr"
is "$(st verify -o "$WORK/p0" "$WORK/nts")" 2 "verify with two different plan directories: exit 2"
"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --keyspace "$KS" --replication-factor 1 \
	--workload "$WORK/w.sql" "$WORK/p3" 2> "$WORK/err" && [ -f "$WORK/p3/model.txt" ]
ok $? "plan DIR (positional, as the other commands take it)"

# --- stream --drop --dry-run ---------------------------------------------------------------------
"$CQLBRIDGE" stream "$WORK/p0" --drop --dry-run > "$WORK/drop.out" 2> "$WORK/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^stream --drop --dry-run: nothing is changed" "$WORK/drop.out" &&
	grep -q "^  (no replication slot cqlbridge_" "$WORK/drop.out"
ok $? "stream --drop --dry-run of a plan never streamed: lists nothing to drop, exit 0 (got $rc)"
is "$(st stream "$WORK/p0" --dry-run)" 2 "stream --dry-run without --replan or --drop: exit 2"

# --- diff, with the extension outside the search_path (its functions schema-qualified) ------
"$CQLBRIDGE" diff -q "$WORK/p0" > "$WORK/diff.out" 2>&1
ok $? "diff of the whole plan with cql_fdw in schema cqlext: no difference, exit 0" || diag "$(cat "$WORK/diff.out")"

# --- sync --dry-run ----------------------------------------------------------------------------
"$CQLBRIDGE" sync --dry-run "$WORK/p0" > "$WORK/sync.out" 2>&1
ok $? "sync --dry-run"
grep -q "^would install 005_sync.sql in one transaction: triggers on 2 relations (installed now on 0)" "$WORK/sync.out" &&
	grep -qx "  hotel_rel.hotel" "$WORK/sync.out" && grep -qx "  hotel_rel.reservation" "$WORK/sync.out"
ok $? "sync --dry-run names the relations that would get triggers"
is "$(q "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'cqlbridge_sync%'")" 0 "sync --dry-run installed no trigger"
[ ! -e "$WORK/p0/005_sync.sql.tmp" ] && "$CQLBRIDGE" sync --uninstall --dry-run "$WORK/p0" 2>&1 | grep -q "would remove the sync triggers"
ok $? "sync --uninstall --dry-run"

[ "$TAP_FAILED" -eq 0 ]
