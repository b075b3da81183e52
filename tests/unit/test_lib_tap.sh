#!/usr/bin/env bash
# test_lib_tap.sh
#	The counting of scripts/lib_tap.sh, which scripts/test.sh and
#	scripts/check.sh use for every suite, on made-up program output: a
#	passing file, "# SKIP" assertions counted as skipped (not passed), a
#	whole-file skip that is a skip only while a declared need is down and a
#	failure otherwise, a plan that was not kept, a crash, no plan, a
#	program that ran nothing ("1..0" without SKIP, and the helpers' end of
#	such a program), a missing pg_regress run, a skipped pg_regress test, the machine's CPU share charged to a suite, and
#	the closing line.  TAP output.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib_common.sh
. "$HERE/../../scripts/lib_common.sh"
# shellcheck source=../../scripts/lib_tap.sh
. "$HERE/../../scripts/lib_tap.sh"

LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/test_lib_tap.XXXXXX")
trap 'rm -rf "$LOGDIR"' EXIT
TEST_TIMEOUT=60

echo "1..44"
n=0
check()
{
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   got '$1', want '$2'"
	fi
}

# counts SUITE: "passed failed skipped" of SUITE
counts() { echo "${PASS[$1]} ${FAIL[$1]} ${SKIP[$1]}"; }

# result SUITE LOGTEXT RC NEEDS: tap_result on LOGTEXT, its line discarded
result()
{
	printf '%s\n' "$2" > "$LOGDIR/log"
	tap_result "$1" "x" "$LOGDIR/log" "$3" "$4" > /dev/null
}

suite_add a b c d e f g h
BED_UP="cassandra tls"

result a $'1..3\nok 1 - one\nok 2 - two\nok 3 - three' 0 ""
check "$(counts a)" "3 0 0" "three ok lines: 3 passed"

result b $'1..3\nok 1 - one\nok 2 - # SKIP no key\nok 3 - three # skip not here' 0 ""
check "$(counts b)" "1 0 2" "ok lines with a SKIP directive are skipped, not passed"
check "${#SKIPPED_ITEMS[@]}" 2 "each skipped assertion is listed with its reason"

result c $'1..0 # SKIP the TLS nodes are not running' 0 "tls"
check "$(counts c)" "0 1 0" "a whole-file skip whose need (tls) is up is a failure"

result d $'1..0 # SKIP needs the 3-node cluster' 0 "cluster"
check "$(counts d)" "0 0 1" "a whole-file skip whose need (cluster) is not up is a skip"

result e $'1..0 # SKIP openssl could not make certificates' 0 ""
check "$(counts e)" "0 1 0" "a whole-file skip that declares no need is a failure"

result f $'1..4\nok 1 - one\nok 2 - two' 0 ""
check "$(counts f)" "2 1 0" "a plan of 4 with 2 run: one more failure"

result g $'ok 1 - one\nnot ok 2 - two\n1..2' 1 ""
check "$(counts g)" "1 1 0" "a not ok line is one failure, its exit status no extra one"

result h $'ok 1 - one' 139 ""
check "$(counts h)" "1 1 0" "a crash (exit 139) after one ok: one more failure"

suite_add i j
result i $'ok 1 - one\nok 2 - two' 0 ""
check "$(counts i)" "2 1 0" "output without a plan: one more failure"
result j $'1..2\nok 1 - one\nnot ok 2 - two # SKIP nothing' 0 ""
check "$(counts j)" "1 1 0" "a not ok line is a failure even with a SKIP directive"

# a file that ran nothing and said no why ("1..0" without a SKIP
# directive, exit 0) is a failure, not 0 passed 0 failed
suite_add n0 n1
result n0 $'1..0' 0 ""
check "$(counts n0)" "0 1 0" "plan 1..0 without a SKIP directive, exit 0: a failure"
result n1 $'1..0 # no Cassandra here' 0 "cassandra"
check "$(counts n1)" "0 1 0" "... also with a comment that is not a SKIP directive"

# the helpers' end of a program that ran no test: no "1..0", exit 1
py_out=$(python3 -c "import sys; sys.path.insert(0, '$HERE/../integration/lib'); import taplib; sys.exit(taplib.done())" 2>&1)
check "$? $(grep -c '^1\.\.' <<< "$py_out")" "1 0" "taplib.done() with no test run: exit 1 and no plan"
py_out=$(python3 -c "import sys; sys.path.insert(0, '$HERE/../integration/lib'); import taplib; taplib.ok(True, 'x'); sys.exit(taplib.done())" 2>&1)
check "$? $(tail -n1 <<< "$py_out")" "0 1..1" "... and with one: exit 0, plan 1..1"
CC_=${CC:-cc}
if command -v "$CC_" > /dev/null; then
	printf '#include "tap.h"\nint main(int argc, char **argv) { if (argc > 1) ok(1, "x"); return done_testing(); }\n' > "$LOGDIR/t0.c"
	if "$CC_" -I"$HERE" -o "$LOGDIR/t0" "$LOGDIR/t0.c" 2> "$LOGDIR/t0.err"; then
		c_out=$("$LOGDIR/t0")
		check "$? $(grep -c '^1\.\.' <<< "$c_out")" "1 0" "tap.h done_testing() with no test run: exit 1 and no plan"
		c_out=$("$LOGDIR/t0" one)
		check "$? $(tail -n1 <<< "$c_out")" "0 1..1" "... and with one: exit 0, plan 1..1"
	else
		check "$(head -c 200 "$LOGDIR/t0.err")" "" "tap.h compiles"
		check no yes "tap.h done_testing() with one test (not compiled)"
	fi
else
	n=$((n + 2))
	echo "ok $((n - 1)) - tap.h done_testing() with no test run # SKIP no C compiler ($CC_)"
	echo "ok $n - ... and with one # SKIP no C compiler ($CC_)"
fi

# a program's own setup steps ("# setup ok - WHAT" comments) go to the
# setup count, not the tests; a failed one is a failure, and the exit
# status and the plan not kept after it are not one more
suite_add st1 st2
SETUP_OK=0 SETUP_FAILED=0
result st1 $'1..2\n# setup ok - keyspace created\nok 1 - one\n# setup ok - row changed\nok 2 - two' 0 ""
check "$(counts st1) $SETUP_OK $SETUP_FAILED" "2 0 0 2 0" "two '# setup ok' lines: 2 setup steps, not tests"
result st2 $'1..3\n# setup ok - keyspace created\nok 1 - one\n# setup not ok - node stopped\nBail out! setup failed' 1 ""
check "$(counts st2) $SETUP_OK $SETUP_FAILED" "1 0 0 3 1" "a '# setup not ok' line: one setup failure, its exit status and plan not one more"
check "${FAILED_ITEMS[*]: -1}" "setup: st2: x: node stopped" "... listed with what failed"
SETUP_OK=0 SETUP_FAILED=0

# header_value / missing_needs read what run_tap reads from a test's source
printf '# tap-timeout: 2400 (loads rows)\n# tap-needs: cluster tls\n' > "$LOGDIR/t.py"
check "$(header_value "$LOGDIR/t.py" tap-timeout)" 2400 "tap-timeout read from the header"
check "$(header_value "$LOGDIR/t.py" tap-needs)" "cluster tls" "tap-needs read from the header"
check "$(missing_needs "cluster tls")" "cluster" "missing_needs names what is not up"
check "$(missing_needs "")" "" "no needs, nothing missing"

# run_tap: a program that runs over its time limit is killed and fails
suite_add k
printf '#!/bin/sh\necho "1..1"\nsleep 30\necho "ok 1"\n' > "$LOGDIR/slow.sh"
TEST_TIMEOUT=1
run_tap k "$LOGDIR/slow.sh" sh "$LOGDIR/slow.sh" > /dev/null
check "$(counts k)" "0 1 0" "a program over its time limit is killed and fails"
check "$(awk '{ print ($1 >= 1 && $1 < 20) ? "timed" : $1 }' <<< "${SECS[k]}")" timed \
	"its time is charged to the suite (${SECS[k]} s)"
TEST_TIMEOUT=60

# run_tap: a backend of the test server (PGHOST's postgres.log) that died
# of a signal while a file ran fails that file, even when its checks pass;
# what the log held before the file does not count
suite_add l m
mkdir -p "$LOGDIR/srv/data"
printf 'LOG:  client backend (PID 1) was terminated by signal 11: Segmentation fault\n' > "$LOGDIR/srv/postgres.log"
printf '#!/bin/sh\necho "1..1"\necho "ok 1"\nprintf "%%s\\n%%s\\n" "LOG:  client backend (PID 7) was terminated by signal 11: Segmentation fault" "DETAIL:  Failed process was running: SELECT 1" >> "%s"\n' \
	"$LOGDIR/srv/postgres.log" > "$LOGDIR/crash.sh"
printf '#!/bin/sh\necho "1..1"\necho "ok 1"\n' > "$LOGDIR/fine.sh"
PGHOST=$LOGDIR/srv run_tap l "$LOGDIR/crash.sh" sh "$LOGDIR/crash.sh" > "$LOGDIR/crash.out"
check "$(counts l) $(grep -c 'Failed process was running: SELECT 1' "$LOGDIR/crash.out")" "1 1 0 1" \
	"a server crash during a passing file: one more failure, the log lines shown"
PGHOST=$LOGDIR/srv run_tap m "$LOGDIR/fine.sh" sh "$LOGDIR/fine.sh" > /dev/null
check "$(counts m)" "1 0 0" "a crash logged before the file ran is not charged to it"

# run_pg_regress, with a stand-in 'make' first in PATH that prints what
# FAKE_OUT holds and writes FAKE_RESULT as the result file of test vector
mkdir -p "$LOGDIR/bin"
cat > "$LOGDIR/bin/make" <<'MAKE'
#!/bin/sh
printf '%b' "$FAKE_OUT"
if [ -n "$FAKE_RESULT" ]; then
	mkdir -p build/regress/results
	printf '%b' "$FAKE_RESULT" > build/regress/results/vector.out
fi
echo "CQL_FDW_NO_PGVECTOR=${CQL_FDW_NO_PGVECTOR:-unset}" > nopgv.txt
MAKE
chmod +x "$LOGDIR/bin/make"
cat > "$LOGDIR/bin/pg_config_nopgv" <<PGC
#!/bin/sh
echo "$LOGDIR/share"
PGC
chmod +x "$LOGDIR/bin/pg_config_nopgv"
saved_path=$PATH
PATH=$LOGDIR/bin:$PATH
here=$(pwd)
cd "$LOGDIR" || exit 1

suite_add r s
FAKE_OUT="" FAKE_RESULT=""
export FAKE_OUT FAKE_RESULT
run_pg_regress r "$LOGDIR/bin/pg_config_nopgv" > /dev/null 2>&1
check "$(counts r)" "0 1 0" "pg_regress that ran no test is a failure"
check "$(cat nopgv.txt)" "CQL_FDW_NO_PGVECTOR=1" "a server without pgvector gets CQL_FDW_NO_PGVECTOR=1"

FAKE_OUT='test types ... ok 12 ms\ntest vector ... ok 10 ms\n'
FAKE_RESULT='SKIP: pgvector is not installed\n'
run_pg_regress s "$LOGDIR/bin/pg_config_nopgv" > /dev/null 2>&1
check "$(counts s)" "1 0 1" "a passed test whose result file has a 'SKIP:' line is one skip, not a pass as well"
suite_add s2
FAKE_OUT='test types ... ok 12 ms\ntest vector ... FAILED 10 ms\n'
run_pg_regress s2 "$LOGDIR/bin/pg_config_nopgv" > /dev/null 2>&1
check "$(counts s2)" "1 1 0" "... and a failed one a failure, not a skip"
suite_add s3
FAKE_OUT='ok 1         - types                                      12 ms\nok 2         - vector                                     10 ms\n'
run_pg_regress s3 "$LOGDIR/bin/pg_config_nopgv" > /dev/null 2>&1
check "$(counts s3)" "1 0 1" "... in the TAP output of 16 and later too"
mkdir -p "$LOGDIR/share/extension" && touch "$LOGDIR/share/extension/vector.control"
run_pg_regress s "$LOGDIR/bin/pg_config_nopgv" > /dev/null 2>&1
check "$(cat nopgv.txt)" "CQL_FDW_NO_PGVECTOR=unset" "... and a server with pgvector does not"

cd "$here" || exit 1
PATH=$saved_path

# the CPU share: a suite that kept one core busy for its whole time shows
# about 100 / cores per cent, a suite that slept about none
cpu_sampler_start
suite_add busy idle
t0=$(now)
timeout 3 sh -c 'while :; do :; done'
add_time busy spin "$t0"
t0=$(now)
sleep 3
add_time idle nap "$t0"
cpu_sampler_stop
share() { awk -v b="${BUSY[$1]}" -v s="${SECS[$1]}" -v n="$NCPU" 'BEGIN { printf "%d", 100 * b / (s * n) }'; }
want=$((100 / NCPU))
check "$(awk -v p="$(share busy)" -v w="$want" 'BEGIN { print (p >= w * 0.6) ? "busy" : p }')" busy \
	"a suite spinning on one core is charged about $want % of $NCPU cores ($(share busy) %)"
# (other processes on the machine count too, so no upper bound but the
# machine's own: a share near 200 % would be time charged twice; a 3 s
# window on a loaded machine is off by up to a few tenths of a second)
check "$(awk -v p="$(share idle)" 'BEGIN { print (p <= 150) ? "bounded" : p }')" bounded \
	"no suite is charged more than the whole machine, within the sampling error ($(share idle) %: ${BUSY[idle]} of ${SECS[idle]} s)"
check "$(summary "$(now)" 2> /dev/null | awk '$1 == "busy" { print ($NF ~ /^[0-9]+%$/) ? "shown" : $NF }')" shown \
	"the summary table has the cpu column"
SUITES=(a b)

# the closing line: tests only; a failed setup step counts as failed
SETUP_OK=5
SETUP_FAILED=1
last=$(summary "$(now)" 2> /dev/null | tail -n1)
check "$last" "4 passed, 1 failed, 2 skipped" "closing line: passed and skipped of the tests, failed setup counted"
summary "$(now)" > /dev/null 2>&1
check $? 1 "summary returns non-zero when anything failed"
SETUP_FAILED=0
summary "$(now)" > /dev/null 2>&1
check $? 0 "... and zero when nothing failed"

# the node's lock of the lanes (locked): a "windows" test holds it shared
# and makes it exclusive only for a while, through CQL_NODE_LOCK_FD
LOCK_DIR=$LOGDIR/locks
mkdir -p "$LOCK_DIR"
# other lane: a test holding the node shared for 2 s
# (locked runs in a subshell, as bg_run runs it: its descriptors close with it)
(locked other -s sleep 2) &
other=$!
sleep 0.3
# this lane: a windows test asks for exclusive; it gets it only when the
# other test's shared hold ended (about 1.7 s later)
t0=$(now)
(locked mine -w bash -c '. tests/bridge/lib.sh; node_exclusive; echo exclusive; node_shared') > "$LOGDIR/w.out" 2>&1
waited=$(elapsed "$t0")
wait "$other"
check "$(sed "s/^# waited [0-9]* s for the other lane's test to leave the node\$/# waited/" "$LOGDIR/w.out" | tr '\n' ' ')" \
	"# waited exclusive " "a windows test makes the node's lock exclusive through CQL_NODE_LOCK_FD, and says how long it waited"
check "$(awk -v w="$waited" 'BEGIN { print (w >= 1.2) ? "waited" : w }')" waited \
	"... after the other lane's shared hold ended (${waited} s)"
# and while it holds it shared, a shared test of the other lane runs at once
(locked mine -w bash -c 'sleep 1.5') &
mine=$!
sleep 0.3
t0=$(now)
(locked other -s true)
check "$(awk -v w="$(elapsed "$t0")" 'BEGIN { print (w < 1) ? "at once" : w }')" "at once" \
	"outside its windows it holds the node shared: the other lane is not held up"
wait "$mine"
# a daemon started through node_unlocked does not keep the lock
(locked mine -w bash -c '. tests/bridge/lib.sh; node_unlocked sh -c "sleep 3 > /dev/null 2>&1 &"')
t0=$(now)
timeout 2 flock -x "$LOCK_DIR/node.lock" true
check "$? $(awk -v w="$(elapsed "$t0")" 'BEGIN { print (w < 1) ? "free" : w }')" "0 free" \
	"a process started through node_unlocked does not hold the node's lock"
