#!/usr/bin/env bash
#
# tests/bridge/test_workload.sh - "cqlbridge workload": the workload file
# drafted from pg_stat_statements, on the hotel example.
#
#   an application simulation (tests/bridge/workload_sim/run.sh: pgbench
#   running Q1-Q9 of migrations/hotel/workload.sql with random parameters
#   in realistic proportions, statements the mapping cannot serve, IN lists
#   of two and three values, and a write mix), then
#     -> the draft: twelve blocks (Q1-Q9, an aggregate within one
#        partition, a "latest row" lookup whose LIMIT 1 pg_stat_statements
#        made a parameter, and an IN list), ranked by total time, parameters typed
#        and named after their column, calls as pg_stat_statements counted
#        them (two entries that differ in numbering merged, IN lists as
#        = ANY)
#     -> the unservable statements commented out with plan's reason
#     -> plan of the draft: the same query tables and keys as the plan of
#        the hand-written workload (the golden model.txt) plus the
#        aggregate's, and the write profile turned into Cassandra writes
#        per table
#     -> --top, --min-calls, and every error: not installed, no statement
#        of the schema, a role without pg_read_all_stats, usage errors
#
# Needs a server with pg_stat_statements in shared_preload_libraries
# (scripts/pg.sh sets it where the version ships it: 15 and 18; the 16
# wheel does not, and the suite reports one skipped check there).  The Cassandra node is
# never contacted: plan reads only PostgreSQL.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQLBRIDGE, BRIDGE_WORKLOAD_DB
# (default bridge_workload_test).  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_WORKLOAD_DB:-bridge_workload_test}
HOTEL=$REPO/migrations/hotel
SIM=$HERE/workload_sim
READER=bridge_wl_reader

# --- skip where pg_stat_statements cannot run ---------------------------------------
version=$(psql -X -A -t -d postgres -c "SHOW server_version" 2>/dev/null)
avail=$(psql -X -A -t -d postgres -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_stat_statements'" 2>/dev/null)
preload=$(psql -X -A -t -d postgres -c "SHOW shared_preload_libraries" 2>/dev/null)
if [ -z "$version" ]; then
	echo "1..1"
	echo "not ok 1 - no PostgreSQL server answers (PGHOST/PGPORT)"
	exit 1
fi
# (a skipped check, not a whole-file skip: scripts/lib_tap.sh counts a
# whole-file skip without a "tap-needs" service that is down as a failure)
if [ "$avail" != 1 ]; then
	echo "1..1"
	echo "ok 1 # SKIP PostgreSQL $version has no pg_stat_statements (the PostgreSQL 16 wheel of the test bed does not ship it)"
	exit 0
fi
case ",${preload// /}," in
	*,pg_stat_statements,*) ;;
	*)
		# where the module exists, scripts/pg.sh start preloads it: not a skip
		echo "1..1"
		echo "not ok 1 - pg_stat_statements is not in shared_preload_libraries of this server (scripts/pg.sh start sets it; start the server afresh)"
		exit 1
		;;
esac

BRIDGE_ROLES=("$READER")
bridge_begin workload

# --- setup ---------------------------------------------------------------------------
fresh_db 127.0.0.1
load_migrations "$HOTEL"
q "CREATE EXTENSION pg_stat_statements" > /dev/null || bail "CREATE EXTENSION pg_stat_statements failed"
qf -f "$SIM/setup.sql" > /dev/null || bail "workload_sim/setup.sql failed"

# wl ARGS: cqlbridge workload on $DB, stdout and stderr to $WORK/wl.out/.err
wl()
{
	"$CQLBRIDGE" workload -d "$DB" "$@" > "$WORK/wl.out" 2> "$WORK/wl.err"
}

# served FILE: the names of the blocks not commented out
served() { awk '/^-- not_served:/ {skip = 1} /^-- name:/ {if (!skip) print $3; skip = 0}' "$1"; }

# block FILE NAME: the lines of a block
block() { awk -v n="$2" '/^-- name:/ {on = ($3 == n)} /^$/ {on = 0} on' "$1"; }

tap_plan 46

# --- errors before the application runs ------------------------------------------------
q "SELECT pg_stat_statements_reset()" > /dev/null
wl --schema hotel_rel
rc=$?
[ $rc -ne 0 ] && grep -q "pg_stat_statements has no SELECT on schema \"hotel_rel\" in database \"$DB\"" "$WORK/wl.err" &&
	grep -q "^HINT:  Let the application run" "$WORK/wl.err"
ok $? "no statement of the schema yet: an error with a hint (exit $rc)"

q "DROP EXTENSION pg_stat_statements" > /dev/null
wl --schema hotel_rel
rc=$?
[ $rc -ne 0 ] && grep -q "pg_stat_statements is not installed in database \"$DB\"" "$WORK/wl.err" &&
	grep -q "^HINT:  Run CREATE EXTENSION pg_stat_statements in this database (the library is preloaded already)" "$WORK/wl.err"
ok $? "extension not installed: an error, and the hint says the library is preloaded (exit $rc)"
q "CREATE EXTENSION pg_stat_statements" > /dev/null

wl --schema no_such_schema
grep -q 'schema "no_such_schema" (--schema) does not exist' "$WORK/wl.err"
ok $? "an unknown --schema is an error"

"$CQLBRIDGE" workload -d "$DB" > /dev/null 2> "$WORK/wl.err"
rc=$?
[ $rc -eq 2 ] && grep -q "workload needs --schema" "$WORK/wl.err"
ok $? "no --schema: usage error, exit 2 (got $rc)"
"$CQLBRIDGE" workload -d "$DB" --schema hotel_rel --top 0 > /dev/null 2> "$WORK/wl.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'invalid value "0" for --top' "$WORK/wl.err"
ok $? "--top 0: usage error, exit 2 (got $rc)"
"$CQLBRIDGE" workload -d "$DB" --schema hotel_rel --samples 3 > /dev/null 2> "$WORK/wl.err"
[ $? -eq 2 ] && grep -q 'option "--samples" is not an option of this command' "$WORK/wl.err"
ok $? "an option of another command is a usage error"

# --- the application ---------------------------------------------------------------------
# workload_sim/run.sh: Q1-Q9 of migrations/hotel/workload.sql in proportions
# of a booking site (availability and hotel pages most), an aggregate
# within one partition, the latest reservation of a hotel, three kinds of statements the mapping cannot
# serve, IN lists of two and three hotels,
# the writes; then Q9 over the simple protocol, numbered differently.
q "SELECT pg_stat_statements_reset()" > /dev/null
bash "$SIM/run.sh" "$DB" 3 > "$WORK/pgbench.out" 2>&1
rc=$?
ok $rc "workload_sim/run.sh runs the simulated application for 3 s"
[ $rc -eq 0 ] || diag "$(tail -20 "$WORK/pgbench.out")"
grep -q "number of failed transactions: 0 " "$WORK/pgbench.out"
ok $? "no transaction of the simulation failed"

# --- the draft ----------------------------------------------------------------------------
DRAFT=$WORK/workload.sql
wl --schema hotel_rel -o "$DRAFT"
rc=$?
ok $rc "cqlbridge workload writes the draft"
[ $rc -eq 0 ] || diag "$(cat "$WORK/wl.err")"
grep -q "^cqlbridge workload: 15 queries (12 served, 3 commented out), 4 write statements, written to $DRAFT" "$WORK/wl.out"
ok $? "it reports 15 queries, 12 served, 3 commented out, 4 write statements"
is "$(served "$DRAFT" | wc -l)" 12 "twelve blocks are served"

# ranked by total time: Q<rank> in order, times from pg_stat_statements
names=$(served "$DRAFT" | sed 's/_.*//' | tr '\n' ' ')
case $names in Q[0-9]*) ok 0 "blocks named Q<rank>_<entity>_by_<columns>: $names" ;; *) ok 1 "block names: $names" ;; esac
pcts=$(sed -n 's/^-- description: .*, \([0-9.]*\)% of the read time.*/\1/p' "$DRAFT" | tr '\n' ' ')
sorted=$(printf '%s\n' $pcts | sort -g -r | tr '\n' ' ')
is "$pcts" "$sorted" "ranked by total time (shares of the read time descending)"

# parameters: typed by PostgreSQL, named after the compared column
q8=$(served "$DRAFT" | grep '_guest_by_last_name$')
block "$DRAFT" "$q8" | grep -qx -- "-- params: last_name text"
ok $? "Q8's parameter: last_name text ($q8)"
q4=$(served "$DRAFT" | grep '_room_availability_by_hotel_id_date$')
block "$DRAFT" "$q4" | grep -qx -- "-- params: hotel_id text, date_from date, date_to date"
ok $? "Q4's parameters: the equality and both bounds of the range, typed ($q4)"
block "$DRAFT" "$q4" | grep -q "AND ra.date >= :'date_from'::date"
ok $? "Q4's statement uses :'date_from'::date"
q5=$(served "$DRAFT" | grep '_room_by_hotel_id_room_number$')
block "$DRAFT" "$q5" | grep -qx -- "-- params: hotel_id text, room_number smallint"
ok $? "Q5's room_number is smallint ($q5)"

# calls as counted: Q6 (one entry), Q9 (two entries, numbered differently)
want=$(q "SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%WHERE r.confirm_number = \$1%'")
q6=$(served "$DRAFT" | grep '_reservation_by_confirm_number$')
got=$(block "$DRAFT" "$q6" | sed -n 's/^-- calls: //p')
is "$got" "$want" "Q6's calls are pg_stat_statements' ($want)"
block "$DRAFT" "$q6" | grep -Eq -- "^-- description: $want calls, mean [0-9.]+ ms, 1\.00 rows per call, [0-9.]+% of the read time$"
ok $? "Q6's description: calls, mean time, rows per call, share"
want=$(q "SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%hotel_rel.guest_address%'")
n9=$(q "SELECT count(*) FROM pg_stat_statements WHERE query LIKE '%hotel_rel.guest_address%'")
q9=$(served "$DRAFT" | grep '_guest_by_guest_id$')
got=$(block "$DRAFT" "$q9" | sed -n 's/^-- calls: //p')
is "$got" "$want" "Q9's $n9 entries merged, calls summed ($want)"
block "$DRAFT" "$q9" | grep -q "; $n9 statements merged; 5 jsonb_build_object keys restored from the column names"
ok $? "Q9's description says so, and that the 5 keys of jsonb_build_object were restored"
block "$DRAFT" "$q9" | grep -q "'street', a.street, 'city', a.city,"
ok $? "Q9's jsonb_build_object keys are back in the statement"

# unservable: commented out, with plan's reason
nc=$(grep -c '^-- not_served:' "$DRAFT")
is "$nc" 3 "three statements are commented out with a reason"
grep -A6 "^-- not_served: the query has no equality predicate" "$DRAFT" | grep -q "^-- WHERE g.last_name LIKE :'p1' || :'p2'"
ok $? "LIKE: commented out (no equality predicate, MR2)"
grep -A6 "^-- not_served: " "$DRAFT" | grep -q "^-- SELECT h.id, h.name FROM hotel_rel.hotel h WHERE h.id = :'p1' OR h.name = :'p2';"
ok $? "OR: commented out"
grep -A6 "^-- not_served: " "$DRAFT" | grep -q "^-- WHERE lower(g.last_name) = lower(:'p1')"
ok $? "a function on the key column: commented out"
# the blocks of a statement: the name of the served block whose SQL has TEXT
named_by() { awk -v t="$2" '/^-- not_served:/ {skip = 1} /^-- name:/ {n = $3; if (skip) n = ""; skip = 0} n != "" && index($0, t) == 1 {print n}' "$1"; }
qa=$(named_by "$DRAFT" "SELECT count(*) AS reservations")
block "$DRAFT" "$qa" | grep -q "^SELECT count(\*) AS reservations FROM hotel_rel.reservation r WHERE r.hotel_id = :'hotel_id'"
ok $? "an aggregate within one partition: drafted as a served block (${qa:-none})"
ql=$(named_by "$DRAFT" "SELECT r.confirm_number, r.start_date FROM")
block "$DRAFT" "$ql" | grep -qx -- "-- params: hotel_id text, row_limit bigint" &&
	block "$DRAFT" "$ql" | grep -q "ORDER BY r.start_date DESC, r.confirm_number DESC LIMIT :'row_limit'::bigint;$"
ok $? "the latest reservation of a hotel: LIMIT 1, a parameter in pg_stat_statements, drafted as LIMIT :'row_limit' (${ql:-none})"
want=$(q "SELECT sum(calls) FROM pg_stat_statements WHERE query LIKE '%WHERE h.id IN (%'")
inb=$(grep -B6 "^SELECT h.id, h.name FROM hotel_rel.hotel h WHERE h.id = ANY(:'id'::text\[\]) ORDER BY h.id;" "$DRAFT")
echo "$inb" | grep -qx -- "-- calls: $want"
ok $? "IN lists of two and three values: one served = ANY statement with their calls summed ($want)"

# the write profile
for rel in reservation room_availability guest; do
	grep -Eq "^-- writes: [0-9]+\.[0-9]{3} hotel_rel\.$rel$" "$DRAFT"
	ok $? "write profile line of hotel_rel.$rel"
done

# --- plan of the draft -------------------------------------------------------------------
"$CQLBRIDGE" plan -d "$DB" --schema hotel_rel --workload "$DRAFT" -o "$WORK/plan" > "$WORK/plan.out" 2> "$WORK/plan.err"
rc=$?
ok $rc "plan accepts the draft as it is"
[ $rc -eq 0 ] || diag "$(cat "$WORK/plan.err")"
tables() { awk '/^table / {t = $2} /^  key: / {sub(/^  key: /, ""); print t " " $0}' "$1" | sort; }
{
	tables "$HOTEL/generated/model.txt"
	echo "hotel.reservations_by_hotel_id ((hotel_id), start_date, confirm_number)"
	echo "hotel.reservations_by_hotel_id ((hotel_id), reservation_confirm_number)"
} | sort > "$WORK/want.tables"
# the ranking (random calls) decides which of two same-named tables gets _2
tables "$WORK/plan/model.txt" | sed -E 's/^(hotel\.[a-z_]+)_[0-9]+ /\1 /' | sort > "$WORK/got.tables"
diff "$WORK/want.tables" "$WORK/got.tables" > "$WORK/tables.diff"
ok $? "the query tables and keys of the plan of migrations/hotel/workload.sql, the latest reservation's and the aggregate's ($(wc -l < "$WORK/want.tables") tables)"
[ -s "$WORK/want.tables" ] || diag "no tables read from the golden model.txt"
[ -s "$WORK/tables.diff" ] && diag "$(cat "$WORK/tables.diff")"

# writes/s of reservations_by_guest_last_name = guest rate x mean + reservation rate x mean
rg=$(sed -n 's/^-- writes: \([0-9.]*\) hotel_rel\.guest$/\1/p' "$DRAFT")
rr=$(sed -n 's/^-- writes: \([0-9.]*\) hotel_rel\.reservation$/\1/p' "$DRAFT")
mg=$(awk '/^table hotel.reservations_by_guest_last_name/ {on = 1} /^table / && !/reservations_by_guest_last_name/ {on = 0} on && /hotel_rel.guest: max/ {print $5}' "$WORK/plan/model.txt" | tr -d ,)
mr=$(awk '/^table hotel.reservations_by_guest_last_name/ {on = 1} /^table / && !/reservations_by_guest_last_name/ {on = 0} on && /hotel_rel.reservation: max/ {print $5}' "$WORK/plan/model.txt" | tr -d ,)
want=$(awk -v a="$rg" -v b="$mg" -v c="$rr" -v d="$mr" 'BEGIN {printf "%.3f", a * b + c * d}')
grep -q "^  hotel.reservations_by_guest_last_name: $want writes/s (hotel_rel.guest $rg/s x $mg, hotel_rel.reservation $rr/s x $mr)" "$WORK/plan/model.txt"
ok $? "model.txt: Cassandra writes/s of reservations_by_guest_last_name = $rg x $mg + $rr x $mr = $want"
grep -q "^## Write profile" "$WORK/plan/report.md" && grep -q "^| reservations_by_guest_last_name | $want |" "$WORK/plan/report.md"
ok $? "report.md has the write profile"
grep -Eq "^  reservations_by_guest_last_name +$want/s" "$WORK/plan.out"
ok $? "plan's summary prints the writes per table"

# cqlbridge's own statements (plan measured the data with the workload's
# joins) are not in the statistics: the same 14 queries are drafted again
wl --schema hotel_rel
is "$(grep -c '^-- name:' "$WORK/wl.out")" 15 "plan's own statements do not reach pg_stat_statements: still 15 queries"

# a relation that feeds no table, and a malformed profile line
sed 's/^-- writes: \([0-9.]*\) hotel_rel\.guest$/&\n-- writes: 1.500 hotel_rel.no_such/' "$DRAFT" > "$WORK/extra.sql"
"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --workload "$WORK/extra.sql" -o "$WORK/plan2" > /dev/null 2>&1 &&
	grep -q "^  hotel_rel.no_such (1.500 rows/s written) feeds no query table$" "$WORK/plan2/model.txt"
ok $? "a profile relation that feeds no query table is listed as such"
sed 's/^-- writes: \([0-9.]*\) hotel_rel\.guest$/-- writes: fast hotel_rel.guest/' "$DRAFT" > "$WORK/bad.sql"
"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --workload "$WORK/bad.sql" -o "$WORK/plan3" > /dev/null 2> "$WORK/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -q "bad.sql: bad write profile line \"-- writes: fast hotel_rel.guest\"" "$WORK/bad.err" &&
	grep -q "^HINT:  Write it as \"-- writes: ROWS_PER_SECOND SCHEMA.TABLE\"" "$WORK/bad.err" && [ ! -e "$WORK/plan3" ]
ok $? "a malformed write profile line: plan stops with the line and a hint, exit 2 (got $rc)"

# --- --top and --min-calls ---------------------------------------------------------------
wl --schema hotel_rel --top 3
is "$(grep -c '^-- name:' "$WORK/wl.out")" 3 "--top 3 keeps three queries"
is "$(grep '^-- name:' "$WORK/wl.out" | awk '{print $3}' | tr '\n' ' ')" \
	"$(grep '^-- name:' "$DRAFT" | head -3 | awk '{print $3}' | tr '\n' ' ')" "--top 3: the first three of the ranking"
min=$(block "$DRAFT" "$q6" | sed -n 's/^-- calls: //p')
wl --schema hotel_rel --min-calls "$min"
want=$(awk -v m="$min" '/^-- calls:/ && $3 >= m {n++} END {print n}' "$DRAFT")
is "$(grep -c '^-- name:' "$WORK/wl.out")" "$want" "--min-calls $min keeps the $want queries called that often"

# --- a role that cannot read other roles' statements --------------------------------------
q "CREATE ROLE $READER LOGIN; GRANT USAGE ON SCHEMA hotel_rel TO $READER" > /dev/null
"$CQLBRIDGE" workload -d "$DB" -U "$READER" --schema hotel_rel > "$WORK/wl.out" 2> "$WORK/wl.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'statements of pg_stat_statements show "<insufficient privilege>" instead of their text' "$WORK/wl.err" &&
	grep -q "^HINT:  GRANT pg_read_all_stats TO $READER" "$WORK/wl.err"
ok $? "a role without pg_read_all_stats: an error naming the grant (exit $rc)"
q "GRANT pg_read_all_stats TO $READER" > /dev/null
"$CQLBRIDGE" workload -d "$DB" -U "$READER" --schema hotel_rel > "$WORK/wl.out" 2> "$WORK/wl.err"
[ $? -eq 0 ] && [ "$(served "$WORK/wl.out" | wc -l)" -eq 12 ]
ok $? "with pg_read_all_stats the same role drafts the twelve queries"

# an existing file is not overwritten
wl --schema hotel_rel -o "$DRAFT"
rc=$?
[ $rc -ne 0 ] && grep -q "\"$DRAFT\" exists" "$WORK/wl.err"
ok $? "an existing -o FILE is not overwritten (exit $rc)"

[ "$TAP_FAILED" -eq 0 ]
