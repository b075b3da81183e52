#!/usr/bin/env bash
#
# tests/bridge/test_stream_direct.sh - the stream's tables applied from the
# change itself (issue 42), over tests/bridge/direct: three tables that
# project one relation row by row (every column of many types; a filter on
# the row and a key that moves with a column; enum, timestamp and uuid key
# columns) and one that joins (it keeps recomputing).
#   1. the stream says which tables it applies directly and which it
#      recomputes
#   2. a randomized write mix (pgbench, two clients: inserts, updates of
#      every column with NULLs, empty arrays and microsecond timestamps,
#      key moves, deletes, the same rows many times in one transaction and
#      across transactions), then fixed cases in one transaction (a row
#      inserted, updated, moved twice, deleted and inserted again): the
#      whole-table diff finds nothing, and the stream's statement trace
#      (CQLBRIDGE_STREAM_TRACE) has no statement on the items relation,
#      its views or the stream's view of it since the start, while the
#      direct statements ran, and the keys that left a table were deleted
#      by cql_bridge_delete_keys (no DO block of DELETEs)
#   3. TOASTed notes: UPDATEs that leave a long note unchanged (its value
#      not in the change: the row is recomputed), and the same in one
#      transaction after the note was written (taken from the row's
#      earlier state): the diff finds nothing, and the rows were recomputed;
#      keys moved beside an unchanged long note (the old tuple carries only
#      the key): the diff finds nothing
#   3b. a key moved nine times in one transaction, long after the stream's
#      start: one tombstone in Cassandra (its old row), none in the
#      partitions it passed (the Python driver's query trace)
#   4. the stream killed with -9 during the write mix and started again
#      (the changes since the last confirmation applied again): the diff
#      finds nothing
#   5. the lineage table of the table keyed by the relation's key is not
#      kept (marked by a comment); a stream started with
#      CQLBRIDGE_STREAM_DIRECT=off (every table recomputed) fills it again
#      from Cassandra and unmarks it, and the diff finds nothing after
#      another write mix
#   6. TRUNCATE of the items relation empties both direct tables; rows
#      inserted after it arrive
#
# Environment: PGHOST/PGPORT/PGUSER (superuser, wal_level=logical),
# CQL_HOST, CQLBRIDGE.  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=bridge_stream_direct
KS=bridge_direct
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS")
bridge_begin stream_direct
TRACE=$WORK/trace

tap_plan 22

stream_suite
fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
qf -f "$HERE/direct/schema.sql" > /dev/null || bail "schema failed"

# stream_start LOG: the stream of $GEN in the background (SPID), tracing
# its statements into $TRACE
stream_start()
{
	CQLBRIDGE_STREAM_TRACE=$TRACE "$CQLBRIDGE" stream --flush-interval 100 "$GEN" >> "$1" 2>&1 &
	SPID=$!
}

# mix SECONDS: pgbench, two clients, transactions of dx.mix(8)
mix()
{
	echo "SELECT dx.mix(8, :client_id);" > "$WORK/mix.pgbench"
	"$PGBENCH" -n -c 2 -j 2 -T "$1" -f "$WORK/mix.pgbench" "$DB" > "$WORK/pgbench.out" 2>&1
}

# diff_clean LABEL: one test: the whole-table diff of every table finds
# nothing (exit status 0).  The key moves of the write mix leave their
# tombstones in the three partitions of items_by_kind (kind is an enum):
# a fast machine's mix passes Cassandra's tombstone_failure_threshold, and
# the scan then reads in smaller pages (sql/tombstones.sql), said here.
diff_clean()
{
	"$CQLBRIDGE" diff "$GEN" > "$WORK/diff.out" 2>&1
	ok $? "$1: cqlbridge diff finds no difference" || diag "$(cat "$WORK/diff.out")"
	grep -q "met more tombstones than Cassandra reads at once" "$WORK/diff.out" &&
		echo "# $1: the diff read a table in smaller pages (too many tombstones for a page)"
}

plan_into dx "$HERE/direct/workload.sql" "plan of the direct workload (three projections, a join)"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply.out" 2>&1 || bail "apply failed: $(cat "$WORK/apply.out")"
load_targets "$GEN"
[ "${#FTS[@]}" -eq 4 ] || bail "the plan has ${#FTS[@]} target tables, the test counts 4"
mapfile -t DIRECT_VIEWS < <(for i in "${!TABLES[@]}"; do
	case ${TABLES[$i]} in *pets*) ;; *) echo "${VIEWS[$i]}" ;; esac
done)

# --- 1. which tables are direct ----------------------------------------------------
stream_start "$WORK/stream.log"
wait_stream_phase "$KS" streaming && stream_caught_up "$KS"
setup_step $? "the stream loaded and caught up" || diag "$(tail -5 "$WORK/stream.log")"
grep -q "applied from the change itself: $KS.items, $KS.items_by_grp (with its lineage table), $KS.items_by_kind (with its lineage table)$" "$WORK/stream.log" &&
	grep -q "recomputed from the source: $KS.pets_by_owner_name (it reads more than one relation)" "$WORK/stream.log"
ok $? "the stream applies the three projections directly and recomputes the join" ||
	diag "$(grep -E 'applied|recomputed' "$WORK/stream.log")"

# --- 2. the write mix --------------------------------------------------------------
mark=$(wc -l < "$TRACE")
mix 8
ok $? "pgbench's write mix ran (8 s, 2 clients)" || diag "$(tail -5 "$WORK/pgbench.out")"
q "BEGIN;
   INSERT INTO dx.item SELECT (dx.random_item(500)).*;
   UPDATE dx.item SET name = 'one' WHERE id = 500;
   UPDATE dx.item SET name = NULL, seen = '2026-01-02 03:04:05.678901+00', flag = true WHERE id = 500;
   UPDATE dx.item SET grp = 9, tags = '{}' WHERE id = 500;
   UPDATE dx.item SET id = 501 WHERE id = 500;
   UPDATE dx.item SET name = 'moved', flag = false WHERE id = 501;
   UPDATE dx.item SET id = 502, flag = true WHERE id = 501;
   DELETE FROM dx.item WHERE id = 502;
   INSERT INTO dx.item SELECT (dx.random_item(502)).*;
   UPDATE dx.item SET flag = true, grp = 8, seen = '2026-05-06 07:08:09.999999+00' WHERE id = 502;
   COMMIT;" > /dev/null
for i in $(seq 1 15); do
	q "UPDATE dx.item SET name = 'rev $i', flag = NOT flag, seen = clock_timestamp() WHERE id = 502" > /dev/null
done
stream_caught_up "$KS"
setup_step $? "the stream caught up after the write mix" || diag "$(tail -5 "$WORK/stream.log")"
diff_clean "after the write mix"
is "$(q "SELECT name || ' ' || grp || ' ' || seen FROM $FS.items_by_grp WHERE id = 502 UNION ALL
         SELECT 'gone ' || count(*) FROM $FS.items WHERE id IN (500, 501)")" \
	"$(q "SELECT name || ' ' || grp || ' ' || date_trunc('milliseconds', seen) FROM dx.item WHERE id = 502 AND flag UNION ALL SELECT 'gone 0'")" \
	"the row moved twice and changed 15 times is in Cassandra as last committed (time cut to ms)"
tail -n +"$((mark + 1))" "$TRACE" > "$WORK/trace.mix"
pattern="dx\\.item|stream_src_"
for v in "${DIRECT_VIEWS[@]}"; do pattern="$pattern|${v//./\\.}"; done
n_src=$(grep -vE '^[0-9]+	LOCK TABLE ' "$WORK/trace.mix" | grep -cE "$pattern")
n_direct=$(grep -cE "^[0-9]+	WITH f AS MATERIALIZED .*INSERT INTO $FS\\.items" "$WORK/trace.mix")
[ "$n_src" -eq 0 ] && [ "$n_direct" -gt 0 ]
ok $? "no statement read the items relation or its views ($n_src of $(wc -l < "$WORK/trace.mix") statements did; $n_direct direct statements)" ||
	diag "$(grep -vE '^[0-9]+	LOCK TABLE ' "$WORK/trace.mix" | grep -E "$pattern" | cut -c1-300 | head -5)"
[ "$(grep -c "pets_by_owner_name_src" "$WORK/trace.mix")" -gt 0 ]
ok $? "the joined table was recomputed from its view"
n_fn=$(grep -cE '^[0-9]+	SELECT [^ ]*\.?cql_bridge_delete_keys\(' "$WORK/trace.mix")
n_do=$(grep -cE '^[0-9]+	DO \$cqlbridge_d\$' "$WORK/trace.mix")
[ "$n_fn" -gt 0 ] && [ "$n_do" -eq 0 ]
ok $? "the keys that vanished were deleted by cql_bridge_delete_keys ($n_fn calls, $n_do DO blocks)"

# --- 3. TOASTed values left unchanged ----------------------------------------------------
q "UPDATE dx.item SET note = repeat('N' || id, 3000) WHERE id % 5 = 0" > /dev/null
is "$(q "SELECT count(*) > 0 AND bool_and(pg_column_size(note) >= 6000) FROM dx.item WHERE id % 5 = 0")" t \
	"the long notes are stored out of line"
stream_caught_up "$KS"
setup_step $? "caught up after the notes were written" || diag "$(tail -5 "$WORK/stream.log")"
mark=$(wc -l < "$TRACE")
q "UPDATE dx.item SET name = 'toast ' || id, flag = true WHERE id % 5 = 0" > /dev/null
q "BEGIN;
   UPDATE dx.item SET note = repeat('M' || id, 3000) WHERE id % 7 = 0;
   UPDATE dx.item SET name = 'toast again ' || id WHERE id % 7 = 0;
   COMMIT;" > /dev/null
stream_caught_up "$KS"
setup_step $? "caught up after the TOAST updates" || diag "$(tail -5 "$WORK/stream.log")"
diff_clean "after UPDATEs beside unchanged TOASTed notes"
is "$(q "SELECT count(*) FROM $FS.items WHERE id % 5 = 0 AND name LIKE 'toast %' AND length(note) >= 6000")" \
	"$(q "SELECT count(*) FROM dx.item WHERE id % 5 = 0 AND name LIKE 'toast %'")" \
	"rows whose note was unchanged have their long note and new name in Cassandra"
n_src=$(tail -n +"$((mark + 1))" "$TRACE" | grep -vE '^[0-9]+	LOCK TABLE ' | grep -cE "${DIRECT_VIEWS[0]//./\\.}")
[ "$n_src" -gt 0 ]
ok $? "those rows were recomputed from the source view ($n_src statements): their note was not in the change"
# a key moved beside an unchanged TOASTed note: the old tuple (K) has only the key
q "UPDATE dx.item SET id = id + 2000 WHERE id % 5 = 0 AND id < 2000" > /dev/null
stream_caught_up "$KS"
setup_step $? "caught up after the key moves beside TOASTed notes" || diag "$(tail -5 "$WORK/stream.log")"
diff_clean "after key moves beside unchanged TOASTed notes"

# --- 3b. a key moved nine times between two flushes: one tombstone -----------------------
# Item 900 (no client of the mix touches it) in group 20, then moved through
# groups 21..29 to 30 in one transaction.  The stream, confirmed long past
# its start, deletes only the key Cassandra has (group 20): the states
# between were written by nobody, and deleting them would leave a tombstone
# in each partition they passed.  Read by the Python driver with query
# tracing (Cassandra's own count of the tombstones a read met), not by us.
# (no NULL in the columns items_by_grp reads: a NULL written is a tombstone cell)
q "INSERT INTO dx.item SELECT (dx.random_item(900)).*;
   UPDATE dx.item SET grp = 20, flag = true, name = 'nine hundred', seen = now(), tags = '{a}', price = 1 WHERE id = 900" > /dev/null
stream_caught_up "$KS"
q "BEGIN;
   $(for g in $(seq 21 30); do echo "UPDATE dx.item SET grp = $g WHERE id = 900;"; done)
   COMMIT;" > /dev/null
stream_caught_up "$KS"
setup_step $? "caught up after the nine moves" || diag "$(tail -5 "$WORK/stream.log")"
if "$DRIVER_PY" -c "import cassandra.cluster" 2> /dev/null; then
	# tombstones GROUP...: "GROUP:LIVE:TOMBSTONES" per partition of items_by_grp
	tombstones()
	{
		"$DRIVER_PY" - "$CQL_HOST" "$KS" "$@" << 'PYEOF'
import re, sys
from cassandra.cluster import Cluster
host, ks, groups = sys.argv[1], sys.argv[2], sys.argv[3:]
cluster = Cluster([host], port=9042, protocol_version=5)
session = cluster.connect()
out = []
for g in groups:
    rs = session.execute('SELECT * FROM "%s".items_by_grp WHERE grp = %d' % (ks, int(g)), trace=True)
    live = len(list(rs))
    dead = 0
    for e in rs.get_query_trace(max_wait_sec=30).events:
        m = re.search(r"Read (\d+) live rows and (\d+) tombstone cells", e.description)
        if m:
            dead = max(dead, int(m.group(2)))
    out.append("%s:%d:%d" % (g, live, dead))
print(" ".join(out))
cluster.shutdown()
PYEOF
	}
	got=$(tombstones 20 21 25 29 30 2>&1)
	is "$got" "20:0:1 21:0:0 25:0:0 29:0:0 30:1:0" \
		"a key moved nine times between two flushes: one tombstone (its old partition), none where it passed"
else
	skip_check "a key moved nine times between two flushes: one tombstone (its old partition), none where it passed" \
		"no Python driver for $DRIVER_PY (scripts/deps.sh installs it)"
fi

# --- 4. kill -9 during the write mix, restart ------------------------------------------------
mix 6 &
BPID=$!
sleep 2
kill -9 "$SPID" 2> /dev/null
wait "$SPID" 2> /dev/null
SPID=
sleep 1
stream_start "$WORK/stream.log"
wait "$BPID"
ok $? "the write mix ran while the stream was killed with -9 and started again"
BPID=
stream_caught_up "$KS"
setup_step $? "the restarted stream caught up" || diag "$(tail -5 "$WORK/stream.log")"
diff_clean "after kill -9 and restart"

# --- 5. the lineage table not kept, and filled again ---------------------------------------
is "$(q "SELECT obj_description('cqlbridge_$KS.stream_keys_1'::regclass, 'pg_class') LIKE 'cqlbridge: not kept%'")" t \
	"the lineage table of the table keyed by its relation's key is marked as not kept"
kill -TERM "$SPID" 2> /dev/null
wait "$SPID"
CQLBRIDGE_STREAM_DIRECT=off "$CQLBRIDGE" stream --flush-interval 100 "$GEN" >> "$WORK/stream_off.log" 2>&1 &
SPID=$!
mix 4
stream_caught_up "$KS"
setup_step $? "the stream recomputing every table caught up" || diag "$(tail -5 "$WORK/stream_off.log")"
grep -q "$KS.items: filling its lineage table from the Cassandra table's keys" "$WORK/stream_off.log" &&
	[ -z "$(q "SELECT obj_description('cqlbridge_$KS.stream_keys_1'::regclass, 'pg_class')")" ]
ok $? "a stream that recomputes fills the lineage table again from Cassandra and unmarks it" ||
	diag "$(grep -E 'filling|applied|recomputed' "$WORK/stream_off.log")"
diff_clean "recomputing after a stream that applied directly"
kill -TERM "$SPID" 2> /dev/null
wait "$SPID"
stream_start "$WORK/stream.log"

# --- 6. TRUNCATE -------------------------------------------------------------------------
q "TRUNCATE dx.item" > /dev/null
stream_caught_up "$KS"
is "$(q "SELECT (SELECT count(*) FROM $FS.items) + (SELECT count(*) FROM $FS.items_by_grp)")" 0 \
	"TRUNCATE of the relation empties both direct tables"
q "INSERT INTO dx.item SELECT (dx.random_item(k)).* FROM generate_series(1, 10) k;
   UPDATE dx.item SET flag = true WHERE id <= 5" > /dev/null
stream_caught_up "$KS"
diff_clean "rows inserted after the TRUNCATE"

kill -TERM "$SPID" 2> /dev/null
wait "$SPID"
ok $? "the stream stops with status 0"
SPID=
[ "$TAP_FAILED" -eq 0 ]
