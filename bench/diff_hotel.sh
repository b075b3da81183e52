#!/usr/bin/env bash
#
# bench/diff_hotel.sh - cqlbridge diff of the hotel plan against cql_fdw's
# own full scan of the same tables (issue 23).  Run by hand on an otherwise
# idle machine; results go to bench/README.md.
#
#   SCALE=200 bash bench/diff_hotel.sh        (default 200: ~15 million target rows)
#   BENCH_DB=name (default bench_diff: the database and keyspace),
#   BENCH_PLAN=dir (default a temporary directory: the plan),
#   BENCH_REUSE=1 (BENCH_PLAN holds the plan of data generated and applied
#   by an earlier BENCH_KEEP=1 run: measure again without generating),
#   BENCH_JOBS="1 2 3" (default 2: the --jobs of each diff measured, in turn),
#   CQLBRIDGE=path (default build/cqlbridge, built first: the diff measured),
#   BENCH_DIFF_MODES="default --row-by-row" (default "default": each diff is
#   measured once per mode, in turn; "default" adds no option),
#   BENCH_PIN=1 (Cassandra on CPU 0, PostgreSQL, psql and cqlbridge on
#   CPU 1, for the scan and the diffs alike: as if each had a machine of
#   its own, which shows the side that bounds each; restored at the end)
#
# Needs the services of `make demo`/`make test` running (scripts/cassandra.sh
# start single + scripts/pg.sh start, CQL_HOST the node) and the extension
# installed.  Generates the hotel data at SCALE hotels (rooms=100,
# days=730), plans and applies it (database bench_diff, keyspace
# bench_diff, dropped at the end unless BENCH_KEEP=1), then measures with
# Cassandra's and PostgreSQL's CPU seconds:
#   1. cql_fdw's full scan of every table, every column
#      (SELECT sum(pg_column_size(f.*)) FROM <foreign table> f)
#   2. cqlbridge diff of the whole plan (each side's count and hash of
#      every token range, or with --row-by-row the scans in token order, the
#      source views sorted by cql_token() and merged), once per --jobs of
#      BENCH_JOBS and mode of BENCH_DIFF_MODES
# and prints each diff's rate against the scan's (goal: at least 0.7x).
# CASS_PID overrides the Cassandra process (default: the single node's).
#
set -euo pipefail

cd "$(dirname "$0")/.."
SCALE=${SCALE:-200}
HOST=${CQL_HOST:-127.0.0.1}
. scripts/lib_common.sh
eval "$(bash scripts/pg.sh env)"
DB=${BENCH_DB:-bench_diff}
KS=$DB
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PLAN=${BENCH_PLAN:-$TMP/plan}

# t CMD...: the seconds CMD took (its output in $TMP/out; on failure shown on stderr)
t() { local s e; s=$(date +%s.%N); "$@" > "$TMP/out" 2>&1 || { cat "$TMP/out" >&2; exit 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }

# bridge_cpu, cpu_delta
# shellcheck source=cpu.sh
. bench/cpu.sh

make -s bridge > /dev/null
BRIDGE=${CQLBRIDGE:-build/cqlbridge}
if [ -n "${BENCH_REUSE:-}" ]; then
	[ -f "$PLAN/003_load.sql" ] || { echo "BENCH_REUSE: no plan in $PLAN" >&2; exit 1; }
else
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	for f in migrations/hotel/schema/*.sql; do
		psql -X -q -v ON_ERROR_STOP=1 -d $DB -f "$f" > /dev/null
	done
	s=$(t psql -X -v ON_ERROR_STOP=1 -d $DB -v scale="$SCALE" -v rooms=100 -v days=730 -f migrations/hotel/generate.sql)
	echo "generate.sql scale=$SCALE rooms=100 days=730: $s s"
	psql -X -q -v ON_ERROR_STOP=1 -d $DB <<-SQL > /dev/null
	CREATE EXTENSION cql_fdw;
	CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$HOST');
	CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;
	SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS');
	SQL
	build/cqlbridge plan -q -d $DB --schema hotel_rel --workload migrations/hotel/workload.sql \
		--keyspace $KS --replication-factor 1 -o "$PLAN" > /dev/null
	total=$(awk '/^-- rows:/ { n += $3 } END { print n }' "$PLAN/003_load.sql")
	s=$(t build/cqlbridge apply -q -d $DB "$PLAN")
	echo "apply: $total rows in $s s"
fi
total=$(awk '/^-- rows:/ { n += $3 } END { print n }' "$PLAN/003_load.sql")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# BENCH_PIN: new backends inherit the postmaster's CPU, every thread of
# Cassandra's JVM is moved
PIN=()
if [ -n "${BENCH_PIN:-}" ]; then
	cpid=${CASS_PID:-$(cat "$CACHE/run/single/pid")}
	pmpid=$(head -1 "$(psql -X -At -d postgres -c 'SHOW data_directory')/postmaster.pid")
	taskset -a -p -c 0 "$cpid" > /dev/null
	taskset -p -c 1 "$pmpid" > /dev/null
	trap 'taskset -a -p -c 0-$(($(nproc) - 1)) "$cpid" > /dev/null; taskset -p -c 0-$(($(nproc) - 1)) "$pmpid" > /dev/null; rm -rf "$TMP"' EXIT
	PIN=(taskset -c 1)
	echo "pinned: Cassandra (pid $cpid) on CPU 0; PostgreSQL (postmaster $pmpid), psql and cqlbridge on CPU 1"
fi

# 1. the scan of every table (warm-up first)
mapfile -t FTS < <(sed -n 's/^-- foreign_table: //p' "$PLAN/003_load.sql")
for ft in "${FTS[@]}"; do psql -X -q -d $DB -c "SELECT sum(pg_column_size(f.*)) FROM $ft f" > /dev/null; done
c0=$(bridge_cpu)
s0=$(date +%s.%N)
for ft in "${FTS[@]}"; do
	s=$(t "${PIN[@]}" psql -X -At -v ON_ERROR_STOP=1 -d $DB -c "SELECT sum(pg_column_size(f.*)) FROM $ft f")
	echo "  scan $ft: $s s"
done
scan=$(echo "$(date +%s.%N) - $s0" | bc)
echo "1. cql_fdw full scan of every table: $scan s = $(echo "scale=0; $total / $scan" | bc) rows/s; CPU-s $(cpu_delta "$c0" "$(bridge_cpu)")"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# 2. the diff, once per --jobs
step=2
for jobs in ${BENCH_JOBS:-2}; do
	for mode in ${BENCH_DIFF_MODES:-default}; do
		opt=()
		[ "$mode" = default ] || opt=("$mode")
		c0=$(bridge_cpu)
		s=$(t "${PIN[@]}" /usr/bin/time -o "$TMP/cpu" -f '%U %S' $BRIDGE diff -q -d $DB --consistency ONE --jobs "$jobs" "${opt[@]}" "$PLAN")
		sed 's/^/  /' "$TMP/out"
		echo "$step. cqlbridge diff --jobs $jobs ${opt[*]}: $s s = $(echo "scale=0; $total / $s" | bc) rows/s; CPU-s $(cpu_delta "$c0" "$(bridge_cpu)"), cqlbridge (workers included) $(awk '{ print $1 + $2 }' "$TMP/cpu")"
		echo "diff rate / scan rate: $(echo "scale=2; $scan / $s" | bc)"
		echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
		step=$((step + 1))
	done
done

if [ -z "${BENCH_KEEP:-}" ]; then
	psql -X -q -d $DB -c "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
	psql -X -q -d postgres -c "DROP DATABASE $DB"
fi
