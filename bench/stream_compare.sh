#!/usr/bin/env bash
#
# bench/stream_compare.sh - issue 24's benchmark, side by side in one run:
# the application's pgbench loop (single-row UPDATE of
# hotel_rel.room_availability, 4 clients) without sync, with the trigger
# `cqlbridge sync`, with `cqlbridge stream`, and with Debezium's embedded
# engine capturing the same loop from its own slot (the anchor, capture
# only).  By hand, not in CI: it stops and starts a Cassandra node.
#
#   bash bench/stream_compare.sh setup             database $DB: the demo's hotel
#                                                  data (scale 6, rooms 20, days 60:
#                                                  7,200 room_availability rows),
#                                                  plan, apply --no-load, the
#                                                  stream's initial load
#   bash bench/stream_compare.sh latency [SECS]    a: -R $RATE (1000), SECS (60): none / sync / stream
#   bash bench/stream_compare.sh full [SECS]       b: unthrottled, SECS (30): none / sync / stream
#   bash bench/stream_compare.sh outage [OUT]      c: -R $RATE with the stream, node $NODE
#                                                  stopped OUT (60) s under the load
#   bash bench/stream_compare.sh debezium [SECS]   d: Debezium capturing, -R $RATE (SECS) and
#                                                  unthrottled (SECS / 2)
#   bash bench/stream_compare.sh all               setup, a, b, c, d
#   bash bench/stream_compare.sh run LABEL MODE RATE SECS
#                                                  one run: MODE none|sync|stream,
#                                                  RATE 0 = unthrottled (to compare
#                                                  two builds: CQLBRIDGE=...)
#
# Environment: PG* (the PostgreSQL to use; scripts/pg.sh env), CQL_HOST (the
# Cassandra node, default 127.0.0.10), NODE (its scripts/cassandra.sh name,
# scratch2: "outage" stops and starts it, nothing else is touched), DB
# (stream_bench), KS (keyspace, stream_bench), RATE (1000), CQLBRIDGE
# (build/cqlbridge), OUTDIR (where logs and results.txt go; default a new
# directory under /tmp), STREAM_OPTS (more options of "cqlbridge stream",
# e.g. "--priority idle"), STREAM_SESSION ("own", the default: the stream
# started with setsid, a session of its own as under systemd or in a
# terminal of its own, whose autogroup --priority lowers; "shared": in
# this script's session, with pgbench, the application's client, as runs
# before 2026-11-29 (afternoon) had it: --priority then cannot lower the
# stream process's autogroup without lowering pgbench's), BENCH_NICE (a
# nice value, or "idle" for SCHED_IDLE, given by renice/chrt to every
# thread of BENCH_NICE_WHAT:
# "cassandra" the node's JVM, "stream" the stream's process, backend and
# walsender, "both", the default).  On a kernel with
# /proc/sys/kernel/sched_autogroup_enabled = 1 the scheduler first shares
# the CPU between sessions (autogroups), so a class or nice value set on
# the node's JVM, which has a session of its own, does not rank it below
# the application's backends.  BENCH_PIN=1: Cassandra's JVM (every thread)
# on CPU 0; PostgreSQL (the postmaster and its processes; new backends
# inherit it), pgbench, the stream and Debezium on CPU 1, as if Cassandra
# ran on machines of its own and the source had one core (issue 42; as
# bench/diff_hotel.sh's BENCH_PIN; restored at exit); the lag sampler, its
# psql and its backend on CPU 0 with Cassandra (an instrument, not part of
# what is measured: its query every 50 ms was bursts on CPU 1 that the
# runs without a stream did not have).
#
# Every run prints one line: the application's tx/s, latency p50/p99 (from
# pgbench's per-transaction log, schedule lag included as pgbench reports
# it), failed transactions; the stream's or Debezium's lag; the CPU seconds
# of PostgreSQL's backends (pgbench's and background), the walsender, the
# stream's backend, Cassandra, the stream process, Debezium's JVM, pgbench,
# and what the rest of the machine used (the box is shared), with the load
# average; for the stream and Debezium, the source's CPU per change: the
# stream's backend and the walsender, in microseconds per change applied
# (Debezium: its walsender alone); for the stream, the scheduler's view of
# its process, backend and walsender (autogroup nice value, nice value,
# class: what --priority gave them).  Stream lag: commit -> slot confirmation, which the stream gives
# only after Cassandra acknowledged (bench/stream_lag.py, sampled every 50
# ms); Debezium lag: receipt minus the event's commit time (and the same
# slot-based measure).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cpu.sh
. "$HERE/cpu.sh"
REPO=$(cd "$HERE/.." && pwd)
CQLBRIDGE=${CQLBRIDGE:-$REPO/build/cqlbridge}
CQL_HOST=${CQL_HOST:-127.0.0.10}
NODE=${NODE:-scratch2}
DB=${DB:-stream_bench}
KS=${KS:-stream_bench}
RATE=${RATE:-1000}
BENCH_NICE=${BENCH_NICE:-}
BENCH_NICE_WHAT=${BENCH_NICE_WHAT:-both}
STREAM_OPTS=${STREAM_OPTS:-}
STREAM_SESSION=${STREAM_SESSION:-own}
case $STREAM_SESSION in
	own) SESSION=(setsid) ;;	# not a process group leader here: no fork, $! is the stream
	shared) SESSION=() ;;
	*) echo "STREAM_SESSION must be own or shared" >&2; exit 2 ;;
esac
GEN=${GEN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/stream_bench_plan}
OUTDIR=${OUTDIR:-$(mktemp -d /tmp/stream_compare.XXXXXX)}
SLOT=cqlbridge_$KS
DBZ_SLOT=dbz_bench
HZ=$(getconf CLK_TCK)
RESULTS=$OUTDIR/results.txt
BENCH_PIN=${BENCH_PIN:-}
PIN=()
PRIO_LINE=
mkdir -p "$OUTDIR"
export PGDATABASE=$DB

q() { psql -X -q -A -t -d "$DB" -c "$1"; }
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$RESULTS"; }
now() { date +%s.%N; }

# ---------------------------------------------------------------- CPU

# snap: "pg walsender backend cassandra stream jvm busy" ticks now, for the
# pids in WS_PID BE_PID STREAM_PID JVM_PID
snap()
{
	echo "$(pg_ticks "$(q 'SHOW data_directory')") $(ticks "${WS_PID:-}") $(ticks "${BE_PID:-}") $(ticks "$(cass_pid "$NODE")") $(ticks "${STREAM_PID:-}") $(ticks "${JVM_PID:-}") $(busy_ticks)"
}

# cpu_line BEFORE AFTER PGBENCH_S: the split in CPU seconds
cpu_line()
{
	echo "$1 $2 $3" | awk -v hz="$HZ" '{
		d = 0; for (i = 1; i <= 7; i++) v[i] = ($(i + 7) - $i) / hz
		pgb = $15
		other = v[7] - v[1] - v[4] - v[5] - v[6] - pgb
		printf "CPU s: PG backends %.1f, walsender %.1f, stream backend %.1f, Cassandra %.1f, stream %.1f, Debezium JVM %.1f, pgbench %.1f, rest of the machine %.1f",
			v[1] - v[2] - v[3], v[2], v[3], v[4], v[5], v[6], pgb, other }'
}

# ---------------------------------------------------------------- pinning
# pin_cassandra: every thread of the node's JVM on CPU 0 (again after the
# node restarted: outage)
pin_cassandra()
{
	local cpid
	cpid=$(cass_pid "$NODE")
	[ -n "$BENCH_PIN" ] && [ -n "$cpid" ] && taskset -a -p -c 0 "$cpid" > /dev/null
	return 0
}

# pin_start: BENCH_PIN's placement (see the header); unpin at exit
pin_start()
{
	local pm p
	[ -n "$BENCH_PIN" ] || return 0
	pm=$(head -1 "$(q 'SHOW data_directory')/postmaster.pid")
	PINNED_PG="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
	for p in $PINNED_PG; do taskset -p -c 1 "$p" > /dev/null 2>&1 || true; done
	pin_cassandra
	PIN=(taskset -c 1)
	say "pinned: Cassandra $NODE (pid $(cass_pid "$NODE")) on CPU 0; PostgreSQL (postmaster $pm and its processes), pgbench, the stream and Debezium on CPU 1"
}

pin_end()
{
	local all p cpid
	[ -n "$BENCH_PIN" ] || return 0
	all=0-$(($(nproc) - 1))
	cpid=$(cass_pid "$NODE")
	[ -n "$cpid" ] && taskset -a -p -c "$all" "$cpid" > /dev/null 2>&1
	for p in ${PINNED_PG:-}; do taskset -p -c "$all" "$p" > /dev/null 2>&1; done
	return 0
}

# sched_ns: "walsender backend" CPU nanoseconds so far of WS_PID and BE_PID
# (/proc/PID/schedstat: exact, where the ticks of snap are 10 ms samples)
sched_ns()
{
	local p
	for p in "${WS_PID:-}" "${BE_PID:-}"; do
		if [ -n "$p" ] && [ -r "/proc/$p/schedstat" ]; then cut -d' ' -f1 "/proc/$p/schedstat"; else echo 0; fi
	done | paste -sd' '
}

# per_change BEFORE AFTER CHANGES: the source's CPU per change, from two
# sched_ns: the stream's backend and the walsender in microseconds per
# change
per_change()
{
	echo "$1 $2 $3" | awk '{
		ws = ($3 - $1) / 1e3; be = ($4 - $2) / 1e3; n = $5
		if (n <= 0) { print "source CPU per change: no changes"; exit }
		printf "source CPU per change: stream backend %.1f us + walsender %.1f us = %.1f us (%.2fx the walsender alone; %d changes)",
			be / n, ws / n, (be + ws) / n, (ws > 0 ? (be + ws) / ws : 0), n }'
}

# ---------------------------------------------------------------- pgbench
# pgb LABEL RATE SECS: the loop, per-transaction log in OUTDIR/LABEL; sets
# PGB_LINE (tx/s, latency, failures) and PGB_CPU (pgbench's CPU s)
pgb()
{
	local label=$1 rate=$2 secs=$3 r=() dir=$OUTDIR/$1
	[ "$rate" != 0 ] && r=(-R "$rate")
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$OUTDIR/update.pgbench" "$dir/"
	local TIMEFORMAT='%U %S'
	{ time (cd "$dir" && "${PIN[@]}" pgbench -n -M prepared -c 4 -j 2 "${r[@]}" -T "$secs" -l -f update.pgbench "$DB" > pgbench.out 2>&1 || true); } 2> "$dir/time"
	pgb_summary "$label"
}

# ---------------------------------------------------------------- stream
wal() { q "SELECT pg_current_wal_insert_lsn()"; }
confirmed() { q "SELECT coalesce(confirmed_flush_lsn, '0/0') FROM pg_replication_slots WHERE slot_name = '$1'"; }
# wait_confirm SLOT LSN TIMEOUT: until the slot confirmed LSN (1 on timeout)
wait_confirm()
{
	local end
	end=$(echo "$(date +%s) + $3" | bc)
	while [ "$(q "SELECT confirmed_flush_lsn >= '$2' FROM pg_replication_slots WHERE slot_name = '$1'")" != t ]; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.1
	done
}

stream_start()
{
	# shellcheck disable=SC2086 # STREAM_OPTS: options, split on spaces
	"${PIN[@]}" "${SESSION[@]}" "$CQLBRIDGE" stream -q $STREAM_OPTS -d "$DB" "$GEN" >> "$OUTDIR/stream.log" 2>&1 &
	STREAM_PID=$!
	local i
	for i in $(seq 100); do
		WS_PID=$(q "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '$SLOT' AND active")
		[ -n "$WS_PID" ] && break
		sleep 0.1
	done
	[ -n "$WS_PID" ] || { tail "$OUTDIR/stream.log"; echo "the stream did not start" >&2; exit 1; }
	BE_PID=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'cqlbridge' AND backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY backend_start DESC LIMIT 1")
	[ -n "$BENCH_NICE" ] && [ "$BENCH_NICE_WHAT" != cassandra ] && nice_pids "$STREAM_PID" "$WS_PID" "$BE_PID"
	# what the stream's --priority gave (the scheduler's view, not the
	# stream's word): autogroup and nice of its process, backend, walsender
	# (all lowered before START_REPLICATION, which made WS_PID active)
	prio_line
	return 0
}

# prio_line: PRIO_LINE, the scheduler's view of the stream's process,
# backend and walsender now
prio_line()
{
	PRIO_LINE=$(for p in "$STREAM_PID" "$BE_PID" "$WS_PID"; do
		printf '%s %s, ' "$(sed -n 's/.* nice /autogroup nice /p' "/proc/$p/autogroup" 2> /dev/null)" "nice $(ps -o ni= -p "$p" | tr -d ' ') class $(ps -o cls= -p "$p" | tr -d ' ')"
	done | sed 's/, $//')
}

# nice_pids PID...: every thread of those processes to nice $BENCH_NICE, or
# to SCHED_IDLE when it is "idle" (BENCH_NICE set: the migration's processes
# below the application's)
nice_pids()
{
	local p t
	for p in "$@"; do
		[ -n "$p" ] || continue
		for t in /proc/"$p"/task/*; do
			if [ "$BENCH_NICE" = idle ]; then
				chrt -i -p 0 "${t##*/}" > /dev/null 2>&1 || true
			else
				renice -n "$BENCH_NICE" -p "${t##*/}" > /dev/null 2>&1 || true
			fi
		done
	done
}

stream_stop()
{
	kill -TERM "$STREAM_PID" 2> /dev/null || true
	wait "$STREAM_PID" 2> /dev/null || true
	STREAM_PID= WS_PID= BE_PID=
}

sampler_start()
{
	local be i
	PGAPPNAME=stream_lag python3 "$HERE/stream_lag.py" sample "$1" "$2" "${3:-}" &
	SAMPLER=$!
	[ -n "$BENCH_PIN" ] || return 0
	# the instrument off the application's core: the sampler, its psql and
	# its backend (a child of the pinned postmaster) on Cassandra's CPU 0;
	# its query every 50 ms is about 0.5 ms of a backend's CPU, bursts the
	# runs without a stream would not have
	taskset -a -p -c 0 "$SAMPLER" > /dev/null 2>&1 || true
	for i in $(seq 50); do
		be=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'stream_lag'")
		[ -n "$be" ] && break
		sleep 0.1
	done
	[ -n "$be" ] && taskset -p -c 0 "$be" > /dev/null 2>&1
	for i in $(pgrep -P "$SAMPLER"); do taskset -p -c 0 "$i" > /dev/null 2>&1 || true; done
}

sampler_stop() { kill -TERM "$SAMPLER" 2> /dev/null || true; wait "$SAMPLER" 2> /dev/null || true; SAMPLER=; }

# catch_up LABEL: start the stream and wait until it confirmed everything
# written so far (the backlog of the runs without it); prints the rate
catch_up()
{
	local end t0 t1 c0 c1 s0 s1 backlog yields i
	backlog=$(q "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) FROM pg_replication_slots WHERE slot_name = '$SLOT'")
	yields=$(grep -c -- '--priority auto: yielding' "$OUTDIR/stream.log" 2> /dev/null)
	stream_start
	s0=$(snap)
	end=$(wal)
	t0=$(now)
	c0=0	# the counter of the process just started
	wait_confirm "$SLOT" "$end" 900 || { say "$1: the stream did not catch up in 900 s"; exit 1; }
	t1=$(now)
	s1=$(snap)
	c1=$(q "SELECT changes FROM cqlbridge_$KS.stream_state")
	# --priority auto (the default) yields once its lag stayed low for 10 s:
	# the run measures that steady state (a migration streams for weeks)
	if [[ " $STREAM_OPTS " != *--priority* || " $STREAM_OPTS " == *auto* ]]; then
		for i in $(seq 300); do
			[ "$(grep -c -- '--priority auto: yielding' "$OUTDIR/stream.log")" -gt "${yields:-0}" ] && break
			sleep 0.1
		done
		prio_line
	fi
	say "$1: stream started and caught up its backlog ($((backlog / 1024)) kB of WAL) in $(printf %.1f "$(echo "$t1 - $t0" | bc)") s: $((c1 - c0)) changes, $(echo "$c1 $c0 $t1 $t0" | awk '{ printf "%.0f", ($1 - $2) / ($3 - $4) }') changes/s; $(cpu_line "$s0" "$s1" 0)"
}

# mode_run LABEL MODE RATE SECS: one pgbench run in MODE none|sync|stream
mode_run()
{
	local label=$1 mode=$2 rate=$3 secs=$4 c0 c1 t0 t1 t2 end lagl="" la0 la1 ch0=0 ch1=0 ns0="" ns1=""
	case $mode in
		sync) "$CQLBRIDGE" sync -q -d "$DB" "$GEN" > "$OUTDIR/sync.log" 2>&1 ;;
		stream)
			catch_up "$label"
			sampler_start "$SLOT" "$OUTDIR/$label.lag" "SELECT changes FROM cqlbridge_$KS.stream_state"
			sleep 1
			;;
	esac
	[ -n "$BENCH_NICE" ] && [ "$BENCH_NICE_WHAT" != stream ] && nice_pids "$(cass_pid "$NODE")"
	la0=$(cut -d' ' -f1-3 /proc/loadavg)
	[ "$mode" = stream ] && ch0=$(q "SELECT changes FROM cqlbridge_$KS.stream_state") && ns0=$(sched_ns)
	c0=$(snap)
	t0=$(now)
	pgb "$label" "$rate" "$secs"
	t1=$(now)
	if [ "$mode" = stream ]; then
		end=$(wal)
		wait_confirm "$SLOT" "$end" 900 || say "$label: not caught up after 900 s"
		t2=$(now)
		c1=$(snap)
		ns1=$(sched_ns)
		ch1=$(q "SELECT changes FROM cqlbridge_$KS.stream_state")
		sampler_stop
		stream_stop
		lagl="; stream lag $(python3 "$HERE/stream_lag.py" lag "$OUTDIR/$label.lag" "$t0" "$t1"), catch-up after the run $(printf %.1f "$(echo "$t2 - $t1" | bc)") s; $(per_change "$ns0" "$ns1" "$((ch1 - ch0))"); scheduling of the stream's process, backend, walsender: $PRIO_LINE"
	else
		c1=$(snap)
	fi
	la1=$(cut -d' ' -f1-3 /proc/loadavg)
	[ "$mode" = sync ] && "$CQLBRIDGE" sync --uninstall -q -d "$DB" "$GEN" >> "$OUTDIR/sync.log" 2>&1
	say "$label ($mode, rate $rate, $secs s): $PGB_LINE$lagl; $(cpu_line "$c0" "$c1" "$PGB_CPU") over $(printf %.1f "$(echo "$(now) - $t0" | bc)") s; load average $la0 -> $la1"
}

# ---------------------------------------------------------------- phases
setup()
{
	say "setup: database $DB, keyspace $KS at $CQL_HOST, plan in $GEN"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null
	psql -X -q -d postgres -c "CREATE DATABASE $DB" > /dev/null
	q "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" > /dev/null 2>&1 || true	# not in every build
	q "CREATE EXTENSION cql_fdw;
	   CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$CQL_HOST');
	   CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;" > /dev/null
	for f in "$REPO"/migrations/hotel/schema/00[1-6]_*.sql; do
		psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$f" > /dev/null
	done
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$REPO/migrations/hotel/generate.sql" -v scale=6 -v rooms=20 -v days=60 > /dev/null
	q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
	rm -rf "$GEN"
	"$CQLBRIDGE" plan -q -d "$DB" --schema hotel_rel --workload "$REPO/migrations/hotel/workload.sql" \
		--keyspace "$KS" --foreign-schema "${KS}_cql" --server cqlbridge --replication-factor 1 -o "$GEN"
	"$CQLBRIDGE" apply -q --no-load -d "$DB" "$GEN"
	# the stream's initial load (from its slot's snapshot), then stopped
	"$CQLBRIDGE" stream -d "$DB" "$GEN" >> "$OUTDIR/stream.log" 2>&1 &
	STREAM_PID=$!
	for _ in $(seq 600); do
		[ "$(q "SELECT phase FROM cqlbridge_$KS.stream_state" 2> /dev/null)" = streaming ] && break
		sleep 0.5
	done
	stream_stop
	grep "initial load" "$OUTDIR/stream.log" | tee -a "$RESULTS"
	say "setup: $(q "SELECT count(*) FROM hotel_rel.room_availability") room_availability rows"
}

prepare_keys()
{
	q "DROP TABLE IF EXISTS public.bench_ra_keys;
	   CREATE TABLE public.bench_ra_keys AS SELECT row_number() OVER () - 1 AS i, hotel_id, date, room_number FROM hotel_rel.room_availability;
	   CREATE UNIQUE INDEX ON public.bench_ra_keys (i); ANALYZE public.bench_ra_keys;" > /dev/null
	local n
	n=$(q "SELECT count(*) FROM public.bench_ra_keys")
	cat > "$OUTDIR/update.pgbench" <<-SQL
	\set o random(0, $((n - 1)))
	UPDATE hotel_rel.room_availability ra SET is_available = NOT ra.is_available FROM public.bench_ra_keys k WHERE k.i = :o AND ra.hotel_id = k.hotel_id AND ra.date = k.date AND ra.room_number = k.room_number;
	SQL
}

latency()
{
	local secs=${1:-60}
	mode_run "a-stream" stream "$RATE" "$secs"
	mode_run "a-none" none "$RATE" "$secs"
	mode_run "a-sync" sync "$RATE" "$secs"
}

full()
{
	local secs=${1:-30}
	mode_run "b-none" none 0 "$secs"
	mode_run "b-stream" stream 0 "$secs"
	mode_run "b-sync" sync 0 "$secs"
}

# c: the stream under -R RATE; the node stopped OUT s, then started again
outage()
{
	local out=${1:-60} secs t0 t1 tstop tback c0 c1 cm1 cm2 end la0 la1
	secs=$((out + 240))	# the node takes 30-150 s to start on this shared box
	catch_up "c-outage"
	sampler_start "$SLOT" "$OUTDIR/c-outage.lag" "SELECT changes FROM cqlbridge_$KS.stream_state"
	sleep 1
	la0=$(cut -d' ' -f1-3 /proc/loadavg)
	c0=$(snap)
	t0=$(now)
	pgb "c-outage" "$RATE" "$secs" &
	local PGBJOB=$!
	sleep 15
	tstop=$(now)
	cm1=$(snap)
	bash "$REPO/scripts/cassandra.sh" stop "$NODE" > "$OUTDIR/node.log" 2>&1
	sleep "$out"
	bash "$REPO/scripts/cassandra.sh" start "$NODE" --keep-data >> "$OUTDIR/node.log" 2>&1
	bash "$REPO/scripts/cassandra.sh" wait "$NODE" >> "$OUTDIR/node.log" 2>&1
	pin_cassandra
	tback=$(now)
	cm2=$(snap)
	wait "$PGBJOB"
	# pgb ran in a subshell: its summary again, from its files
	pgb_summary "c-outage"
	t1=$(now)
	end=$(wal)
	wait_confirm "$SLOT" "$end" 900 || say "c-outage: not caught up after 900 s"
	c1=$(snap)
	sampler_stop
	stream_stop
	la1=$(cut -d' ' -f1-3 /proc/loadavg)
	say "c-outage (stream, rate $RATE, $secs s, node $NODE stopped at +$(printf %.0f "$(echo "$tstop - $t0" | bc)") s, ready again after $(printf %.1f "$(echo "$tback - $tstop" | bc)") s): $PGB_LINE; $(python3 "$HERE/stream_lag.py" catchup "$OUTDIR/c-outage.lag" "$tback" "$end"); $(cpu_line "$(cpu_join "$c0" "$cm1" "$cm2")" "$c1" "$PGB_CPU") (the node's stop and start excluded); load average $la0 -> $la1"
	say "c-outage: failed application transactions while the node was down: $(python3 - "$OUTDIR/c-outage" "$tstop" "$tback" <<'PY'
import glob, sys
d, a, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ok = bad = 0
for f in glob.glob(d + "/pgbench_log.*"):
    for line in open(f):
        p = line.split()
        t = int(p[4]) + int(p[5]) / 1e6
        if a <= t <= b:
            if p[2].isdigit():
                ok += 1
            else:
                bad += 1
print("%d (%d succeeded in that window)" % (bad, ok))
PY
)"
}

# cpu_join A B C: A + C - B, a "before" snapshot from which an "after" D
# gives (B - A) + (D - C): the CPU before the node's restart plus after it
# (its pid changes), the restart itself left out
cpu_join()
{
	echo "$1 $2 $3" | awk '{ for (i = 1; i <= 7; i++) printf "%s%d", (i > 1 ? " " : ""), $i + $(i + 14) - $(i + 7); print "" }'
}

# pgb_summary LABEL: PGB_LINE and PGB_CPU of a pgb run in the background
pgb_summary()
{
	local dir=$OUTDIR/$1
	PGB_CPU=$(awk '{ print $1 + $2 }' "$dir/time")
	PGB_LINE=$(python3 - "$dir" <<'PY'
import glob, sys
d = sys.argv[1]
lat = []
for f in glob.glob(d + "/pgbench_log.*"):
    for line in open(f):
        p = line.split()
        if p[2].isdigit():
            lat.append(int(p[2]) / 1000.0)
lat.sort()
out = open(d + "/pgbench.out").read().splitlines()
get = lambda k: next((l.split("=", 1)[1].split("(")[0].strip() if "=" in l else l.split(":", 1)[1].strip()
                      for l in out if l.startswith(k)), "?")
aborted = sum(1 for l in out if "aborted" in l and l.startswith("client"))
pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
print("%s tx/s, %d tx, latency p50 %.3f ms, p99 %.3f ms, failed %s, clients aborted %d"
      % (get("tps"), len(lat), pct(0.5), pct(0.99), get("number of failed transactions"), aborted))
PY
)
}

# d: Debezium's embedded engine capturing from its own slot, -R RATE and unthrottled
debezium_run()
{
	local label=$1 rate=$2 secs=$3 cp c0 c1 t0 t1 n last la0 la1 summary ns0 ns1
	cp=$(bash "$HERE/debezium/build.sh")
	local pgport pghost=127.0.0.1
	pgport=$(q "SHOW port")
	mkfifo "$OUTDIR/$label.in"
	# the JVM stops when its stdin closes (exec 7> below keeps it open)
	"${PIN[@]}" java -Xms256m -Xmx768m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-Ddbz.host=$pghost -Ddbz.port="$pgport" -Ddbz.user="${PGUSER:-postgres}" -Ddbz.db="$DB" \
		-Ddbz.slot=$DBZ_SLOT -Ddbz.publication=$DBZ_SLOT -Ddbz.tables=hotel_rel.room_availability \
		-cp "$cp" DbzCapture < "$OUTDIR/$label.in" > "$OUTDIR/$label.dbz" 2> "$OUTDIR/$label.dbz.err" &
	JVM_PID=$!
	exec 7> "$OUTDIR/$label.in"
	for _ in $(seq 300); do
		[ "$(q "SELECT active FROM pg_replication_slots WHERE slot_name = '$DBZ_SLOT'")" = t ] && break
		sleep 0.2
	done
	WS_PID=$(q "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '$DBZ_SLOT'")
	[ -n "$WS_PID" ] || { cat "$OUTDIR/$label.dbz.err" >&2; echo "Debezium did not start" >&2; exit 1; }
	sleep 3
	sampler_start "$DBZ_SLOT" "$OUTDIR/$label.lag"
	la0=$(cut -d' ' -f1-3 /proc/loadavg)
	ns0=$(sched_ns)
	c0=$(snap)
	t0=$(now)
	pgb "$label" "$rate" "$secs"
	t1=$(now)
	# until the event count stops growing for 3 s (every change received)
	last=-1
	for _ in $(seq 600); do
		n=$(grep '^events ' "$OUTDIR/$label.dbz" | tail -1 | cut -d' ' -f2)
		[ "$n" = "$last" ] && break
		last=$n
		sleep 3
	done
	c1=$(snap)
	ns1=$(sched_ns)
	sampler_stop
	la1=$(cut -d' ' -f1-3 /proc/loadavg)
	exec 7>&-
	wait "$JVM_PID" || true
	JVM_PID= WS_PID=
	rm -f "$OUTDIR/$label.in"
	summary=$(grep '^summary' "$OUTDIR/$label.dbz" | sed 's/^summary //')
	q "SELECT pg_drop_replication_slot('$DBZ_SLOT') FROM pg_replication_slots WHERE slot_name = '$DBZ_SLOT' AND NOT active" > /dev/null
	say "$label (Debezium capturing, rate $rate, $secs s): $PGB_LINE; Debezium $summary; slot-confirmation lag $(python3 "$HERE/stream_lag.py" lag "$OUTDIR/$label.lag" "$t0" "$t1"); walsender $(echo "$ns0 $ns1 ${last:-0}" | awk '{ printf "%.1f", ($5 > 0 ? ($3 - $1) / 1e3 / $5 : 0) }') us per change; $(cpu_line "$c0" "$c1" "$PGB_CPU") over $(printf %.1f "$(echo "$(now) - $t0" | bc)") s; load average $la0 -> $la1"
}

debezium()
{
	local secs=${1:-60}
	debezium_run "d-debezium-R$RATE" "$RATE" "$secs"
	debezium_run "d-debezium-full" 0 "$((secs / 2))"
	q "DROP PUBLICATION IF EXISTS $DBZ_SLOT" > /dev/null
}

cleanup()
{
	[ -n "${STREAM_PID:-}" ] && kill -TERM "$STREAM_PID" 2> /dev/null
	[ -n "${JVM_PID:-}" ] && kill -TERM "$JVM_PID" 2> /dev/null
	[ -n "${SAMPLER:-}" ] && kill -TERM "$SAMPLER" 2> /dev/null
	wait 2> /dev/null
	"$CQLBRIDGE" sync --uninstall -q -d "$DB" "$GEN" > /dev/null 2>&1 || true
	pin_end
}
trap cleanup EXIT

cmd=${1:-all}
[ $# -gt 0 ] && shift
say "stream_compare $cmd $*: $(nproc) cores (shared with other sessions), PostgreSQL $(psql -X -A -t -d postgres -c 'SHOW server_version'), Cassandra $NODE at $CQL_HOST, output in $OUTDIR"
[ "$cmd" = setup ] || pin_start
case $cmd in
	setup) setup ;;
	latency) prepare_keys; latency "$@" ;;
	full) prepare_keys; full "$@" ;;
	outage) prepare_keys; outage "$@" ;;
	debezium) prepare_keys; debezium "$@" ;;
	all) setup; prepare_keys; latency; full; outage; debezium ;;
	run) [ $# -eq 4 ] || { echo "usage: stream_compare.sh run LABEL none|sync|stream RATE SECS" >&2; exit 2; }
		prepare_keys; mode_run "$@" ;;
	*) echo "usage: stream_compare.sh setup|latency|full|outage|debezium|all [ARG] | run LABEL MODE RATE SECS" >&2; exit 2 ;;
esac
