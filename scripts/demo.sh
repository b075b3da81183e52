#!/usr/bin/env bash
#
# scripts/demo.sh - the main job (`make demo`): from nothing to PostgreSQL
# talking to a real Cassandra 5.0 through cql_fdw, told one step at a time.
#
#   1. what the demo needs is installed, the extension built and installed
#      (one line each; their output goes to the log)
#   2. Cassandra (one node, 127.0.0.1:9042) and a throwaway PostgreSQL
#      (15 on port 54329; PG_VERSION=16 or 18: the PyPI builds)
#   3. CREATE EXTENSION, the server "cass" (the one server name of the whole
#      demo) and a user mapping
#   4. CQL from SQL: cql_execute() creates a keyspace and a table, inserts
#   5. the same rows through cqlsh, one more written by cqlsh
#   6. the table as a foreign table: IMPORT FOREIGN SCHEMA, read, write,
#      EXPLAIN
#   7. the hotel example of the Cassandra documentation: Q1-Q9 as SQL over
#      its query-first tables, each with its EXPLAIN and rows
#   8. cqlbridge: the relational hotel schema, the workload drafted from
#      pg_stat_statements, plan (report.html to open), the online migration
#      (apply --no-load, stream while pgbench writes), verify, diff (every
#      row; a difference found and repaired), cut-over, and trigger sync as
#      the synchronous alternative
#
# Usage: demo.sh [--keep | --stop]
#   --stop  (default) stop the services this script started at the end
#   --keep  leave them running; stop later with
#           scripts/cassandra.sh stop && [PG_VERSION=N] scripts/pg.sh stop
# Environment:
#   CQL_DEMO_HOST  a Cassandra node that is already running (no
#                  authentication): used as it is, never started or
#                  stopped, and no Java, Maven or jars are installed
#                  (default 127.0.0.1, started when nothing answers there)
#   CQL_DEMO_LOG   the log of installs and builds (default build/demo.log)
#   PG_VERSION     15 (default), 16 or 18
#
# A step is a function step_NAME and one line `demo_step "title" NAME` at
# the bottom; it prints what it shows (psql -e echoes the SQL it sends)
# and sends anything long or technical to the log with `quietly`.
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

HOST=${CQL_DEMO_HOST:-127.0.0.1}
LOG=${CQL_DEMO_LOG:-$REPO/build/demo.log}
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
GEN=$REPO/build/demo-hotel
BRIDGE=$REPO/build/cqlbridge
CASS_STARTED=0
PG_STARTED=0
NSTEP=0
STREAM_PID=""

finish()
{
	local rc=$?
	[ -z "$STREAM_PID" ] || kill -TERM "$STREAM_PID" 2> /dev/null || true
	echo
	if [ "$KEEP" = 1 ]; then
		echo "Services left running:"
		echo "  Cassandra  $HOST:9042   $VENV/bin/cqlsh $HOST"
		echo "  PostgreSQL $PG_VERSION port ${PGPORT:-?}    PG_VERSION=$PG_VERSION bash scripts/pg.sh psql"
		[ "$CASS_STARTED" = 0 ] ||
			echo "Stop them with: bash scripts/cassandra.sh stop && PG_VERSION=$PG_VERSION bash scripts/pg.sh stop"
	else
		[ "$PG_STARTED" = 1 ] && bash scripts/pg.sh stop >> "$LOG" 2>&1 || true
		[ "$CASS_STARTED" = 1 ] && bash scripts/cassandra.sh stop single >> "$LOG" 2>&1 || true
		echo "(services stopped; run 'bash scripts/demo.sh --keep' to leave them running)"
	fi
	[ "$rc" = 0 ] || echo "The demo failed (exit $rc); the log of installs and builds: $LOG"
	exit $rc
}
trap finish EXIT
trap 'exit 130' INT TERM HUP

# demo_step TITLE NAME: a numbered heading, then the function step_NAME
demo_step()
{
	NSTEP=$((NSTEP + 1))
	printf '\n=== %d. %s\n\n' "$NSTEP" "$1"
	"step_$2"
}

# quietly WHAT COMMAND...: one line for the reader, the output to the log;
# on failure the end of the log and the demo stops
quietly()
{
	local what=$1 t0
	shift
	t0=$(now)
	printf '  %s ... ' "$what"
	printf '\n### %s: %s\n' "$what" "$*" >> "$LOG"
	if "$@" >> "$LOG" 2>&1; then
		echo "done ($(elapsed "$t0") s)"
	else
		echo "FAILED"
		tail -n 25 "$LOG" | sed 's/^/    /'
		die "$what failed (whole log: $LOG)"
	fi
}

# sql: psql echoing each statement it sends, quiet otherwise
sql() { "$PG_BINDIR/psql" -X -q -e -v ON_ERROR_STOP=1 "$@"; }
# cqlsh 6.2.2 warns on stdout that it was "built against 5.0.0": drop that
cqlsh() { "$VENV/bin/cqlsh" "$HOST" 9042 "$@" | { grep -v '^WARNING: cqlsh was built against' || true; }; }

# --- the steps -----------------------------------------------------------------

step_install()
{
	local skip_jars=0
	[ -z "${CQL_DEMO_HOST:-}" ] || skip_jars=1
	quietly "installing what the demo needs (scripts/deps.sh)" \
		env DEPS_FOR=demo DEPS_SKIP_JARS=$skip_jars bash scripts/deps.sh
	quietly "building cql_fdw for PostgreSQL $PG_VERSION" make -s PG_CONFIG="$PG_CONFIG"
	quietly "installing it into that PostgreSQL" bash scripts/pg.sh install
	quietly "building cqlbridge" make -s PG_CONFIG="$PG_CONFIG" bridge
}

step_services()
{
	if cql_options_probe "$HOST" 9042; then
		echo "  a Cassandra node answers on $HOST:9042: using it"
	else
		[ -z "${CQL_DEMO_HOST:-}" ] || die "nothing answers on $HOST:9042 (CQL_DEMO_HOST)"
		CASS_STARTED=1
		quietly "starting Cassandra 5.0 on $HOST:9042 (scripts/cassandra.sh start single)" \
			bash scripts/cassandra.sh start single
	fi
	PG_STARTED=1
	quietly "starting a throwaway PostgreSQL $PG_VERSION (scripts/pg.sh start)" bash scripts/pg.sh start
	eval "$(bash scripts/pg.sh env)"
	echo "  PostgreSQL $("$PG_BINDIR/postgres" -V | awk '{print $3}') on port $PGPORT, database $PGDATABASE"
}

step_extension()
{
	sql -v host="$HOST" <<'SQL'
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER cass FOREIGN DATA WRAPPER cql_fdw OPTIONS (host :'host');
CREATE USER MAPPING FOR CURRENT_USER SERVER cass;
SELECT extname, extversion FROM pg_extension WHERE extname = 'cql_fdw';
SQL
}

step_cql_execute()
{
	# cql_execute() returns nothing: its (empty) result is not printed
	sql <<'SQL'
SELECT cql_execute('cass', $$DROP KEYSPACE IF EXISTS cql_fdw_demo$$) \g /dev/null
SELECT cql_execute('cass', $$CREATE KEYSPACE cql_fdw_demo
    WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}$$) \g /dev/null
SELECT cql_execute('cass', $$CREATE TABLE cql_fdw_demo.greetings
    (id int PRIMARY KEY, msg text, at timestamp)$$) \g /dev/null
SELECT cql_execute('cass', $$INSERT INTO cql_fdw_demo.greetings (id, msg, at)
    VALUES (1, 'hello from PostgreSQL', toTimestamp(now()))$$) \g /dev/null
SQL
}

step_cqlsh()
{
	echo "cqlsh> INSERT INTO cql_fdw_demo.greetings (id, msg, at) VALUES (2, 'hello from cqlsh', toTimestamp(now()));"
	cqlsh -e "INSERT INTO cql_fdw_demo.greetings (id, msg, at) VALUES (2, 'hello from cqlsh', toTimestamp(now()));"
	echo "cqlsh> SELECT id, msg FROM cql_fdw_demo.greetings;"
	cqlsh -e "SELECT id, msg FROM cql_fdw_demo.greetings;" | tee "$CACHE/demo-select.txt"
	grep -q 'hello from PostgreSQL' "$CACHE/demo-select.txt" ||
		die "the row inserted through cql_execute() is not visible in Cassandra"
}

step_foreign_table()
{
	sql <<'SQL'
IMPORT FOREIGN SCHEMA cql_fdw_demo FROM SERVER cass INTO public;
SELECT id, msg FROM greetings ORDER BY id;
-- now() has microseconds; Cassandra keeps milliseconds (truncated, as the drivers do)
INSERT INTO greetings (id, msg, at) VALUES (3, 'hello through a foreign table', now());
EXPLAIN (VERBOSE, COSTS OFF) SELECT msg FROM greetings WHERE id = 3;
SELECT msg FROM greetings WHERE id = 3;
SQL
}

step_hotel()
{
	# sql/hotel.sql (a regression test) doubles as this step: its set-up
	# (keyspaces, sample data, IMPORT FOREIGN SCHEMA) goes to the log, its
	# queries Q1-Q9 are shown with their EXPLAIN and rows
	quietly "the hotel and reservation keyspaces with sample data, imported" \
		env CQL_HOST="$HOST" "$PG_BINDIR/psql" -X -a -v ON_ERROR_STOP=1 \
		-c "SET client_min_messages = warning" \
		-f <(sed -n '1,/^IMPORT FOREIGN SCHEMA reservation /p' sql/hotel.sql)
	echo
	sed -n '/^-- Q1\. /,$p' sql/hotel.sql | "$PG_BINDIR/psql" -X -q -a -v ON_ERROR_STOP=1
}

step_bridge_schema()
{
	# the normalized hotel schema (12 tables) with generated data
	quietly "the relational hotel schema (hotel_rel) with generated data" bash -c '
		set -e
		for f in migrations/hotel/schema/00[1-5]_*.sql; do "$0" -X -q -v ON_ERROR_STOP=1 -f "$f"; done
		"$0" -X -q -v ON_ERROR_STOP=1 -f migrations/hotel/generate.sql -v scale=6 -v rooms=20 -v days=60
		"$0" -X -q -v ON_ERROR_STOP=1 -f migrations/hotel/schema/006_workload_indexes.sql
		"$0" -X -q -c "SELECT cql_execute('"'"'cass'"'"', '"'"'DROP KEYSPACE IF EXISTS hotel_bridge'"'"')"
		"$1" sync --uninstall -q "$2" > /dev/null 2>&1 || true
		rm -rf "$2"' "$PG_BINDIR/psql" "$BRIDGE" "$GEN"
	sql <<'SQL'
SELECT table_name FROM information_schema.tables WHERE table_schema = 'hotel_rel' ORDER BY 1;
SQL
}

step_bridge_workload()
{
	local draft=$REPO/build/demo-workload.sql
	# Query-first modeling starts from the queries the application runs:
	# pg_stat_statements has them (normalized, with calls and times)
	if ! "$PG_BINDIR/psql" -X -qAt -c "SHOW shared_preload_libraries" | grep -q pg_stat_statements; then
		echo "  (PostgreSQL $PG_VERSION here has no pg_stat_statements: the drafting step is left out;"
		echo "   the plan below reads the hand-written migrations/hotel/workload.sql)"
		return 0
	fi
	quietly "pg_stat_statements, reset" "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()"
	quietly "the hotel application simulated for 10 s (pgbench: Q1-Q9 at random, statements no table can serve, writes)" \
		bash -c '"$0" -X -q -v ON_ERROR_STOP=1 -f tests/bridge/workload_sim/setup.sql &&
			PATH="$(dirname "$0"):$PATH" bash tests/bridge/workload_sim/run.sh "$1" 10' \
		"$PG_BINDIR/psql" "$PGDATABASE"
	rm -f "$draft"
	echo "\$ cqlbridge workload --schema hotel_rel -o $draft"
	"$BRIDGE" workload --schema hotel_rel -o "$draft"
	echo
	echo "The drafted file (the first blocks; the DBA reviews and edits it):"
	sed -n '1,/^$/p' "$draft"
	awk '/^-- name: /{ n++ } n >= 1 && n <= 2' "$draft"
	echo "..."
	echo "Statements no query table can serve, kept as comments with the reason:"
	grep -A1 '^-- not_served:' "$draft" | head -n 12 || true
	echo
	echo "(the plan below reads the hand-written migrations/hotel/workload.sql: the same"
	echo " tables and keys, with the query names of the Cassandra documentation)"
}

step_bridge_plan()
{
	echo "\$ cqlbridge plan --schema hotel_rel --workload migrations/hotel/workload.sql --keyspace hotel_bridge --server cass ..."
	"$BRIDGE" plan --schema hotel_rel --workload migrations/hotel/workload.sql --server cass \
		--keyspace hotel_bridge --foreign-schema hotel_cql --replication-factor 1 -o "$GEN"
	echo
	echo "The model of Q8: the documented key loses reservations, the derived one does not:"
	sed -n '/^table hotel_bridge.reservations_by_guest_last_name$/,/^$/p' "$GEN/model.txt"
	if [ -f "$GEN/report.html" ] && grep -q '<svg' "$GEN/report.html"; then
		echo "Open the diagrams and sizes: file://$GEN/report.html"
	else
		echo "The report (without diagrams: Graphviz is not installed): file://$GEN/report.html"
	fi
}

step_bridge_online()
{
	local bench_pid stream_pid lsn i
	# the online path: no write freeze, no trigger on the application's
	# tables, and Cassandra may be down without the application noticing
	echo "\$ cqlbridge apply --no-load $GEN      # keyspace, tables, foreign tables, views; no rows"
	"$BRIDGE" apply -q --no-load "$GEN"
	echo "The application keeps writing (pgbench: random transactions over the hotel schema,"
	echo "50 a second for 15 s) while the stream loads from its slot's snapshot and follows:"
	"$PG_BINDIR/pgbench" -n -c 2 -j 2 -R 50 -T 15 --max-tries=5 \
		-f tests/bridge/gen_hotel.pgbench "$PGDATABASE" > "$REPO/build/demo-pgbench.log" 2>&1 &
	bench_pid=$!
	echo "\$ cqlbridge stream $GEN &"
	"$BRIDGE" stream "$GEN" > "$REPO/build/demo-stream.log" 2>&1 &
	STREAM_PID=$!
	sleep 8
	echo "\$ cqlbridge stream --status $GEN"
	"$BRIDGE" stream --status "$GEN" || true
	wait "$bench_pid" || die "the application (pgbench) failed: $REPO/build/demo-pgbench.log"
	grep -E '^number of (transactions actually processed|failed transactions)' "$REPO/build/demo-pgbench.log" |
		sed 's/^/  application: /'
	# caught up: the slot confirmed everything the application wrote.  The
	# position to reach is the WAL insert position: with synchronous_commit
	# = off a COMMIT returns before its WAL is written, so
	# pg_current_wal_lsn() (the write position) can be before the last
	# transaction, and a verify started then could miss it
	lsn=$("$PG_BINDIR/psql" -X -qAt -c "SELECT pg_current_wal_insert_lsn()")
	for i in $(seq 1 300); do
		[ "$("$PG_BINDIR/psql" -X -qAt -c "SELECT s.confirmed_flush_lsn >= '$lsn' AND (SELECT phase = 'streaming' FROM cqlbridge_hotel_bridge.stream_state) FROM pg_replication_slots s WHERE s.slot_name = 'cqlbridge_hotel_bridge'")" = t ] && break
		sleep 0.2
	done
	echo "\$ cqlbridge stream --status $GEN      # caught up"
	"$BRIDGE" stream --status "$GEN" || true
	echo "(the stream keeps running: the checks below compare while it follows the application)"
}

step_bridge_cutover()
{
	echo "Cut-over: the application reads Cassandra now; the stream is stopped (it confirms"
	echo "what it wrote first) and its slot and publication are removed:"
	if [ -n "$STREAM_PID" ]; then
		kill -TERM "$STREAM_PID" 2> /dev/null || true
		wait "$STREAM_PID" 2> /dev/null || true
		STREAM_PID=""
	fi
	tail -n 3 "$REPO/build/demo-stream.log" | sed 's/^/  stream: /'
	echo "\$ cqlbridge stream --drop $GEN"
	"$BRIDGE" stream --drop "$GEN"
}

step_bridge_verify()
{
	echo "\$ cqlbridge verify --show --samples 10 $GEN"
	"$BRIDGE" verify --show --samples 10 "$GEN"
}

step_bridge_sync()
{
	echo "\$ cqlbridge sync $GEN"
	"$BRIDGE" sync "$GEN"
	sql <<'SQL'
UPDATE hotel_rel.hotel SET name = name || ' (renovated)'
WHERE id = (SELECT min(hotel_id) FROM hotel_rel.hotel_poi);
SELECT poi_name, hotel_id, name FROM hotel_cql.hotels_by_poi_name
WHERE poi_name = (SELECT p.name FROM hotel_rel.point_of_interest p
                  JOIN hotel_rel.hotel_poi hp ON hp.poi_id = p.id
                  ORDER BY hp.hotel_id, p.id LIMIT 1);
SQL
	echo "\$ cqlbridge verify -q --samples 5 $GEN"
	"$BRIDGE" verify -q --samples 5 "$GEN"
	"$BRIDGE" sync --uninstall -q "$GEN"
}

step_bridge_diff()
{
	local rc=0
	# every row of every query table against its source view: the proof
	# a DBA signs a migration off with (verify compares sampled answers)
	echo "\$ cqlbridge diff $GEN"
	"$BRIDGE" diff "$GEN"
	echo
	echo "One value changed behind cqlbridge's back, straight in Cassandra:"
	sql <<'SQL'
SELECT poi_name, hotel_id, point_of_interest_id FROM hotel_cql.hotels_by_poi_name LIMIT 1 \gset
UPDATE hotel_cql.hotels_by_poi_name SET phone = '+1 555 0100'
WHERE poi_name = :'poi_name' AND hotel_id = :'hotel_id' AND point_of_interest_id = :point_of_interest_id;
SQL
	echo "\$ cqlbridge diff $GEN"
	"$BRIDGE" diff "$GEN" || rc=$?
	echo "(exit status $rc: 1 means differences found)"
	[ "$rc" = 1 ] || die "cqlbridge diff should have found the changed row (exit $rc)"
	echo "\$ cqlbridge diff --repair $GEN"
	"$BRIDGE" diff --repair "$GEN"
	echo "\$ cqlbridge diff $GEN"
	"$BRIDGE" diff "$GEN"
}

step_done()
{
	local version
	version=$(cqlsh -e 'SELECT release_version FROM system.local' | awk '/^ *[0-9]+\.[0-9]+/ { print $1 }')
	echo "PostgreSQL wrote through cql_fdw into Cassandra $version, cqlsh read it back,"
	echo "the hotel queries Q1-Q9 ran through foreign tables as single-partition reads, and"
	echo "cqlbridge drafted the workload from what the application ran, moved the relational"
	echo "hotel schema to query tables online while the application kept writing, and proved"
	echo "every row equal to its source before the cut-over."
	echo "Diagrams, sizes and the verify/diff results of the plan: file://$GEN/report.html   Log: $LOG"
}

# --- the story -------------------------------------------------------------------

demo_step "What the demo needs, built and installed" install
demo_step "Cassandra and PostgreSQL" services
demo_step "CREATE EXTENSION, a server and a user mapping" extension
demo_step "CQL from SQL: cql_execute() creates a keyspace and a table and inserts a row" cql_execute
demo_step "The same data through cqlsh (and one row written by cqlsh)" cqlsh
demo_step "The table as a foreign table: read and write it with SQL" foreign_table
demo_step "The hotel example: Q1-Q9 as SQL over query-first tables" hotel
demo_step "The relational hotel schema to migrate" bridge_schema
demo_step "cqlbridge workload: the application's queries drafted from pg_stat_statements" bridge_workload
demo_step "cqlbridge plan: query tables derived from the relational hotel schema" bridge_plan
demo_step "Online migration: cqlbridge stream loads from a snapshot while the application writes, then follows every change" bridge_online
demo_step "cqlbridge verify: every query answers the same from its query table" bridge_verify
demo_step "cqlbridge diff: every row of every query table equals its source; a difference found and repaired" bridge_diff
demo_step "Cut-over: the stream stopped, its slot removed" bridge_cutover
demo_step "The other way: cqlbridge sync, triggers that write Cassandra at COMMIT (synchronous)" bridge_sync
demo_step "Done" done
