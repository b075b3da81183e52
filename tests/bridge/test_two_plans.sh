#!/usr/bin/env bash
#
# tests/bridge/test_two_plans.sh - two plan directories in one database.
#
#   plan A (keyspace <ks>_a) and plan B (keyspace <ks>_b) of the hotel
#   schema both have a target table "hotels", with different source views
#   (B leaves one hotel out and has fewer columns); both read hotel_rel.hotel
#     -> each plan has its own source view, sync functions and triggers
#     -> with both synced, a change to the hotel B leaves out reaches A's
#        Cassandra table (A's flush does not use B's view, so does not
#        delete the row) and not B's; every foreign table equals its view
#     -> sync --uninstall of B leaves A's triggers; changes still reach A
#     -> apply of B (--restart) does not reinstall B's sync because A's is
#        installed, keeps A's progress rows, and A's foreign table still
#        writes at COMMIT
#   Rows are read back from Cassandra through the foreign tables.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_TWO_DB /
# BRIDGE_TWO_KEYSPACE (default bridge_two; the keyspaces are <ks>_a, <ks>_b).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_TWO_DB:-bridge_two}
KS=${BRIDGE_TWO_KEYSPACE:-bridge_two}
KA=${KS}_a
KB=${KS}_b
BRIDGE_KEYSPACES=("$KA" "$KB")
BRIDGE_KEEP=${BRIDGE_TWO_KEEP:-}
bridge_begin two

tap_plan 22

fresh_db "$CQL_HOST"
for k in "$KA" "$KB"; do
	q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $k')" > /dev/null ||
		bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
done
load_migrations "$REPO/migrations/hotel"

# the hotel plan B leaves out
X=$(q "SELECT id FROM hotel_rel.hotel ORDER BY id LIMIT 1")
[ -n "$X" ] || bail "no hotel"

cat > "$WORK/a.sql" <<'EOF'
-- plan A: hotels with their points of interest

-- name: Q2_hotel_by_id
-- description: a hotel
-- params: hotel_id text
SELECT h.id, h.name, h.phone,
       (SELECT array_agg(DISTINCT p.name ORDER BY p.name)
        FROM hotel_rel.hotel_poi hp
        JOIN hotel_rel.point_of_interest p ON p.id = hp.poi_id
        WHERE hp.hotel_id = h.id) AS pois
FROM hotel_rel.hotel h
WHERE h.id = :'hotel_id';
EOF
cat > "$WORK/b.sql" <<EOF
-- plan B: hotels but one, names only

-- name: Q2b_hotel_name
-- description: the name of a hotel
-- params: hotel_id text
SELECT h.id, h.name
FROM hotel_rel.hotel h
WHERE h.id = :'hotel_id' AND h.id <> '$X';
EOF

for p in a b; do
	k=${KS}_$p
	"$CQLBRIDGE" plan -q --schema hotel_rel --keyspace "$k" --replication-factor 1 \
		--workload "$WORK/$p.sql" -o "$WORK/$p" > "$WORK/plan_$p.out" 2>&1 ||
		{ sed 's/^/# /' "$WORK/plan_$p.out"; bail "plan $p failed"; }
done
is "$(meta "$WORK/a/003_load.sql" table) $(meta "$WORK/b/003_load.sql" table)" "$KA.hotels $KB.hotels" \
	"both plans have a target table named hotels"

"$CQLBRIDGE" apply -q "$WORK/a" > "$WORK/apply_a.out" 2>&1 && "$CQLBRIDGE" sync -q "$WORK/a" > "$WORK/sync_a.out" 2>&1
ok $? "apply and sync of plan A"
"$CQLBRIDGE" apply -q "$WORK/b" > "$WORK/apply_b.out" 2>&1 && "$CQLBRIDGE" sync -q "$WORK/b" > "$WORK/sync_b.out" 2>&1
rc=$?
ok $rc "apply and sync of plan B"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/apply_b.out" "$WORK/sync_b.out"

VA=$(meta "$WORK/a/003_load.sql" source_view)
VB=$(meta "$WORK/b/003_load.sql" source_view)
FA=$(meta "$WORK/a/003_load.sql" foreign_table)
FB=$(meta "$WORK/b/003_load.sql" foreign_table)
[ "$VA" != "$VB" ]
ok $? "each plan has its own source view ($VA, $VB)"
nh=$(q "SELECT count(*) FROM hotel_rel.hotel")
is "$(q "SELECT count(*) FROM $VA")/$(q "SELECT count(*) FROM $VB")" "$nh/$((nh - 1))" \
	"A's view still has every hotel after B's apply, B's one less"
is "$(q "SELECT count(*) FROM pg_proc WHERE proname = 'sync_flush'")" "2" "two flush functions, one per plan"

# triggers of one plan: those calling a function of its schema
ntrig()
{
	q "SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
	   WHERE p.pronamespace = to_regnamespace('cqlbridge_$1')"
}
[ "$(ntrig "$KA")" -gt 0 ] && [ "$(ntrig "$KB")" -gt 0 ]
ok $? "both plans' triggers are installed on the relations ($(ntrig "$KA") and $(ntrig "$KB"))"

cassandra_name()
{
	q "SELECT coalesce(string_agg(name, ','), '(none)') FROM $1 WHERE id = '$X'"
}

# a change to the hotel B leaves out
q "UPDATE hotel_rel.hotel SET name = 'renamed one' WHERE id = '$X'" > /dev/null
ok $? "UPDATE of hotel $X with both plans synced"
is "$(cassandra_name "$FA")" "renamed one" "A's Cassandra row of $X has the new name (not deleted by B's view)"
is "$(cassandra_name "$FB")" "(none)" "B's Cassandra table still has no row for $X"

Y=$(q "SELECT id FROM hotel_rel.hotel WHERE id <> '$X' ORDER BY id LIMIT 1")
q "UPDATE hotel_rel.hotel SET name = 'renamed two' WHERE id = '$Y'" > /dev/null
is "$(q "SELECT name FROM $FA WHERE id = '$Y'")|$(q "SELECT name FROM $FB WHERE id = '$Y'")" \
	"renamed two|renamed two" "a change to a hotel of both plans reaches both Cassandra tables"

same()
{
	local a b
	a=$(q "SELECT count(*) || md5(string_agg(ROW(id, name)::text, ';' ORDER BY id)) FROM $1")
	b=$(q "SELECT count(*) || md5(string_agg(ROW(id, name)::text, ';' ORDER BY id)) FROM $2")
	[ "$a" = "$b" ]
}
same "$FA" "$VA" && same "$FB" "$VB"
ok $? "every foreign table equals its own source view"

# --- uninstall B ----------------------------------------------------------------------
"$CQLBRIDGE" sync --uninstall "$WORK/b" > "$WORK/un_b.out" 2>&1
ok $? "sync --uninstall of plan B"
is "$(ntrig "$KB")" "0" "B's triggers are gone"
[ "$(ntrig "$KA")" -gt 0 ]
ok $? "A's triggers are still installed"
grep -q "sync: triggers removed (0 relations still have some)" "$WORK/un_b.out"
ok $? "uninstall counts only its own plan's triggers"
q "UPDATE hotel_rel.hotel SET name = 'renamed three' WHERE id = '$Y'" > /dev/null
is "$(q "SELECT name FROM $FA WHERE id = '$Y'")|$(q "SELECT name FROM $FB WHERE id = '$Y'")" \
	"renamed three|renamed two" "after B's uninstall a change reaches A, not B"

# --- apply B again: its own sync only, A's progress kept -------------------------------------
pa=$(q "SELECT count(*) FROM cqlbridge.apply_progress WHERE target LIKE '$KA.%'")
"$CQLBRIDGE" apply -q --restart "$WORK/b" > "$WORK/apply_b2.out" 2>&1
ok $? "apply --restart of plan B"
is "$(ntrig "$KB")" "0" "apply of B does not install B's sync because A's is installed"
is "$(q "SELECT count(*) FROM cqlbridge.apply_progress WHERE target LIKE '$KA.%'")" "$pa" \
	"A's progress rows are kept ($pa)"
is "$(q "SELECT count(*) FROM pg_foreign_table t, unnest(t.ftoptions) o
         WHERE t.ftrelid = '$FA'::regclass AND o = 'write_mode=on_commit'")" "1" \
	"A's foreign table still writes at COMMIT"
"$CQLBRIDGE" verify -q "$WORK/a" > "$WORK/verify_a.out" 2>&1
ok $? "verify of plan A passes"

exit $((TAP_FAILED > 0))
