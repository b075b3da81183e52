#!/usr/bin/env bash
#
# tests/bridge/test_stream_holes.sh - the stream's correctness holes that a
# quiet, young database does not reach (issue 39), over tests/bridge/holes:
#   1. a relation without a primary key read in a select-list subquery:
#      the stream refuses to start, naming it (its changes would never be
#      captured)
#   2. an UPDATE of a key column of a row whose other key column is an
#      unchanged TOASTed value: the row moves to its new key in Cassandra
#   3. REPLICA IDENTITY set back from FULL to DEFAULT while the stream runs
#      (phone's DELETEs need the old acct_id): the stream stops at the next
#      change, naming the relation and the ALTER, with nothing of it
#      written; the ALTER run and the stream started again, the change
#      (decoded without its old values for good) is applied by recomputing
#      the table, and every table equals its source
#   4. the slot invalidated while the stream runs (max_slot_wal_keep_size,
#      the stream stopped by SIGSTOP meanwhile): it stops with the reason
#      instead of retrying forever
#   5. the keyspace dropped under the stream: it stops, naming the table,
#      instead of retrying forever
#   6. a database past 2^32 transactions (pg_resetwal -e on a server of its
#      own): a transaction decoded before it is visible (its COMMIT waits
#      for a synchronous standby that does not exist), while an older one
#      is open, is not taken as visible; once it is, its change is in
#      Cassandra
# Each stop is exit status 2 with the message; every table is compared
# with its source view after each step the stream survives.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser, wal_level=logical),
# CQL_HOST, CQLBRIDGE.  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=bridge_stream_holes
KS=bridge_stream_holes
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS" bridge_holes_np)
bridge_begin stream_holes

OLD_PORT=${CQL_OLD_PG_PORT:-54341}
OLD_DIR=${TMPDIR:-/tmp}/cql_fdw_pg_old_$$
OLD_STARTED=

tap_plan 32

stream_suite
# also stop the old server of step 6 at exit, and undo step 4's setting
holes_cleanup()
{
	[ -n "$SPID" ] && kill -CONT "$SPID" 2> /dev/null
	psql -X -q -d postgres -c "ALTER SYSTEM RESET max_slot_wal_keep_size" -c "SELECT pg_reload_conf()" > /dev/null 2>&1
	if [ -n "$OLD_STARTED" ]; then
		CQL_PG_DIR=$OLD_DIR CQL_PG_PORT=$OLD_PORT bash "$LIB_REPO/scripts/pg.sh" stop > /dev/null 2>&1
		rm -rf "$OLD_DIR"
	fi
	stream_suite_cleanup
}
trap holes_cleanup EXIT

fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
qf -f "$HERE/holes/schema.sql" > /dev/null || bail "schema failed"

# stream_start LOG: the stream of $GEN in the background (SPID)
stream_start()
{
	"$CQLBRIDGE" stream --flush-interval 100 "$GEN" >> "$1" 2>&1 &
	SPID=$!
}
# --- 1. a relation without a primary key in a subquery ------------------------
KS_SAVED=$KS FS_SAVED=$FS GEN_SAVED=$GEN
KS=bridge_holes_np
FS=${KS}_cql
GEN=$WORK/gen_np
plan_into holes "$HERE/holes/workload_nopk.sql" "plan of a query reading notes, which have no primary key"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply_np.out" 2>&1 || bail "apply of the no-key plan failed: $(cat "$WORK/apply_np.out")"
timeout 60 "$CQLBRIDGE" stream "$GEN" > "$WORK/stream_np.out" 2>&1
refused $? "$WORK/stream_np.out" "the stream refuses a source relation without a primary key, naming it" \
	"source relation holes.note, which a query table reads, has no primary key" "ALTER TABLE holes.note ADD PRIMARY KEY"
is "$(q "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")" 0 \
	"the refused stream left no replication slot"
KS=$KS_SAVED FS=$FS_SAVED GEN=$GEN_SAVED

# --- the stream of the two queries ------------------------------------------------
plan_into holes "$HERE/holes/workload.sql" "plan of the holes workload (a TOASTed key, a collection)"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply.out" 2>&1
ok $? "apply --no-load" || diag "$(cat "$WORK/apply.out")"
load_targets "$GEN"
[ "${#FTS[@]}" -eq 2 ] || bail "the plan has ${#FTS[@]} target tables, the test counts 2"
T_DOCS=$FS.docs_by_doc_key
stream_start "$WORK/stream.log"
wait_stream_phase "$KS" streaming && stream_caught_up "$KS"
ok $? "the stream loaded, is streaming and caught up" || diag "$(tail -5 "$WORK/stream.log")"
compare_all "initial load"

# --- 2. a key column changed beside an unchanged TOASTed one -------------------
is "$(q "SELECT count(*) FILTER (WHERE pg_column_size(doc_key) < 2500) || ' ' || (SELECT pg_relation_size(reltoastrelid) > 0 FROM pg_class WHERE oid = 'holes.doc'::regclass) FROM holes.doc")" "0 true" \
	"the documents' keys are stored out of line (TOASTed), uncompressed"
q "UPDATE holes.doc SET rev = rev + 100 WHERE doc_key LIKE 'k3-%' AND rev = 2" > /dev/null
stream_caught_up "$KS"
ok $? "caught up after the UPDATE of rev" || diag "$(tail -5 "$WORK/stream.log")"
is "$(q "SELECT string_agg(rev::text, ',' ORDER BY rev) FROM $T_DOCS WHERE doc_key = 'k3-' || repeat('x', 2500)")" "1,3,102" \
	"the revision moved to its new key in Cassandra (rev 2 became 102)"
compare_all "after the key UPDATE beside a TOASTed key"

# --- 3. replica identity set back to DEFAULT while streaming --------------------
# phone 5 is account 6's
before=$(q "SELECT numbers::text FROM $FS.accts WHERE acct_id = 6")
q "ALTER TABLE holes.phone REPLICA IDENTITY DEFAULT" > /dev/null
q "DELETE FROM holes.phone WHERE phone_id = 5" > /dev/null
stream_exit 40
[ "$RC" -eq 2 ] &&
	grep -q "source relation holes.phone has REPLICA IDENTITY DEFAULT" "$WORK/stream.log" &&
	grep -q "ALTER TABLE holes.phone REPLICA IDENTITY FULL" "$WORK/stream.log"
ok $? "REPLICA IDENTITY DEFAULT while streaming stops the stream, naming the relation and the ALTER (status $RC)" ||
	diag "$(tail -3 "$WORK/stream.log")"
is "$(q "SELECT numbers::text FROM $FS.accts WHERE acct_id = 6")" "$before" \
	"nothing of the DELETE decoded without its old values was written"
q "ALTER TABLE holes.phone REPLICA IDENTITY FULL" > /dev/null
stream_start "$WORK/stream.log"
stream_caught_up "$KS"
ok $? "the ALTER run, the stream started again and caught up" || diag "$(tail -5 "$WORK/stream.log")"
grep -q "changes of holes.phone made while its replica identity was DEFAULT lack old values" "$WORK/stream.log"
ok $? "it says the changes decoded without old values recompute the tables in full"
compare_all "after the DELETE decoded under REPLICA IDENTITY DEFAULT"

# --- 4. the slot invalidated while the stream runs ----------------------------
kill -STOP "$SPID"
psql -X -q -d postgres -c "ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'" -c "SELECT pg_reload_conf()" > /dev/null ||
	bail "cannot set max_slot_wal_keep_size"
for i in 1 2 3; do
	q "UPDATE holes.acct SET name = name || '.' WHERE acct_id = $i; SELECT pg_switch_wal()" > /dev/null
done
q "CHECKPOINT" > /dev/null
is "$(q "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'cqlbridge_$KS'")" lost \
	"the slot lost its WAL (max_slot_wal_keep_size) while the stream was stopped"
kill -CONT "$SPID"
stream_exit 40
[ "$RC" -eq 2 ] && grep -q "the replication slot cqlbridge_$KS lost WAL it needed" "$WORK/stream.log"
ok $? "the stream stops with the reason instead of retrying (status $RC)" || diag "$(tail -3 "$WORK/stream.log")"
psql -X -q -d postgres -c "ALTER SYSTEM RESET max_slot_wal_keep_size" -c "SELECT pg_reload_conf()" > /dev/null

# --- 5. the keyspace dropped under the stream -----------------------------------
"$CQLBRIDGE" stream --drop "$GEN" > "$WORK/drop.out" 2>&1 || bail "stream --drop failed: $(cat "$WORK/drop.out")"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply2.out" 2>&1 || bail "apply again failed: $(cat "$WORK/apply2.out")"
: > "$WORK/stream2.log"
stream_start "$WORK/stream2.log"
wait_stream_phase "$KS" streaming && stream_caught_up "$KS"
ok $? "loaded again from a new slot" || diag "$(tail -5 "$WORK/stream2.log")"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE $KS')" > /dev/null
q "UPDATE holes.acct SET name = 'after the drop' WHERE acct_id = 7" > /dev/null
stream_exit 40
[ "$RC" -eq 2 ] && grep -q "Cassandra table $KS\.[a-z_]*, which the stream writes, does not exist any more" "$WORK/stream2.log"
ok $? "a keyspace dropped under the stream stops it, naming the table (status $RC)" || diag "$(tail -3 "$WORK/stream2.log")"

# --- 6. a database past 2^32 transactions --------------------------------------
# a server of its own, its transaction ids moved to epoch 5 by pg_resetwal
PGPORT_MAIN=$PGPORT PGHOST_MAIN=$PGHOST
if CQL_PG_DIR=$OLD_DIR CQL_PG_PORT=$OLD_PORT bash "$LIB_REPO/scripts/pg.sh" start > "$WORK/old_pg.out" 2>&1; then
	OLD_STARTED=1
	eval "$(CQL_PG_DIR=$OLD_DIR CQL_PG_PORT=$OLD_PORT bash "$LIB_REPO/scripts/pg.sh" env)"
	export PGDATABASE=$DB
	# the server's own binaries (pg_config of its build, as the view says)
	resetwal=$(psql -X -A -t -d postgres -c "SELECT setting FROM pg_config WHERE name = 'BINDIR'")/pg_resetwal
	CQL_PG_DIR=$OLD_DIR CQL_PG_PORT=$OLD_PORT bash "$LIB_REPO/scripts/pg.sh" stop >> "$WORK/old_pg.out" 2>&1
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$resetwal" -e 5 "$OLD_DIR/data" >> "$WORK/old_pg.out" 2>&1
	else
		"$resetwal" -e 5 "$OLD_DIR/data" >> "$WORK/old_pg.out" 2>&1
	fi
	CQL_PG_DIR=$OLD_DIR CQL_PG_PORT=$OLD_PORT bash "$LIB_REPO/scripts/pg.sh" start --keep >> "$WORK/old_pg.out" 2>&1
fi
is "$(psql -X -A -t -d postgres -c "SELECT (pg_current_xact_id()::text::bigint >> 32)::text" 2>&1)" 5 \
	"a server whose transaction ids are in epoch 5 (pg_resetwal -e 5)" ||
	diag "$(tail -5 "$WORK/old_pg.out")"
KS=bridge_holes_old
BRIDGE_KEYSPACES+=("$KS")
FS=${KS}_cql
GEN=$WORK/gen_old
fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
qf -f "$HERE/holes/schema.sql" > /dev/null || bail "schema failed on the old server"
plan_into holes "$HERE/holes/workload.sql" "plan on the old server"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply_old.out" 2>&1 || bail "apply on the old server failed: $(cat "$WORK/apply_old.out")"
load_targets "$GEN"
stream_start "$WORK/stream_old.log"
wait_stream_phase "$KS" streaming && stream_caught_up "$KS"
ok $? "the stream of the old server loaded and caught up" ||
	diag "$(tail -5 "$WORK/stream_old.log")" "$(q "SELECT slot_name, confirmed_flush_lsn, pg_current_wal_insert_lsn() FROM pg_replication_slots" 2>&1)" "$(q "SELECT phase FROM cqlbridge_$KS.stream_state" 2>&1)"
# COMMITs with synchronous_commit = on wait for a standby that never comes:
# decoded (their WAL is flushed) but not visible until the wait is cancelled
psql -X -q -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = 'cqlbridge_nobody'" -c "SELECT pg_reload_conf()" > /dev/null
sleep 0.5
# an older transaction still open (its id below the late one's): the
# snapshot's xmax is then below the late transaction's id, the case a
# 32-bit id read as one of the previous epoch took for visible
psql -X -q -d "$DB" -c "BEGIN" -c "SELECT pg_current_xact_id()" -c "SELECT pg_sleep(6)" -c "COMMIT" > /dev/null 2>&1 &
OPID=$!
sleep 0.5
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET synchronous_commit = on" \
	-c "UPDATE holes.acct SET name = 'seen late' WHERE acct_id = 11" > "$WORK/late.out" 2>&1 &
LPID=$!
sleep 3
is "$(q "SELECT name FROM $FS.accts WHERE acct_id = 11")" "Account 11" \
	"a transaction decoded but not yet visible is not written (3 s later)"
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'" > /dev/null
wait "$LPID"
wait "$OPID"
psql -X -q -d postgres -c "ALTER SYSTEM RESET synchronous_standby_names" -c "SELECT pg_reload_conf()" > /dev/null
grep -q "already committed locally" "$WORK/late.out"
ok $? "its COMMIT waited for the standby, and was committed locally when cancelled" || diag "$(cat "$WORK/late.out")"
stream_caught_up "$KS"
ok $? "the stream caught up once it became visible" || diag "$(tail -5 "$WORK/stream_old.log")"
is "$(q "SELECT name FROM $FS.accts WHERE acct_id = 11")" "seen late" \
	"its change is in Cassandra"
compare_all "epoch 5"
kill -TERM "$SPID" 2> /dev/null
wait "$SPID"
SPID=
"$CQLBRIDGE" stream --drop "$GEN" > /dev/null 2>&1
export PGPORT=$PGPORT_MAIN PGHOST=$PGHOST_MAIN PGDATABASE=$DB
