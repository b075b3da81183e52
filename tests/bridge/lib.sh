# shellcheck shell=bash
# tests/bridge/lib.sh - TAP and database helpers of the cqlbridge tests.
#
# Source it from a test script; it expects $DB (database name) to be set
# before the psql helpers are used.  PGHOST/PGPORT/PGUSER come from the
# caller's environment.  A suite sets DB (and what bridge_cleanup drops:
# BRIDGE_KEYSPACES, BRIDGE_ROLES; BRIDGE_KEEP to keep everything), then
# calls bridge_begin NAME and prints its plan (tap_plan N) before its first
# check: every suite knows its number of checks up front, so a suite that
# stops early or skips a loop's checks fails the plan.

TAP_N=0
TAP_FAILED=0
LIB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CQLBRIDGE=${CQLBRIDGE:-$LIB_REPO/build/cqlbridge}
CQL_HOST=${CQL_HOST:-127.0.0.1}
BRIDGE_KEYSPACES=()
BRIDGE_ROLES=()
BRIDGE_KEEP=${BRIDGE_KEEP:-}

# ok CONDITION-EXIT-STATUS DESCRIPTION: one test; returns non-zero when
# it failed, so that "ok $? ... || diag ..." shows why only then
ok()
{
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2"
	else
		echo "not ok $TAP_N - $2"
		TAP_FAILED=$((TAP_FAILED + 1))
		return 1
	fi
}

# is GOT EXPECTED DESCRIPTION: as ok
is()
{
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
		return 1
	fi
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# setup_step STATUS WHAT: a setup step (a row changed before the checks of
# what that did, ...), not a test: "# setup ok - WHAT" or "# setup not ok -
# WHAT", which scripts/lib_tap.sh counts apart from the checks and the plan;
# a failed one is a failure (of the exit status too).  Returns STATUS.
setup_step()
{
	if [ "$1" -eq 0 ]; then
		echo "# setup ok - $2"
	else
		echo "# setup not ok - $2"
		TAP_FAILED=$((TAP_FAILED + 1))
		return 1
	fi
}

# skip_check DESCRIPTION REASON: one test that does not run here, counted
# as skipped with its reason ("ok N - DESCRIPTION # SKIP REASON"), so that
# the plan stays the same and the summary says what did not run and why
skip_check()
{
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP ${2:-no reason given}"
}

# proc_state PID: the state of process PID (field 3 of /proc/PID/stat: R,
# S, D, T for stopped ...), empty when there is no such process
proc_state()
{
	[ -n "$1" ] && sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2> /dev/null
}

# q SQL: one value (unaligned, tuples only); fails loudly on SQL errors
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

# qf FILE [psql args]: run a file
qf() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# meta FILE KEY: "KEY" values of the blocks of a block-format file, one per block
meta() { sed -n "s/^-- $2: *//p" "$1"; }

bail() { echo "Bail out! $*"; exit 1; }

# The node's lock of scripts/test.sh's lanes, for a test whose header says
# "tap-exclusive: windows": it holds the lock shared, node_exclusive makes
# it exclusive before the test pauses or stops the node (waiting until the
# other lane's test in progress ends), node_shared gives that up again.
# Without CQL_NODE_LOCK_FD (one lane, or run by hand) they do nothing.
# A daemon started meanwhile (a Cassandra node, a PostgreSQL server) must
# not inherit the descriptor, or the lock would outlive the test: start
# it through node_unlocked CMD...
# node_exclusive says, as a TAP comment, how long it waited when that was a
# second or more: that time counts in the test's own.
node_exclusive()
{
	local t0 waited
	[ -z "${CQL_NODE_LOCK_FD:-}" ] && return 0
	t0=$(date +%s)
	flock -x "$CQL_NODE_LOCK_FD"
	waited=$(($(date +%s) - t0))
	[ "$waited" -lt 1 ] || echo "# waited $waited s for the other lane's test to leave the node"
}
node_shared() { [ -z "${CQL_NODE_LOCK_FD:-}" ] || flock -s "$CQL_NODE_LOCK_FD"; }
node_unlocked()
{
	if [ -n "${CQL_NODE_LOCK_FD:-}" ]; then
		"$@" {CQL_NODE_LOCK_FD}>&-
	else
		"$@"
	fi
}

# tap_plan N: the TAP plan, printed before the first check, so that a suite
# that runs fewer or more checks than it planned fails
tap_plan() { echo "1..$1"; }

# bridge_cleanup: drop what the suite made (its keyspaces, database and
# roles, its work directory) unless BRIDGE_KEEP is set; run at exit
bridge_cleanup()
{
	local k
	[ -n "$BRIDGE_KEEP" ] && return 0
	for k in "${BRIDGE_KEYSPACES[@]}"; do
		psql -X -q -d "$DB" -c "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $k')" > /dev/null 2>&1
	done
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
	for k in "${BRIDGE_ROLES[@]}"; do
		psql -X -q -d postgres -c "DROP ROLE IF EXISTS $k" > /dev/null 2>&1
	done
	rm -rf "$WORK"
}

# bridge_begin NAME: the start every suite shares: WORK (a new temporary
# directory bridge_NAME.XXXXXX), GEN=$WORK/gen, PGDATABASE=$DB and no
# PGOPTIONS, bridge_cleanup at exit, and a built cqlbridge
bridge_begin()
{
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/bridge_$1.XXXXXX") || bail "mktemp failed"
	GEN=$WORK/gen
	export PGDATABASE=$DB
	unset PGOPTIONS
	trap bridge_cleanup EXIT
	[ -x "$CQLBRIDGE" ] || bail "$CQLBRIDGE not built (make bridge)"
}

# stream_suite: after bridge_begin, what a suite that runs "cqlbridge
# stream" while pgbench writes shares: wal_level must be logical, PGBENCH
# is the pgbench to run, and at exit the stream ($SPID) and pgbench ($BPID)
# are stopped and the database's inactive slots dropped before
# bridge_cleanup
stream_suite()
{
	SPID=
	BPID=
	trap stream_suite_cleanup EXIT
	[ "$(psql -X -A -t -d postgres -c 'SHOW wal_level')" = logical ] ||
		bail "wal_level is not logical on this server (scripts/pg.sh sets it)"
	PGBENCH=$(command -v pgbench || echo "$(pg_config --bindir 2> /dev/null)/pgbench")
	[ -x "$PGBENCH" ] || bail "pgbench not found"
}
stream_suite_cleanup()
{
	[ -n "$BPID" ] && kill -INT "$BPID" 2> /dev/null
	[ -n "$SPID" ] && kill -9 "$SPID" 2> /dev/null
	sleep 0.5
	psql -X -q -d "$DB" -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = '$DB' AND NOT active" > /dev/null 2>&1
	bridge_cleanup
}

# same_files GOLDEN DIR SHOWN FILE...: one test per file: DIR/FILE has the
# bytes of GOLDEN/FILE (SHOWN: how the golden directory is named)
same_files()
{
	local golden=$1 dir=$2 shown=$3 f
	shift 3
	for f in "$@"; do
		if diff -u "$golden/$f" "$dir/$f" > "$WORK/diff" 2>&1; then
			ok 0 "$f equals $shown/$f"
		else
			ok 1 "$f equals $shown/$f"
			diag "$(head -40 "$WORK/diff")"
		fi
	done
}

# fresh_db HOST [SERVER_OPTIONS]: drop and create $DB with cql_fdw, the
# server "cqlbridge" pointing at HOST (with more options, e.g. TLS ones)
# and a user mapping for the current user
fresh_db()
{
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
	psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" > /dev/null ||
		bail "cannot create database $DB"
	q "CREATE EXTENSION cql_fdw;
	   CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$1'${2:+, $2});
	   CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;" > /dev/null ||
		bail "cql_fdw setup failed"
}

# load_migrations DIR: the numbered schema files of DIR/schema, then
# DIR/generate.sql with its defaults
load_migrations()
{
	local f
	for f in "$1"/schema/*.sql; do
		qf -f "$f" > /dev/null || bail "schema file $f failed"
	done
	qf -f "$1/generate.sql" > /dev/null || bail "$1/generate.sql failed"
}

# load_targets GEN: FTS, VIEWS, COLS (arrays) from 003_load.sql's metadata:
# every target's foreign table, source view and column list
load_targets()
{
	mapfile -t FTS < <(meta "$1/003_load.sql" foreign_table)
	mapfile -t VIEWS < <(meta "$1/003_load.sql" source_view)
	mapfile -t COLS < <(meta "$1/003_load.sql" columns)
	mapfile -t TABLES < <(meta "$1/003_load.sql" table)
}

# DRIVER_PY: the Python with the DataStax driver (scripts/deps.sh's venv),
# else the system's
DRIVER_PY=${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}/venv/bin/python
[ -x "$DRIVER_PY" ] || DRIVER_PY=python3

# read_back_all LABEL: one test per target (TABLES, VIEWS, COLS of
# load_targets): the Cassandra table, read by the DataStax Python driver
# (tests/bridge/read_back.py, not through cql_fdw), equals its source view.
# An empty list is a failure.
read_back_all()
{
	local i out rc
	if [ "${#TABLES[@]}" -eq 0 ]; then
		ok 1 "$1: the target tables to read back (none listed)"
		return 1
	fi
	for i in "${!TABLES[@]}"; do
		out=$("$DRIVER_PY" "$HERE/read_back.py" "$DB" "${TABLES[$i]}" "${VIEWS[$i]}" "${COLS[$i]}" 2>&1)
		rc=$?
		ok $rc "$1: ${TABLES[$i]} read by the Python driver equals its source view"
		[ $rc -eq 0 ] || sed 's/^/# /' <<< "$out" | head -20
	done
}

# plan_into SCHEMA WORKLOAD DESCRIPTION: one test: cqlbridge plan of
# WORKLOAD over SCHEMA into $GEN, for the suite's keyspace $KS, foreign
# schema $FS, server cqlbridge and replication factor 1; bails on failure
plan_into()
{
	"$CQLBRIDGE" plan -q --schema "$1" --workload "$2" \
		--keyspace "$KS" --foreign-schema "$FS" --server cqlbridge \
		--replication-factor 1 -o "$GEN" > "$WORK/plan2.out" 2>&1
	ok $? "$3" || { sed 's/^/# /' "$WORK/plan2.out"; bail "plan failed"; }
}

# apply_and_compare DESCRIPTION LABEL: one test: cqlbridge apply of $GEN
# (bails on failure); then the targets of its 003 (load_targets) and
# compare_all LABEL
apply_and_compare()
{
	"$CQLBRIDGE" apply -q "$GEN" > "$WORK/apply.out" 2>&1
	local rc=$?
	ok $rc "$1"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$WORK/apply.out"; bail "apply failed"; }
	load_targets "$GEN"
	compare_all "$2"
}

# fingerprint RELATION COLUMNS: count and md5 of the sorted rows as text
# (order-independent), for comparing a foreign table with its view.  On an
# SQL error (or no answer) it prints the error and returns 1: callers check
# the status, since two failing queries would otherwise compare equal.
fingerprint()
{
	local rel=$1 cols=$2 list out
	list=$(sed 's/\([A-Za-z_][A-Za-z0-9_]*\)/x."\1"/g' <<< "$cols")
	if ! out=$(q "SELECT count(*) || ' ' || coalesce(md5(string_agg(r, E'\n' ORDER BY r COLLATE \"C\")), '-')
	   FROM (SELECT ROW($list)::text AS r FROM $rel x) s" 2>&1) || [ -z "$out" ]; then
		echo "fingerprint of $rel failed: ${out:-no answer}"
		return 1
	fi
	echo "$out"
}

# compare_all LABEL: one test per target (FTS, VIEWS, COLS of
# load_targets): its foreign table equals its view.  An empty list is a
# failure (nothing compared is not a pass), and so is a fingerprint query
# that fails on either side.
compare_all()
{
	local i a b ra rb
	if [ "${#FTS[@]}" -eq 0 ]; then
		ok 1 "$1: the target tables to compare (none listed)"
		return 1
	fi
	for i in "${!FTS[@]}"; do
		a=$(fingerprint "${FTS[$i]}" "${COLS[$i]}")
		ra=$?
		b=$(fingerprint "${VIEWS[$i]}" "${COLS[$i]}")
		rb=$?
		if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
			ok 1 "$1: ${FTS[$i]} equals its source"
			diag "$a" "$b"
		elif ! is "$a" "$b" "$1: ${FTS[$i]} equals its source"; then
			diff_rows "${FTS[$i]}" "${VIEWS[$i]}" "${COLS[$i]}"
		fi
	done
}

# diff_rows TABLE VIEW COLS: diagnostics, up to 5 rows only in the target
# table and up to 5 only in its source view (what a failed comparison
# needs to be understood)
diff_rows()
{
	local list
	list=$(sed 's/\([A-Za-z_][A-Za-z0-9_]*\)/x."\1"/g' <<< "$3")
	diag "only in $1:" "$(q "SELECT ROW($list)::text FROM (SELECT $3 FROM $1 EXCEPT SELECT $3 FROM $2) x LIMIT 5" 2>&1)"
	diag "only in $2:" "$(q "SELECT ROW($list)::text FROM (SELECT $3 FROM $2 EXCEPT SELECT $3 FROM $1) x LIMIT 5" 2>&1)"
}

# all_tables_equal: every target table (FTS) has its source view's
# fingerprint (compare_all without assertions, for waiting on convergence)
all_tables_equal()
{
	local i
	for i in "${!FTS[@]}"; do
		[ "$(fingerprint "${FTS[$i]}" "${COLS[$i]}")" = "$(fingerprint "${VIEWS[$i]}" "${COLS[$i]}")" ] || return 1
	done
}

# table_fingerprints: the fingerprints of every foreign table (FTS) on
# one line; returns 1 when one of them failed
table_fingerprints()
{
	local i out rc=0
	for i in "${!FTS[@]}"; do
		out=$(fingerprint "${FTS[$i]}" "${COLS[$i]}") || rc=1
		printf '%s;' "$out"
	done
	return $rc
}

# wait_stream_phase KEYSPACE PHASE: wait (up to 60 s) until the status row
# of the stream of the plan of KEYSPACE says PHASE (loading, streaming)
wait_stream_phase()
{
	local i
	for i in $(seq 1 300); do
		[ "$(q "SELECT phase FROM cqlbridge_$1.stream_state" 2> /dev/null)" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

# stream_caught_up KEYSPACE: wait (up to 60 s) until the stream of the plan
# of KEYSPACE confirmed every transaction committed so far.  The position
# to reach is the WAL *insert* position: with synchronous_commit = off
# (scripts/pg.sh) a COMMIT returns before its WAL is written, and
# pg_current_wal_lsn() (the write position) can still be before it: a slot
# confirmed that far has not seen the transaction.  The status row must
# say streaming: during the initial load the slot's confirmed position is
# its consistent point, which says nothing about what the load wrote yet.
stream_caught_up()
{
	local lsn i
	lsn=$(q "SELECT pg_current_wal_insert_lsn()")
	for i in $(seq 1 300); do
		[ "$(q "SELECT s.confirmed_flush_lsn >= '$lsn' AND (SELECT phase = 'streaming' FROM cqlbridge_$1.stream_state)
		        FROM pg_replication_slots s WHERE s.slot_name = 'cqlbridge_$1'" 2> /dev/null)" = t ] && return 0
		sleep 0.2
	done
	return 1
}

# no_stream_objects DESCRIPTION: one test: the database has no publication
# and no replication slot (what a refused "cqlbridge stream" must leave)
no_stream_objects()
{
	is "$(q "SELECT count(*) FROM pg_publication") $(q "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")" "0 0" "$1"
}

# refused RC OUT DESCRIPTION STRING...: one test: a command ended with exit
# status 2 (RC, an error) and its output (file OUT) holds every STRING
refused()
{
	local rc=$1 out=$2 desc=$3 s
	shift 3
	for s in "$@"; do
		grep -qF -- "$s" "$out" || rc=missing
	done
	[ "$rc" = 2 ]
	ok $? "$desc" || diag "$(cat "$out")"
}

# stream_alive: the stream ($SPID) runs (not exited, not a zombie)
stream_alive()
{
	[ -n "$SPID" ] && kill -0 "$SPID" 2> /dev/null &&
		[ "$(sed 's/^.*) //' "/proc/$SPID/stat" 2> /dev/null | cut -d' ' -f1)" != Z ]
}

# stream_exit [SECONDS]: wait up to SECONDS (default 30) for the stream
# ($SPID) to exit by itself, then kill -9 it; RC its exit status, SPID
# cleared
stream_exit()
{
	local i
	for i in $(seq 1 $((${1:-30} * 5))); do
		stream_alive || break
		sleep 0.2
	done
	kill -9 "$SPID" 2> /dev/null
	wait "$SPID"
	RC=$?
	SPID=
}
