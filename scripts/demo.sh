#!/usr/bin/env bash
#
# scripts/demo.sh - the main job (`make demo`): from nothing to PostgreSQL
# talking to a real Cassandra 5.0 through cql_fdw.
#
#   deps -> build + install -> Cassandra (single node, 127.0.0.1:9042) +
#   PostgreSQL 15 (port 54329) -> CREATE EXTENSION -> a keyspace and table
#   created and filled with cql_execute() from SQL, read back (and written)
#   with cqlsh and through a foreign table -> the hotel example of the
#   Cassandra documentation: its keyspaces, sample data, and the nine
#   application queries Q1-Q9 as SQL, each with its EXPLAIN and rows.
#
# Usage: demo.sh [--keep | --stop]
#   --stop  (default) stop the services this script started at the end
#   --keep  leave them running; stop later with
#           scripts/cassandra.sh stop && scripts/pg.sh stop
# A CQL node already answering on 127.0.0.1:9042 (e.g. the test cluster)
# is used as it is and never stopped.
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"
# shellcheck source=lib_cqlprobe.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cqlprobe.sh"
cd "$REPO"

KEEP=0
for a in "$@"; do
	case $a in
		--keep) KEEP=1 ;;
		--stop) KEEP=0 ;;
		*) die "usage: demo.sh [--keep | --stop]" ;;
	esac
done

CASS_STARTED=0
PG_STARTED=0
finish()
{
	local rc=$?
	if [ "$KEEP" = 1 ]; then
		echo
		echo "Services left running:"
		echo "  Cassandra  127.0.0.1:9042   $VENV/bin/cqlsh 127.0.0.1"
		echo "  PostgreSQL port 54329       bash scripts/pg.sh psql"
		echo "Stop them with: bash scripts/cassandra.sh stop && bash scripts/pg.sh stop"
	else
		[ "$PG_STARTED" = 1 ] && bash scripts/pg.sh stop || true
		[ "$CASS_STARTED" = 1 ] && bash scripts/cassandra.sh stop single || true
		echo "(services stopped; run 'bash scripts/demo.sh --keep' to leave them running)"
	fi
	exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

step() { printf '\n=== %s\n' "$*"; }

step "1. dependencies"
bash scripts/deps.sh

step "2. build and install the extension"
make -s PG_CONFIG="$PG_CONFIG"
bash scripts/pg.sh install

step "3. services"
if cql_options_probe 127.0.0.1 9042; then
	say "a CQL node already answers on 127.0.0.1:9042: using it"
else
	CASS_STARTED=1
	bash scripts/cassandra.sh start single
fi
PG_STARTED=1
bash scripts/pg.sh start
eval "$(bash scripts/pg.sh env)"
PSQL=("$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 -q)
# cqlsh 6.2.2 warns on stdout that it was "built against 5.0.0": drop that
cqlsh() { "$VENV/bin/cqlsh" 127.0.0.1 9042 "$@" | { grep -v '^WARNING: cqlsh was built against' || true; }; }

step "4. CREATE EXTENSION, server and user mapping"
"${PSQL[@]}" -e <<'SQL'
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER demo_cql FOREIGN DATA WRAPPER cql_fdw
    OPTIONS (host '127.0.0.1', port '9042');
CREATE USER MAPPING FOR CURRENT_USER SERVER demo_cql;
SELECT extname, extversion FROM pg_extension WHERE extname = 'cql_fdw';
SQL

step "5. CQL from SQL: cql_execute() creates a keyspace and a table and inserts"
"${PSQL[@]}" -e <<'SQL'
SELECT cql_execute('demo_cql', $$DROP KEYSPACE IF EXISTS cql_fdw_demo$$);
SELECT cql_execute('demo_cql', $$CREATE KEYSPACE cql_fdw_demo
    WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}$$);
SELECT cql_execute('demo_cql', $$CREATE TABLE cql_fdw_demo.greetings
    (id int PRIMARY KEY, msg text, at timestamp)$$);
SELECT cql_execute('demo_cql', $$INSERT INTO cql_fdw_demo.greetings (id, msg, at)
    VALUES (1, 'hello from PostgreSQL', toTimestamp(now()))$$);
SQL

step "6. the same data through cqlsh (and one row written by cqlsh)"
cqlsh -e "INSERT INTO cql_fdw_demo.greetings (id, msg, at) VALUES (2, 'hello from cqlsh', toTimestamp(now()));"
cqlsh -e "SELECT id, msg FROM cql_fdw_demo.greetings;" | tee "$CACHE/demo-select.txt"
grep -q 'hello from PostgreSQL' "$CACHE/demo-select.txt" ||
	die "the row inserted through cql_execute() is not visible in Cassandra"

step "7. the same table as a foreign table: read and write it with SQL"
"${PSQL[@]}" -e <<'SQL'
IMPORT FOREIGN SCHEMA cql_fdw_demo FROM SERVER demo_cql INTO public;
SELECT id, msg FROM greetings ORDER BY id;
-- Cassandra timestamps have millisecond precision: say so explicitly
INSERT INTO greetings (id, msg, at)
    VALUES (3, 'hello through a foreign table', date_trunc('milliseconds', now()));
EXPLAIN (VERBOSE, COSTS OFF) SELECT msg FROM greetings WHERE id = 3;
SELECT msg FROM greetings WHERE id = 3;
SQL

step "8. the hotel example: Q1-Q9 as SQL over the query-first tables"
# The regression suite sql/hotel.sql doubles as this demo: it creates the
# documented keyspaces, loads sample data, imports them and runs each query
# with its EXPLAIN (every one a single-partition read).
CQL_HOST=127.0.0.1 "$PG_BINDIR/psql" -X -a -v ON_ERROR_STOP=1 -f sql/hotel.sql

step "done"
version=$(cqlsh -e 'SELECT release_version FROM system.local' | awk '/^ *[0-9]+\.[0-9]+/ { print $1 }')
echo "PostgreSQL wrote through cql_fdw into Cassandra $version, cqlsh read it back,"
echo "and the hotel queries Q1-Q9 ran through foreign tables as single-partition reads."
