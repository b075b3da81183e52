# shellcheck shell=bash
# bench/cpu.sh - CPU seconds of the services, for the benchmark scripts
# (sourced by bench/run.sh, bench/diff_hotel.sh, bench/stream_compare.sh and
# bench/replan_compare.sh; bridge_cpu needs CACHE set).

# bridge_cpu: CPU seconds so far of Cassandra (the single node, or CASS_PID)
# and of PostgreSQL (the postmaster and its children, ended backends
# included): "cass pg"
bridge_cpu()
{
	local tck cpid pmpid
	tck=$(getconf CLK_TCK)
	cpid=${CASS_PID:-$(cat "$CACHE/run/single/pid")}
	pmpid=$(head -1 "$(psql -X -At -d postgres -c 'SHOW data_directory')/postmaster.pid")
	echo "$(awk -v t="$tck" '{ print ($14 + $15) / t }' /proc/"$cpid"/stat) $(
		{ awk '{ print $14 + $15 + $16 + $17 }' /proc/"$pmpid"/stat
		  for p in $(pgrep -P "$pmpid"); do awk '{ print $14 + $15 }' /proc/"$p"/stat 2> /dev/null; done
		} | awk -v t="$tck" '{ n += $1 } END { print n / t }')"
}

# cpu_delta BEFORE AFTER: "Cassandra X, PostgreSQL Y" seconds between two bridge_cpu
cpu_delta()
{
	echo "$1 $2" | awk '{ printf "Cassandra %.1f, PostgreSQL %.1f", $3 - $1, $4 - $2 }'
}

# ---- ticks (1/CLK_TCK s) of processes, for scripts that sample per process
# (bench/stream_compare.sh, bench/replan_compare.sh)

# ticks PID: utime + stime of a process (0 when it is gone)
ticks()
{
	[ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] && sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }' || echo 0
}

# pg_ticks DATADIR: the postmaster of DATADIR, its ended children (cutime +
# cstime) and its live children
pg_ticks()
{
	local pm s=0 p
	pm=$(head -1 "$1/postmaster.pid")
	s=$(sed 's/.*) //' "/proc/$pm/stat" | awk '{ print $12 + $13 + $14 + $15 }')
	for p in $(pgrep -P "$pm"); do s=$((s + $(ticks "$p"))); done
	echo "$s"
}

# busy_ticks: the whole machine's busy CPU (all cores)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# cass_pid NODE: the JVM of a scripts/cassandra.sh node (empty if none)
cass_pid() { cat "${CASSANDRA_RUN_DIR:-${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}/run}/$1/pid" 2> /dev/null || echo; }
