#!/usr/bin/env bash
#
# tests/bridge/test_app_data.sh - cqlbridge on data written the way
# applications write it (issue 26): migrations/app (an enum, domains, jsonb,
# arrays, interval, money, citext, char(n), inet/cidr; timestamps from
# now() and clock_timestamp(), with microseconds).
#
#   plan   -> the type mappings and sub-millisecond counts in model.txt; the
#             key (user_id, created_at) that merges rows at the millisecond
#             is reported LOSSY and the table keyed by signal_id too
#   edges  -> each edge value Cassandra cannot store gets its planned
#             outcome: plan refuses, naming the column, before anything is
#             written (NULL array element, numeric NaN, infinite timestamp,
#             inet with a netmask, interval of mixed signs); key columns of
#             interval, jsonb and array type are refused with the reason
#   apply  -> every foreign table equals its source view (compare_all), the
#             Python driver reads the same (read_back_all); verify passes
#   sync   -> 4 clients writing now() and clock_timestamp() while sync
#             is installed: no transaction fails, the tables still equal
#             their views, verify passes
#   hotel, telemetry -> their generated data made application-style
#             (migrations/lib/app_style.sql: microseconds, odd text), small
#             scale: plan, apply, every table equals its view, verify passes
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST, CQLBRIDGE,
# BRIDGE_APP_DB / BRIDGE_APP_KEYSPACE (default bridge_app_test).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_APP_DB:-bridge_app_test}
KS=${BRIDGE_APP_KEYSPACE:-bridge_app_test}
FS=app_cql
APP=$REPO/migrations/app
BRIDGE_KEYSPACES=("$KS")
bridge_begin app
tap_plan 66

fresh_db "$CQL_HOST"
load_migrations "$APP"

# --- plan: mappings, precision, the lossy key --------------------------------------
plan_into app_rel "$APP/workload.sql" "plan of the application-style workload"
M=$GEN/model.txt
subms=$(q "SELECT count(*) FILTER (WHERE placed_at <> date_trunc('milliseconds', placed_at)) || ' of ' || count(*) FROM app_rel.orders")
grep -qF "placed_at: stored at the millisecond (date_trunc, as cql_fdw's default timestamp_precision 'truncate'); $subms values have sub-millisecond digits" "$M"
ok $? "model.txt counts the sub-millisecond values of placed_at ($subms)"
merged=$(q "SELECT count(*) - count(DISTINCT (user_id, date_trunc('milliseconds', created_at))) FROM app_rel.signal")
[ "$merged" -gt 0 ] || diag "the data has no millisecond trap (merged = $merged)"
grep -qF "MR5: key (user_id, created_at) of app_rel.signal is LOSSY at the millisecond Cassandra stores timestamps at: $merged rows would merge" "$M"
ok $? "the key (user_id, created_at) is reported lossy at the millisecond ($merged rows)"
grep -qF "key: ((user_id), created_at, signal_signal_id)" "$M"
ok $? "and the signals are keyed by signal_id too (MR5 with the primary key)"
rows=$(q "SELECT count(*) FROM app_rel.signal")
grep -qF "derived ((user_id), created_at, signal_signal_id): unique ($rows distinct keys, $rows rows)" "$M"
ok $? "the MR5 check on the stored values finds the derived key unique"
grep -q "status: enum: its label as text" "$M" && grep -q "K  status .*text" "$M"
ok $? "an enum partition key is stored as its label"
grep -q "clusters by the bytes of the label, not by the enum's order" "$M"
ok $? "an enum clustering column says why it keeps the label"
grep -q "email: domain over text CHECK" "$M" && grep -q "qty: domain over integer CHECK ((VALUE > 0)): stored as int" "$M"
ok $? "domains: base type and constraint in the model"
grep -q "attrs .*text " "$M" && grep -q "tags .*list<text>" "$M" && grep -q "delivery .*duration" "$M" &&
	grep -q "total .*decimal" "$M" && grep -q "seen_at .*list<timestamp>" "$M"
ok $? "jsonb -> text, text[] -> list<text>, interval -> duration, money -> decimal, timestamptz[] -> list<timestamp>"
grep -q 'status app_rel.order_status OPTIONS' "$GEN/002_foreign_tables.sql" &&
	grep -q 'email app_rel.email OPTIONS' "$GEN/002_foreign_tables.sql" &&
	if [ "$(q "SELECT count(*) FROM pg_extension WHERE extname = 'citext'")" = 1 ]; then
		grep -q 'nick public.citext OPTIONS' "$GEN/002_foreign_tables.sql"
	else
		diag "citext is not installed: nick is text" && grep -q 'nick text OPTIONS' "$GEN/002_foreign_tables.sql"
	fi
ok $? "the foreign tables declare the application's enum, domain and citext (where installed)"
grep -q "order_times: list of timestamps: elements stored at the millisecond" "$M" &&
	grep -q "order_time_set: set of timestamps: elements stored at the millisecond (date_trunc), those equal there once" "$M"
ok $? "collections of timestamps (array_agg) store their elements at the millisecond"
grep -q "date_trunc('milliseconds', q.placed_at) AS placed_at" "$GEN/002_foreign_tables.sql"
ok $? "the source view stores placed_at at the millisecond"

# --- edge values: the plan says what happens before apply runs ---------------------------
# edge NAME COLUMN PATTERN SETUP UNDO: with SETUP applied, plan fails naming
# the column and PATTERN, writes no directory; UNDO restores the data
edge()
{
	local name=$1 col=$2 pattern=$3 d=$WORK/edge_$1
	q "$4" > /dev/null || bail "edge $name: setup failed"
	"$CQLBRIDGE" plan -q --schema app_rel --workload "$APP/workload.sql" --keyspace "$KS" \
		--foreign-schema "$FS" --replication-factor 1 -o "$d" > /dev/null 2> "$WORK/edge.err"
	local rc=$?
	[ $rc -ne 0 ] && grep -q "column \"$col\"" "$WORK/edge.err" && grep -qi "$pattern" "$WORK/edge.err" &&
		grep -q '^HINT:' "$WORK/edge.err" && [ ! -e "$d" ]
	local st=$?
	ok $st "$name: plan refuses it, naming column $col ($pattern), with a hint"
	[ $st -eq 0 ] || diag "exit status $rc" "$(cat "$WORK/edge.err")"
	q "$5" > /dev/null || bail "edge $name: undo failed"
}
edge null_element tags "1 arrays with a NULL element" \
	"UPDATE app_rel.orders SET tags = ARRAY['a', NULL] WHERE order_id = 2" \
	"UPDATE app_rel.orders SET tags = ARRAY['a'] WHERE order_id = 2"
edge numeric_nan weight "2 NaN or +-Infinity" \
	"UPDATE app_rel.orders SET weight = 'NaN' WHERE order_id = 3; UPDATE app_rel.orders SET weight = '-Infinity' WHERE order_id = 4" \
	"UPDATE app_rel.orders SET weight = 1 WHERE order_id IN (3, 4)"
edge infinite_timestamp placed_at "infinite" \
	"UPDATE app_rel.orders SET placed_at = 'infinity' WHERE order_id = 6" \
	"UPDATE app_rel.orders SET placed_at = now() WHERE order_id = 6"
edge inet_netmask ip "networks" \
	"UPDATE app_rel.customer SET ip = '10.1.0.0/16' WHERE customer_id = 1" \
	"UPDATE app_rel.customer SET ip = '10.1.0.1' WHERE customer_id = 1"
edge interval_signs delivery "different signs" \
	"UPDATE app_rel.orders SET delivery = interval '1 month -1 day' WHERE order_id = 7" \
	"UPDATE app_rel.orders SET delivery = interval '1 month 1 day' WHERE order_id = 7"
edge timestamp_array seen_at "infinite" \
	"UPDATE app_rel.orders SET seen_at = ARRAY[now(), '-infinity'] WHERE order_id = 8" \
	"UPDATE app_rel.orders SET seen_at = ARRAY[now()] WHERE order_id = 8"

# keyed by a type Cassandra cannot key: refused with the reason
keycase()
{
	local name=$1 col=$2 why=$3 w=$WORK/key_$1.sql
	printf -- '-- name: Q_%s\n-- params: customer_id bigint\n%s\n' "$name" "$4" > "$w"
	"$CQLBRIDGE" plan -q --schema app_rel --workload "$w" -o "$WORK/key_$1" > /dev/null 2> "$WORK/key.err"
	[ $? -ne 0 ] && grep -q "key column \"$col\"" "$WORK/key.err" && grep -q "$why" "$WORK/key.err"
	local st=$?
	ok $st "$name: a key column of that type is refused ($why)"
	[ $st -eq 0 ] || diag "$(cat "$WORK/key.err")"
}
keycase interval_key delivery "no duration in a primary key" \
	"SELECT o.customer_id, o.delivery, o.order_id FROM app_rel.orders o WHERE o.customer_id = :'customer_id'::bigint ORDER BY o.delivery, o.order_id;"
keycase jsonb_key attrs "equal json values can have different texts" \
	"SELECT o.customer_id, o.attrs, o.order_id FROM app_rel.orders o WHERE o.customer_id = :'customer_id'::bigint ORDER BY o.attrs, o.order_id;"
keycase array_key tags "frozen list" \
	"SELECT o.customer_id, o.tags, o.order_id FROM app_rel.orders o WHERE o.customer_id = :'customer_id'::bigint ORDER BY o.tags, o.order_id;"

# a parameter declared text and cast in the SQL (to the enum): the target
# statement casts it too, and plan proved it prepares (issue 39)
printf -- '%s\n' '-- name: Q_status_cast' '-- params: status text' \
	"SELECT o.status, o.order_id, o.total FROM app_rel.orders o WHERE o.status = :'status'::app_rel.order_status ORDER BY o.order_id;" \
	> "$WORK/cast.sql"
"$CQLBRIDGE" plan -q --schema app_rel --workload "$WORK/cast.sql" --keyspace "${KS}_cast" \
	--replication-factor 1 -o "$WORK/cast" > "$WORK/cast.out" 2>&1
ok $? "plan of a text parameter cast to an enum in the SQL" || diag "$(cat "$WORK/cast.out")"
grep -q 'WHERE t.status = $1::app_rel.order_status$' "$WORK/cast/004_verify.sql" &&
	psql -X -q -d "$DB" -c "BEGIN" -f "$WORK/cast/002_foreign_tables.sql" \
		-c "PREPARE t(text) AS $(sed -n '/^-- target$/,/;$/p' "$WORK/cast/004_verify.sql" | sed '1d;s/;$//')" -c "ROLLBACK" > "$WORK/cast.prep" 2>&1
ok $? "its target statement casts the parameter as the source does, and prepares" ||
	diag "$(grep -A4 '^-- target' "$WORK/cast/004_verify.sql")" "$(cat "$WORK/cast.prep")"

# --- apply, compare, verify ----------------------------------------------------------------
apply_and_compare "apply loads every table" "after apply"
read_back_all "after apply"
"$CQLBRIDGE" verify --samples 6 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c ' pass ' "$WORK/verify.out")" -eq 6 ]
ok $? "verify: 6 queries pass, each from one partition"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify.out"
got=$(q "SELECT pg_typeof(status)::text || ' ' || status FROM $FS.orders_by_status WHERE status = 'shipped' LIMIT 1")
is "$got" "app_rel.order_status shipped" "an enum column reads back as the enum, found by its label"

# --- sync with concurrent application writes (now(), clock_timestamp()) ---------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs the triggers"
# 4 concurrent clients (psql, so no pgbench is needed), 10 transactions each
{
	for i in $(seq 10); do
		cat <<'EOF'
BEGIN;
INSERT INTO app_rel.orders (customer_id, status, attrs, tags, total, delivery, qty, weight, seen_at) VALUES (1 + (random() * 39)::int, 'new', '{"via": "client", "n": 1.50}', ARRAY['pg', 'client', 'pg'], 9.99, interval '2 days 0.000001 seconds', 2, 0.5, ARRAY[now(), clock_timestamp()]);
UPDATE app_rel.orders SET status = 'paid', placed_at = clock_timestamp(), tags = '{}' WHERE order_id = (SELECT 1 + (random() * 399)::int);
INSERT INTO app_rel.signal (user_id, kind) VALUES (1 + (random() * 9)::int, 'new');
UPDATE app_rel.customer SET created_at = now(), nick = 'Client' WHERE customer_id = (SELECT 1 + (random() * 39)::int);
COMMIT;
EOF
	done
} > "$WORK/client.sql"
before=$(q "SELECT count(*) FROM app_rel.orders")
pids=()
for c in 1 2 3 4; do
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$WORK/client.sql" > "$WORK/client$c.out" 2>&1 &
	pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
	wait "$pid" || failed=$((failed + 1))
done
after=$(q "SELECT count(*) FROM app_rel.orders")
[ "$failed" -eq 0 ] && [ $((after - before)) -eq 40 ]
ok $? "4 concurrent clients writing now() and clock_timestamp() commit all 40 transactions with sync installed"
[ "$failed" -eq 0 ] || sed 's/^/# /' "$WORK"/client*.out | head -15
compare_all "after the concurrent writes"
"$CQLBRIDGE" verify --samples 6 "$GEN" > "$WORK/verify2.out" 2>&1
rc=$?
ok $rc "verify passes after the concurrent writes"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify2.out"

# --- the hotel and telemetry plans on application-style data --------------------------------
# other_plan NAME DIR SCHEMA [generate.sql variables]: schema, generated
# data, app_style.sql; plan into keyspace ${KS}_NAME, apply, compare, verify
KS0=$KS
other_plan()
{
	local name=$1 dir=$2 schema=$3 f
	shift 3
	for f in "$dir"/schema/*.sql; do
		qf -f "$f" > /dev/null || bail "schema file $f failed"
	done
	qf "$@" -f "$dir/generate.sql" > /dev/null || bail "$dir/generate.sql failed"
	qf -v schema="$schema" -f "$REPO/migrations/lib/app_style.sql" > /dev/null || bail "app_style.sql failed"
	KS=${KS0}_$name
	FS=${name}_cql
	GEN=$WORK/gen_$name
	BRIDGE_KEYSPACES+=("$KS")
	plan_into "$schema" "$dir/workload.sql" "$name: plan of application-style data"
	apply_and_compare "$name: apply loads every table" "$name"
	"$CQLBRIDGE" verify --samples 5 "$GEN" > "$WORK/verify_$name.out" 2>&1
	rc=$?
	ok $rc "$name: verify passes"
	[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify_$name.out"
}
other_plan hotel "$REPO/migrations/hotel" hotel_rel -v scale=2
other_plan telemetry "$REPO/migrations/telemetry" telemetry_rel -v days=2 -v alerts=200
subms=$(q "SELECT count(*) FILTER (WHERE reported_at <> date_trunc('milliseconds', reported_at)) || ' of ' || count(*) FROM telemetry_rel.readings")
grep -qF "reported_at: stored at the millisecond (date_trunc, as cql_fdw's default timestamp_precision 'truncate'); $subms values" "$GEN/model.txt" &&
	[ "${subms%% *}" -gt 0 ]
ok $? "telemetry: app_style.sql gave the readings microseconds, counted by plan ($subms)"

exit $((TAP_FAILED > 0))
