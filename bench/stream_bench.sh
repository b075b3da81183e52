#!/usr/bin/env bash
#
# bench/stream_bench.sh - application latency with and without
# "cqlbridge stream", and the stream's lag and CPU (by hand, not in CI).
#
#   bash bench/stream_bench.sh DB PLAN_DIR [RATE] [SECONDS]
#
# DB holds the hotel schema with a plan in PLAN_DIR whose stream is set up
# (cqlbridge apply --no-load and one run of cqlbridge stream, stopped).
# Runs a pgbench loop of single-row UPDATEs of room_availability, 4
# clients, RATE transactions/s (0 = unthrottled), twice: without the
# stream, then with it running; prints latency p50/p99, failures, the
# stream's lag (sampled from its status row every 0.25 s) and the CPU
# seconds of the stream process, its walsender, its backend and the
# Cassandra JVM (CASSANDRA_PID, default: the java process of scratch3).
# The issue's whole comparison (no sync / trigger sync / stream / Debezium,
# Cassandra outage) on the demo's data is bench/stream_compare.sh.
#
set -euo pipefail
DB=$1
GEN=$2
RATE=${3:-1000}
SECS=${4:-20}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CQLBRIDGE=${CQLBRIDGE:-$HERE/../build/cqlbridge}
CASSANDRA_PID=${CASSANDRA_PID:-$(pgrep -f "java.*scratch3" | head -1 || true)}
KS=$(sed -n 's/^-- keyspace: //p' "$GEN/003_load.sql")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

q() { psql -X -q -A -t -d "$DB" -c "$1"; }
cpu() { [ -n "$1" ] && awk '{print ($14 + $15) / 100}' "/proc/$1/stat" 2> /dev/null || echo 0; }

q "DROP TABLE IF EXISTS public.bench_ra_keys;
   CREATE TABLE public.bench_ra_keys AS SELECT row_number() OVER () - 1 AS i, hotel_id, date, room_number FROM hotel_rel.room_availability;
   CREATE UNIQUE INDEX ON public.bench_ra_keys (i);"
N=$(q "SELECT count(*) FROM public.bench_ra_keys")
cat > "$WORK/update.pgbench" <<SQL
\set o random(0, $((N - 1)))
UPDATE hotel_rel.room_availability ra SET is_available = NOT ra.is_available FROM public.bench_ra_keys k WHERE k.i = :o AND ra.hotel_id = k.hotel_id AND ra.date = k.date AND ra.room_number = k.room_number;
SQL

# run LABEL: pgbench with per-transaction log; latency percentiles
run()
{
	local label=$1 rate=() f
	[ "$RATE" != 0 ] && rate=(-R "$RATE")
	rm -f "$WORK"/pgbench_log.*
	(cd "$WORK" && pgbench -n -M prepared -c 4 -j 2 "${rate[@]}" -T "$SECS" -l -f update.pgbench "$DB" > pgbench.out 2>&1)
	python3 - "$label" "$WORK" <<'PY'
import glob, sys
lat = []
for f in glob.glob(sys.argv[2] + "/pgbench_log.*"):
    for line in open(f):
        p = line.split()
        lat.append(int(p[2]) / 1000.0)
lat.sort()
out = open(sys.argv[2] + "/pgbench.out").read()
failed = [l for l in out.splitlines() if l.startswith("number of failed")]
tps = [l for l in out.splitlines() if l.startswith("tps")]
pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print("%-10s %d tx, %s, p50 %.3f ms, p99 %.3f ms, %s" % (sys.argv[1], len(lat),
      tps[0].split("(")[0].strip() if tps else "?", pct(0.5), pct(0.99), failed[0] if failed else "failed ?"))
PY
}

echo "rows $N, rate ${RATE}/s (0: unthrottled), 4 clients, $SECS s"
run "no stream"

"$CQLBRIDGE" stream -q -d "$DB" "$GEN" 2> "$WORK/stream.log" &
SPID=$!
sleep 3
WS=$(q "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'cqlbridge_$KS'")
BE=$(q "SELECT pid FROM pg_stat_activity WHERE application_name = 'cqlbridge' AND backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1")
c0=("$(cpu $SPID)" "$(cpu "$WS")" "$(cpu "$BE")" "$(cpu "$CASSANDRA_PID")")
( while kill -0 $SPID 2> /dev/null; do q "SELECT lag_seconds FROM cqlbridge_$KS.stream_state" >> "$WORK/lag"; sleep 0.25; done ) &
SAMPLER=$!
t0=$(date +%s.%N)
run "stream"
t1=$(date +%s.%N)
# catch-up: until the slot confirmed the end of the run
END=$(q "SELECT pg_current_wal_lsn()")
while [ "$(q "SELECT confirmed_flush_lsn >= '$END' FROM pg_replication_slots WHERE slot_name = 'cqlbridge_$KS'")" != t ]; do sleep 0.1; done
t2=$(date +%s.%N)
c1=("$(cpu $SPID)" "$(cpu "$WS")" "$(cpu "$BE")" "$(cpu "$CASSANDRA_PID")")
kill -TERM $SPID; wait $SPID || true
kill $SAMPLER 2> /dev/null || true
python3 - "$WORK/lag" <<PY
import sys
v = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
p = lambda q: v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")
print("stream lag (status samples): p50 %.3f s, p99 %.3f s, max %.3f s; catch-up after the run %.1f s" % (p(0.5), p(0.99), v[-1] if v else 0, $t2 - $t1))
print("CPU s during the run + catch-up: stream %.1f, walsender %.1f, its backend %.1f, Cassandra %.1f (%.1f s wall)" % (
    ${c1[0]} - ${c0[0]}, ${c1[1]} - ${c0[1]}, ${c1[2]} - ${c0[2]}, ${c1[3]} - ${c0[3]}, $t2 - $t0))
PY
q "DROP TABLE public.bench_ra_keys"
