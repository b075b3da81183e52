#!/usr/bin/env bash
#
# bench/java_anchor.sh - the DataStax Java driver 4.19 as an anchor beside the
# Python driver (py_*.py): same table, same rows, protocol v5 + LZ4, LOCAL_ONE.
#
#   bash bench/java_anchor.sh all [ROWS]      create, insert ROWS (default 200000),
#                                             scan, scan-async (each must count ROWS
#                                             rows), lookup 5000 of ids 1..ROWS
#   bash bench/java_anchor.sh MODE [ARGS]     one mode of bench/java/src/CqlBench.java:
#        create | insert [ROWS] | scan | scan-async | lookup [N] [ROWS] | drop
#
# Environment: CQL_HOST (127.0.0.1), BENCH_KS (bench), BENCH_TABLE (rows),
# BENCH_INSERT_TABLE (rows; if it is not BENCH_TABLE, BENCH_TABLE must already
# hold ids 1..ROWS, as bench.rows does in run.sh), BENCH_DROP=1 drops BENCH_KS
# after `all` (never 'bench'), CASSANDRA_PID (comma-separated; default: every
# `pgrep -f CassandraDaemon`, summed - set it when other nodes run beside the
# one measured),
# JAVA (java), JAVA_OPTS (-Xms256m -Xmx1g).
#
# Each run prints the program's line (timed part: wall, rows/s, client CPU,
# Cassandra CPU) and a summary line "wall / Cassandra CPU / client CPU" of the
# timed part, with the whole JVM run (start-up, connect, prepare) after it;
# Cassandra's CPU is utime + stime of /proc/<pid>/stat.
#
# First use downloads ~15 MB of jars from Maven Central into
# ${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/java-driver (bench/java/fetch.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CP=$(bash "$HERE/java/build.sh")
JAVA=${JAVA:-java}
read -r -a JOPTS <<< "${JAVA_OPTS:--Xms256m -Xmx1g}"
HZ=$(getconf CLK_TCK)
export CLK_TCK=$HZ
if [ -z "${CASSANDRA_PID:-}" ]; then
	CASSANDRA_PID=$(pgrep -f CassandraDaemon | paste -sd, || true)
fi
export CASSANDRA_PID

# node_cpu: CPU seconds (utime + stime) of the nodes in CASSANDRA_PID, summed
node_cpu()
{
	local pid sum=0 t
	[ -n "$CASSANDRA_PID" ] || { echo 0; return; }
	for pid in ${CASSANDRA_PID//,/ }; do
		# fields after "(comm)": state is $1, utime $12, stime $13
		t=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')
		sum=$((sum + t))
	done
	echo "scale=2; $sum / $HZ" | bc
}

# run MODE [ARGS]: one JVM, its line, and the summary line
run()
{
	local mode=$1 s e c0 c1 out line
	shift
	c0=$(node_cpu)
	s=$(date +%s.%N)
	out=$("$JAVA" "${JOPTS[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-Dorg.slf4j.simpleLogger.logFile=System.err -cp "$CP" CqlBench "$mode" "$@")
	e=$(date +%s.%N)
	c1=$(node_cpu)
	echo "$out"
	line=$(echo "$out" | tail -n 1)
	case $mode in create|drop) return ;; esac
	printf 'java-anchor %s: wall %s s, Cassandra CPU %s s, client CPU %s s; whole JVM run %.2f s wall, Cassandra CPU %.2f s, client CPU %s s\n' \
		"$mode" \
		"$(echo "$line" | sed -nE 's/.* in ([0-9.]+) s.*/\1/p')" \
		"$(echo "$line" | sed -nE 's/.*Cassandra CPU ([0-9.]+) s.*/\1/p')" \
		"$(echo "$line" | sed -nE 's/.*client CPU ([0-9.]+) s.*/\1/p')" \
		"$(echo "$e - $s" | bc)" \
		"$(echo "$c1 - $c0" | bc)" \
		"$(echo "$line" | sed -nE 's/.*JVM total ([0-9.]+) s.*/\1/p')"
}

# check_rows EXPECTED: the last scan line counted EXPECTED rows
check_rows()
{
	local n
	n=$(sed -nE 's/.*scan: ([0-9]+) rows in.*/\1/p' <<< "$1")
	[ "$n" = "$2" ] || { echo "java-anchor: scan counted $n rows, expected $2" >&2; exit 1; }
}

mode=${1:-all}
[ $# -gt 0 ] && shift
if [ "$mode" != all ]; then
	run "$mode" "$@"
	exit 0
fi

ROWS=${1:-200000}
echo "== java-driver anchor: $ROWS rows in ${BENCH_KS:-bench}.${BENCH_TABLE:-rows}, Cassandra at ${CQL_HOST:-127.0.0.1} (pid ${CASSANDRA_PID:-?}), $(nproc) cores"
run create
[ "${BENCH_INSERT_TABLE:-rows}" = "${BENCH_TABLE:-rows}" ] || echo "(insert goes to ${BENCH_INSERT_TABLE}, scans read ${BENCH_TABLE:-rows})"
run insert "$ROWS"
out=$(run scan); echo "$out"
check_rows "$out" "$ROWS"
out=$(run scan-async); echo "$out"
check_rows "$out" "$ROWS"
run lookup 5000 "$ROWS"
if [ "${BENCH_DROP:-0}" = 1 ]; then
	run drop
fi
