#!/usr/bin/env bash
#
# tests/bridge/test_names.sh - cqlbridge with hostile catalog names.
#
#   a schema whose schema, table and column names hold a double quote, a
#   comma, "$$", "$cqlbridge$", spaces, upper case and non-ASCII letters
#     -> plan writes 003 whose metadata lines are exactly the expected ones
#        (names quoted once, commas inside names do not split lists)
#     -> apply, verify pass; sync: UPDATE/INSERT/DELETE reach Cassandra
#        (rows read back through the foreign tables), verify passes again
#     -> a role that may only write the relational table changes it and the
#        change reaches Cassandra (SECURITY DEFINER sync, no user mapping);
#        it may not call the sync functions, and a temp table it plants
#        under a sync table's name is refused
#   a primary-key column renamed to a name with a newline
#     -> plan refuses it with the name (\n shown) and a hint, writes nothing
#   a schema named like the plan's schema but owned by another role
#     -> apply refuses to adopt it (message + hint)
#   symbolic links planted where cqlbridge writes (DIR.tmp, FILE.tmp)
#     -> never followed
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_NAMES_DB /
# BRIDGE_NAMES_KEYSPACE (default bridge_names).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_NAMES_DB:-bridge_names}
KS=${BRIDGE_NAMES_KEYSPACE:-bridge_names}
WRITER=${DB}_writer
OTHER=${DB}_other
BRIDGE_KEYSPACES=("$KS" "${KS}_x")
BRIDGE_ROLES=("$WRITER" "$OTHER")
BRIDGE_KEEP=${BRIDGE_NAMES_KEEP:-}
bridge_begin names

tap_plan 31

fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"

# --- the hostile schema ---------------------------------------------------------------
# S: schema, H: hotel table, R: room table (SQL-quoted forms)
S='"Hx ""Rel"", $$ü"'
H="$S.\"Hotel \"\"Main\"\", \$\$ü\""
R="$S.\"room\$\$\""
qf <<EOF > /dev/null || bail "hostile schema failed"
CREATE SCHEMA $S;
CREATE TABLE $H (
  "Id, ""x"" \$\$" text PRIMARY KEY,
  "Näme" text,
  "Phone No" text,
  "\$cqlbridge\$ note" text
);
CREATE TABLE $R (
  "Hotel, Id" text NOT NULL REFERENCES $H,
  "Nº ""a""" int NOT NULL,
  "Rate \$\$" numeric,
  PRIMARY KEY ("Hotel, Id", "Nº ""a""")
);
INSERT INTO $H VALUES ('h1', 'Hötel Öne', '555-1', 'n1'), ('h2', 'Two', '555-2', 'n2'), ('h3', 'Three', NULL, NULL);
INSERT INTO $R VALUES ('h1', 1, 100), ('h1', 2, 120), ('h2', 1, 80), ('h3', 7, 99.5);
EOF

cat > "$WORK/workload.sql" <<'EOF'
-- hostile names

-- name: Q1_hotel_by_id
-- description: a hotel by its id
-- params: id text
SELECT h."Id, ""x"" $$", h."Näme", h."Phone No", h."$cqlbridge$ note"
FROM "Hx ""Rel"", $$ü"."Hotel ""Main"", $$ü" h
WHERE h."Id, ""x"" $$" = :'id';

-- name: Q2_rooms_by_hotel
-- description: rooms of a hotel with the hotel's name
-- params: hotel_id text
SELECT r."Hotel, Id", r."Nº ""a""", r."Rate $$", h."Näme" AS "Hotel Näme"
FROM "Hx ""Rel"", $$ü"."room$$" r
JOIN "Hx ""Rel"", $$ü"."Hotel ""Main"", $$ü" h ON h."Id, ""x"" $$" = r."Hotel, Id"
WHERE r."Hotel, Id" = :'hotel_id'
ORDER BY r."Nº ""a""";
EOF

plan()
{
	"$CQLBRIDGE" plan -q --schema 'Hx "Rel", $$ü' --workload "$WORK/workload.sql" \
		--replication-factor 1 "$@"
}

# --- plan -----------------------------------------------------------------------------------
plan --keyspace "$KS" -o "$GEN" > "$WORK/plan.out" 2>&1
rc=$?
ok $rc "plan of the hostile schema succeeds"
[ $rc -eq 0 ] || { sed 's/^/# /' "$WORK/plan.out"; bail "plan failed"; }

is "$(grep -c '^-- ' "$GEN/003_load.sql")" "23" "003 has exactly the expected comment lines (6 header, 8 + 9 metadata)"
is "$(meta "$GEN/003_load.sql" affected | wc -l)" "3" "three affected lines (one per source relation of each table)"
is "$(meta "$GEN/003_load.sql" columns | sed -n 2p)" '"Hotel, Id", "Nº ""a""", "Rate $$", "Hotel Näme"' \
	"-- columns: names quoted once, the comma inside a name kept"
is "$(meta "$GEN/003_load.sql" affected | sed -n 2p | cut -d'|' -f1)" \
	'"Hx ""Rel"", $$ü"."room$$" ("Hotel, Id", "Nº ""a""") ' "-- affected: relation and key columns quoted"
grep -qF '"""Hotel, Id"""' "$GEN/005_sync.sql" || ! grep -qF 's."Hotel, Id"' "$GEN/005_sync.sql"
is "$?" 1 "005 quotes names once"
grep -q '^\$cqlbridge_2\$;$' "$GEN/005_sync.sql" && ! grep -q '^\$cqlbridge\$;$' "$GEN/005_sync.sql"
ok $? "005 dollar-quotes with a tag no name contains (\$cqlbridge_2\$)"

# --- apply, verify ------------------------------------------------------------------------
"$CQLBRIDGE" apply -q "$GEN" > "$WORK/apply.out" 2>&1
rc=$?
ok $rc "apply creates and loads both tables"
[ $rc -eq 0 ] || { sed 's/^/# /' "$WORK/apply.out"; bail "apply failed"; }
"$CQLBRIDGE" verify "$GEN" > "$WORK/verify.out" 2>&1
ok $? "verify: both queries pass"
sed 's/^/# /' "$WORK/verify.out"

FT_H=$(meta "$GEN/003_load.sql" foreign_table | sed -n 1p)
FT_R=$(meta "$GEN/003_load.sql" foreign_table | sed -n 2p)
V_H=$(meta "$GEN/003_load.sql" source_view | sed -n 1p)
V_R=$(meta "$GEN/003_load.sql" source_view | sed -n 2p)
rows()
{
	local c=$2
	q "SELECT string_agg(r, ';' ORDER BY r COLLATE \"C\") FROM (SELECT ROW($c)::text AS r FROM $1) s"
}
CH='"Id, ""x"" $$", "Näme", "Phone No", "$cqlbridge$ note"'
CR='"Hotel, Id", "Nº ""a""", "Rate $$", "Hotel Näme"'
same()
{
	local a b c
	a=$(rows "$FT_H" "$CH")
	b=$(rows "$V_H" "$CH")
	c=$(rows "$FT_R" "$CR")
	[ "$a" = "$b" ] && [ "$c" = "$(rows "$V_R" "$CR")" ] && return 0
	diag "$FT_H: $a" "$V_H: $b" "$FT_R: $c" "$V_R: $(rows "$V_R" "$CR")"
	return 1
}
same
ok $? "after apply: the foreign tables equal their source views"

# --- sync -------------------------------------------------------------------------------------
"$CQLBRIDGE" sync "$GEN" > "$WORK/sync.out" 2>&1
rc=$?
ok $rc "sync installs the triggers"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/sync.out"
qf > /dev/null 2>&1 <<EOF
UPDATE $H SET "Näme" = 'Renamed \$\$ "q"', "\$cqlbridge\$ note" = '\$cqlbridge\$' WHERE "Id, ""x"" \$\$" = 'h1';
INSERT INTO $R VALUES ('h2', 5, 55);
DELETE FROM $R WHERE "Hotel, Id" = 'h1' AND "Nº ""a""" = 2;
EOF
ok $? "UPDATE, INSERT and DELETE of hostile-named tables commit with sync installed"
is "$(q "SELECT \"Hotel Näme\" FROM $FT_R WHERE \"Hotel, Id\" = 'h1'")" 'Renamed $$ "q"' \
	"the rename reached the room rows in Cassandra"
is "$(q "SELECT count(*) FROM $FT_R WHERE \"Hotel, Id\" = 'h1'")" "1" "the deleted room is gone from Cassandra"
is "$(q "SELECT \"Rate \$\$\" FROM $FT_R WHERE \"Hotel, Id\" = 'h2' AND \"Nº \"\"a\"\"\" = 5")" "55" \
	"the inserted room is in Cassandra"
same
ok $? "after sync: the foreign tables equal their source views"
"$CQLBRIDGE" verify "$GEN" > "$WORK/verify2.out" 2>&1
ok $? "verify passes again"

# --- a writer without a user mapping: the triggers run with the owner's rights ---------------
qf > /dev/null <<EOF || bail "writer role setup failed"
DROP ROLE IF EXISTS $WRITER;
CREATE ROLE $WRITER LOGIN;
GRANT USAGE ON SCHEMA $S TO $WRITER;
GRANT SELECT, UPDATE ON $H TO $WRITER;
EOF
PGUSER=$WRITER psql -X -q -v ON_ERROR_STOP=1 -d "$DB" \
	-c "UPDATE $H SET \"Phone No\" = 'writer' WHERE \"Id, \"\"x\"\" \$\$\" = 'h2'" > "$WORK/writer.out" 2>&1
ok $? "a role without user mapping or rights on the foreign tables updates a synced table"
[ -s "$WORK/writer.out" ] && sed 's/^/# /' "$WORK/writer.out"
is "$(q "SELECT \"Phone No\" FROM $FT_H WHERE \"Id, \"\"x\"\" \$\$\" = 'h2'")" "writer" "its change reached Cassandra"
PGUSER=$WRITER psql -X -q -d "$DB" -c "SELECT cqlbridge_$KS.sync_prepare()" > "$WORK/prep.out" 2>&1
[ $? -ne 0 ] && grep -q 'permission denied' "$WORK/prep.out"
ok $? "the writer may not call the sync functions directly"
PGUSER=$WRITER psql -X -q -d "$DB" > "$WORK/plant.out" 2>&1 <<EOF
CREATE TEMP TABLE cqlbridge_pk_${KS}_0_hotel_main_s ("Id, ""x"" \$\$" text);
UPDATE $H SET "Phone No" = 'planted' WHERE "Id, ""x"" \$\$" = 'h2';
EOF
grep -q 'was not created by it' "$WORK/plant.out" &&
	[ "$(q "SELECT \"Phone No\" FROM $H WHERE \"Id, \"\"x\"\" \$\$\" = 'h2'")" = "writer" ]
ok $? "a temp table planted under a sync table's name is refused (the UPDATE fails)"

# --- a newline in a key column name: the statement left out by plan -----------------------------
q "ALTER TABLE $R RENAME COLUMN \"Nº \"\"a\"\"\" TO \"Nº
-- affected: x\"" > /dev/null
sed -i 's/r\."Nº ""a"""/r."Rate $$" AS "Nº"/; s/ORDER BY r."Rate \$\$" AS "Nº"/ORDER BY r."Rate $$"/' "$WORK/workload.sql"
plan --keyspace "$KS" -o "$WORK/nl" > /dev/null 2> "$WORK/nl.err"
rc=$?
[ $rc -eq 3 ] && grep -qF 'the name of key column "Nº\n-- affected: x" of table "Hx "Rel", $$ü"."room$$"' "$WORK/nl.err" &&
	grep -q 'control character' "$WORK/nl.err" && grep -q '^    HINT:  Rename it' "$WORK/nl.err"
ok $? "plan leaves out the statement whose key column name holds a newline, naming it and with a hint (exit $rc)"
sed 's/^/# /' "$WORK/nl.err"
[ -e "$WORK/nl/model.txt" ] && ! grep -rqF 'affected: x' "$WORK/nl"/00*
ok $? "the other statement's plan is written, without that name in any generated file"
is "$(grep -c '^-- affected: x' "$GEN/003_load.sql")" "0" "no forged metadata line anywhere"

# --- schemas of another role are not adopted ------------------------------------------------------
q "ALTER TABLE $R RENAME COLUMN \"Nº
-- affected: x\" TO \"Nº \"\"a\"\"\"" > /dev/null
qf > /dev/null <<EOF || bail "other role setup failed"
DROP ROLE IF EXISTS $OTHER;
CREATE ROLE $OTHER;
CREATE SCHEMA cqlbridge_${KS}_x AUTHORIZATION $OTHER;
EOF
plan --keyspace "${KS}_x" -o "$WORK/x" > /dev/null 2>&1 || bail "plan of ${KS}_x failed"
"$CQLBRIDGE" apply -q "$WORK/x" > "$WORK/x.out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "schema cqlbridge_${KS}_x belongs to role $OTHER" "$WORK/x.out" &&
	grep -q "HINT:  Run cqlbridge as role $OTHER, or take the schema over" "$WORK/x.out"
ok $? "apply refuses a plan schema owned by another role, with a hint"
sed 's/^/# /' "$WORK/x.out" | head -4
is "$(q "SELECT count(*) FROM pg_class WHERE relnamespace = 'cqlbridge_${KS}_x'::regnamespace")" "0" \
	"nothing was created in that schema"

# --- planted symbolic links --------------------------------------------------------------------
echo "victim" > "$WORK/victim"
rm "$GEN/005_sync.sql"
ln -s "$WORK/victim" "$GEN/005_sync.sql.tmp"
"$CQLBRIDGE" sync -q "$GEN" > /dev/null 2>&1
ok $? "sync regenerates a missing 005 next to a planted FILE.tmp link"
is "$(cat "$WORK/victim")" "victim" "the link's target is untouched"
rm -f "$GEN/005_sync.sql.tmp"
mkdir -p "$WORK/victimdir"
echo "keep" > "$WORK/victimdir/model.txt"
ln -s "$WORK/victimdir" "$WORK/p2.tmp"
plan --keyspace "$KS" -o "$WORK/p2" > /dev/null 2>&1
ok $? "plan next to a planted DIR.tmp link succeeds"
[ "$(cat "$WORK/victimdir/model.txt")" = "keep" ] && [ "$(ls "$WORK/victimdir")" = "model.txt" ] && [ -f "$WORK/p2/model.txt" ]
ok $? "the linked directory is untouched and the plan is in DIR"

"$CQLBRIDGE" sync -q --uninstall "$GEN" > /dev/null 2>&1
ok $? "sync --uninstall"

exit $((TAP_FAILED > 0))
