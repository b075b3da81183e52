#!/usr/bin/env bash
#
# tests/bridge/test_oltp.sh - the shapes of a real OLTP workload (issue 40)
# over tests/bridge/oltp (an order-entry schema and 14 read statements of
# our own making):
#   - plan what can be served, report the rest: the two statements no
#     bounded plan serves (an aggregate across partitions, lookups from
#     no partition) are left out with
#     its rule and reason (stderr, report.md, report.html, --json) and
#     exit status 3; --strict refuses the plan and writes nothing; a
#     workload of nothing servable is an error
#   - aggregates within one partition (count, sum, min, max, avg, GROUP BY
#     a clustering column): the table of the rows, the target pushing the
#     aggregate down where Cassandra computes the same
#   - statements that share a key share a table (the union of columns)
#   - "latest row" lookups with LIMIT 1 and LIMIT $n, searched by a column
#     the statement does not select
#   - IN lists (= ANY, IN ($1, $2)) and ORs of equalities: the table of the
#     single-value form, one partition read per value
#   - a range read joined with per-row lookups: composed of two query
#     tables (its lookup table shared with the statement that reads stock
#     by key), the bound on lookups printed, a parameterized nested loop of
#     single-partition reads; the same without an equality on the drive is
#     left out (its lookups would not be bounded)
#   then apply, every foreign table equal to its source, verify (every
#     statement, the composition's parts too, the same answers), diff (no
#     difference); sync installed and the source changed: verify and diff
#     again; and the same plan in a second keyspace kept current by the
#     stream while pgbench writes (oltp/mix.pgbench: key moves, deletes,
#     re-inserts): verify and diff.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST, CQLBRIDGE.
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=bridge_oltp
KS=bridge_oltp
FS=${KS}_cql
KS2=bridge_oltps
BRIDGE_KEYSPACES=("$KS" "$KS2")
bridge_begin oltp
stream_suite

tap_plan 54

fresh_db "$CQL_HOST"
qf -f "$HERE/oltp/schema.sql" > /dev/null 2>&1
setup_step $? "the order-entry schema and its data" || bail "tests/bridge/oltp/schema.sql failed"

plan()
{
	"$CQLBRIDGE" plan --schema oltp --workload "$HERE/oltp/workload.sql" --keyspace "$KS" \
		--foreign-schema "$FS" --server cqlbridge --replication-factor 1 "$@"
}

# --- plan: what can be served, and the rest reported -------------------------------------
plan -o "$GEN" --json "$WORK/plan.json" > "$WORK/plan.out" 2> "$WORK/plan.err"
rc=$?
is "$rc" 3 "plan writes the plan and exits 3: a statement was left out"
[ -f "$GEN/004_verify.sql" ]
ok $? "the plan directory is written"
grep -q "^cqlbridge plan: 2 of 14 statements left out" "$WORK/plan.err" &&
	grep -q "O12_all_orders (.*workload.sql:63) \[MR2\]: an aggregate across partitions" "$WORK/plan.err"
ok $? "stderr names the statements left out, their lines, rules and reasons"
[ $? -eq 0 ] || diag "$(cat "$WORK/plan.err")"
grep -q "^## Statements left out" "$GEN/report.md" &&
	grep -q "^| O12_all_orders | 63 | MR2 | an aggregate across partitions .* | Serve it with a counter table or a summary table" "$GEN/report.md"
ok $? "report.md has the statement left out, with what would serve it"
grep -q '<h2 id="left-out">Statements left out</h2>' "$GEN/report.html" && grep -q "<td>O12_all_orders</td>" "$GEN/report.html"
ok $? "report.html has the section too"
jq() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$WORK/plan.json" "$1"; }
is "$(jq "[(l['query'], l['rule']) for l in d['left_out']]")" "[('O12_all_orders', 'MR2'), ('O14_low_stock_lines', 'MR2')]" "--json lists them under left_out"
grep -q "O14_low_stock_lines (.*workload.sql:73) \[MR2\]: .*; no composition either: neither relation is read by a partition (an equality on a parameter), so the lookups per call would not be bounded by the parameters" "$WORK/plan.err"
ok $? "a range joined with lookups whose drive is read by no partition is not composed: the lookups would not be bounded"
is "$(grep -c '^-- query: ' "$GEN/004_verify.sql")" 14 "004 verifies the 12 served statements and the composition's two parts"

# --- --strict and a workload nothing serves ------------------------------------------------
plan --strict -o "$WORK/strict" > "$WORK/strict.out" 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e "$WORK/strict" ] && grep -q "query O12_all_orders (.*): an aggregate across partitions" "$WORK/strict.out"
ok $? "--strict: all or nothing, the error as before, nothing written (exit $rc)"
grep -A4 "^-- name: O12_all_orders" "$HERE/oltp/workload.sql" > "$WORK/only12.sql"
"$CQLBRIDGE" plan --schema oltp --workload "$WORK/only12.sql" --keyspace "$KS" -o "$WORK/none" > "$WORK/none.out" 2>&1
rc=$?
[ $rc -eq 2 ] && [ ! -e "$WORK/none" ] && grep -q "no statement of the workload can be served" "$WORK/none.out"
ok $? "a workload of nothing servable is an error (exit $rc)"

# --- the tables ----------------------------------------------------------------------------
table_of() { jq "[q['table'] for q in d['queries'] if q['query'] == '$1'][0]"; }
key_of() { awk -v t="table $KS.$1" '$0 == t {on = 1; next} /^table / {on = 0} on && /^  key: / {sub(/^  key: /, ""); print; exit}' "$GEN/model.txt"; }
target_of() { awk -v n="-- query: $1" '$0 == n {on = 1} on && /^-- target/ {t = 1; next} on && t {print} on && t && /;$/ {exit}' "$GEN/004_verify.sql"; }

is "$(table_of O1_customer) $(table_of O5_last_order)" "$(table_of O2_customer_credit) $(table_of O6_recent_orders)" \
	"statements with the same key share a table: the customer's two, the latest order's two"
grep -q "^  customers serves O1_customer, O2_customer_credit (merged, 1 write saved per change):" "$WORK/plan.out"
ok $? "plan says which statements a merged table serves and the writes saved"
is "$(key_of "$(table_of O3_order_total)")" "((ol_w_id, ol_d_id, ol_o_id), order_line_ol_number)" \
	"aggregate within one order: the table of its lines, partitioned by the order"
target_of O3_order_total | grep -q "^SELECT count(\*) AS lines, sum((t.ol_amount)::numeric(6,2)) AS total, max(t.ol_delivery_d) AS delivered, avg(t.ol_quantity) AS avg_qty, min(t.ol_i_id) AS first_item$"
ok $? "its target computes count, sum, max, avg and min of the partition"
is "$(key_of "$(table_of O4_order_supply)")" "((ol_w_id, ol_d_id, ol_o_id), ol_supply_w_id, ol_number)" \
	"GROUP BY a column: it becomes the first clustering column"
target_of O4_order_supply | grep -q "^GROUP BY t.ol_supply_w_id$" && target_of O4_order_supply | grep -q "^ORDER BY qty DESC NULLS FIRST, ol_supply_w_id ASC NULLS LAST;$"
ok $? "its target groups by it and orders the groups as the statement does"
is "$(key_of "$(table_of O5_last_order)")" "((orders_o_w_id, orders_o_d_id, o_c_id), o_id)" \
	"latest order of a customer: partitioned by the customer (a column it does not select), clustered by o_id"
target_of O5_last_order | grep -q "^ORDER BY t.o_id DESC$" && target_of O5_last_order | grep -q "^LIMIT 1;$"
ok $? "its target: ORDER BY o_id DESC LIMIT 1"
target_of O6_recent_orders | grep -q '^LIMIT $4;$'
ok $? "a LIMIT parameter: LIMIT \$4 in the target"
is "$(key_of "$(table_of O8_items)")" "((i_id))" "an IN list: the table of the single-value form"
target_of O8_items | grep -q '^WHERE t.i_id = ANY(\$1);$'
ok $? "its target reads = ANY(\$1)"
target_of O9_two_districts | grep -q '^WHERE t.d_w_id = \$1 AND t.d_id IN (\$2, \$3);$'
ok $? "an OR of equalities: IN (\$2, \$3)"
is "$(jq "[q['composed']['lookup'] for q in d['queries'] if q['query'] == 'O11_order_lines_stock'][0]")" "$(table_of O10_stock)" \
	"the range-plus-lookup statement is composed; its lookup table is the stock-by-key table O10 reads"
bound=$(jq "[q['composed']['lookups_max'] for q in d['queries'] if q['query'] == 'O11_order_lines_stock'][0]")
grep -q "^| O11_order_lines_stock | .* | at most $bound (the widest drive partition measured" "$GEN/report.md" &&
	grep -q "^-- lookups: at most $bound per call$" "$GEN/004_verify.sql"
ok $? "report.md and 004 print the bound on lookups per call ($bound)"
target_of O11_order_lines_stock | grep -q '^JOIN bridge_oltp_cql.stocks u ON u.s_w_id = t.ol_w_id AND u.s_i_id = t.ol_i_id$'
ok $? "its target joins the two foreign tables on the lookup's key"

# --- apply, verify, diff -------------------------------------------------------------------
apply_and_compare "apply loads every table" "after apply"
"$CQLBRIDGE" verify --samples 6 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
ok $rc "verify: every statement gives the same answers on both sides"
[ $rc -eq 0 ] || diag "$(tail -25 "$WORK/verify.out")"
grep -q "^O11_order_lines_stock .* pass  *single partition; single partition" "$WORK/verify.out"
ok $? "the composition reads the drive's partition and one lookup partition per row"
grep -q "^O8_items .* pass  *[0-9]* partitions" "$WORK/verify.out"
ok $? "the IN list reads one partition per value"
"$CQLBRIDGE" diff "$GEN" > "$WORK/diff.out" 2>&1
ok $? "diff: no differences"

# the aggregates Cassandra computes the same are pushed down; the others
# are computed over the one partition read
t4=$(target_of O4_order_supply | sed 's/\$1/1/; s/\$2/2/; s/\$3/7/')
q "EXPLAIN (VERBOSE, COSTS OFF) ${t4%;}" > "$WORK/explain4.out" 2>&1
grep -q "Relations: Aggregate on" "$WORK/explain4.out" && grep -q "GROUP BY .*\"ol_supply_w_id\"" "$WORK/explain4.out"
ok $? "O4's count, sum and max per supplying warehouse are computed by Cassandra (GROUP BY the clustering column)"
[ $? -eq 0 ] || diag "$(cat "$WORK/explain4.out")"
t11=$(target_of O11_order_lines_stock | sed 's/\$1/1/; s/\$2/2/; s/\$3/300/; s/\$4/50/')
q "EXPLAIN (COSTS OFF) ${t11%;}" > "$WORK/explain11.out" 2>&1
grep -q "Nested Loop" "$WORK/explain11.out" && [ "$(grep -c "Access: single partition" "$WORK/explain11.out")" -eq 2 ]
ok $? "O11 runs as a nested loop of single-partition reads"
[ $? -eq 0 ] || diag "$(cat "$WORK/explain11.out")"
a=$(q "SELECT count(*) FROM oltp.order_line ol JOIN oltp.stock s ON s.s_w_id = ol.ol_w_id AND s.s_i_id = ol.ol_i_id WHERE ol.ol_w_id = 1 AND ol.ol_d_id = 2 AND ol.ol_o_id >= 300 AND s.s_quantity < 50")
b=$(q "SELECT count(*) FROM (${t11%;}) x")
[ "$a" -gt 0 ] && [ "$a" = "$b" ]
ok $? "O11 through the foreign tables: the source's $a rows"

# --- sync keeps them current ---------------------------------------------------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs"
[ $? -eq 0 ] || diag "$(cat "$WORK/sync.out")"
q "INSERT INTO oltp.orders VALUES (1, 2, 361, 5, now(), NULL, 2);
   INSERT INTO oltp.order_line VALUES (1, 2, 361, 1, 7, 2, 4, 12.34, NULL), (1, 2, 361, 2, 8, 1, 9, 1.50, NULL);
   INSERT INTO oltp.new_order VALUES (1, 2, 361);
   UPDATE oltp.stock SET s_quantity = s_quantity - 30 WHERE s_w_id = 1 AND s_i_id IN (7, 8, 13);
   UPDATE oltp.order_line SET ol_quantity = 10, ol_amount = ol_amount + 1 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 300;
   DELETE FROM oltp.new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = 358;
   UPDATE oltp.customer SET c_balance = c_balance + 5 WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = 3;" > /dev/null 2>&1
ok $? "the application writes (an order with its lines, stock, a delivery)"
"$CQLBRIDGE" verify --samples 6 "$GEN" > "$WORK/verify2.out" 2>&1
ok $? "verify after the writes: the same answers"
[ $? -eq 0 ] || diag "$(tail -25 "$WORK/verify2.out")"
"$CQLBRIDGE" diff "$GEN" > "$WORK/diff2.out" 2>&1
ok $? "diff after the writes: no differences"
[ $? -eq 0 ] || diag "$(tail -15 "$WORK/diff2.out")"
t3=$(target_of O3_order_total | sed 's/\$1/1/; s/\$2/2/; s/\$3/361/')
is "$(q "SELECT lines || ' ' || total FROM (${t3%;}) x" 2>&1)" "2 13.84" \
	"the new order's total through O3's target: 2 lines, 13.84"

# --- the stream keeps the same plan current in a second keyspace ---------------------------
GEN2=$WORK/gen2
"$CQLBRIDGE" plan -q --schema oltp --workload "$HERE/oltp/workload.sql" --keyspace "$KS2" \
	--foreign-schema "${KS2}_cql" --server cqlbridge --replication-factor 1 -o "$GEN2" > /dev/null 2>&1
[ $? -eq 3 ] && "$CQLBRIDGE" apply -q --no-load "$GEN2" > "$WORK/apply2.out" 2>&1
ok $? "the plan again in keyspace $KS2, its tables created empty" || diag "$(cat "$WORK/apply2.out")"
"$CQLBRIDGE" stream --flush-interval 100 "$GEN2" > "$WORK/stream.log" 2>&1 &
SPID=$!
wait_stream_phase "$KS2" streaming
ok $? "the stream loads the tables and streams" || diag "$(tail -5 "$WORK/stream.log")"
"$PGBENCH" -n -c 2 -T 5 -f "$HERE/oltp/mix.pgbench" "$DB" > "$WORK/mix.out" 2>&1
grep -q "number of failed transactions: 0 " "$WORK/mix.out"
ok $? "pgbench writes for 5 s (key moves, deletes, re-inserts), no transaction failed"
stream_caught_up "$KS2"
ok $? "the stream catches up"
"$CQLBRIDGE" diff "$GEN2" > "$WORK/diff3.out" 2>&1
ok $? "diff of the streamed keyspace: no differences (merged, aggregated, composed tables)"
[ $? -eq 0 ] || diag "$(tail -15 "$WORK/diff3.out")"
"$CQLBRIDGE" verify --samples 6 "$GEN2" > "$WORK/verify3.out" 2>&1
ok $? "verify of the streamed keyspace: the same answers"
[ $? -eq 0 ] || diag "$(tail -25 "$WORK/verify3.out")"
kill -INT "$SPID" 2> /dev/null
stream_exit 30
"$CQLBRIDGE" stream -q --drop "$GEN2" > /dev/null 2>&1
