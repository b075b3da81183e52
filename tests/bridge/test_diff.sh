#!/usr/bin/env bash
#
# tests/bridge/test_diff.sh - cqlbridge diff: every row of every query
# table against its source view, and --repair.
#
# On the hotel plan (composite partition keys, a static column, a frozen
# UDT, sets and maps):
#   a fresh load        -> diff finds nothing (exit 0)
#   differences made straight in Cassandra with cql_execute: a missing
#   row, a stray row, a changed value, NULL instead of a value, a set
#   element added, a frozen UDT field changed, a static column changed
#                       -> diff reports exactly those (text and --json),
#                          exit 1; --repair fixes them; diff finds nothing
#   repair racing relational updates with sync installed
#                       -> diff finds nothing afterwards: no older value
#                          was written over a newer one
#   bad input           -> unknown table, a plan of another keyspace, a
#                          changed source view, a dropped Cassandra table
#                          (also with --jobs 2: a worker's failure), a bad
#                          option: a clear message, exit 2
#   --jobs 1 (one table after another) reports what --jobs 2 (the default:
#   two tables at a time, each in a worker process) does, and --row-by-row
#   (every range merged) what the range hashes do (only the tables with
#   differences get ranges merged)
# (DESC clustering and time/hash buckets: test_video.sh, test_buckets.sh.)
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_DIFF_DB /
# BRIDGE_DIFF_KEYSPACE (default bridge_diff_test).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_DIFF_DB:-bridge_diff_test}
KS=${BRIDGE_DIFF_KEYSPACE:-bridge_diff_test}
FS=diff_cql
HOTEL=$REPO/migrations/hotel
BRIDGE_KEYSPACES=("$KS")
bridge_begin diff
tap_plan 35

fresh_db "$CQL_HOST"
load_migrations "$HOTEL"
plan_into hotel_rel "$HOTEL/workload.sql" "plan of the hotel workload"
"$CQLBRIDGE" apply -q "$GEN" > "$WORK/apply.out" 2>&1 || { sed 's/^/# /' "$WORK/apply.out"; bail "apply failed"; }

# diff N ARGS...: run cqlbridge diff, output in $WORK/diffN.out, status in rc
run_diff()
{
	local n=$1
	shift
	"$CQLBRIDGE" diff "$@" > "$WORK/diff$n.out" 2> "$WORK/diff$n.err"
	rc=$?
}
# cql STATEMENT: through cql_fdw's cql_execute
cql() { q "SELECT cql_execute('cqlbridge', \$cql\$$1\$cql\$)" > /dev/null; }

# --- a fresh load is equal ------------------------------------------------------------------
run_diff 1 "$GEN" --json "$WORK/d1.json"
is "$rc" 0 "diff after apply: exit 0"
is "$(jq '[.tables[] | .missing + .extra + .different] | add' "$WORK/d1.json"),$(jq '.tables | length' "$WORK/d1.json")" \
	"0,9" "diff after apply: 9 tables, no difference (--json)"
is "$(jq '[.tables[] | select(.source_rows > 0 and .source_rows == .target_rows)] | length' "$WORK/d1.json")" \
	9 "every table has its rows on both sides"

# --- every kind of difference, made in Cassandra -------------------------------------------
conf=$(q "SELECT min(confirm_number) FROM $FS.reservations")
poi=$(q "SELECT point_of_interest_id FROM $FS.hotels_by_poi_name WHERE poi_name = 'WestWorld' AND hotel_id = 'AZ123'")
room=$(q "SELECT min(room_number) FROM $FS.rooms_by_hotel_id_room_number WHERE hotel_id = 'AZ123'")
nam=$(q "SELECT count(*) FROM $FS.rooms_by_hotel_id_room_number WHERE hotel_id = 'AZ123' AND room_number = $room")
guest=$(q "SELECT guest_id FROM $FS.guests WHERE addresses IS NOT NULL ORDER BY guest_id LIMIT 1")
cql "DELETE FROM $KS.reservations WHERE confirm_number = '$conf'"
cql "INSERT INTO $KS.guests (guest_id, first_name, last_name) VALUES (11111111-2222-3333-4444-555555555555, 'Stray', 'Row')"
cql "UPDATE $KS.hotels SET phone = '+1 000' WHERE id = 'AZ123'"
cql "UPDATE $KS.hotels SET name = null, pois = pois + {'Zzz stray element'} WHERE id = 'AZ842'"
cql "UPDATE $KS.hotels_by_poi_name SET address = {street: 'Elsewhere 1', city: 'Phoenix', state_or_province: 'AZ', postal_code: '85001', country: 'USA'} WHERE poi_name = 'WestWorld' AND hotel_id = 'AZ123' AND point_of_interest_id = $poi"
cql "UPDATE $KS.rooms_by_hotel_id_room_number SET rate = 1.5 WHERE hotel_id = 'AZ123' AND room_number = $room"
cql "UPDATE $KS.guests SET addresses = addresses + {'zz-holiday': {street: 'Beach 1', city: 'Nice', state_or_province: '', postal_code: '06000', country: 'FR'}} WHERE guest_id = $guest"

run_diff 2 "$GEN" --json "$WORK/d2.json" --examples 100
is "$rc" 1 "diff after the injected differences: exit 1"
J=$WORK/d2.json
t() { jq -c --arg t "$KS.$1" ".tables[] | select(.table == \$t) | $2" "$J"; }
is "$(t reservations '[.missing, .extra, .different]')" "[1,0,0]" "a missing row is found (reservations)"
is "$(t reservations '.examples[0].key.confirm_number')" "\"$conf\"" "... with its key"
is "$(t guests '[.missing, .extra, .different]')" "[0,1,1]" "a stray row and a changed map of UDTs are found (guests)"
is "$(t guests '[.examples[] | select(.kind == "extra") | .key.guest_id][0]')" '"11111111-2222-3333-4444-555555555555"' "... the stray row with its key"
is "$(t guests '.different_columns')" '{"addresses":1}' "... the changed map in column addresses"
is "$(t hotels '[.examples[] | [.key.id, .columns]]')" '[["AZ123","phone"],["AZ842","name, pois"]]' \
	"a changed value, NULL for a value and an added set element are found (hotels)"
is "$(t hotels_by_poi_name '[.different, .examples[0].columns]')" '[1,"address"]' "a changed frozen UDT field is found"
is "$(t rooms_by_hotel_id_room_number '[.different, .different_columns.rate]')" "[$nam,$nam]" \
	"a changed static column: every row of its partition (composite partition key) differs in rate"
is "$(jq '[.tables[] | .missing + .extra + .different] | add' "$J")" $((6 + nam)) "nothing else is reported"
grep -q "^  missing   (confirm_number='$conf'): in the source view, not in Cassandra$" "$WORK/diff2.out" &&
	grep -q "^  different (id='AZ842'): columns name, pois$" "$WORK/diff2.out"
ok $? "the text report names the keys and columns"
# the tables compared one after another in one process: the same report as
# two at a time in worker processes (the default, run_diff 2 above)
run_diff 2b "$GEN" --json "$WORK/d2b.json" --examples 100 --jobs 1
is "$rc:$(jq -S -c 'del(.finished_at)' "$WORK/d2b.json"):$(md5sum < "$WORK/diff2b.out")" \
	"1:$(jq -S -c 'del(.finished_at)' "$J"):$(md5sum < "$WORK/diff2.out")" "--jobs 1 reports exactly what --jobs 2 does (--json and text)"
# every token range whose row count and hash agree was taken as compared:
# only the tables with differences had ranges merged row by row ...
merged=$(sed -n 's/^diff of \([^:]*\): token ranges .* do not agree in row count or hash: merging them row by row$/\1/p' \
	"$WORK/diff2.err" | sort -u | paste -sd ' ')
is "$merged" "$(jq -r '[.tables[] | select(.missing + .extra + .different > 0) | .table] | sort | join(" ")' "$J")" \
	"ranges were merged row by row for the tables with differences only (their hashes disagreed)"
# ... and merging every range instead finds exactly the same
run_diff 2c "$GEN" --json "$WORK/d2c.json" --examples 100 --jobs 1 --row-by-row
is "$rc:$(jq -S -c 'del(.finished_at)' "$WORK/d2c.json"):$(md5sum < "$WORK/diff2c.out")" \
	"1:$(jq -S -c 'del(.finished_at)' "$J"):$(md5sum < "$WORK/diff2.out")" "--row-by-row reports exactly what the range hashes and merges do"

# --- repair -----------------------------------------------------------------------------------
# --dry-run: the keys it would write and delete, nothing written; --json - the
# report alone on stdout (the text report on stderr)
run_diff 3a "$GEN" --repair --dry-run --json - --examples 100
is "$rc:$(jq -c '[.repair, ([.tables[] | .missing + .extra + .different] | add)]' "$WORK/diff3a.out")" \
	"1:[false,$((6 + nam))]" "diff --repair --dry-run --json -: exit 1, the report on stdout, nothing repaired"
is "$(grep -c '^diff --repair --dry-run: ' "$WORK/diff3a.err"),$(grep -Ec '^  (write |delete) \(' "$WORK/diff3a.err")" \
	"$(jq '[.tables[] | select(.missing + .extra + .different > 0)] | length' "$J"),$((6 + nam))" \
	"... each table with differences and each key it would write or delete (stderr)"
run_diff 3b "$GEN" --json "$WORK/d3b.json"
is "$rc:$(jq '[.tables[] | .missing + .extra + .different] | add' "$WORK/d3b.json")" "1:$((6 + nam))" \
	"... and the differences are all still there"
run_diff 3c "$GEN" --dry-run
grep -q -- '--dry-run goes with --repair' "$WORK/diff3c.err"
ok $(($? + (rc != 2))) "diff --dry-run without --repair: usage error, exit 2"
run_diff 3 "$GEN" --repair --json "$WORK/d3.json"
is "$rc" 0 "diff --repair: exit 0 (everything repaired and equal when compared again)"
is "$(jq '[.tables[] | .repaired] | add' "$WORK/d3.json"),$(jq '[.tables[] | .still_different] | add' "$WORK/d3.json")" \
	"$((6 + nam)),0" "diff --repair repaired every difference"
run_diff 4 "$GEN"
is "$rc" 0 "the next diff finds nothing"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/diff4.out"

# --- repair racing relational writes with sync installed ----------------------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1 || bail "sync failed: $(cat "$WORK/sync.out")"
cql "TRUNCATE $KS.reservations"
cql "TRUNCATE $KS.reservations_by_hotel_id_start_date"
(
	for i in $(seq 1 25); do
		q "UPDATE hotel_rel.reservation SET end_date = end_date + 1
		   WHERE confirm_number IN (SELECT confirm_number FROM hotel_rel.reservation ORDER BY confirm_number LIMIT 5)" > /dev/null || exit 1
	done
) &
writer=$!
run_diff 5 "$GEN" --repair --table reservations
r1=$rc
run_diff 6 "$GEN" --repair --table reservations_by_hotel_id_start_date
r2=$rc
wait $writer
ok $? "relational updates with sync installed commit during the repair"
ok $((r1 + r2)) "diff --repair of the truncated tables while they are updated: exit 0"
run_diff 7 "$GEN"
is "$rc" 0 "diff after the race finds nothing: no older value restored"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/diff7.out" | head -20

# --- bad input: exit 2 with a clear message -------------------------------------------------
run_diff 8 "$GEN" --table no_such_table
[ $rc -eq 2 ] && grep -q -- "--table no_such_table names no table" "$WORK/diff8.err" && grep -q "HINT:.*$KS.hotels" "$WORK/diff8.err"
ok $? "an unknown --table: exit 2, the tables listed"
"$CQLBRIDGE" plan -q --schema hotel_rel --workload "$HOTEL/workload.sql" --keyspace other_ks \
	--foreign-schema "$FS" --replication-factor 1 -o "$WORK/other" > /dev/null 2>&1
run_diff 9 "$WORK/other"
[ $rc -eq 2 ] && grep -q "reads keyspace $KS, but .* is a plan of keyspace other_ks" "$WORK/diff9.err"
ok $? "a plan directory of another keyspace: exit 2"
q "DROP VIEW cqlbridge_$KS.guests_src; CREATE VIEW cqlbridge_$KS.guests_src AS SELECT guest_id, first_name FROM hotel_rel.guest" > /dev/null
run_diff 10 "$GEN" --table guests
[ $rc -eq 2 ] && grep -q "source view cqlbridge_$KS.guests_src changed since the plan" "$WORK/diff10.err"
ok $? "a changed source view: exit 2"
cql "DROP TABLE $KS.hotels"
run_diff 11 "$GEN" --table hotels
[ $rc -eq 2 ] && grep -qi "hotels" "$WORK/diff11.err" && grep -q "cqlbridge: diff of $KS.hotels" "$WORK/diff11.err"
ok $? "a dropped Cassandra table: exit 2, the table named"
[ $rc -eq 2 ] || sed 's/^/# /' "$WORK/diff11.err"
run_diff 13 "$GEN" --table hotels,reservations --jobs 2
[ $rc -eq 2 ] && grep -q "^cqlbridge: diff of $KS.hotels" "$WORK/diff13.err" && ! grep -q "^diff:" "$WORK/diff13.out"
ok $? "--jobs 2, one worker's table dropped in Cassandra: exit 2, its error shown, no report"
[ $rc -eq 2 ] || sed 's/^/# /' "$WORK/diff13.err"
run_diff 12 "$GEN" --consistency SOMETIMES
[ $rc -eq 2 ] && grep -q 'invalid value "SOMETIMES" for --consistency' "$WORK/diff12.err"
ok $? "a bad --consistency: usage error, exit 2"
run_diff 14 "$GEN" --jobs 0
[ $rc -eq 2 ] && grep -q 'invalid value "0" for --jobs (an integer from 1 to 64)' "$WORK/diff14.err"
ok $? "a bad --jobs: usage error, exit 2"

exit $((TAP_FAILED > 0))
