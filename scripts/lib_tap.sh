# shellcheck shell=bash disable=SC2034
# scripts/lib_tap.sh - running test programs and counting what they checked,
# shared by scripts/test.sh (every suite) and scripts/check.sh (the fast
# loop).  Sourced after lib_common.sh, never executed.
#
# The caller sets:
#   LOGDIR        where each program's output goes
#   TEST_TIMEOUT  seconds per program (a file may ask for more with a
#                 "tap-timeout: SECONDS" line)
#   BED_UP        the services this test bed started and saw come up, as
#                 words: cassandra cluster auth tls (see tap_result)
# and names its suites with suite_add before counting into them.
#
# Results:
#   passed   an "ok" line without a SKIP directive
#   failed   a "not ok" line; a program that crashed, timed out, printed
#            no plan or a plan it did not keep; a program that ran nothing
#            ("1..0" without "# SKIP reason"); a suite that found nothing
#            to run; a whole-file skip although the test bed started what
#            the file needs
#   skipped  an "ok ... # SKIP reason" line, and a whole-file skip
#            ("1..0 # SKIP reason") of a file whose declared needs
#            ("tap-needs: WORD..." line in its source) are not all up
# Setup steps (dependencies, builds, services) are counted apart from the
# tests: a failed step is a failure, a passed step is not a test.  So are
# a test program's own setup steps (a keyspace created, a node stopped, a
# row changed before the checks of what that did), which it reports as TAP
# comments, invisible to prove and the plan:
#   # setup ok - WHAT         a setup step that worked
#   # setup not ok - WHAT     one that failed: a failure (setup_fail); the
#                             program's exit status and a plan it did not
#                             keep after it are put down to that step
# (setup_step of tests/bridge/lib.sh and tests/integration/lib/taplib.py,
# pg_temp.setup_step of tests/pgtap/include/setup.sql).

declare -A PASS FAIL SKIP SECS
SUITES=()
SETUP_OK=0
SETUP_FAILED=0
FAILED_ITEMS=()
SKIPPED_ITEMS=()
FILE_TIMES=()
CHILD=""

# suite_add NAME...: suites in the order the summary lists them
suite_add()
{
	local s
	for s in "$@"; do
		SUITES+=("$s")
		PASS[$s]=0 FAIL[$s]=0 SKIP[$s]=0 SECS[$s]=0
	done
}

# pass SUITE [NAME] [N] / fail SUITE WHAT [N] / skip SUITE WHAT [N]
pass() { PASS[$1]=$((PASS[$1] + ${3:-1})); }
fail()
{
	FAIL[$1]=$((FAIL[$1] + ${3:-1}))
	FAILED_ITEMS+=("$1: $2")
}
skip()
{
	SKIP[$1]=$((SKIP[$1] + ${3:-1}))
	SKIPPED_ITEMS+=("$1: $2")
}

# setup_ok / setup_fail WHAT: a setup step, not a test
setup_ok() { SETUP_OK=$((SETUP_OK + 1)); }
setup_fail()
{
	SETUP_FAILED=$((SETUP_FAILED + 1))
	FAILED_ITEMS+=("setup: $1")
}

# cpu_sampler_start: from now on, every 2 s, the machine's busy CPU
#	seconds (all cores: user, nice, system, irq, softirq, steal of
#	/proc/stat) go to $LOGDIR/cpu.samples as "WALL BUSY", so that each
#	suite's share of the machine can be told afterwards (cpu_busy).  On 2
#	cores, a suite at 100 % was held back by CPU; at 40 % it was waiting.
CPU_SAMPLES=""
CPU_SAMPLER=""
NCPU=$(nproc 2> /dev/null || echo 1)
CLK_TCK=$(getconf CLK_TCK 2> /dev/null || echo 100)
# cpu_sample: "WALL BUSY_JIFFIES", in bash alone (no process start between
#	the clock and the counters)
cpu_sample()
{
	local _c u n s _i _w q sq st
	read -r _c u n s _i _w q sq st _ < /proc/stat || return 1
	echo "${EPOCHREALTIME/,/.} $((u + n + s + q + sq + st))"
}
cpu_sampler_start()
{
	[ -r /proc/stat ] || return 0
	CPU_SAMPLES=$LOGDIR/cpu.samples
	cpu_sample > "$CPU_SAMPLES"
	(
		trap - EXIT INT TERM HUP
		while sleep 2; do cpu_sample >> "$CPU_SAMPLES" || exit 0; done
	) > /dev/null 2>&1 &
	CPU_SAMPLER=$!
}
cpu_sampler_stop()
{
	[ -n "$CPU_SAMPLER" ] && kill "$CPU_SAMPLER" 2> /dev/null
	CPU_SAMPLER=""
	return 0
}

# cpu_busy START: busy CPU seconds of the whole machine from START (a
#	`now` value) until now, from the samples (0 without a sampler)
cpu_busy()
{
	[ -n "$CPU_SAMPLES" ] && [ -s "$CPU_SAMPLES" ] || { echo 0; return; }
	cpu_sample >> "$CPU_SAMPLES"
	# the busy seconds at START, interpolated between the samples around it
	awk -v a="$1" -v hz="$CLK_TCK" '
		NR == 1 { first = $2 }
		$1 <= a { t0 = $1; b0 = $2; first = $2 }
		$1 > a && t0 != "" && !done { if ($1 > t0) first = b0 + (a - t0) * ($2 - b0) / ($1 - t0); done = 1 }
		{ last = $2 }
		END { printf "%.1f", (last - first) / hz }' "$CPU_SAMPLES"
}

# add_time SUITE NAME START: charge the seconds since START to SUITE (and
# the machine's busy CPU seconds meanwhile) and remember NAME's time for
# the list of the slowest items
declare -A BUSY
add_time()
{
	local secs busy
	secs=$(elapsed "$3")
	busy=$(cpu_busy "$3")
	SECS[$1]=$(awk -v a="${SECS[$1]}" -v b="$secs" 'BEGIN { printf "%.1f", a + b }')
	BUSY[$1]=$(awk -v a="${BUSY[$1]:-0}" -v b="$busy" 'BEGIN { printf "%.1f", a + b }')
	FILE_TIMES+=("$secs $1 $2 $(cpu_pct "$busy" "$secs")")
}

# cpu_pct BUSY SECS: BUSY CPU seconds as a share of SECS on all cores ("-"
#	without samples)
cpu_pct()
{
	if [ -z "$CPU_SAMPLES" ]; then
		echo "-"
	else
		# (sampled: a saturated machine may come out a few per cent over)
		awk -v b="$1" -v s="$2" -v n="$NCPU" 'BEGIN {
			if (s <= 0) { print "-"; exit }
			p = 100 * b / (s * n); printf "%d%%", (p > 100 ? 100 : p) }'
	fi
}

section() { printf '\n==== %s ====\n' "$*"; }

# bg_run LOG CMD... : run CMD with output to LOG and return its status.
#	The command runs in the background and we 'wait' for it: a trapped
#	signal interrupts 'wait' at once, whereas a foreground child would
#	delay the trap until it exits.  The caller's cleanup kills CHILD.
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

# test_source PROGRAM: the file whose header holds PROGRAM's "tap-timeout:"
# and "tap-needs:" lines (the .c source of a compiled test)
test_source()
{
	case $1 in
		build/unit/*) echo "tests/unit/$(basename "$1").c" ;;
		build/integration/*) echo "tests/integration/$(basename "$1").c" ;;
		*) echo "$1" ;;
	esac
}

# header_value FILE KEY: the value of the first "KEY: value" line of FILE
header_value()
{
	sed -n "s/.*$2: *\([a-z0-9 ]*\).*/\1/p" "$1" 2> /dev/null | head -n1 | sed 's/ *$//'
}

# missing_needs NEEDS: the words of NEEDS that are not in BED_UP
missing_needs()
{
	local w out=""
	for w in $1; do
		[[ " ${BED_UP:-} " == *" $w "* ]] || out="$out $w"
	done
	echo "${out# }"
}

# tap_result SUITE NAME LOGFILE EXITCODE NEEDS
#	Count "ok" / "ok # SKIP" / "not ok" lines; a non-zero exit, a missing
#	or wrong plan, or no test at all ("1..0" without a SKIP directive)
#	counts as (at least) one more failure.  A whole-file skip is a skip
#	only while one of NEEDS is not up; with everything it needs up (or no
#	needs declared) it is a failure.
tap_result()
{
	local suite=$1 name=$2 log=$3 rc=$4 needs=$5
	local okn skn notok plan planned="" extra=0 why="" missing setn setbad line
	skn=$(grep -ciE '^[[:space:]]*ok [0-9]+.*#[[:space:]]*skip' "$log")
	setn=$(grep -cE '^[[:space:]]*# setup ok( |$)' "$log")
	setbad=$(grep -cE '^[[:space:]]*# setup not ok( |$)' "$log")
	okn=$(($(grep -cE '^[[:space:]]*ok [0-9]+' "$log") - skn))
	notok=$(grep -cE '^[[:space:]]*not ok [0-9]+' "$log")
	plan=$(grep -E '^[[:space:]]*1\.\.[0-9]+' "$log" | tail -n1)
	[ -n "$plan" ] && planned=$(sed -E 's/^[[:space:]]*1\.\.([0-9]+).*/\1/' <<< "$plan")
	if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
		extra=1 why="exit status $rc"
	elif [ -z "$planned" ]; then
		extra=1 why="no TAP plan"
	elif [ "$planned" = 0 ] && ! grep -qiE '#[[:space:]]*skip' <<< "$plan"; then
		# "1..0" without a SKIP directive: nothing ran, and nothing said why
		extra=1 why="plan 1..0 without a SKIP reason: no test ran"
	elif [ "$planned" = 0 ]; then
		why="skipped:${plan#*[Ss][Kk][Ii][Pp]}"
		missing=$(missing_needs "$needs")
		if [ -n "$needs" ] && [ -n "$missing" ]; then
			skip "$suite" "$name ($why; not up: $missing)"
		else
			extra=1
			why="$why, but the test bed started what it needs${needs:+ ($needs)}"
		fi
	elif [ "$planned" -ne $((okn + skn + notok)) ]; then
		extra=1 why="planned $planned, ran $((okn + skn + notok))"
	fi
	# the program's own setup steps: counted apart; after a failed one, the
	# exit status or the plan not kept is that failure, not one more
	SETUP_OK=$((SETUP_OK + setn))
	if [ "$setbad" -gt 0 ]; then
		while IFS= read -r line; do
			setup_fail "$suite: $name: $line"
		done < <(grep -E '^[[:space:]]*# setup not ok( |$)' "$log" |
			sed -E 's/^[[:space:]]*# setup not ok( - )?//' | cut -c1-200)
		[ "$extra" -gt 0 ] && why="$why, after a failed setup step"
		extra=0
	fi
	pass "$suite" "$name" "$okn"
	if [ "$skn" -gt 0 ]; then
		SKIP[$suite]=$((SKIP[$suite] + skn))
		while IFS= read -r line; do
			SKIPPED_ITEMS+=("$suite: $name: ${line#*[Ss][Kk][Ii][Pp]}")
		done < <(grep -iE '^[[:space:]]*ok [0-9]+.*#[[:space:]]*skip' "$log")
	fi
	# the summary names the first failed checks, so that a run's tail
	# alone says what failed
	[ "$notok" -gt 0 ] && fail "$suite" "$name ($notok not ok: $(grep -m3 -E \
		'^[[:space:]]*not ok [0-9]+' "$log" | sed -E 's/^[[:space:]]*not ok //' |
		cut -c1-160 | paste -sd '|'))" "$notok"
	[ "$extra" -gt 0 ] && fail "$suite" "$name ($why)" 1
	if [ "$notok" -gt 0 ] || [ "$extra" -gt 0 ] || [ "$setbad" -gt 0 ]; then
		[ "$setbad" -gt 0 ] && why="$setbad setup step(s) failed${why:+; $why}"
		printf '  %-40s %4d ok %4d not ok  FAILED %s\n' "$name" "$okn" "$notok" "$why"
		grep -vE '^[[:space:]]*ok [0-9]+' "$log" | show_tail - 60
	else
		printf '  %-40s %4d ok%s%s %s\n' "$name" "$okn" \
			"$([ "$skn" -gt 0 ] && printf ' %4d skipped' "$skn")" \
			"$([ "$setn" -gt 0 ] && printf ' (+%d setup steps)' "$setn")" "${why:+($why)}"
	fi
}

# Lanes: scripts/test.sh runs the suites of PostgreSQL 15 and those of the
# other versions side by side, against the one Cassandra node.  Two things
# must then not overlap: the same test file on two versions (it creates
# the same keyspaces), and a file that stops or pauses the node (header
# line "tap-exclusive: node") with anything else.  With LOCK_DIR set,
# locked() runs a command holding $LOCK_DIR/KEY.lock (one file at a time
# across the lanes) and the node's lock, shared or, for such a file,
# exclusive.  A file whose faults are a part of it ("tap-exclusive:
# windows") holds the node's lock shared and makes it exclusive only
# around them: it gets the lock's descriptor as CQL_NODE_LOCK_FD and
# calls node_exclusive / node_shared (tests/bridge/lib.sh).  Without
# LOCK_DIR (one lane) it just runs the command.
LOCK_DIR=""
# locked KEY SHARING CMD...: SHARING is -s (shared node), -x (exclusive)
#	or -w (shared, the command may make it exclusive for a while through
#	the descriptor CQL_NODE_LOCK_FD).  Only as bg_run's command (it runs
#	in that background subshell, which holds the locks): the command
#	itself runs without the lock files open (but for -w that one), so a
#	server it leaves behind cannot keep a lock, and a TERM (the test
#	run's cleanup) is passed on to it.
locked()
{
	local key=$1 sharing=$2 a n c rc=0
	shift 2
	if [ -z "$LOCK_DIR" ]; then
		"$@"
		return
	fi
	exec {a}> "$LOCK_DIR/$key.lock" {n}> "$LOCK_DIR/node.lock"
	if [ "$sharing" = -w ]; then
		flock "$a" && flock -s "$n" || return 1
		CQL_NODE_LOCK_FD=$n "$@" {a}>&- &
	else
		flock "$a" && flock "$sharing" "$n" || return 1
		"$@" {a}>&- {n}>&- &
	fi
	c=$!
	trap 'kill -TERM "$c" 2> /dev/null' TERM INT HUP
	wait "$c" || rc=$?
	# a trapped signal ends the wait early: wait for the command itself
	while kill -0 "$c" 2> /dev/null; do
		rc=0
		wait "$c" || rc=$?
	done
	return "$rc"
}

# lane_key SUITE NAME: the lock key of a test file, the same on every
#	PostgreSQL version (bridge_18 and bridge run the same file)
lane_key() { local s=${1%_[0-9][0-9]}; echo "$s-$(basename "$2")"; }

# lane_begin FILE: in a lane running in the background, remember the
#	counters as they are when it starts; lane_end writes what the lane
#	added to FILE, lane_merge FILE adds it to this shell's counters
lane_begin()
{
	LANE_BASE=$(declare -p PASS FAIL SKIP SECS BUSY | sed 's/^declare -A /declare -gA LANE_BASE_/')
	LANE_N=("${#FILE_TIMES[@]}" "${#FAILED_ITEMS[@]}" "${#SKIPPED_ITEMS[@]}" "$SETUP_OK" "$SETUP_FAILED")
}
lane_end()
{
	local k a d
	{
		eval "$LANE_BASE"
		for a in PASS FAIL SKIP SECS BUSY; do
			local -n cur=$a base=LANE_BASE_$a
			for k in "${!cur[@]}"; do
				[ "${cur[$k]}" = "${base[$k]:-0}" ] && continue
				case $a in
					SECS | BUSY) d=$(awk -v a="${cur[$k]}" -v b="${base[$k]:-0}" 'BEGIN { printf "%.1f", a - b }') ;;
					*) d=$((cur[$k] - ${base[$k]:-0})) ;;
				esac
				printf 'lane_add %s %q %s\n' "$a" "$k" "$d"
			done
			unset -n cur base
		done
		for a in "${FILE_TIMES[@]:${LANE_N[0]}}"; do printf 'FILE_TIMES+=(%q)\n' "$a"; done
		for a in "${FAILED_ITEMS[@]:${LANE_N[1]}}"; do printf 'FAILED_ITEMS+=(%q)\n' "$a"; done
		for a in "${SKIPPED_ITEMS[@]:${LANE_N[2]}}"; do printf 'SKIPPED_ITEMS+=(%q)\n' "$a"; done
		echo "SETUP_OK=\$((SETUP_OK + $((SETUP_OK - LANE_N[3]))))"
		echo "SETUP_FAILED=\$((SETUP_FAILED + $((SETUP_FAILED - LANE_N[4]))))"
	} > "$1"
}
# lane_add ARRAY KEY DELTA: ARRAY[KEY] += DELTA (counts and seconds)
lane_add()
{
	local -n arr=$1
	if [[ "$3" == *.* ]]; then
		arr[$2]=$(awk -v a="${arr[$2]:-0}" -v b="$3" 'BEGIN { printf "%.1f", a + b }')
	else
		arr[$2]=$((${arr[$2]:-0} + $3))
	fi
}
lane_merge()
{
	# shellcheck disable=SC1090
	[ -f "$1" ] && . "$1"
}

# A test server's backend that dies of a signal (or a PANIC) is a failure
# of the test file that was running, whatever its checks said: the
# postmaster restarts and the test may pass on.  The server is the one
# PGHOST names (scripts/pg.sh: its directory holds postgres.log and data/).
# server_log_mark: the size of that server's log now (0 without one)
server_log_mark()
{
	stat -c %s "${PGHOST:-/nonexistent}/postgres.log" 2> /dev/null || echo 0
}

# server_crashes SUITE NAME MARK: the crashes the server logged after byte
#	MARK: a failure of NAME, the log lines shown, and for each core file
#	in the data directory (pg.sh starts the server with pg_ctl -c) a
#	backtrace when gdb is there; the core is removed after that.
server_crashes()
{
	local suite=$1 name=$2 mark=$3 dir=${PGHOST:-/nonexistent} lines core exe
	local crash='was terminated by signal|PANIC: '
	[ -f "$dir/postgres.log" ] || return 0
	lines=$(tail -c "+$((mark + 1))" "$dir/postgres.log" | grep -A1 -E "$crash" | cut -c1-600)
	[ -n "$lines" ] || return 0
	fail "$suite" "$name (the server crashed: $(grep -m1 -E "$crash" <<< "$lines" |
		sed -E 's/^.*(LOG|PANIC): +//' | cut -c1-120))" 1
	echo "  $name: the server crashed (log of $dir):"
	show_tail - 20 <<< "$lines"
	for core in "$dir"/data/core*; do
		[ -f "$core" ] || continue
		# postmaster.opts starts with the server binary the core comes from
		exe=$(awk '{ print $1; exit }' "$dir/data/postmaster.opts" 2> /dev/null)
		if command -v gdb > /dev/null && [ -x "$exe" ]; then
			echo "  backtrace of $(basename "$core"):"
			gdb -batch -nx -ex 'bt 40' "$exe" "$core" 2> /dev/null | awk '/^#/ && !seen[$0]++' | show_tail - 40
		else
			echo "  core file $core (no gdb for a backtrace)"
		fi
		rm -f "$core"
	done
}

# run_tap SUITE NAME CMD...: run one TAP program under its time limit
run_tap()
{
	local suite=$1 name=$2 rc=0 log limit=$TEST_TIMEOUT own src needs t0 sharing=-s mark
	shift 2
	log=$LOGDIR/$suite-$(basename "$name").log
	src=$(test_source "$name")
	own=$(header_value "$src" tap-timeout)
	[[ "$own" =~ ^[0-9]+$ ]] && [ "$own" -gt "$limit" ] && limit=$own
	needs=$(header_value "$src" tap-needs)
	case $(header_value "$src" tap-exclusive) in
		node) sharing=-x ;;
		windows) sharing=-w ;;
	esac
	t0=$(now)
	mark=$(server_log_mark)
	bg_run "$log" locked "$(lane_key "$suite" "$name")" "$sharing" timeout -k 10 "$limit" "$@" || rc=$?
	[ "$rc" -eq 124 ] && echo "# killed after $limit s" >> "$log"
	add_time "$suite" "$name" "$t0"
	tap_result "$suite" "$name" "$log" "$rc" "$needs"
	server_crashes "$suite" "$name" "$mark"
}

# run_pg_regress SUITE PG_CONFIG TESTS...: make installcheck of TESTS, one
#	result per test.  pg_regress prints "test NAME ... ok" up to 15 and
#	TAP ("ok N - NAME  123 ms") from 16 on; both are counted, and no test
#	run at all is a failure.  A server without pgvector gets
#	CQL_FDW_NO_PGVECTOR=1 (sql/vector.sql then skips its pgvector half
#	instead of failing), and a passed test whose output has a line "SKIP:
#	reason" counts as one skip with that reason (not as a pass too).
run_pg_regress()
{
	local suite=$1 pgc=$2 rc=0 log=$LOGDIR/$1.log okn badn t0 nopgv="" f line mark tname skipn=0
	shift 2
	rm -rf build/regress
	mkdir -p build/regress
	[ -f "$("$pgc" --sharedir 2> /dev/null)/extension/vector.control" ] || nopgv=1
	t0=$(now)
	mark=$(server_log_mark)
	bg_run "$log" locked pg_regress -s env ${nopgv:+CQL_FDW_NO_PGVECTOR=1} \
		make -s PG_CONFIG="$pgc" installcheck REGRESS="$*" || rc=$?
	SECS[$suite]=$(elapsed "$t0")
	BUSY[$suite]=$(cpu_busy "$t0")
	okn=$(grep -cE '\.\.\. ok|^ok [0-9]+ +[-+] ' "$log")
	badn=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] ' "$log")
	grep -E '\.\.\. (ok|FAILED|failed)|^(not )?ok [0-9]+ +[-+] ' "$log" | sed 's/^/  /'
	# per-test times: "test x ... ok 123 ms" (15) or "ok 1 - x 123 ms" (16+)
	while read -r ms tname; do
		FILE_TIMES+=("$(awk -v m="$ms" 'BEGIN { printf "%.1f", m / 1000 }') $suite $tname")
	done < <(sed -nE -e 's/^test ([a-z0-9_]+) +\.\.\. +[a-zA-Z]+ +([0-9]+) ms.*/\2 \1/p' \
		-e 's/^(not )?ok [0-9]+ +[-+] +([a-z0-9_]+) +([0-9]+) ms.*/\3 \2/p' "$log")
	# a passed test whose output says "SKIP: reason" is one skip, not a pass
	# as well (a failed one stays a failure)
	for f in build/regress/results/*.out; do
		[ -f "$f" ] || continue
		tname=$(basename "$f" .out)
		line=$(grep -m1 '^SKIP:' "$f") || continue
		grep -qE "^test $tname +\.\.\. +ok|^ok [0-9]+ +[-+] +$tname " "$log" || continue
		skipn=$((skipn + 1))
		skip "$suite" "$tname: ${line#SKIP: }"
	done
	pass "$suite" x $((okn - skipn))
	[ "$badn" -gt 0 ] && fail "$suite" "$badn test(s): $(grep -E \
		'\.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] ' "$log" |
		sed -E 's/^not ok [0-9]+ +[-+] +([a-z0-9_]+).*/\1/; s/^test ([a-z0-9_]+).*/\1/' |
		paste -sd ' ')$([ -s build/regress/regression.diffs ] && printf '; first changed lines: %s' \
		"$(grep -E '^[-+]' build/regress/regression.diffs | grep -vE '^(\+\+\+|---) ' |
			head -n 6 | cut -c1-120 | paste -sd '|')")" "$badn"
	if [ "$rc" -ne 0 ] && [ "$badn" -eq 0 ]; then
		fail "$suite" "make installcheck exit $rc"
		show_tail "$log" 40
	fi
	if [ "$okn" -eq 0 ] && [ "$badn" -eq 0 ] && [ "$rc" -eq 0 ]; then
		fail "$suite" "no pg_regress test ran"
		say "no pg_regress test ran (tests: ${*:-none})"
	fi
	if [ -s build/regress/regression.diffs ] && [ "$rc" -ne 0 ]; then
		echo "  regression.diffs:"
		show_tail build/regress/regression.diffs 200
		cp build/regress/regression.diffs "$LOGDIR/$suite.diffs"
	fi
	server_crashes "$suite" pg_regress "$mark"
}

# suite_version SUITE: the PostgreSQL major a suite ran against ("-" for
# the ones that need no server)
suite_version()
{
	case $1 in
		*_[0-9][0-9]) echo "${1##*_}" ;;
		unit | fuzz) echo "-" ;;
		*) echo "$PG_VERSION" ;;
	esac
}

# summary START: the table per suite and PostgreSQL version, the slowest
#	items, what was skipped and what failed, then the one closing line
#	"N passed, N failed, N skipped" (tests only; a failed setup step
#	counts as failed).  Returns non-zero if anything failed.
summary()
{
	local s tp=0 tf=$SETUP_FAILED ts=0
	printf '  %-16s %-4s %7s %7s %8s %9s %5s\n' suite PG passed failed skipped seconds cpu
	for s in "${SUITES[@]}"; do
		printf '  %-16s %-4s %7d %7d %8d %9s %5s\n' "$s" "$(suite_version "$s")" \
			"${PASS[$s]}" "${FAIL[$s]}" "${SKIP[$s]}" "${SECS[$s]}" \
			"$(if [ -n "${BUSY[$s]:-}" ]; then cpu_pct "${BUSY[$s]}" "${SECS[$s]}"; else echo -; fi)"
		tp=$((tp + PASS[$s]))
		tf=$((tf + FAIL[$s]))
		ts=$((ts + SKIP[$s]))
	done
	echo "  setup steps (dependencies, builds, services; the test programs' own): $SETUP_OK ok, $SETUP_FAILED failed, ${SECS[setup]:-0} s"
	if [ "${#FILE_TIMES[@]}" -gt 0 ]; then
		echo "  slowest items (seconds, machine CPU busy meanwhile on $NCPU cores):"
		printf '%s\n' "${FILE_TIMES[@]}" | sort -rn | head -n 15 |
			awk '{ printf "    %7.1f %5s  %-16s %s\n", $1, ($4 == "" ? "-" : $4), $2, $3 }'
	fi
	if [ "${#SKIPPED_ITEMS[@]}" -gt 0 ]; then
		echo "  skipped:"
		printf '    %s\n' "${SKIPPED_ITEMS[@]}"
	fi
	if [ "${#FAILED_ITEMS[@]}" -gt 0 ]; then
		echo "  failures:"
		printf '    %s\n' "${FAILED_ITEMS[@]}"
	fi
	echo "  wall time $(elapsed "$1") s (machine CPU busy $(cpu_pct "$(cpu_busy "$1")" "$(elapsed "$1")")); logs in $LOGDIR"
	echo "$tp passed, $tf failed, $ts skipped"
	[ "$tf" -eq 0 ]
}
