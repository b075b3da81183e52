#!/usr/bin/env bash
#
# bench/copy_from.sh - loading one CSV file into Cassandra: psql's \copy
# into a cql_fdw foreign table (COPY FROM, rows staged and sent in batches
# by partition), cqlsh COPY FROM of the same file, and, as the reference,
# INSERT ... SELECT of the same rows from a PostgreSQL table.
# Run by hand on an otherwise idle machine; results go to bench/README.md.
#
#   bash bench/copy_from.sh [ROWS] [PARTITION_ROWS]   (default 200000, 1)
#
# PARTITION_ROWS rows share a partition (1: every row its own partition, as
# bench/run.sh's bench.rows; 100: a time series, where rows of a partition
# go as one batch).  Needs a Cassandra node at CQL_HOST (default 127.0.0.1),
# a PostgreSQL with the extension installed (the PG* variables of
# `scripts/pg.sh env`), and cqlsh (scripts/deps.sh puts it in the cache
# venv; CQLSH=path overrides).  Starts and stops nothing; uses keyspace
# bench_copy (dropped at the end) and the foreign server bench_copy.  Each
# load is checked by counting the rows and summing a column through the
# foreign table.
#
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib_common.sh
ROWS=${1:-200000}
PER=${2:-1}
HOST=${CQL_HOST:-127.0.0.1}
eval "$(bash scripts/pg.sh env)"
CQLSH=${CQLSH:-$CACHE/venv/bin/cqlsh}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# seconds a command takes (its output kept for a failure)
t() { local s e; s=$(date +%s.%N); "$@" > "$TMP/out" 2>&1 || { cat "$TMP/out" >&2; exit 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }
rate() { echo "scale=0; $ROWS / $1" | bc; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
# count and checksum of a loaded table, through a foreign table
check() { q -c "SELECT count(*) || ' rows, sum(c) ' || sum(c) FROM bench_copy.$1"; }

[ -x "$CQLSH" ] || { echo "cqlsh not found at $CQLSH (scripts/deps.sh installs it)" >&2; exit 2; }
for tbl in fdw cqlsh insel; do
	creates+="SELECT cql_execute('bench_copy', 'CREATE TABLE bench_copy.rows_$tbl (p int, c int, at timestamp, v text, x double, PRIMARY KEY ((p), c))');"
done
q <<SQL
CREATE EXTENSION IF NOT EXISTS cql_fdw;
CREATE SERVER IF NOT EXISTS bench_copy FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$HOST');
CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER bench_copy;
SELECT cql_execute('bench_copy', 'DROP KEYSPACE IF EXISTS bench_copy');
SELECT cql_execute('bench_copy', \$\$CREATE KEYSPACE bench_copy WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\$\$);
$creates
DROP SCHEMA IF EXISTS bench_copy CASCADE;
CREATE SCHEMA bench_copy;
IMPORT FOREIGN SCHEMA bench_copy FROM SERVER bench_copy INTO bench_copy;
CREATE TABLE bench_copy.src AS
  SELECT g / $PER AS p, g AS c,
         date_trunc('milliseconds', timestamptz '2026-11-26 08:00:00+00' + g * interval '1.001 second') AS at,
         'row ' || g || ', ' || md5(g::text) AS v, g / 7.0 AS x
  FROM generate_series(1, $ROWS) g;
SQL
# the CSV both tools read: timestamps as cqlsh parses them (UTC, milliseconds)
q -c "\\copy (SELECT p, c, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || 'Z', v, x FROM bench_copy.src) TO '$TMP/rows.csv' CSV"

echo "== $ROWS rows, $PER per partition, Cassandra at $HOST, $(nproc) cores, $(wc -c < "$TMP/rows.csv") bytes of CSV"
s=$(t q -c "\\copy bench_copy.rows_fdw (p, c, at, v, x) FROM '$TMP/rows.csv' CSV")
echo "1. psql \\copy into the foreign table:  $s s = $(rate "$s") rows/s   ($(check rows_fdw))"
s=$(cd "$TMP" && t "$CQLSH" "$HOST" -e "COPY bench_copy.rows_cqlsh (p, c, at, v, x) FROM '$TMP/rows.csv' WITH NUMPROCESSES=2")
echo "2. cqlsh COPY FROM:                    $s s = $(rate "$s") rows/s   ($(check rows_cqlsh))"
s=$(t q -c "INSERT INTO bench_copy.rows_insel SELECT * FROM bench_copy.src")
echo "3. INSERT ... SELECT (reference):      $s s = $(rate "$s") rows/s   ($(check rows_insel))"

q -c "SELECT cql_execute('bench_copy', 'DROP KEYSPACE bench_copy')" -c "DROP SCHEMA bench_copy CASCADE" > /dev/null
