#!/usr/bin/env bash
#
# bench/run.sh - throughput and latency of cql_fdw against the real tools.
# Run by hand on an otherwise idle machine; results go to bench/README.md.
#
#   bash bench/run.sh [ROWS]        (default 1000000)
#
# Needs the services of `make demo`/`make test` running (CQL_KEEP_SERVICES=1
# or scripts/cassandra.sh start single + scripts/pg.sh start) and the
# extension installed.  Measures:
#   1. INSERT ... SELECT of ROWS rows through cql_fdw      (issue 4)
#   2. cqlsh COPY FROM of the same rows from CSV            (issue 4)
#   3. Python driver, prepared INSERTs, concurrency 256     (issue 4)
#   4. full scan through cql_fdw                            (issue 3)
#   5. cqlsh COPY TO                                        (issue 3)
#   6. Python driver paged scan                             (issue 3)
#   7. single-partition lookup: pgbench -M prepared vs the Python driver
#   8. write strategies of the protocol library, 200,000 rows: pipelined
#      EXECUTEs vs unlogged batches per partition vs mixed batches
#      (bench/batch_vs_pipeline.c; BENCH_BATCH=0 skips it)   (issue 4)
#   9. cqlbridge on the hotel example: generate.sql at SCALE hotels (default
#      200: ~15 million target rows), plan, apply, verify --samples 20,
#      count every loaded table through its foreign table, then load the
#      same rows again by one plain INSERT ... SELECT per table (apply's
#      reference speed), with Cassandra's and PostgreSQL's CPU seconds;
#      BENCH_BRIDGE_CHUNKS=N also applies once more in N hash chunks.  Takes ~20 min and
#      ~2 GB in PostgreSQL, ~0.5 GB in Cassandra, so it is off by default:
#      BENCH_BRIDGE=1 adds it after step 8, BENCH_BRIDGE=only runs it alone,
#      e.g. `BENCH_BRIDGE=only SCALE=200 bash bench/run.sh`.  Uses database
#      bench_bridge and keyspace bench_hotel, both dropped at the end.  (issue 5)
#  10. Java driver anchor (DataStax Java driver 4.19, bench/java_anchor.sh):
#      async prepared INSERTs (256 in flight) into bench.rows_java, sync and
#      async paged scans of bench.rows, prepared lookups; with the client's
#      and Cassandra's CPU seconds.  Off by default: BENCH_JAVA=1 adds it
#      after step 8, before 9 (first use fetches the jars from Maven Central)
#
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib_common.sh
ROWS=${1:-1000000}
HOST=${CQL_HOST:-127.0.0.1}
eval "$(bash scripts/pg.sh env)"
CQLSH=${CQLSH:-$CACHE/venv/bin/cqlsh}
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

t() { local s e; s=$(date +%s.%N); "$@" > "$TMP/out" 2>&1 || { cat "$TMP/out"; exit 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }
rate() { echo "scale=0; $ROWS / $1" | bc; }

# 9. cqlbridge: relational hotel data -> plan -> apply -> verify (issue 5)
bench_bridge()
{
	local scale=${SCALE:-200} db=bench_bridge ks=bench_hotel dir="$TMP/bridge" s total

	make -s bridge > /dev/null
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
	for f in migrations/hotel/schema/00[1-5]_*.sql; do
		psql -X -q -v ON_ERROR_STOP=1 -d $db -f "$f" > /dev/null
	done
	s=$(t psql -X -v ON_ERROR_STOP=1 -d $db -v scale="$scale" -v rooms=100 -v days=730 -f migrations/hotel/generate.sql)
	echo "9. generate.sql scale=$scale rooms=100 days=730: $s s, database $(psql -X -At -d $db -c "SELECT pg_size_pretty(pg_database_size('$db'))")"
	psql -X -q -v ON_ERROR_STOP=1 -d $db -f migrations/hotel/schema/006_workload_indexes.sql
	psql -X -q -v ON_ERROR_STOP=1 -d $db <<SQL > /dev/null
CREATE EXTENSION cql_fdw;
CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$HOST');
CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;
SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $ks');
SQL

	s=$(t build/cqlbridge plan -d $db --schema hotel_rel --workload migrations/hotel/workload.sql \
		  --keyspace $ks --replication-factor 1 -o "$dir")
	total=$(awk '/^-- rows:/ { n += $3 } END { print n }' "$dir/003_load.sql")
	echo "9. cqlbridge plan: $s s, $total target rows in 9 tables"

	cpu0=$(bridge_cpu)
	s=$(t build/cqlbridge apply -d $db "$dir")
	sed 's/^/9.   /' "$TMP/out"
	echo "9. cqlbridge apply: $s s = $(echo "scale=0; $total / $s" | bc) rows/s; CPU-s $(cpu_delta "$cpu0" "$(bridge_cpu)")"

	s=$(t build/cqlbridge verify -d $db --samples 20 "$dir")
	sed 's/^/9.   /' "$TMP/out"
	echo "9. cqlbridge verify --samples 20: $s s"

	# every table holds exactly the rows counted at plan time
	awk '/^-- foreign_table:/ { ft = $3 } /^-- rows:/ { print ft, $3 }' "$dir/003_load.sql" |
	while read -r ft rows; do
		s=$(t psql -X -At -d $db -c "SELECT count(*) FROM $ft")
		n=$(cat "$TMP/out")
		[ "$n" = "$rows" ] || { echo "9. $ft: $n rows in Cassandra, $rows expected"; exit 1; }
		echo "9. count(*) $ft: $n rows = plan, $s s"
	done

	# the same rows by one plain INSERT ... SELECT per table (ordered by the
	# partition key where partitions have several rows, so the FDW batches
	# them), into the emptied tables: the speed apply is measured against
	awk '/^-- table:/ { t = $3 } /^-- foreign_table:/ { ft = $3 } /^-- columns:/ { sub(/^-- columns: /, ""); c = $0 }
	     /^-- key:/ { nk = split(substr($0, 9), k, ", ") }
	     /^-- partition_key:/ { sub(/^-- partition_key: /, ""); pk = $0 }
	     /^SELECT / { sel = $0 }
	     /^FROM .*;$/ { sub(/;$/, ""); print t "\t" ft "\t" c "\t" sel " " $0 (nk > split(pk, x, ", ") ? " ORDER BY " pk : "") }' \
		"$dir/003_load.sql" > "$TMP/raw.tsv"
	while IFS=$'\t' read -r tbl ft cols sel; do
		psql -X -q -d $db -c "SELECT cql_execute('cqlbridge', 'TRUNCATE $tbl')" > /dev/null
	done < "$TMP/raw.tsv"
	cpu0=$(bridge_cpu)
	s0=$(date +%s.%N)
	while IFS=$'\t' read -r tbl ft cols sel; do
		s=$(t psql -X -v ON_ERROR_STOP=1 -d $db -c "INSERT INTO $ft ($cols) $sel")
		echo "9.   raw INSERT ... SELECT $ft: $(sed -n 's/^INSERT 0 //p' "$TMP/out") rows in $s s"
	done < "$TMP/raw.tsv"
	s=$(echo "$(date +%s.%N) - $s0" | bc)
	echo "9. plain INSERT ... SELECT of the same rows: $s s = $(echo "scale=0; $total / $s" | bc) rows/s; CPU-s $(cpu_delta "$cpu0" "$(bridge_cpu)")"

	# BENCH_BRIDGE_CHUNKS=N: apply once more in N hash chunks (the load of
	# older plans and of --chunks), into the emptied tables
	if [ -n "${BENCH_BRIDGE_CHUNKS:-}" ]; then
		while IFS=$'\t' read -r tbl ft cols sel; do
			psql -X -q -d $db -c "SELECT cql_execute('cqlbridge', 'TRUNCATE $tbl')" > /dev/null
		done < "$TMP/raw.tsv"
		cpu0=$(bridge_cpu)
		s=$(t build/cqlbridge apply -d $db --restart --chunks "$BENCH_BRIDGE_CHUNKS" "$dir")
		sed 's/^/9.   /' "$TMP/out"
		echo "9. cqlbridge apply --chunks $BENCH_BRIDGE_CHUNKS: $s s = $(echo "scale=0; $total / $s" | bc) rows/s; CPU-s $(cpu_delta "$cpu0" "$(bridge_cpu)")"
	fi

	psql -X -q -d $db -c "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $ks')" > /dev/null
	psql -X -q -d postgres -c "DROP DATABASE $db"
}

# bridge_cpu (CPU seconds of Cassandra and PostgreSQL) and cpu_delta
# shellcheck source=cpu.sh
. bench/cpu.sh

if [ "${BENCH_BRIDGE:-0}" = only ]; then
	bench_bridge
	exit 0
fi

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER IF NOT EXISTS bench FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$HOST');
CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER bench;
SELECT cql_execute('bench', \$\$CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\$\$);
SELECT cql_execute('bench', 'DROP TABLE IF EXISTS bench.rows');
SELECT cql_execute('bench', 'CREATE TABLE bench.rows (id int PRIMARY KEY, a bigint, b text, c double, d timestamp)');
SELECT cql_execute('bench', 'CREATE TABLE IF NOT EXISTS bench.rows_csv (id int PRIMARY KEY, a bigint, b text, c double, d timestamp)');
SELECT cql_execute('bench', 'CREATE TABLE IF NOT EXISTS bench.rows_py (id int PRIMARY KEY, a bigint, b text, c double, d timestamp)');
SELECT cql_execute('bench', 'TRUNCATE bench.rows_csv');
DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;
IMPORT FOREIGN SCHEMA bench FROM SERVER bench INTO bench;
SQL

echo "== $ROWS rows, Cassandra at $HOST, $(nproc) cores"
s=$(t psql -X -q -c "INSERT INTO bench.rows (id, a, b, c, d) SELECT g, g * 7, 'row ' || g, g / 3.0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second' FROM generate_series(1, $ROWS) g")
echo "1. cql_fdw INSERT ... SELECT:          $s s = $(rate "$s") rows/s"

psql -X -q -c "\\copy (SELECT g, g * 7, 'row ' || g, g / 3.0, to_char((timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second') AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || 'Z' FROM generate_series(1, $ROWS) g) TO '$TMP/rows.csv' CSV"
s=$(t "$CQLSH" "$HOST" -e "COPY bench.rows_csv (id, a, b, c, d) FROM '$TMP/rows.csv' WITH NUMPROCESSES=2")
echo "2. cqlsh COPY FROM CSV:                $s s = $(rate "$s") rows/s"

$PY bench/py_insert.py "$HOST" "$ROWS" | sed 's/^/3. /'

s=$(t psql -X -q -c "SELECT count(*), sum(a), sum(length(b)), sum(c), max(d) FROM bench.rows")
echo "4. cql_fdw full scan (all columns):    $s s = $(rate "$s") rows/s"

s=$(t "$CQLSH" "$HOST" -e "COPY bench.rows (id, a, b, c, d) TO '$TMP/out.csv' WITH NUMPROCESSES=2")
echo "5. cqlsh COPY TO:                      $s s = $(rate "$s") rows/s"

$PY bench/py_scan.py "$HOST" | sed 's/^/6. /'

cat > "$TMP/lookup.sql" <<SQL
\\set id random(1, $ROWS)
SELECT id, a, b, c, d FROM bench.rows WHERE id = :id;
SQL
pgbench -n -M prepared -c 1 -T 20 -f "$TMP/lookup.sql" 2>&1 | grep -E "latency average|tps" | sed 's/^/7. cql_fdw lookup (pgbench -M prepared): /'
$PY bench/py_lookup.py "$HOST" 5000 "$ROWS" | sed 's/^/7. /'

if [ "${BENCH_BATCH:-1}" = 1 ]; then
	make -s -C bench batch_vs_pipeline > /dev/null
	build/bench/batch_vs_pipeline --host "$HOST" --keyspace bench_batch | sed 's/^/8. /'
fi

if [ "${BENCH_JAVA:-0}" = 1 ]; then
	CQL_HOST=$HOST BENCH_KS=bench BENCH_TABLE=rows BENCH_INSERT_TABLE=rows_java \
		bash bench/java_anchor.sh all "$ROWS" 2>&1 | grep -v '^java-driver 4' | sed 's/^/10. /'
fi

if [ "${BENCH_BRIDGE:-0}" = 1 ]; then
	bench_bridge
fi
