#!/usr/bin/env bash
#
# scripts/check.sh - the fast loop for day-to-day work (`make check`):
#
#   build -> unit tests and layering (while one Cassandra node starts)
#   -> PostgreSQL 15 -> pg_regress -> "N passed, N failed, N skipped"
#
# One node, PostgreSQL 15, no fuzzing, no cluster faults, no other
# PostgreSQL version: about 3 minutes, against the full run's 15 to 20
# (scripts/test.sh, which CI runs; measured runs: docs/testbed.md).  pg_regress runs sql/schedule.txt less
# CHECK_OMIT (default: bigscan and parallel_scan, the two that take minutes;
# CHECK_OMIT="" runs everything).  A node already answering on
# 127.0.0.1:9042 (a single node or node1 of the cluster) is used as it is;
# otherwise a single node is started.  The node and PostgreSQL are left
# running for the next round (start costs ~20 s); CQL_CHECK_STOP=1 stops
# what this run started.  Dependencies must be installed already (the first
# `bash scripts/test.sh` or `bash scripts/deps.sh` does that).
#
# Environment: CHECK_OMIT, CQL_CHECK_STOP, TEST_TIMEOUT (default 600).
#
set -uo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"
# shellcheck source=lib_tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_tap.sh"
cd "$REPO" || exit 1

CHECK_OMIT=${CHECK_OMIT-bigscan parallel_scan}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
LOGDIR=$REPO/build/check-logs
T_START=$(now)
BED_UP=""
CASS_BG=""
STARTED_NODE=0
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"
cpu_sampler_start
suite_add unit pg_regress
SECS[setup]=0

[ -x "$PG_CONFIG" ] || die "$PG_CONFIG not found: run 'bash scripts/deps.sh' (or scripts/test.sh) once first"

cleanup()
{
	cpu_sampler_stop
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2> /dev/null; then
		kill -TERM "$CHILD" 2> /dev/null
		wait "$CHILD" 2> /dev/null
	fi
	if [ -n "$CASS_BG" ] && kill -0 "$CASS_BG" 2> /dev/null; then
		kill "$CASS_BG" 2> /dev/null
		wait "$CASS_BG" 2> /dev/null
	fi
	if [ "${CQL_CHECK_STOP:-0}" = 1 ]; then
		bash scripts/pg.sh stop || true
		[ "$STARTED_NODE" = 1 ] && { bash scripts/cassandra.sh stop single || true; }
	fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM HUP

section "Cassandra"
T_CASS=$(now)
if bash scripts/cassandra.sh probe 127.0.0.1 > /dev/null 2>&1; then
	say "using the node already answering on 127.0.0.1:9042"
else
	STARTED_NODE=1
	bash scripts/cassandra.sh start single > "$LOGDIR/cassandra-start.log" 2>&1 &
	CASS_BG=$!
	say "starting a single node in the background"
fi

section "build"
# step NAME CMD...: one setup step, its output in $LOGDIR/NAME.log
step()
{
	local name=$1 t0
	shift
	t0=$(now)
	if run_logged "$name" "$@" && ! grep -q 'warning:' "$LOGDIR/$name.log"; then
		setup_ok
		say "$name: ok"
		add_time setup "$name" "$t0"
		return 0
	fi
	add_time setup "$name" "$t0"
	say "$name: FAILED (errors or compiler warnings)"
	show_tail "$LOGDIR/$name.log" 60
	setup_fail "$name"
	return 1
}
step build-extension make -s -j2 PG_CONFIG="$PG_CONFIG"
step install bash scripts/pg.sh install
step build-unit make -s -j2 -k unit
# scripts/check_layers.py reads the objects of the extension, unit and bridge builds
step build-bridge make -s PG_CONFIG="$PG_CONFIG" bridge

section "unit"
shopt -s nullglob
units=(build/unit/test_* tests/unit/test_*.sh)
[ "${#units[@]}" -gt 0 ] || fail unit "no unit test binaries"
for t in "${units[@]}"; do
	case $t in
		*.sh) run_tap unit "$t" bash "$t" ;;
		*) [ -x "$t" ] && run_tap unit "$t" "$t" ;;
	esac
done
if python3 scripts/check_layers.py > "$LOGDIR/check_layers.log" 2>&1; then
	pass unit
	printf '  %-40s ok\n' "scripts/check_layers.py"
else
	fail unit "scripts/check_layers.py"
	show_tail "$LOGDIR/check_layers.log" 30
fi

section "services"
if [ -n "$CASS_BG" ]; then
	if wait "$CASS_BG"; then
		setup_ok
	else
		setup_fail "Cassandra single node did not start"
		show_tail "$LOGDIR/cassandra-start.log" 30
	fi
	CASS_BG=""
fi
say "Cassandra ready $(elapsed "$T_CASS") s after the start of this run"
if bash scripts/pg.sh status > /dev/null 2>&1 || bash scripts/pg.sh start --keep; then
	setup_ok
else
	setup_fail "PostgreSQL 15 did not start"
fi
eval "$(bash scripts/pg.sh env)"
export CQL_HOST=127.0.0.1

section "pg_regress (PostgreSQL 15, one node${CHECK_OMIT:+; not run: $CHECK_OMIT})"
tests=""
for t in $(cat sql/schedule.txt); do
	[[ " $CHECK_OMIT " == *" $t "* ]] || tests="$tests $t"
done
run_pg_regress pg_regress "$PG_CONFIG" "${tests# }"

section "summary"
summary "$T_START"
