#!/usr/bin/env bash
#
# tests/bridge/test_merge.sh - queries that share a table (merged tables).
#
# The order-entry schema and workload of tests/bridge/merge (no foreign
# keys: some customers name a missing warehouse, some orders a missing
# customer):
#   plan   -> Q1 and Q2 (same rows, different columns), Q3, Q4 (Q1 plus
#             a to-one join to a warehouse, a district) and Q10 (Q1 plus a
#             to-one LEFT JOIN) share one table: the union of the columns
#             and a marker column per inner join; Q6
#             (orders with customer and warehouse joined, planned first)
#             and Q7 (the orders alone) share one, Q7's rows defining it;
#             Q5 (a constant filter), Q9 (a filter on the joined relation)
#             and Q8 (a to-many join) get tables of their own; model.txt,
#             report.md, report.html, --json and the output say which
#             queries each table serves and the writes saved
#   apply  -> every foreign table equals its source view
#   verify -> every query gives the same answers on both sides (the joined
#             queries read only the rows their inner join keeps)
#   diff   -> no difference
#   sync   -> a new warehouse, a deleted district, changed customers and
#             orders reach the merged tables; verify and diff pass again
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_MERGE_DB /
# BRIDGE_MERGE_KEYSPACE (default bridge_merge_test).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_MERGE_DB:-bridge_merge_test}
KS=${BRIDGE_MERGE_KEYSPACE:-bridge_merge_test}
FS=merge_cql
FIX=$HERE/merge
BRIDGE_KEYSPACES=("$KS")
bridge_begin merge
tap_plan 35

fresh_db "$CQL_HOST"
qf -f "$FIX/schema.sql" > /dev/null 2>&1 || bail "$FIX/schema.sql failed"

# --- plan ------------------------------------------------------------------------------
"$CQLBRIDGE" plan --schema mrg_rel --workload "$FIX/workload.sql" \
	--keyspace "$KS" --foreign-schema "$FS" --server cqlbridge \
	--replication-factor 1 -o "$GEN" --json "$WORK/plan.json" > "$WORK/plan.out" 2> "$WORK/plan.err"
ok $? "plan of the merge workload" || { sed 's/^/# /' "$WORK/plan.err"; bail "plan failed"; }
M=$GEN/model.txt
serves() { sed -n "/^table $KS\.$1\$/,/^  serves:/s/^  serves: //p" "$M"; }

is "$(grep -c '^table ' "$M")" 5 "10 queries, 5 tables"
is "$(serves customers)" "Q1_customer Q2_customer_credit Q3_customer_tax Q4_customer_district Q10_customer_warehouse_name" \
	"customers serves Q1, Q2 (same rows), Q3, Q4 (to-one joins added), Q10 (a to-one LEFT JOIN)"
is "$(serves orders_by_o_w_id_o_d_id)" "Q6_district_orders_named Q7_district_orders" \
	"the orders of a district with and without the joined names share a table"
is "$(serves customers_2):$(serves customers_3):$(serves orders_by_o_w_id_o_d_id_2)" \
	"Q5_bad_credit:Q9_customer_low_tax:Q8_order_lines" \
	"a constant filter, a filter on the joined relation and a to-many join are not merged"
block=$(sed -n "/^table $KS\.customers\$/,/^  MR5/p" "$M")
is "$(grep -oE '^ +(c_first|c_balance|c_credit|c_discount|w_tax|d_name|d_tax|warehouse_w_id|district_d_w_id|w_name) ' <<< "$block" | tr -d ' ' | paste -sd ' ')" \
	"c_first c_balance c_credit c_discount w_tax warehouse_w_id d_name d_tax district_d_w_id w_name" \
	"customers holds the union of the columns and a marker per joined relation"
grep -qE '^     w_name +text +<- mrg_rel.warehouse.w_name  \[regular: static for Q6_district_orders_named' "$M"
ok $? "a column static for the joined query only is regular in the merged table"
grep -q '^    mrg_rel.customer: a change is written to 1 table instead of 5 ' "$M" &&
	grep -q '^    Q3_customer_tax reads the rows where warehouse_w_id IS NOT NULL' "$M"
ok $? "model.txt: the writes saved per relation and the rows each joined query reads"
grep -qF 'Q3_customer_tax: published ? ((c_w_id), c_d_id, c_id): unique on the data (0 of 240 rows lost)' "$M"
ok $? "a joined query's published key is checked on its own rows (240 customers with a warehouse)"
grep -q '^Merged: one table serves 5 queries' "$GEN/report.md" && grep -q '<h2>Merged tables</h2>' "$GEN/report.html"
ok $? "report.md and report.html show the merged tables"
is "$(jq -c '[.tables[] | select(.table == "customers") | .serves, .writes_saved_per_change], [.queries[] | select(.rows_where_not_null) | .query + "=" + .rows_where_not_null]' "$WORK/plan.json" | paste -sd ' ')" \
	'[["Q1_customer","Q2_customer_credit","Q3_customer_tax","Q4_customer_district","Q10_customer_warehouse_name"],5] ["Q3_customer_tax=warehouse_w_id","Q4_customer_district=district_d_w_id","Q6_district_orders_named=customer_c_w_id"]' \
	"--json: what each table serves, the writes saved, the row filters"
grep -q '^  customers serves Q1_customer, Q2_customer_credit, Q3_customer_tax, Q4_customer_district, Q10_customer_warehouse_name (merged, 5 writes saved per change):$' "$WORK/plan.out"
ok $? "the output names the merged tables"

# the generated statements
target() { sed -n "/^-- query: $1\$/,/^-- query: /p" "$GEN/004_verify.sql" | sed -n '/^-- target$/,/;$/p'; }
grep -q 'AND t.warehouse_w_id IS NOT NULL;$' <<< "$(target Q3_customer_tax)" &&
	! grep -q 'IS NOT NULL' <<< "$(target Q1_customer)$(target Q2_customer_credit)$(target Q7_district_orders)$(target Q10_customer_warehouse_name)"
ok $? "004: a joined query's target reads the rows of its inner join, the others every row"
is "$(meta "$GEN/003_load.sql" affected | sed -n 's/^mrg_rel\.\([a-z_]*\) .*FROM cqlbridge_'"$KS"'\.customers_src .*/\1/p' | paste -sd ' ')" \
	"customer warehouse district warehouse" "003: the merged table is affected by every relation of its queries"

# --- apply, verify, diff ------------------------------------------------------------------
apply_and_compare "apply loads every table" "after apply"
is "$(q "SELECT count(*), count(warehouse_w_id), count(district_d_w_id) FROM cqlbridge_$KS.customers_src")" \
	"$(q "SELECT count(*), count(*) FILTER (WHERE c_w_id IN (SELECT w_id FROM mrg_rel.warehouse)), count(*) FROM mrg_rel.customer")" \
	"the view has every customer once; the markers are set where the join finds a row"
"$CQLBRIDGE" verify --samples 8 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ' pass ' "$WORK/verify.out")" -eq 10 ]
ok $? "verify: the 10 queries give the same answers on both sides" || sed 's/^/# /' "$WORK/verify.out"
is "$(q "SELECT count(*) FROM $FS.customers WHERE c_w_id = 4 AND c_d_id = 1 AND c_id = 1")$(q "SELECT count(*) FROM $FS.customers WHERE c_w_id = 4 AND c_d_id = 1 AND c_id = 1 AND warehouse_w_id IS NOT NULL")" \
	"10" "a customer of a missing warehouse is in the table for Q1, not for Q3"
"$CQLBRIDGE" diff -q "$GEN" > "$WORK/diff.out" 2>&1
ok $? "diff: no difference" || sed 's/^/# /' "$WORK/diff.out" | head -20

# --- sync ---------------------------------------------------------------------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs the triggers" || sed 's/^/# /' "$WORK/sync.out"
q "INSERT INTO mrg_rel.warehouse VALUES (4, 'W4', 0.0500);
   UPDATE mrg_rel.warehouse SET w_tax = 0.0999, w_name = 'W1x' WHERE w_id = 1;
   DELETE FROM mrg_rel.district WHERE d_w_id = 2 AND d_id = 3;
   UPDATE mrg_rel.customer SET c_last = 'Changed', c_credit = 'BC' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 4;
   INSERT INTO mrg_rel.customer VALUES (1, 1, 21, 'F21', 'L21', 'GC', 0.0100, 5.00);
   UPDATE mrg_rel.orders SET o_c_id = 22 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 3;
   DELETE FROM mrg_rel.warehouse WHERE w_id = 3;" > "$WORK/change.out" 2>&1
ok $? "relational changes commit with sync installed" || sed 's/^/# /' "$WORK/change.out"
compare_all "after the changes"
is "$(q "SELECT w_tax, warehouse_w_id FROM $FS.customers WHERE c_w_id = 4 AND c_d_id = 1 AND c_id = 1")" \
	"0.0500|4" "a new warehouse sets the tax and the marker of its customers"
"$CQLBRIDGE" verify --samples 8 "$GEN" > "$WORK/verify2.out" 2>&1
ok $? "verify passes again after the synced changes" || sed 's/^/# /' "$WORK/verify2.out"
"$CQLBRIDGE" diff -q "$GEN" > "$WORK/diff2.out" 2>&1
ok $? "diff after the synced changes: no difference" || sed 's/^/# /' "$WORK/diff2.out" | head -20
"$CQLBRIDGE" sync -q --uninstall "$GEN" > /dev/null 2>&1
ok $? "sync --uninstall"

exit $((TAP_FAILED > 0))
