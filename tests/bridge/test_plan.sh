#!/usr/bin/env bash
#
# tests/bridge/test_plan.sh - "cqlbridge plan" on the hotel example.
#
#   relational schema + generate.sql (defaults) in a database of its own
#     -> plan: every generated file equals migrations/hotel/generated/
#     -> the same data gives the same bytes (second run replaces the dir)
#     -> MR5: the published key of Q8 is reported lossy with the number of
#        rows lost that SQL counts on the data; the derived key is unique
#     -> wide partitions (--max-values): the coarsest date bucket that fits
#        (rows per bucket counted by SQL with cql_time_bucket), --growth and
#        --no-bucket
#     -> errors (unknown table, undeclared parameter, unsupported type, no
#        equality predicate, two range columns): non-zero exit, a message
#        naming the query, and no directory written (an existing plan
#        directory is left untouched)
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQLBRIDGE (default
# build/cqlbridge), BRIDGE_PLAN_DB (default bridge_plan_test).
# To refresh the golden files after an intended change:
#   cqlbridge plan -d DB --schema hotel_rel \
#     --workload migrations/hotel/workload.sql -o migrations/hotel/generated
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_PLAN_DB:-bridge_plan_test}
HOTEL=$REPO/migrations/hotel
GOLDEN=$HOTEL/generated
BRIDGE_KEEP=${BRIDGE_PLAN_KEEP:-}
bridge_begin plan

# --- setup ---------------------------------------------------------------------
# the server is never contacted: plan reads only PostgreSQL
fresh_db 127.0.0.1
load_migrations "$HOTEL"

# affected_rows SQL TYPE VALUE RESULT: the last line of RESULT, a query
# over the rows (temp table r) of an affected SQL run with $1 = VALUE
affected_rows()
{
	psql -X -q -A -t -d "$DB" -c "PREPARE a($2) AS $1" -c "CREATE TEMP TABLE r AS EXECUTE a($3)" \
		-c "$4" 2>&1 | tail -1
}

plan()
{
	"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel "$@"
}

tap_plan 48

# --- golden output ---------------------------------------------------------------
OUT=$WORK/gen
plan --workload "$HOTEL/workload.sql" -o "$OUT" > "$WORK/plan.out" 2> "$WORK/plan.err"
rc=$?
ok $rc "plan of the hotel workload succeeds"
[ $rc -eq 0 ] || diag "$(cat "$WORK/plan.err")"
same_files "$GOLDEN" "$OUT" migrations/hotel/generated \
	model.txt report.md 001_schema.cql 002_foreign_tables.sql 003_load.sql 004_verify.sql 005_sync.sql \
	logical.dot physical.dot
[ ! -e "$OUT.tmp" ]
ok $? "no $OUT.tmp left behind"

plan --workload "$HOTEL/workload.sql" -o "$OUT" > /dev/null 2>&1
diff -r -x "*.svg" -x report.html "$GOLDEN" "$OUT" > /dev/null 2>&1
ok $? "a second run replaces the directory with identical bytes"

# --- MR5 on the data ----------------------------------------------------------------
total=$(q "SELECT count(*) FROM hotel_rel.reservation r JOIN hotel_rel.guest g USING (guest_id)")
lost=$(q "SELECT count(*) - count(DISTINCT (g.last_name, r.hotel_id)) FROM hotel_rel.reservation r JOIN hotel_rel.guest g USING (guest_id)")
[ "$lost" -gt 0 ] || diag "the data has no MR5 trap (lost = $lost)"
grep -qF "Q8_reservations_by_guest: published reservation.reservations_by_guest ((guest_last_name), hotel_id): LOSSY (MR5): $lost of $total rows lost" "$OUT/model.txt"
ok $? "model.txt flags Q8's published key as lossy: $lost of $total rows lost"
grep -qF "derived ((guest_last_name), hotel_id, start_date, room_number): unique ($total distinct keys, $total rows)" "$OUT/model.txt"
ok $? "model.txt shows the derived Q8 key unique on the data"
grep -q "Q8_reservations_by_guest .*LOSSY" "$OUT/report.md"
ok $? "report.md flags Q8's published key as lossy"
grep -qF "Q1_hotels_by_poi: published hotel.hotels_by_poi ((poi_name), hotel_id): unique on the data" "$OUT/model.txt"
ok $? "Q1's published key is unique on the data (per-city POI names)"

# the source views (002) exist, so every affected SQL can be prepared
qf -1 -f "$OUT/002_foreign_tables.sql" > /dev/null 2>&1
ok $? "002_foreign_tables.sql runs in one transaction"
naff=$(grep -c '^-- affected: ' "$OUT/003_load.sql")
is "$naff" "20" "003 has one affected line per source relation of each table (20)"
bad=0
while IFS= read -r line; do
	sql=${line#*| }
	q "PREPARE a AS $sql; DEALLOCATE a;" > /dev/null 2>&1 || { bad=$((bad + 1)); diag "does not prepare: $sql"; }
done < <(grep '^-- affected: ' "$OUT/003_load.sql")
is "$bad" "0" "every affected SQL prepares against the source views"

# a sublink relation reaches its target rows through the correlation (Q2)
aff=$(sed -n 's/^-- affected: hotel_rel.point_of_interest (id) | \(.*hotels_src.*\)$/\1/p' "$OUT/003_load.sql")
poi=$(q "SELECT poi_id FROM hotel_rel.hotel_poi GROUP BY poi_id ORDER BY count(*) DESC, poi_id LIMIT 1")
want=$(q "SELECT string_agg(hotel_id, ',' ORDER BY hotel_id) FROM hotel_rel.hotel_poi WHERE poi_id = $poi")
got=$(affected_rows "$aff" int "$poi" "SELECT string_agg(id, ',' ORDER BY id) FROM r")
is "$got" "$want" "affected SQL of point_of_interest (sublink of Q2) returns the hotels near it"

# a top-level relation: renaming a hotel touches one hotels_by_poi_name row per nearby POI
aff=$(sed -n 's/^-- affected: hotel_rel.hotel (id) | \(.*hotels_by_poi_name_src.*\)$/\1/p' "$OUT/003_load.sql")
hid=$(q "SELECT hotel_id FROM hotel_rel.hotel_poi GROUP BY hotel_id ORDER BY count(*) DESC, hotel_id LIMIT 1")
want=$(q "SELECT count(*) FROM hotel_rel.hotel_poi WHERE hotel_id = '$hid'")
got=$(affected_rows "$aff" text "'$hid'" "SELECT count(*) FROM r")
is "$got" "$want" "affected SQL of hotel finds its $want hotels_by_poi_name rows"
grep -qE "^    hotel_rel.hotel: max $want, " "$OUT/model.txt"
ok $? "write amplification of hotel into hotels_by_poi_name is $want"

# --- rules visible in the model ------------------------------------------------------
grep -qE '^  S  rate +decimal' "$OUT/model.txt"
ok $? "Q5: rate is a static column"
grep -qE '^     emails +set<text>' "$OUT/model.txt" && grep -qE '^     phone_numbers +list<text>' "$OUT/model.txt" &&
	grep -qE '^     addresses +map<text, frozen<address>>' "$OUT/model.txt"
ok $? "Q9: emails set, phone_numbers list, addresses map of the address UDT"

# --- wide partitions: buckets chosen on the data -----------------------------------------
# --max-values 100 makes Q4's table (hotel, then date ranges) too wide: Nv
# is one value per row, so with the default growth x2 a bucket may hold 50
# rows.  SQL counts the rows per bucket with cql_fdw's own bucket function.
WIDE=$WORK/wide
plan --workload "$HOTEL/workload.sql" --max-values 100 -o "$WIDE" > /dev/null 2> "$WORK/wide.err"
ok $? "plan with --max-values 100 succeeds"
bmax() { q "SELECT max(c) FROM (SELECT count(*) c FROM hotel_rel.room_availability WHERE is_available GROUP BY hotel_id, cql_time_bucket('$1', date)) s"; }
b2=$(bmax '2 days')
bw=$(bmax week)
[ "$b2" -le 50 ] && [ "$bw" -gt 50 ] || diag "the data no longer separates 2 days ($b2 rows) from a week ($bw rows)"
grep -qF "key: ((hotel_id, date_bucket), date, room_number)" "$WIDE/model.txt" &&
	grep -qF "bucket: 2 days of date (applied)" "$WIDE/model.txt" &&
	grep -qE "^      2 days +max $b2 rows, .*: chosen$" "$WIDE/model.txt" &&
	grep -qE "^      week +max $bw rows, .*: too wide$" "$WIDE/model.txt"
ok $? "Q4's table gets the coarsest date bucket that fits: 2 days ($b2 rows; a week has $bw)"
! grep -q "wide partition: up to" "$WIDE/model.txt" &&
	grep -qF "date_bucket date OPTIONS (column_name 'date_bucket', kind 'partition_key', position '1', cql_type 'date', bucket '2 days', bucket_of 'date')" "$WIDE/002_foreign_tables.sql" &&
	grep -qF "cql_time_bucket('2 days', q.date) AS date_bucket" "$WIDE/002_foreign_tables.sql" &&
	grep -qF -- "-- buckets: 2 days of date" "$WIDE/004_verify.sql"
ok $? "the bucketed table is no longer wide; foreign table, source view and verify know the bucket"
plan --workload "$HOTEL/workload.sql" --max-values 100 --growth 1 -o "$WORK/wide1" > /dev/null 2>&1 &&
	grep -qF "bucket: week of date (applied)" "$WORK/wide1/model.txt"
ok $? "--growth 1 (no headroom) lets the coarser week bucket ($bw rows) fit"
plan --workload "$HOTEL/workload.sql" --max-values 100 --no-bucket -o "$WORK/wide0" > /dev/null 2>&1 &&
	grep -qF "bucket: 2 days of date (not applied (--no-bucket))" "$WORK/wide0/model.txt" &&
	grep -q "wide partition: up to" "$WORK/wide0/model.txt" &&
	grep -qF "key: ((hotel_id), date, room_number)" "$WORK/wide0/model.txt"
ok $? "--no-bucket keeps the table unbucketed, with the warning and the bucket it would take"

# --- merging and columns without a source ----------------------------------------------
cat > "$WORK/merge.sql" <<'EOW'
-- merge test: Q5 and a query with a subset of its columns and its parameters
-- in another order share one table; Q6n has a derived column.

-- name: Q5_amenities_by_room
-- description: nightly rate and amenities of a room
-- params: hotel_id text, room_number smallint
-- target: hotel.amenities_by_room
SELECT r.hotel_id, r.room_number, r.rate, a.name AS amenity_name, a.description
FROM hotel_rel.room r
LEFT JOIN hotel_rel.room_amenity ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
LEFT JOIN hotel_rel.amenity a ON a.id = ra.amenity_id
WHERE r.hotel_id = :'hotel_id'
  AND r.room_number = :'room_number'::smallint
ORDER BY a.name;

-- name: Q5b_amenity_names
-- description: only the amenity names of a room
-- params: room_number smallint, hotel_id text
-- target: hotel.amenities_by_room
SELECT r.hotel_id, r.room_number, a.name AS amenity_name
FROM hotel_rel.room r
LEFT JOIN hotel_rel.room_amenity ra ON ra.hotel_id = r.hotel_id AND ra.room_number = r.room_number
LEFT JOIN hotel_rel.amenity a ON a.id = ra.amenity_id
WHERE r.hotel_id = :'hotel_id'
  AND r.room_number = :'room_number'::smallint
ORDER BY a.name;

-- name: Q6n_nights
-- description: a reservation with its number of nights
-- params: confirm_number text
-- target: reservation.reservations_by_confirmation
SELECT r.confirm_number, r.end_date - r.start_date AS nights
FROM hotel_rel.reservation r
WHERE r.confirm_number = :'confirm_number';
EOW
MERGE=$WORK/merge
plan --workload "$WORK/merge.sql" -o "$MERGE" > /dev/null 2> "$WORK/merge.err"
ok $? "plan of the merge workload succeeds"
is "$(grep -c '^table ' "$MERGE/model.txt")" "2" "Q5 and Q5b share one table (2 tables for 3 queries)"
is "$(sed -n 's/^-- table: //p' "$MERGE/004_verify.sql" | head -2 | sort -u)" "hotel.rooms_by_hotel_id_room_number" \
	"004 sends Q5 and Q5b to the same table"
grep -q "Q6n_nights: column nights has no source column" "$MERGE/model.txt"
ok $? "the derived column nights is reported as having no source column"

# --- errors: message naming the query, nothing written --------------------------------
hdr='-- test workload
'
errcase()
{
	local name=$1 query=$2 pattern=$3 text=$4
	local w=$WORK/$name.sql d=$WORK/$name.out
	printf '%s\n%s\n' "$hdr" "$text" > "$w"
	plan --workload "$w" -o "$d" > /dev/null 2> "$WORK/$name.err"
	local rc=$?
	[ $rc -ne 0 ] && grep -q "$query" "$WORK/$name.err" && grep -qi "$pattern" "$WORK/$name.err"
	ok $? "$name: non-zero exit and a message naming $query ($pattern)"
	[ ! -e "$d" ] && [ ! -e "$d.tmp" ]
	ok $? "$name: no directory written"
	[ $rc -ne 0 ] || diag "exit status 0"
}

errcase unknown_table Q1_nothing "does not exist" '-- name: Q1_nothing
-- description: reads a table that does not exist
-- params: id text
-- target: x.y
SELECT n.id FROM hotel_rel.no_such_table n WHERE n.id = :'"'"'id'"'"';'

errcase missing_param Q2_undeclared "not declared" '-- name: Q2_undeclared
-- description: uses a parameter it does not declare
-- params: hotel_id text
-- target: x.y
SELECT h.id, h.name FROM hotel_rel.hotel h WHERE h.id = :'"'"'hotel_id'"'"' AND h.name = :'"'"'name'"'"';'

errcase unsupported_type Q3_range "no CQL mapping: it is a range type" '-- name: Q3_range
-- description: an output column of a type without CQL mapping
-- params: hotel_id text
-- target: x.y
SELECT h.id, int4range(1, 2) AS price FROM hotel_rel.hotel h WHERE h.id = :'"'"'hotel_id'"'"';'

errcase no_equality Q4_range_only "no equality predicate" '-- name: Q4_range_only
-- description: a date range without an equality: no partition key
-- params: start_date date
-- target: x.y
SELECT ra.hotel_id, ra.date, ra.room_number FROM hotel_rel.room_availability ra WHERE ra.date >= :'"'"'start_date'"'"'::date ORDER BY ra.date;'

errcase two_ranges Q5_two_ranges "ranges on two columns" '-- name: Q5_two_ranges
-- description: ranges on two columns (MR3 allows one)
-- params: hotel_id text, start_date date, room_number smallint
-- target: x.y
SELECT ra.hotel_id, ra.date, ra.room_number FROM hotel_rel.room_availability ra WHERE ra.hotel_id = :'"'"'hotel_id'"'"' AND ra.date >= :'"'"'start_date'"'"'::date AND ra.room_number > :'"'"'room_number'"'"'::smallint;'

# a failing plan into an existing plan directory leaves it as it was
printf '%s\n%s\n' "$hdr" '-- name: Q9_bad
-- description: bad
-- params: id text
-- target: x.y
SELECT n.id FROM hotel_rel.no_such_table n WHERE n.id = :'"'"'id'"'"';' > "$WORK/bad.sql"
plan --workload "$WORK/bad.sql" -o "$OUT" > /dev/null 2>&1
[ $? -ne 0 ] && diff -r -x "*.svg" -x report.html "$GOLDEN" "$OUT" > /dev/null 2>&1
ok $? "a failed plan leaves the existing directory untouched"

# a directory that is not a plan directory is refused before anything is written
mkdir -p "$WORK/notplan" && touch "$WORK/notplan/keep.txt"
plan --workload "$HOTEL/workload.sql" -o "$WORK/notplan" > /dev/null 2> "$WORK/notplan.err"
rc=$?
[ $rc -ne 0 ] && grep -q "not a cqlbridge plan directory" "$WORK/notplan.err" &&
	[ -z "$(ls -d "$WORK"/notplan.tmp* 2> /dev/null)" ] && [ -e "$WORK/notplan/keep.txt" ]
ok $? "a directory that is not a plan directory is refused, with no temporary directory left"


# --- lib.sh's comparison can fail (issue 28): no tables, failing queries -----------------
# (in subshells, their "not ok" lines discarded: each must record a failure)
(FTS=() VIEWS=() COLS=() TAP_FAILED=0; compare_all "self-test" > /dev/null; [ "$TAP_FAILED" -eq 1 ])
ok $? "compare_all fails on an empty table list"
out=$(fingerprint cqlbridge_no_such.t a)
[ $? -eq 1 ] && grep -q "failed: .*does not exist" <<< "$out"
ok $? "fingerprint fails on an SQL error and says so, instead of printing nothing"
(FTS=(cqlbridge_no_such.t) VIEWS=(cqlbridge_no_such.t) COLS=(a) TAP_FAILED=0
	compare_all "self-test" > /dev/null; [ "$TAP_FAILED" -eq 1 ])
ok $? "compare_all fails when both sides' queries fail alike"

exit $((TAP_FAILED > 0))
