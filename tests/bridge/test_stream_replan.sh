#!/usr/bin/env bash
#
# tests/bridge/test_stream_replan.sh - a migration in progress re-planned
# and applied online (cqlbridge plan + cqlbridge stream DIR --replan), over
# tests/bridge/evolve while pgbench writes throughout.
#
#   the stream of workload.sql runs; a column is added to venue; the
#   workload of the next release (workload_v2.sql: Q3 also returns it, Q4
#   is new) is planned for the same keyspace: plan prints the plan diff
#   (two tables unchanged, one changed, one added); the stream of the old
#   plan, given the new directory, refuses and names --replan; the old
#   stream is stopped; --replan --dry-run prints the diff and changes
#   nothing; --replan applies it and streams: the changed and the added
#   table are backfilled while the others keep streaming, every table then
#   equals its source view, and the unchanged tables were not reloaded (a
#   venue pgbench never touches keeps the write times of its rows there,
#   and has new ones in the changed and added tables); a stream killed
#   while a table joins backfills it again (emptied first) at its restart;
#   a query removed is no longer maintained and, with --drop-removed, its
#   table dropped; a plan whose table changes its primary key
#   (workload_v3.sql) is refused online, naming the table; no pgbench
#   transaction failed.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser, wal_level=logical),
# CQL_HOST, CQLBRIDGE.  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=bridge_stream_replan
KS=bridge_stream_replan
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS")
bridge_begin stream_replan

tap_plan 28

stream_suite

fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
qf -f "$HERE/evolve/schema.sql" > /dev/null || bail "schema failed"
# a venue pgbench never touches (it writes venues 1-120), with tickets
q "INSERT INTO evolve.venue (venue_id, name, city) VALUES (999, 'Quiet Hall', 'City 3');
   INSERT INTO evolve.ticket (venue_id, sold_at, ticket_id, price, note)
   SELECT 999, timestamptz '2026-04-02 00:00:00+00' + g * interval '1 hour', 900000 + g, 10, 'quiet'
   FROM generate_series(1, 20) g" > /dev/null || bail "sentinel rows failed"
plan_into evolve "$HERE/evolve/workload.sql" "plan of the first release's workload"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply.out" 2>&1 || bail "apply failed: $(cat "$WORK/apply.out")"

"$CQLBRIDGE" stream --flush-interval 200 "$GEN" > "$WORK/stream1.log" 2>&1 &
SPID=$!
wait_stream_phase "$KS" streaming
ok $? "the stream of the first plan loaded and is streaming" || diag "$(tail -5 "$WORK/stream1.log")"

"$PGBENCH" -n -M simple -c 1 -R 50 -T 40 --max-tries=5 -D name_col=name -D tag_rel=venue_tag \
	-f "$HERE/evolve/writes.pgbench" "$DB" > "$WORK/pgbench.out" 2>&1 &
BPID=$!

# --- the next release: a column, a changed query, a new one ------------------------
q "ALTER TABLE evolve.venue ADD COLUMN capacity int; UPDATE evolve.venue SET capacity = venue_id * 7 WHERE venue_id < 999" > /dev/null
GEN2=$WORK/gen2
"$CQLBRIDGE" plan --schema evolve --workload "$HERE/evolve/workload_v2.sql" --keyspace "$KS" \
	--foreign-schema "$FS" --server cqlbridge --replication-factor 1 -o "$GEN2" > "$WORK/plan2.out" 2>&1
rc=$?
[ $rc -eq 0 ] &&
	grep -q "unchanged  $KS.venues: keeps streaming, not reloaded" "$WORK/plan2.out" &&
	grep -q "unchanged  $KS.tickets_by_venue_id:" "$WORK/plan2.out" &&
	grep -q "changed    $KS.venues_by_city: columns added: capacity" "$WORK/plan2.out" &&
	grep -q "added      $KS.tickets_by_city:" "$WORK/plan2.out" && [ -s "$GEN2/plan_diff.txt" ]
ok $? "plan against the running migration prints the plan diff (2 unchanged, 1 changed, 1 added) and writes plan_diff.txt" ||
	diag "$(cat "$WORK/plan2.out")"

"$CQLBRIDGE" stream -q "$GEN2" > "$WORK/refused.out" 2>&1
refused $? "$WORK/refused.out" "the stream given the new plan without --replan refuses, naming --replan" \
	"is not the one the stream of keyspace $KS runs" "--replan"

stream_caught_up "$KS"
kill -TERM "$SPID"
wait "$SPID"
ok $? "the stream of the first plan stops with status 0"
SPID=

"$CQLBRIDGE" stream --replan --dry-run "$GEN2" > "$WORK/dry.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "added      $KS.tickets_by_city" "$WORK/dry.out" && grep -q "dry-run: nothing changed" "$WORK/dry.out"
ok $? "--replan --dry-run prints the diff" || diag "$(cat "$WORK/dry.out")"
is "$(q "SELECT to_regclass('$FS.tickets_by_city') IS NULL, (SELECT count(*) FROM cqlbridge_$KS.stream_tables WHERE state = 'live')")" "t|3" \
	"--dry-run changed nothing (no new foreign table, the record as it was)"

# --- applied online ---------------------------------------------------------------
T0=$(date +%s%6N)
sleep 0.1
"$CQLBRIDGE" stream --replan --flush-interval 200 "$GEN2" > "$WORK/stream2.log" 2>&1 &
SPID=$!
for i in $(seq 1 300); do
	[ "$(q "SELECT count(*) FILTER (WHERE state = 'live') FROM cqlbridge_$KS.stream_tables" 2> /dev/null)" = 4 ] && break
	sleep 0.2
done
is "$(q "SELECT string_agg(target || ' ' || state, ', ' ORDER BY target) FROM cqlbridge_$KS.stream_tables")" \
	"$KS.tickets_by_city live, $KS.tickets_by_venue_id live, $KS.venues live, $KS.venues_by_city live" \
	"--replan: the changed and the added table joined the stream (all four live)" || diag "$(tail -8 "$WORK/stream2.log")"
grep -q "$KS.venues_by_city joins the stream" "$WORK/stream2.log" && grep -q "$KS.tickets_by_city joins the stream" "$WORK/stream2.log" &&
	! grep -q "$KS.venues joins\|$KS.tickets_by_venue_id joins" "$WORK/stream2.log"
ok $? "only the changed and the added table were backfilled" || diag "$(cat "$WORK/stream2.log")"

# the write times of the quiet venue's rows: unchanged tables not rewritten
wt()
{
	q "SELECT coalesce(min((r->>'w')::bigint) > $T0, false)::text || ' ' || coalesce(max((r->>'w')::bigint) > $T0, false)::text
	   FROM cql_query('cqlbridge', 'SELECT writetime($2) AS w FROM $KS.$1 WHERE $3') r"
}
is "$(wt venues city "venue_id = 999") $(wt tickets_by_venue_id price "venue_id = 999")" "false false false false" \
	"unchanged tables were not reloaded: the quiet venue's rows keep their write times"
is "$(wt venues_by_city name "city = ''City 3'' AND venue_id = 999") $(wt tickets_by_city price "city = ''City 3'' AND sold_at >= ''2026-04-02'' AND sold_at < ''2026-04-03'' AND venue_id = 999 ALLOW FILTERING")" \
	"true true true true" "the changed and the added table were backfilled (new write times)"

wait "$BPID"
f=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
d=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
[ "${f:-x}" = 0 ] && [ "${d:-0}" -gt 0 ]
ok $? "pgbench wrote throughout (${d:-?} transactions), none failed" || diag "$(tail -5 "$WORK/pgbench.out")"
BPID=
stream_caught_up "$KS"
ok $? "the stream of the new plan caught up" || diag "$(tail -5 "$WORK/stream2.log")"
load_targets "$GEN2"
compare_all "after the plan was applied online"

# --- a stream killed while a table joins: backfilled again, emptied first ------------
kill -TERM "$SPID"
wait "$SPID"
SPID=
q "UPDATE cqlbridge_$KS.stream_tables SET state = 'backfilling' WHERE target = '$KS.tickets_by_city';
   UPDATE evolve.ticket SET price = price + 100 WHERE venue_id = 999" > /dev/null
"$CQLBRIDGE" stream --flush-interval 200 "$GEN2" > "$WORK/stream3.log" 2>&1 &
SPID=$!
for i in $(seq 1 300); do
	[ "$(q "SELECT state FROM cqlbridge_$KS.stream_tables WHERE target = '$KS.tickets_by_city'" 2> /dev/null)" = live ] && break
	sleep 0.2
done
stream_caught_up "$KS"
grep -q "$KS.tickets_by_city joins the stream" "$WORK/stream3.log" &&
	[ "$(q "SELECT state FROM cqlbridge_$KS.stream_tables WHERE target = '$KS.tickets_by_city'")" = live ]
ok $? "a table left backfilling by a stream that stopped is backfilled again at the next start" || diag "$(tail -5 "$WORK/stream3.log")"
compare_all "after that backfill"
kill -TERM "$SPID"
wait "$SPID"
ok $? "SIGTERM stops the stream with status 0"
SPID=

# --- a query removed: its table no longer maintained, dropped when asked -------------
GEN4=$WORK/gen4
sed '/^-- name: Q4_tickets_by_city/,$d' "$HERE/evolve/workload_v2.sql" > "$WORK/workload_v4.sql"
"$CQLBRIDGE" plan -q --schema evolve --workload "$WORK/workload_v4.sql" --keyspace "$KS" \
	--foreign-schema "$FS" --server cqlbridge --replication-factor 1 -o "$GEN4" > "$WORK/plan4.out" 2>&1 ||
	bail "plan without Q4 failed: $(cat "$WORK/plan4.out")"
"$CQLBRIDGE" stream --replan --drop-removed --flush-interval 200 "$GEN4" > "$WORK/stream4.log" 2>&1 &
SPID=$!
# the slot is confirmed already (nothing written since): wait for --replan
for i in $(seq 1 300); do
	grep -q "streaming slot" "$WORK/stream4.log" && break
	sleep 0.2
done
stream_caught_up "$KS"
CQL_TABLES="SELECT table_name FROM system_schema.tables WHERE keyspace_name = '$KS' AND table_name = 'tickets_by_city'"
grep -q "removed    $KS.tickets_by_city: no longer maintained" "$WORK/stream4.log" &&
	grep -q "unchanged  $KS.venues_by_city: keeps streaming" "$WORK/stream4.log" &&
	[ "$(q "SELECT count(*) FROM cqlbridge_$KS.stream_tables WHERE target = '$KS.tickets_by_city'")" = 0 ] &&
	[ "$(q "SELECT to_regclass('$FS.tickets_by_city') IS NULL AND to_regclass('cqlbridge_$KS.stream_keys_4') IS NULL")" = t ] &&
	[ "$(q "SELECT count(*) FROM cql_query('cqlbridge', \$cql\$$CQL_TABLES\$cql\$)")" = 0 ]
ok $? "--replan --drop-removed: a removed query's table is no longer maintained and is dropped (Cassandra, foreign table, lineage); the others unchanged" ||
	diag "$(tail -8 "$WORK/stream4.log")"
load_targets "$GEN4"
compare_all "after a query was removed"
kill -TERM "$SPID"
wait "$SPID"
SPID=

# --- a primary key change is not online ---------------------------------------------
GEN3=$WORK/gen3
"$CQLBRIDGE" plan -q --schema evolve --workload "$HERE/evolve/workload_v3.sql" --keyspace "$KS" \
	--foreign-schema "$FS" --server cqlbridge --replication-factor 1 -o "$GEN3" > "$WORK/plan3.out" 2>&1 ||
	bail "plan of workload_v3 failed: $(cat "$WORK/plan3.out")"
"$CQLBRIDGE" stream --replan "$GEN3" > "$WORK/rekey.out" 2>&1
refused $? "$WORK/rekey.out" "a table whose primary key changes is refused online, naming it and what to do" \
	"$KS.venues_by_city cannot change online: primary key" "another name in the workload"

exit $((TAP_FAILED > 0))
