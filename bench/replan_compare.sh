#!/usr/bin/env bash
#
# bench/replan_compare.sh - issue 38 item 6, side by side in one run: one
# query table of about 1,000,000 rows added to a running migration online
# (`cqlbridge stream NEWDIR --replan`: only the added and the changed table
# are backfilled, the others keep streaming) against a full reload of the
# whole plan (stream --drop, the keyspace dropped and created again by
# `apply --no-load`, `cqlbridge stream NEWDIR` loading every table from a
# snapshot), with the application's write loop running throughout at a
# fixed rate, and a baseline window of the same length in which the stream
# runs and nothing is added.  By hand, not in CI.
#
#   bash bench/replan_compare.sh [all]     setup, baseline, online, reload, cleanup
#   bash bench/replan_compare.sh cleanup   drop the database, keyspace and slot
#
# Data: tests/bridge/evolve/schema.sql (schema evolve: venue, venue_tag,
# ticket partitioned by month 2026-01 .. 2026-04), its rows replaced by
# $VENUES venues (1,000) in $CITIES cities (50: about 20,000 tickets a city,
# so that tickets_by_city needs no bucket) with 0-3 tags each, and $TICKETS
# tickets (1,000,000), one every 10.367 s (whole milliseconds) over the four
# months.  First plan: tests/bridge/evolve/workload.sql (venues,
# tickets_by_venue_id with every ticket, venues_by_city).  New plan:
# workload_v2.sql (venues_by_city also returns venue.capacity, added with
# ALTER TABLE ... ADD COLUMN capacity int while the first stream runs;
# tickets_by_city, every ticket again, is new).
#
# The application: pgbench -M prepared, $CLIENTS clients (2) at -R $RATE
# (200), each transaction one UPDATE of a random ticket's price by its
# primary key (a single-row loop of this script's own, not
# tests/bridge/evolve/writes.pgbench: a venue renamed there rewrites the
# venue's ~1,000 tickets in each ticket table, so the stream's work, and
# the latencies, would depend on which transactions the dice picked).
#
# Three windows of $WINDOW seconds each (auto: 2.5 times the first plan's
# initial load plus 60 s, rounded up to 30 s, at least 120 s), after
# $SETTLE s (20) of rest; pgbench runs the whole window, the operation
# starts $LEAD s (10) into it:
#   baseline  the first plan's stream runs, nothing else;
#   online    the stream is stopped (SIGTERM) and `stream NEWDIR --replan`
#             started: "to live" is until every table of stream_tables is
#             live, "caught up" until the slot confirmed the WAL written
#             when they were;
#   reload    the stream is stopped, `stream NEWDIR --drop`, DROP KEYSPACE
#             (cql_execute), `apply --no-load NEWDIR`, `stream NEWDIR`:
#             "to live" is until its phase is streaming, "caught up" as
#             above.
# After the online window (pgbench done, the stream caught up) `cqlbridge
# diff NEWDIR` compares every row of the four tables with their source
# views.
#
# Every window prints: the application's latency p50/p99/max, its
# transactions slower than 10 and 50 ms (they add up over windows of any
# length; a p99 does not) and failed ones, over the whole window and over
# the operation (from pgbench's per-transaction log, schedule lag included
# as pgbench reports it); the commit -> slot confirmation lag
# (bench/stream_lag.py, every 50 ms); the CPU seconds of PostgreSQL (the
# postmaster and all its children: the application's backends, the
# stream's backend, walsender and backfill session, apply's session; and
# any other client's backends: run it alone), Cassandra, cqlbridge (the
# stream processes and the foreground commands of the operation), pgbench
# and the rest of the machine, over the window and over the operation.
#
# Environment: PG* (the PostgreSQL to use; scripts/pg.sh env), CQL_HOST
# (127.0.0.1), NODE (its scripts/cassandra.sh name, for its pid: single),
# DB and KS (replan_bench), RATE (200), CLIENTS (2), VENUES (1000), CITIES
# (50), TICKETS (1000000), WINDOW (auto), LEAD (10), SETTLE (20), CQLBRIDGE
# (build/cqlbridge), STREAM_OPTS (more options of every "cqlbridge
# stream"), OUTDIR (logs, plans and results.txt; default a new directory
# under /tmp), KEEP=1 (leave the database, keyspace and slot at the end).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=cpu.sh
. "$HERE/cpu.sh"
REPO=$(cd "$HERE/.." && pwd)
EVOLVE=$REPO/tests/bridge/evolve
CQLBRIDGE=${CQLBRIDGE:-$REPO/build/cqlbridge}
CQL_HOST=${CQL_HOST:-127.0.0.1}
NODE=${NODE:-single}
DB=${DB:-replan_bench}
KS=${KS:-replan_bench}
RATE=${RATE:-200}
CLIENTS=${CLIENTS:-2}
VENUES=${VENUES:-1000}
CITIES=${CITIES:-50}
TICKETS=${TICKETS:-1000000}
WINDOW=${WINDOW:-auto}
LEAD=${LEAD:-10}
SETTLE=${SETTLE:-20}
STREAM_OPTS=${STREAM_OPTS:-}
KEEP=${KEEP:-0}
OUTDIR=${OUTDIR:-$(mktemp -d /tmp/replan_compare.XXXXXX)}
DIR1=$OUTDIR/plan_v1
DIR2=$OUTDIR/plan_v2
SLOT=cqlbridge_$KS
STATE=cqlbridge_$KS
HZ=$(getconf CLK_TCK)
RESULTS=$OUTDIR/results.txt
# 120 days (2026-01-01 .. 2026-05-01) in ms, over TICKETS tickets
STEP_MS=$((10368000000 / (TICKETS + 1)))
mkdir -p "$OUTDIR"
export PGDATABASE=$DB

q() { psql -X -q -A -t -d "$DB" -c "$1"; }
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$RESULTS"; }
now() { date +%s.%N; }
secs() { printf %.1f "$(echo "$2 - $1" | bc)"; }

# ---------------------------------------------------------------- CPU

# cqlbridge's ticks: those of the processes that ended (BRIDGE_DONE, added
# by stream_stop and bridge_fg) and of the running stream
BRIDGE_DONE=0
STREAM_PID=
bridge_ticks() { echo $((BRIDGE_DONE + $(ticks "$STREAM_PID"))); }

# snap: "pg cassandra cqlbridge busy" ticks now
snap() { echo "$(pg_ticks "$PGDATA_DIR") $(ticks "$(cass_pid "$NODE")") $(bridge_ticks) $(busy_ticks)"; }

# cpu_line BEFORE AFTER PGBENCH_S: the split in CPU seconds
cpu_line()
{
	echo "$1 $2 $3" | awk -v hz="$HZ" '{
		for (i = 1; i <= 4; i++) v[i] = ($(i + 4) - $i) / hz
		printf "PG %.1f, Cassandra %.1f, cqlbridge %.1f, pgbench %.1f, rest %.1f",
			v[1], v[2], v[3], $9, v[4] - v[1] - v[2] - v[3] - $9 }'
}

# ---------------------------------------------------------------- cqlbridge
# bridge_fg LOG ARGS...: cqlbridge in the foreground, its CPU counted
bridge_fg()
{
	local log=$1 rc=0 TIMEFORMAT='%U %S'
	shift
	{ time "$CQLBRIDGE" "$@" >> "$OUTDIR/$log" 2>&1; } 2> "$OUTDIR/.time" || rc=$?
	BRIDGE_DONE=$((BRIDGE_DONE + $(awk -v hz="$HZ" '{ printf "%d", ($1 + $2) * hz }' "$OUTDIR/.time")))
	if [ $rc -ne 0 ]; then
		say "cqlbridge $* failed with status $rc:"
		tail -20 "$OUTDIR/$log" | tee -a "$RESULTS"
		exit 1
	fi
}

# stream_start LOG ARGS...: cqlbridge stream in the background
stream_start()
{
	local log=$1
	shift
	# shellcheck disable=SC2086 # STREAM_OPTS: options, split on spaces
	"$CQLBRIDGE" stream $STREAM_OPTS -d "$DB" "$@" >> "$OUTDIR/$log" 2>&1 &
	STREAM_PID=$!
	STREAM_LOG=$OUTDIR/$log
}

# stream_stop: SIGTERM (flush, confirm, exit 0)
stream_stop()
{
	local rc=0
	BRIDGE_DONE=$((BRIDGE_DONE + $(ticks "$STREAM_PID")))
	kill -TERM "$STREAM_PID" 2> /dev/null || true
	wait "$STREAM_PID" || rc=$?
	[ $rc -eq 0 ] || { say "the stream exited with status $rc:"; tail -20 "$STREAM_LOG" | tee -a "$RESULTS"; exit 1; }
	STREAM_PID=
}

# stream_alive WHAT: exit when the stream process ended
stream_alive()
{
	kill -0 "$STREAM_PID" 2> /dev/null && return 0
	local rc=0
	wait "$STREAM_PID" || rc=$?
	say "the stream ended (status $rc) while $1:"
	tail -20 "$STREAM_LOG" | tee -a "$RESULTS"
	STREAM_PID=
	exit 1
}

# wait_for WHAT SQL WANT TIMEOUT: until SQL returns WANT (every 0.5 s)
wait_for()
{
	local end
	end=$(($(date +%s) + $4))
	until [ "$(q "$2" 2> /dev/null || true)" = "$3" ]; do
		stream_alive "$1"
		[ "$(date +%s)" -ge "$end" ] && { say "timeout ($4 s) waiting until $1"; tail -20 "$STREAM_LOG" | tee -a "$RESULTS"; exit 1; }
		sleep 0.5
	done
}

wal() { q "SELECT pg_current_wal_insert_lsn()"; }
confirmed_past() { echo "SELECT confirmed_flush_lsn >= '$1' FROM pg_replication_slots WHERE slot_name = '$SLOT'"; }
# all_live N: every one of N tables live (the old record, fewer tables, all
# live, is still there until --replan wrote its own)
all_live() { echo "SELECT count(*) FILTER (WHERE state = 'live') = $1 AND count(*) = $1 FROM $STATE.stream_tables"; }

# ---------------------------------------------------------------- pgbench
write_pgbench()
{
	cat > "$OUTDIR/update.pgbench" <<-SQL
	\set g random(1, $TICKETS)
	UPDATE evolve.ticket SET price = price + 0.25 WHERE venue_id = 1 + :g % $VENUES AND sold_at = timestamptz '2026-01-01 00:00:00+00' + :g * interval '$STEP_MS ms' AND ticket_id = :g;
	SQL
}

# pgb_start LABEL SECS: the loop in the background, per-transaction log in OUTDIR/LABEL
pgb_start()
{
	local dir=$OUTDIR/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$OUTDIR/update.pgbench" "$dir/"
	(
		cd "$dir"
		TIMEFORMAT='%U %S'
		{ time pgbench -n -M prepared -c "$CLIENTS" -j "$CLIENTS" -R "$RATE" -T "$2" -l -f update.pgbench "$DB" > pgbench.out 2>&1 || true; } 2> time
	) &
	PGB_PID=$!
}

# lat DIR T0 T1: the application's transactions that ended between T0 and T1
lat()
{
	python3 - "$@" <<'PY'
import glob, sys
d, a, b = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
lat, bad = [], 0
for f in glob.glob(d + "/pgbench_log.*"):
    for line in open(f):
        p = line.split()
        t = int(p[4]) + int(p[5]) / 1e6
        if not a <= t <= b:
            continue
        if p[2].isdigit():
            lat.append(int(p[2]) / 1000.0)
        else:
            bad += 1
lat.sort()
pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
print("%d tx, p50 %.3f ms, p99 %.3f ms, max %.1f ms, over 10 ms %d, over 50 ms %d, failed %d"
      % (len(lat), pct(0.5), pct(0.99), lat[-1] if lat else float("nan"),
         sum(1 for x in lat if x > 10), sum(1 for x in lat if x > 50), bad))
PY
}

pgb_tail()
{
	local out=$OUTDIR/$1/pgbench.out
	echo "pgbench: $(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -1) tx/s, failed $(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out"), clients aborted $(grep -c 'aborted' "$out" || true)"
}

# ---------------------------------------------------------------- setup
setup()
{
	local t0 t1
	say "setup: database $DB, keyspace $KS at $CQL_HOST, $VENUES venues in $CITIES cities, $TICKETS tickets"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null
	psql -X -q -d postgres -c "CREATE DATABASE $DB" > /dev/null
	q "CREATE EXTENSION cql_fdw;
	   CREATE SERVER cqlbridge FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '$CQL_HOST');
	   CREATE USER MAPPING FOR CURRENT_USER SERVER cqlbridge;" > /dev/null
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$EVOLVE/schema.sql" > /dev/null
	t0=$(now)
	# schema.sql's shapes, scaled: names with quotes and accents every 5th
	# venue, 0 to 3 tags a venue, tickets with NULL notes every 9th
	psql -X -q -v ON_ERROR_STOP=1 -d "$DB" > /dev/null <<-SQL
	TRUNCATE evolve.venue_tag, evolve.venue, evolve.ticket;
	INSERT INTO evolve.venue (venue_id, name, city)
	SELECT v, 'Venue ' || v || CASE WHEN v % 5 = 0 THEN E' \u00e9t\u00e9 "Q''s"' ELSE '' END,
	       'City ' || (v % $CITIES)
	FROM generate_series(1, $VENUES) v;
	INSERT INTO evolve.venue_tag
	SELECT v, t
	FROM generate_series(1, $VENUES) v,
	     unnest(ARRAY['jazz', 'rock', 'outdoor', 'family', 'late']) WITH ORDINALITY AS x(t, k)
	WHERE v % 4 <> 0 AND (v + k) % 3 <> 0 AND k <= 1 + v % 4;
	INSERT INTO evolve.ticket
	SELECT 1 + g % $VENUES, timestamptz '2026-01-01 00:00:00+00' + g * interval '$STEP_MS ms',
	       g, 10 + (g % 50) * 1.25,
	       CASE WHEN g % 9 = 0 THEN NULL ELSE 'note ' || g || E' \u00fc' END,
	       'web', (g % 30)::smallint
	FROM generate_series(1, $TICKETS) g;
	VACUUM ANALYZE evolve.venue, evolve.venue_tag, evolve.ticket;
	SQL
	t1=$(now)
	say "setup: $(q "SELECT count(*) FROM evolve.venue") venues, $(q "SELECT count(*) FROM evolve.venue_tag") tags, $(q "SELECT count(*) FROM evolve.ticket") tickets ($(q "SELECT min(sold_at)::text || ' .. ' || max(sold_at)::text FROM evolve.ticket")) generated in $(secs "$t0" "$t1") s"
	q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
	rm -rf "$DIR1" "$DIR2"
	bridge_fg plan1.log plan -d "$DB" --schema evolve --workload "$EVOLVE/workload.sql" \
		--keyspace "$KS" --server cqlbridge --replication-factor 1 -o "$DIR1"
	bridge_fg apply1.log apply -q --no-load -d "$DB" "$DIR1"
	t0=$(now)
	stream_start stream1.log "$DIR1"
	wait_for "the first plan's initial load ended" "SELECT phase FROM $STATE.stream_state" streaming 1800
	t1=$(now)
	LOAD_S=$(secs "$t0" "$t1")
	grep "rows loaded\|initial load" "$STREAM_LOG" | tee -a "$RESULTS"
	say "setup: the first plan's stream loaded and is streaming after $LOAD_S s"
	if [ "$WINDOW" = auto ]; then
		WINDOW=$(echo "$LOAD_S" | awk '{ w = int((2.5 * $1 + 60 + 29) / 30) * 30; print (w < 120 ? 120 : w) }')
	fi
	say "setup: windows of $WINDOW s, the operation at +$LEAD s, $SETTLE s of rest before each"
}

# the next release: a column, the new plan planned against the running stream
next_release()
{
	q "ALTER TABLE evolve.venue ADD COLUMN capacity int" > /dev/null
	bridge_fg plan2.log plan -d "$DB" --schema evolve --workload "$EVOLVE/workload_v2.sql" \
		--keyspace "$KS" --server cqlbridge --replication-factor 1 -o "$DIR2"
	grep -A8 '^plan diff' "$OUTDIR/plan2.log" | tee -a "$RESULTS"
}

# ---------------------------------------------------------------- windows
# op_online: stop the stream, --replan, until every table is live
op_online()
{
	local ts
	stream_stop
	ts=$(now)
	stream_start stream2.log --replan "$DIR2"
	wait_for "the new plan's tables are live" "$(all_live "$(grep -c '^CREATE TABLE' "$DIR2/001_schema.cql")")" t 1800
	T_LIVE=$(now)
	OP_NOTE="stopped $(secs "$T_A" "$ts") s, --replan to all live $(secs "$ts" "$T_LIVE") s"
	JOINED=$(sed -n 's/.* \([^ ]*\) joins the stream: backfilled.*/\1/p' "$STREAM_LOG" | sort -u | tr '\n' ' ')
}

# joined_rows: the rows of the tables that joined (their source views, counted after the window)
joined_rows()
{
	local target n=0 k=0
	for target in $JOINED; do
		n=$((n + $(q "SELECT count(*) FROM $(q "SELECT source_view FROM $STATE.stream_tables WHERE target = '$target'")")))
		k=$((k + 1))
	done
	echo "$n rows backfilled ($k tables: $JOINED)"
}

# op_reload: stop the stream, drop it and the keyspace, apply --no-load, load everything
op_reload()
{
	local ts td tk ta
	stream_stop
	ts=$(now)
	bridge_fg drop.log stream --drop -d "$DB" "$DIR2"
	td=$(now)
	q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null
	tk=$(now)
	bridge_fg apply2.log apply -q --no-load -d "$DB" "$DIR2"
	ta=$(now)
	stream_start stream3.log "$DIR2"
	wait_for "the reload ended" "SELECT phase FROM $STATE.stream_state" streaming 1800
	T_LIVE=$(now)
	OP_NOTE="stopped $(secs "$T_A" "$ts") s, --drop $(secs "$ts" "$td") s, DROP KEYSPACE $(secs "$td" "$tk") s, apply --no-load $(secs "$tk" "$ta") s, initial load to streaming $(secs "$ta" "$T_LIVE") s"
	OP_ROWS="$(sed -n 's/.*initial load of \([0-9]*\) tables, \([0-9]*\) rows.*/\2 rows reloaded (\1 tables)/p' "$STREAM_LOG" | tail -1)"
}

# window LABEL none|online|reload
window()
{
	local label=$1 op=$2 t0 t1 tb c0 c1 ca cb la0 la1 end pgb_cpu lagf=$OUTDIR/$1.lag
	say "$label: $SETTLE s of rest"
	sleep "$SETTLE"
	python3 "$HERE/stream_lag.py" sample "$SLOT" "$lagf" &
	SAMPLER=$!
	sleep 1
	la0=$(cut -d' ' -f1-3 /proc/loadavg)
	c0=$(snap)
	t0=$(now)
	pgb_start "$label" "$WINDOW"
	sleep "$LEAD"
	T_A=$(now)
	ca=$(snap)
	OP_NOTE= OP_ROWS=
	case $op in
		none)
			wait "$PGB_PID"
			T_LIVE=$(now)
			;;
		online) op_online ;;
		reload) op_reload ;;
	esac
	end=$(wal)
	wait_for "caught up" "$(confirmed_past "$end")" t 1800
	tb=$(now)
	cb=$(snap)
	wait "$PGB_PID" 2> /dev/null || true
	t1=$(now)
	[ "$op" = none ] && { tb=$t1; cb=$(snap); }
	c1=$(snap)
	la1=$(cut -d' ' -f1-3 /proc/loadavg)
	kill -TERM "$SAMPLER" 2> /dev/null || true
	wait "$SAMPLER" 2> /dev/null || true
	SAMPLER=
	pgb_cpu=$(awk '{ print $1 + $2 }' "$OUTDIR/$label/time")
	say "$label: window $(secs "$t0" "$t1") s ($RATE tx/s, $CLIENTS clients): $(lat "$OUTDIR/$label" "$t0" "$t1"); $(pgb_tail "$label"); slot lag $(python3 "$HERE/stream_lag.py" lag "$lagf" "$t0" "$t1"); CPU s $(cpu_line "$c0" "$c1" "$pgb_cpu"); load average $la0 -> $la1"
	[ "$op" = online ] && OP_ROWS=$(joined_rows)
	if [ "$op" != none ]; then
		say "$label: operation at +$(secs "$t0" "$T_A") s: $OP_ROWS; to live $(secs "$T_A" "$T_LIVE") s ($OP_NOTE), caught up $(secs "$T_A" "$tb") s$( [ "$(echo "$tb > $t1" | bc)" = 1 ] && echo " (AFTER the window's end: widen WINDOW)")"
		say "$label: during the operation ($(secs "$T_A" "$tb") s): $(lat "$OUTDIR/$label" "$T_A" "$tb"); CPU s $(cpu_line "$ca" "$cb" 0) (pgbench not split)"
	else
		say "$label: from +$LEAD s to the end ($(secs "$T_A" "$tb") s): $(lat "$OUTDIR/$label" "$T_A" "$tb"); CPU s $(cpu_line "$ca" "$cb" 0) (pgbench not split)"
	fi
}

# check: every query table against its source view, row by row
check()
{
	local rc=0 TIMEFORMAT='%U %S' t0
	t0=$(now)
	{ time "$CQLBRIDGE" diff -d "$DB" "$DIR2" > "$OUTDIR/diff.log" 2>&1; } 2> "$OUTDIR/.time" || rc=$?
	say "check after the online add: cqlbridge diff exited $rc in $(secs "$t0" "$(now)") s:"
	grep -v '^\s*$' "$OUTDIR/diff.log" | tail -12 | tee -a "$RESULTS"
	[ $rc -eq 0 ] || { say "the online add left differences: stopped here"; exit 1; }
}

cleanup_all()
{
	set +e
	if [ -n "${STREAM_PID:-}" ]; then
		kill -TERM "$STREAM_PID" 2> /dev/null
		wait "$STREAM_PID" 2> /dev/null
		STREAM_PID=
	fi
	[ "$KEEP" = 1 ] && return 0
	local d
	for d in "$DIR2" "$DIR1"; do
		[ -d "$d" ] && "$CQLBRIDGE" stream --drop -q -d "$DB" "$d" >> "$OUTDIR/cleanup.log" 2>&1 && break
	done
	q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null 2>> "$OUTDIR/cleanup.log"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" > /dev/null 2>> "$OUTDIR/cleanup.log"
	return 0
}

# on_exit: whatever stopped the script (set -e is off here: a pgbench that
# already ended must not stop the cleanup); the script's status is kept
on_exit()
{
	local rc=$?
	set +e
	[ -n "${SAMPLER:-}" ] && kill -TERM "$SAMPLER" 2> /dev/null
	[ -n "${PGB_PID:-}" ] && kill -TERM "$PGB_PID" 2> /dev/null
	cleanup_all
	wait 2> /dev/null
	exit "$rc"
}

cmd=${1:-all}
PGDATA_DIR=$(psql -X -A -t -d postgres -c 'SHOW data_directory')
say "replan_compare $cmd: $(nproc) cores, PostgreSQL $(psql -X -A -t -d postgres -c 'SHOW server_version'), Cassandra $NODE at $CQL_HOST (pid $(cass_pid "$NODE")), $("$CQLBRIDGE" --version 2>&1 | head -1) (built $(date -u -r "$CQLBRIDGE" '+%F %H:%M' 2> /dev/null) UTC, HEAD $(git -C "$REPO" rev-parse --short HEAD 2> /dev/null)), output in $OUTDIR"
case $cmd in
	all)
		trap on_exit EXIT
		T_START=$(now)
		setup
		write_pgbench
		window baseline none
		next_release
		window online online
		check
		window reload reload
		say "all: $(secs "$T_START" "$(now)") s"
		;;
	cleanup) cleanup_all ;;
	*) echo "usage: replan_compare.sh [all|cleanup]" >&2; exit 2 ;;
esac
