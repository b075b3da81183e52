# shellcheck shell=bash
# bench/cpu.sh - CPU seconds of the services, for the benchmark scripts
# (sourced by bench/run.sh and bench/diff_hotel.sh; needs CACHE set).

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
