#!/bin/bash
# readme_example.sh
#	The ten lines of SQL of README.md work as printed: the ```sql block
#	under "## Ten lines of SQL" runs in a fresh database against CQL_HOST
#	(its host '127.0.0.1' replaced by CQL_HOST), the EXPLAIN shows the
#	plan the README shows (one partition, the Remote CQL line), and the
#	query returns the newest row with now()'s time truncated to the
#	millisecond.  So a README edit that breaks the example fails here.
#	TAP output.
#
# Environment: CQL_HOST, PGHOST/PGPORT/PGUSER (a superuser; psql in PATH),
# README_DB (default cql_fdw_readme).
cd "$(dirname "$0")/../.." || exit 1
HOST=${CQL_HOST:-127.0.0.1}
DB=${README_DB:-cql_fdw_readme}
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/readme_example.XXXXXX")
cleanup()
{
	psql -X -q -d "$DB" -c "SELECT cql_execute('cass', 'DROP KEYSPACE IF EXISTS shop')" > /dev/null 2>&1
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

echo "1..5"
awk '/^## Ten lines of SQL/ { sec = 1 } sec && /^```sql$/ { on = 1; next } on && /^```$/ { exit } on' \
	README.md > "$WORK/example.sql"
lines=$(grep -c . "$WORK/example.sql")
grep -q "host '127.0.0.1'" "$WORK/example.sql" && [ "$lines" -ge 8 ] && [ "$lines" -le 12 ]
ok $? "README.md has the example: $lines lines of SQL"
sed -i "s/host '127.0.0.1'/host '$HOST'/" "$WORK/example.sql"

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" > /dev/null
# a keyspace left by an earlier run would keep its rows: start without it
psql -X -q -d "$DB" -c "CREATE EXTENSION cql_fdw" -c "CREATE SERVER tmp FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$HOST')" \
	-c "CREATE USER MAPPING FOR CURRENT_USER SERVER tmp" -c "SELECT cql_execute('tmp', 'DROP KEYSPACE IF EXISTS shop')" \
	-c "DROP EXTENSION cql_fdw CASCADE" > /dev/null 2>&1
psql -X -v ON_ERROR_STOP=1 -d "$DB" -f "$WORK/example.sql" > "$WORK/out" 2>&1
rc=$?
ok $rc "the example runs without an error"
[ $rc = 0 ] || sed 's/^/# /' "$WORK/out" | tail -5

grep -q 'Access: single partition' "$WORK/out" &&
	grep -qF 'Remote CQL: SELECT "placed", "total" FROM "shop"."orders_by_customer" WHERE "customer" = ? LIMIT ?' "$WORK/out"
ok $? "the EXPLAIN is the README's: one partition, LIMIT pushed down"
# the plan block of the README equals the EXPLAIN output (and is there:
# a README without it, or an EXPLAIN without a plan, compares two empty
# files)
awk '/^The plan shows/ { sec = 1 } sec && /^```$/ { if (on) exit; on = 1; next } on' README.md > "$WORK/plan.readme"
grep -A12 '^ *QUERY PLAN' "$WORK/out" | tail -n +3 | head -n "$(wc -l < "$WORK/plan.readme")" | sed 's/ *$//' > "$WORK/plan.out"
diff -u "$WORK/plan.readme" "$WORK/plan.out" > "$WORK/plan.diff" &&
	grep -q 'Foreign Scan' "$WORK/plan.readme" && grep -q 'Remote CQL' "$WORK/plan.readme"
ok $? "the plan printed in README.md is the plan PostgreSQL shows ($(wc -l < "$WORK/plan.readme") lines)"
[ -s "$WORK/plan.diff" ] && sed 's/^/# /' "$WORK/plan.diff" | head -12

row=$(psql -X -A -t -d "$DB" -c "SELECT note, total, placed = date_trunc('milliseconds', placed) FROM shop.orders_by_customer WHERE customer = 1 ORDER BY placed DESC LIMIT 1" 2>&1)
[ "$row" = "first|9.50|t" ]
ok $? "the query returns the newest row, its now() truncated to milliseconds ($row)"

exit $((failed > 0))
