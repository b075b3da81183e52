#!/usr/bin/env bash
#
# tests/integration/stream_rf3.sh - cqlbridge stream into the 3-node
# cluster at replication factor 3, with its default write consistency
# (LOCAL_QUORUM), while pgbench writes the source throughout (issue 39):
#   1. the stream loads tests/bridge/evolve (venues with tags, tickets by
#      month with the venue's name) into a keyspace of RF 3
#   2. two of the three nodes paused (SIGSTOP): a change cannot reach a
#      quorum, so its flush fails and the slot's confirmed position stays
#      before it; resumed, the change arrives (a stream that confirmed on
#      one replica's acknowledgement would have moved on)
#   3. a rolling restart of the three nodes while pgbench writes: node1
#      and node2 stopped and started again, node3 killed with kill -9 and
#      started again, each after the previous one is back
#   4. pgbench's runs: no transaction failed; the stream caught up; and
#      "cqlbridge diff --consistency QUORUM" finds no difference
#
# Environment: CQL_CLUSTER_HOSTS (three hosts; skipped otherwise),
# PGHOST/PGPORT/PGUSER (superuser, wal_level=logical), CQLBRIDGE;
# CQL_RF3_NODES (the three nodes' names for scripts/cassandra.sh, default
# "node1 node2 node3"), CQL_RF3_GROUP (their group name for "cassandra.sh
# wait", default cluster) and CQL_RF3_USER/CQL_RF3_PASSWORD (a user mapping
# with them): e.g. the auth cluster, "auth1 auth2 auth3", auth, cassandra.
# Output: TAP.
# tap-needs: cluster (skipped with CQL_TOPOLOGY=single)
# tap-order: last (scripts/test.sh runs it after the other suites on PostgreSQL 15)
# tap-timeout: 1200 (three node restarts)
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BRIDGE=$HERE/../bridge
# shellcheck source=../bridge/lib.sh
. "$BRIDGE/lib.sh"
REPO=$LIB_REPO

HOSTS=${CQL_CLUSTER_HOSTS:-}
if [ "$(tr ',' '\n' <<< "$HOSTS" | grep -c .)" -lt 3 ]; then
	echo "1..0 # SKIP needs the 3-node cluster (CQL_CLUSTER_HOSTS)"
	exit 0
fi

read -r -a NODES <<< "${CQL_RF3_NODES:-node1 node2 node3}"
GROUP=${CQL_RF3_GROUP:-cluster}
[ "${#NODES[@]}" -eq 3 ] || { echo "Bail out! CQL_RF3_NODES must name three nodes"; exit 1; }
DB=bridge_stream_rf3
KS=bridge_rf3
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS")
bridge_begin stream_rf3
stream_suite

tap_plan 12

# node_host NODE: the node's address (the hosts of CQL_CLUSTER_HOSTS in
# the order of CQL_RF3_NODES)
node_host()
{
	local i
	for i in 0 1 2; do
		[ "${NODES[$i]}" = "$1" ] && tr ',' '\n' <<< "$HOSTS" | sed -n "$((i + 1))p"
	done
}
# cass ARGS...: scripts/cassandra.sh, its output kept in the work directory
cass() { bash "$REPO/scripts/cassandra.sh" "$@" >> "$WORK/cassandra.out" 2>&1; }

# a node left paused or down by a failed run is brought back at exit
rf3_cleanup()
{
	cass resume "${NODES[1]}"
	cass resume "${NODES[2]}"
	for n in "${NODES[@]}"; do
		bash "$REPO/scripts/cassandra.sh" probe "$(node_host "$n")" > /dev/null 2>&1 || cass start "$n" --keep-data
	done
	stream_suite_cleanup
}
trap rf3_cleanup EXIT

fresh_db "$HOSTS"
if [ -n "${CQL_RF3_USER:-}" ]; then
	q "ALTER USER MAPPING FOR CURRENT_USER SERVER cqlbridge OPTIONS (ADD user '$CQL_RF3_USER', ADD password '${CQL_RF3_PASSWORD:-}')" > /dev/null ||
		bail "user mapping failed"
fi
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "the cluster at $HOSTS is not reachable through cql_fdw"
qf -f "$BRIDGE/evolve/schema.sql" > /dev/null || bail "schema failed"
"$CQLBRIDGE" plan -q --schema evolve --workload "$BRIDGE/evolve/workload.sql" \
	--keyspace "$KS" --foreign-schema "$FS" --server cqlbridge \
	--replication-factor 3 -o "$GEN" > "$WORK/plan.out" 2>&1 || bail "plan failed: $(cat "$WORK/plan.out")"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply.out" 2>&1 || bail "apply failed: $(cat "$WORK/apply.out")"
load_targets "$GEN"

# bench_start: pgbench at 40 transactions/s (the evolve write mix), in
# rounds of 10 s until bench_stop, each round with its own summary
# (pgbench.N.out; a background job ignores SIGINT, and pgbench killed
# otherwise prints none)
bench_start()
{
	touch "$WORK/bench.on"
	(
		n=0
		while [ -e "$WORK/bench.on" ]; do
			n=$((n + 1))
			"$PGBENCH" -n -M simple -c 1 -R 40 -T 10 --max-tries=5 \
				-D name_col=name -D tag_rel=venue_tag \
				-f "$BRIDGE/evolve/writes.pgbench" "$DB" > "$WORK/pgbench.$n.out" 2>&1
			echo "$?" > "$WORK/pgbench.$n.rc"
		done
	) &
	BPID=$!
}
bench_stop()
{
	rm -f "$WORK/bench.on"
	wait "$BPID"
	BPID=
}

# 1. the load, pgbench writing
T0=$(date +%s)
bench_start
"$CQLBRIDGE" stream --flush-interval 200 "$GEN" > "$WORK/stream.log" 2>&1 &
SPID=$!
wait_stream_phase "$KS" streaming
ok $? "the stream loaded the keyspace of RF 3 while pgbench writes" || diag "$(tail -5 "$WORK/stream.log")"
sleep 5
bench_stop
stream_caught_up "$KS"
ok $? "it caught up" || diag "$(tail -5 "$WORK/stream.log")"
grep -q "written at LOCAL_QUORUM" "$WORK/stream.log"
ok $? "it writes at LOCAL_QUORUM (the default)" || diag "$(grep -m1 "streaming slot" "$WORK/stream.log")"

# 2. two nodes of three paused: no quorum, nothing confirmed
cass pause "${NODES[1]}" && cass pause "${NODES[2]}" || bail "could not pause two nodes"
q "UPDATE evolve.venue SET name = 'Quorum Hall' WHERE venue_id = 17" > /dev/null
lsn=$(q "SELECT pg_current_wal_insert_lsn()")
sleep 8
is "$(q "SELECT confirmed_flush_lsn < '$lsn' FROM pg_replication_slots WHERE slot_name = 'cqlbridge_$KS'")" t \
	"with two of three replicas paused the change is not confirmed (its flush reaches no quorum)"
cass resume "${NODES[1]}" && cass resume "${NODES[2]}" || bail "could not resume the two nodes"
stream_caught_up "$KS"
ok $? "resumed, the stream caught up" || diag "$(tail -5 "$WORK/stream.log")"
is "$(q "SELECT DISTINCT venue_name FROM $FS.tickets_by_venue_id WHERE venue_id = 17")" "Quorum Hall" \
	"the change arrived once a quorum could acknowledge it"

# 3. a rolling restart while pgbench writes; a node started here runs
# with the C1 compiler only (half the start-up CPU, as fdw_failover.py's)
bench_start
restarted=0
for n in "${NODES[@]}"; do
	t1=$(date +%s)
	if [ "$n" = "${NODES[2]}" ]; then
		cass kill "$n"
	else
		cass stop "$n"
	fi
	sleep 3
	CASSANDRA_JVM_OPTS="${CASSANDRA_JVM_OPTS:-} -XX:TieredStopAtLevel=1" cass start "$n" --keep-data &&
		cass wait "$GROUP" && restarted=$((restarted + 1))
	diag "$n back after $(($(date +%s) - t1)) s"
done
sleep 5
bench_stop
is "$restarted" 3 "${NODES[0]} and ${NODES[1]} stopped and started, ${NODES[2]} killed (kill -9) and started, one after the other" ||
	diag "$(tail -20 "$WORK/cassandra.out")"

# 4. afterwards
failed=0 done_tx=0 missing=0
for out in "$WORK"/pgbench.*.out; do
	f=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	d=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	if [ -z "$f" ] || [ -z "$d" ] || [ "$(cat "${out%.out}.rc")" != 0 ]; then
		missing=$((missing + 1))
		diag "pgbench run $out:" "$(tail -5 "$out")"
	else
		failed=$((failed + f))
		done_tx=$((done_tx + d))
	fi
done
[ "$missing" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$done_tx" -gt 0 ]
ok $? "pgbench (10 s rounds throughout): $done_tx transactions, $failed failed, $missing rounds without a summary"
if kill -0 "$SPID" 2> /dev/null; then
	ok 0 "the stream ran through the restarts"
	stream_caught_up "$KS"
	ok $? "it caught up" || diag "$(tail -5 "$WORK/stream.log")"
else
	ok 1 "the stream ran through the restarts" || diag "$(tail -5 "$WORK/stream.log")"
	ok 1 "it caught up (not checked: it does not run)"
fi
"$CQLBRIDGE" diff --consistency QUORUM "$GEN" > "$WORK/diff.out" 2>&1
is "$?" 0 "cqlbridge diff --consistency QUORUM: no difference" || diag "$(tail -15 "$WORK/diff.out")"
kill -TERM "$SPID" 2> /dev/null
wait "$SPID"
is "$?" 0 "SIGTERM stops the stream with status 0"
SPID=
diag "$(($(date +%s) - T0)) s in all"
