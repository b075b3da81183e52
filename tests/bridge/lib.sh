# shellcheck shell=bash
# tests/bridge/lib.sh - TAP and database helpers of the cqlbridge tests.
#
# Source it from a test script; it expects $DB (database name) to be set
# before the psql helpers are used.  PGHOST/PGPORT/PGUSER come from the
# caller's environment.

TAP_N=0
TAP_FAILED=0

# ok CONDITION-EXIT-STATUS DESCRIPTION
ok()
{
	TAP_N=$((TAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2"
	else
		echo "not ok $TAP_N - $2"
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

# is GOT EXPECTED DESCRIPTION
is()
{
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
	fi
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# q SQL: one value (unaligned, tuples only); fails loudly on SQL errors
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

# qf FILE [psql args]: run a file
qf() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# meta FILE KEY: "KEY" values of the blocks of a block-format file, one per block
meta() { sed -n "s/^-- $2: *//p" "$1"; }

bail() { echo "Bail out! $*"; exit 1; }

# fresh_db HOST [SERVER_OPTIONS]: drop and create $DB with cql_fdw, the
# server "cqlbridge" pointing at HOST (with more options, e.g. TLS ones)
# and a user mapping for the current user
fresh_db()
{
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>&1
	psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $DB" > /dev/null ||
		bail "cannot create database $DB"
	q "CREATE EXTENSION cql_fdw;
	   CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$1'${2:+, $2});
	   CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;" > /dev/null ||
		bail "cql_fdw setup failed"
}

# load_migrations DIR: the numbered schema files of DIR/schema, then
# DIR/generate.sql with its defaults
load_migrations()
{
	local f
	for f in "$1"/schema/*.sql; do
		qf -f "$f" > /dev/null || bail "schema file $f failed"
	done
	qf -f "$1/generate.sql" > /dev/null || bail "$1/generate.sql failed"
}

# load_targets GEN: FTS, VIEWS, COLS (arrays) from 003_load.sql's metadata:
# every target's foreign table, source view and column list
load_targets()
{
	mapfile -t FTS < <(meta "$1/003_load.sql" foreign_table)
	mapfile -t VIEWS < <(meta "$1/003_load.sql" source_view)
	mapfile -t COLS < <(meta "$1/003_load.sql" columns)
}

# fingerprint RELATION COLUMNS: count and md5 of the sorted rows as text
# (order-independent), for comparing a foreign table with its view
fingerprint()
{
	local rel=$1 cols=$2 list
	list=$(sed 's/\([A-Za-z_][A-Za-z0-9_]*\)/x."\1"/g' <<< "$cols")
	q "SELECT count(*) || ' ' || coalesce(md5(string_agg(r, E'\n' ORDER BY r COLLATE \"C\")), '-')
	   FROM (SELECT ROW($list)::text AS r FROM $rel x) s"
}

# compare_all LABEL: one test per target: its foreign table equals its view
compare_all()
{
	local i
	for i in "${!FTS[@]}"; do
		is "$(fingerprint "${FTS[$i]}" "${COLS[$i]}")" \
			"$(fingerprint "${VIEWS[$i]}" "${COLS[$i]}")" "$1: ${FTS[$i]} equals its source"
	done
}
