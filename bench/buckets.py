#!/usr/bin/env python3
"""
Bucketed against naive partitions through cql_fdw (run by hand, not in CI).

The same readings go into two Cassandra tables of one keyspace:

  naive     PRIMARY KEY ((sensor), reported_at): a few huge partitions
  bucketed  PRIMARY KEY ((sensor, day), reported_at): day buckets, declared
            on the foreign table with bucket 'day', bucket_of 'reported_at'

and the application's query runs unchanged on both foreign tables, in
alternation and repeated:

  day      SELECT count(*), avg(value) ... WHERE sensor = $1 AND
           reported_at >= $day AND reported_at < $day + 1 day
  latest   ... ORDER BY reported_at DESC LIMIT 10 over a 7-day range

Recorded: load wall time and rows/s per table, then per query the median
wall seconds, the backend's and the Cassandra nodes' CPU seconds (/proc),
and the bucketed/naive ratio; finally the nodes' "large partition" log lines
(Cassandra warns when compaction writes a partition over
compaction_large_partition_warning_threshold, 100 MiB by default).

Usage:
  bash scripts/cassandra.sh start cluster
  eval "$(bash scripts/pg.sh env)"
  python3 bench/buckets.py [--rows 10000000] [--sensors 4] [--days 100] [--runs 7]
                           [--settle 120] [--keep]
"""
import argparse
import glob
import os
import statistics
import time

from benchlib import RUN_DIR, Backend, cpu_seconds, node_pid


def measure(be, sql, pids):
    c0, s0, t0 = cpu_seconds(be.pid), sum(map(cpu_seconds, pids)), time.monotonic()
    out = be.run(sql)
    return (time.monotonic() - t0, cpu_seconds(be.pid) - c0,
            sum(map(cpu_seconds, pids)) - s0, out)


def large_partition_lines(names):
    n = 0
    for name in names:
        for log in glob.glob(os.path.join(RUN_DIR, name, "logs", "system.log*")):
            with open(log, errors="replace") as f:
                n += sum(1 for line in f if "large partition" in line.lower()
                         and "bench_buckets" in line)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--nodes", default="node1,node2,node3",
                    help="test-bed node names whose CPU is counted")
    ap.add_argument("--rows", type=int, default=10000000)
    ap.add_argument("--sensors", type=int, default=4)
    ap.add_argument("--days", type=int, default=100)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--settle", type=int, default=120,
                    help="seconds to wait after loading (memtable flushes, compactions)")
    ap.add_argument("--keep", action="store_true", help="keep the keyspace loaded")
    a = ap.parse_args()
    names = a.nodes.split(",")
    pids = [node_pid(n) for n in names]
    per_sensor = a.rows // a.sensors
    step_ms = a.days * 86400 * 1000 // per_sensor

    be = Backend()
    be.run(f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
SET client_min_messages = warning;
DROP SERVER IF EXISTS bench_buckets CASCADE;
DROP SCHEMA IF EXISTS bench_buckets CASCADE;
CREATE SCHEMA bench_buckets;
CREATE SERVER bench_buckets FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{a.host}');
CREATE USER MAPPING FOR CURRENT_USER SERVER bench_buckets;
SELECT cql_execute('bench_buckets', 'DROP KEYSPACE IF EXISTS bench_buckets');
SELECT cql_execute('bench_buckets', $$CREATE KEYSPACE bench_buckets WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('bench_buckets', 'CREATE TABLE bench_buckets.naive
  (sensor int, reported_at timestamp, value double, PRIMARY KEY ((sensor), reported_at))');
SELECT cql_execute('bench_buckets', 'CREATE TABLE bench_buckets.bucketed
  (sensor int, day timestamp, reported_at timestamp, value double,
   PRIMARY KEY ((sensor, day), reported_at))');
IMPORT FOREIGN SCHEMA bench_buckets FROM SERVER bench_buckets INTO bench_buckets;
ALTER FOREIGN TABLE bench_buckets.bucketed
  ALTER COLUMN day OPTIONS (ADD bucket 'day', ADD bucket_of 'reported_at');
""")
    print("%d rows: %d sensors x %d readings, one every %.1f s over %d days"
          % (a.rows, a.sensors, per_sensor, step_ms / 1000, a.days), flush=True)
    for t in ("naive", "bucketed"):
        w, b, n, _ = measure(be, f"""INSERT INTO bench_buckets.{t} (sensor, reported_at, value)
SELECT s, timestamptz '2026-01-01 00:00+00' + g * interval '{step_ms} milliseconds', g % 1000
FROM generate_series(1, {a.sensors}) s, generate_series(0, {per_sensor - 1}) g""", pids)
        print("load %-8s %7.1f s (%6.0f rows/s; backend %.1f, nodes %.1f CPU s)"
              % (t, w, a.rows / w, b, n), flush=True)

    time.sleep(a.settle)
    queries = {
        "day": "SELECT count(*), round(avg(value)::numeric, 3) FROM bench_buckets.{t} "
               "WHERE sensor = {s} AND reported_at >= timestamptz '{d}' "
               "AND reported_at < timestamptz '{d}' + interval '1 day'",
        "latest": "SELECT string_agg(value::text, ',') FROM (SELECT value FROM bench_buckets.{t} "
                  "WHERE sensor = {s} AND reported_at >= timestamptz '{d}' "
                  "AND reported_at < timestamptz '{d}' + interval '7 days' "
                  "ORDER BY reported_at DESC LIMIT 10) x",
    }
    res = {}
    for r in range(a.runs + 1):
        s = 1 + r % a.sensors
        d = "2026-%02d-%02d 00:00+00" % (1 + (10 + 7 * r) // 31 % 3, 1 + (10 + 7 * r) % 28)
        for q, sql in queries.items():
            outs = {}
            for t in ("naive", "bucketed") if r % 2 == 0 else ("bucketed", "naive"):
                m = measure(be, sql.format(t=t, s=s, d=d), pids)
                outs[t] = m[3]
                if r > 0:
                    res.setdefault((q, t), []).append(m[:3])
            if outs["naive"] != outs["bucketed"]:
                raise SystemExit("different answers for %s: %r" % (q, outs))
    print("\nmedians of %d runs (the first, a warm-up, not counted); answers equal:" % a.runs)
    for q in queries:
        n = [statistics.median(x[i] for x in res[(q, "naive")]) for i in range(3)]
        b = [statistics.median(x[i] for x in res[(q, "bucketed")]) for i in range(3)]
        print("  %-6s naive %.4f s (backend %.3f, nodes %.3f CPU s), bucketed %.4f s "
              "(backend %.3f, nodes %.3f CPU s): bucketed/naive %.3f"
              % (q, n[0], n[1], n[2], b[0], b[1], b[2], b[0] / n[0]))
    print("  'large partition' lines for bench_buckets in the nodes' logs: %d"
          % large_partition_lines(names))
    if not a.keep:
        be.run("SELECT cql_execute('bench_buckets', 'DROP KEYSPACE bench_buckets'); "
               "DROP SERVER bench_buckets CASCADE; DROP SCHEMA bench_buckets CASCADE")
    be.close()


if __name__ == "__main__":
    main()
