#!/usr/bin/env python3
"""
Cassandra 5.0 indexes through cql_fdw (run by hand, not in CI).

  sai  1,000,000 rows (id int PRIMARY KEY, a int, b int, payload text),
       b = a, an SAI index on a only; a selective predicate (10 rows)
       through the foreign table:
         index            a = const, pushed to the index (index scan)
         ALLOW FILTERING  b = const on a foreign table with allow_filtering
                          'true': a token range scan Cassandra filters (on
                          a, Cassandra would use the index anyway)
         local filter     a = const with index_pushdown 'false': every row
                          read and filtered by PostgreSQL
         Python driver    SELECT ... WHERE a = ? (one request, the
                          coordinator walks the token ranges)
  ann  N vectors of dimension D with an SAI vector index (cosine); the
       top-10 query ORDER BY v <=> q LIMIT 10 through the foreign table
       (Access: ANN search), against the same CQL (ORDER BY v ANN OF ?
       LIMIT 10) through the DataStax Python driver, prepared, one query
       at a time; and the recall of the ANN answers against the exact
       top 10 computed by PostgreSQL over a local copy.

Recorded per query: the median wall seconds over --runs runs (after one
warm-up), the client's CPU seconds (the backend's or this process's) and
the Cassandra nodes' CPU seconds (/proc), and the ratios.

The vectors are written by the Python driver two at a time: Cassandra 5.0
fails concurrent writes to a vector index beyond a small writer pool on a
2-core node ("Number of outstanding pooled objects has gone beyond the
limit"), so the ANN table is smaller than the SAI one.

Usage:
  bash scripts/cassandra.sh start cluster
  eval "$(PG_VERSION=18 bash scripts/pg.sh env)"    # pgvector is needed
  ~/.cache/cql_fdw/venv/bin/python bench/sai_ann.py [--rows 1000000]
      [--vectors 20000] [--dim 16] [--runs 9] [--keep]
"""
import argparse
import random
import statistics
import time

from benchlib import Backend, cpu_seconds, node_pid
from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args

KS = "bench_sai"


def measure(be, sql, pids):
    c0, s0, t0 = cpu_seconds(be.pid), sum(map(cpu_seconds, pids)), time.monotonic()
    out = be.run(sql)
    return time.monotonic() - t0, cpu_seconds(be.pid) - c0, sum(map(cpu_seconds, pids)) - s0, out


def median_of(fn, runs):
    fn()
    rs = [fn() for _ in range(runs)]
    return (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs),
            statistics.median(r[2] for r in rs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--nodes", default="node1,node2,node3")
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--vectors", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    pids = [node_pid(n) for n in a.nodes.split(",")]
    me = __import__("os").getpid()

    be = Backend()
    be.run("SET client_min_messages = warning")
    be.run("CREATE EXTENSION IF NOT EXISTS cql_fdw")
    be.run("CREATE EXTENSION IF NOT EXISTS vector")
    be.run("CREATE SERVER IF NOT EXISTS bench_sai FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '%s')" % a.host)
    be.run("CREATE USER MAPPING IF NOT EXISTS FOR CURRENT_USER SERVER bench_sai")
    be.run("DROP SCHEMA IF EXISTS bs CASCADE")
    be.run("CREATE SCHEMA bs")
    be.run("SELECT cql_execute('bench_sai', 'DROP KEYSPACE IF EXISTS %s')" % KS)
    be.run("SELECT cql_execute('bench_sai', $$CREATE KEYSPACE %s WITH replication = "
           "{'class': 'SimpleStrategy', 'replication_factor': 1}$$)" % KS)
    be.run("SELECT cql_execute('bench_sai', 'CREATE TABLE %s.t (id int PRIMARY KEY, a int, b int, payload text)')" % KS)
    be.run("SELECT cql_execute('bench_sai', $$CREATE INDEX t_a ON %s.t (a) USING 'sai'$$)" % KS)
    be.run("SELECT cql_execute('bench_sai', 'CREATE TABLE %s.v (id int PRIMARY KEY, v vector<float, %d>)')"
           % (KS, a.dim))
    be.run("SELECT cql_execute('bench_sai', $$CREATE INDEX v_v ON %s.v (v) USING 'sai'$$)" % KS)
    time.sleep(3)
    be.run("IMPORT FOREIGN SCHEMA %s FROM SERVER bench_sai INTO bs" % KS)
    be.run("CREATE FOREIGN TABLE bs.t_scan (id int, a int, b int, payload text) SERVER bench_sai "
           "OPTIONS (keyspace '%s', \"table\" 't', index_pushdown 'false', allow_filtering 'true')" % KS)
    be.run("CREATE FOREIGN TABLE bs.t_local (id int, a int, b int, payload text) SERVER bench_sai "
           "OPTIONS (keyspace '%s', \"table\" 't', index_pushdown 'false')" % KS)

    t0 = time.monotonic()
    be.run("INSERT INTO bs.t SELECT g, g %% %d, g %% %d, md5(g::text) FROM generate_series(1, %d) g"
           % (a.rows // 10, a.rows // 10, a.rows))
    print("sai load: %d rows in %.1f s" % (a.rows, time.monotonic() - t0))
    be.run("ANALYZE bs.t")
    be.run("ANALYZE bs.t_scan")

    print("\nselective SAI predicate (10 of %d rows), median of %d runs" % (a.rows, a.runs))
    print("%-26s %9s %12s %12s %s" % ("", "wall s", "client cpu", "cassandra cpu", "access"))
    res = {}
    session = Cluster([a.host]).connect()
    for name, table, col in (("index (pushed)", "bs.t", "a"), ("ALLOW FILTERING", "bs.t_scan", "b"),
                             ("local filter", "bs.t_local", "a")):
        access = [ln.strip() for ln in be.run("EXPLAIN SELECT * FROM %s WHERE %s = 4242" % (table, col)).splitlines()
                  if "Access" in ln]
        k = iter(range(1000, 10 ** 9, 7919))
        res[name] = median_of(lambda: measure(be, "SELECT count(*) FROM %s WHERE %s = %d"
                                              % (table, col, next(k) % (a.rows // 10)), pids), a.runs)
        w, c, s_ = res[name]
        print("%-26s %9.4f %12.3f %12.3f %s" % (name, w, c, s_, access[0] if access else "-"))
    sel_a = session.prepare("SELECT id FROM %s.t WHERE a = ?" % KS)
    ka = iter(range(1000, 10 ** 9, 7919))

    def drv_a():
        c0, s0, t0 = cpu_seconds(me), sum(map(cpu_seconds, pids)), time.monotonic()
        rows = list(session.execute(sel_a, (next(ka) % (a.rows // 10),)))
        return time.monotonic() - t0, cpu_seconds(me) - c0, sum(map(cpu_seconds, pids)) - s0, rows
    res["driver"] = median_of(drv_a, a.runs)
    print("%-26s %9.4f %12.3f %12.3f" % ("Python driver (index)", *res["driver"]))
    base = res["index (pushed)"]
    for name in ("ALLOW FILTERING", "local filter", "driver"):
        print("ratio %s / index: wall %.2f, cassandra cpu %.2f" % (
            name, res[name][0] / base[0], res[name][2] / max(base[2], 1e-3)))

    # --- ANN ---------------------------------------------------------------------------
    rnd = random.Random(42)
    vecs = [[rnd.uniform(-1, 1) for _ in range(a.dim)] for _ in range(a.vectors)]
    ins = session.prepare("INSERT INTO %s.v (id, v) VALUES (?, ?)" % KS)
    t0 = time.monotonic()
    execute_concurrent_with_args(session, ins, [(i, v) for i, v in enumerate(vecs)], concurrency=2)
    print("\nann load: %d vectors of dimension %d in %.1f s (Python driver, 2 in flight)"
          % (a.vectors, a.dim, time.monotonic() - t0))
    time.sleep(2)
    be.run("CREATE TEMP TABLE v_local AS SELECT * FROM bs.v")
    queries = [[rnd.uniform(-1, 1) for _ in range(a.dim)] for _ in range(a.runs + 1)]
    lit = lambda q: "'[" + ",".join("%.6f" % x for x in q) + "]'"
    access = [ln.strip() for ln in be.run("EXPLAIN SELECT id FROM bs.v ORDER BY v <=> %s LIMIT 10"
                                          % lit(queries[0])).splitlines() if "Access" in ln]
    qi = iter(range(10 ** 6))
    fdw = median_of(lambda: measure(be, "SELECT array_agg(id) FROM (SELECT id FROM bs.v ORDER BY v <=> %s LIMIT 10) s"
                                    % lit(queries[next(qi) % len(queries)]), pids), a.runs)
    sel = session.prepare("SELECT id FROM %s.v ORDER BY v ANN OF ? LIMIT 10" % KS)
    qj = iter(range(10 ** 6))

    def drv():
        c0, s0, t0 = cpu_seconds(me), sum(map(cpu_seconds, pids)), time.monotonic()
        rows = list(session.execute(sel, (queries[next(qj) % len(queries)],)))
        return time.monotonic() - t0, cpu_seconds(me) - c0, sum(map(cpu_seconds, pids)) - s0, rows
    pyd = median_of(drv, a.runs)
    print("\nANN top 10 of %d vectors, median of %d runs" % (a.vectors, a.runs))
    print("%-26s %9s %12s %12s" % ("", "wall s", "client cpu", "cassandra cpu"))
    print("%-26s %9.4f %12.4f %12.4f %s" % ("cql_fdw", fdw[0], fdw[1], fdw[2], access[0] if access else "-"))
    print("%-26s %9.4f %12.4f %12.4f" % ("Python driver", pyd[0], pyd[1], pyd[2]))
    print("ratio cql_fdw/driver: wall %.2f" % (fdw[0] / pyd[0]))
    hits = []
    for q in queries[:20] + [[rnd.uniform(-1, 1) for _ in range(a.dim)] for _ in range(20 - min(20, len(queries)))]:
        ann = set(map(int, be.run("SELECT id FROM bs.v ORDER BY v <=> %s LIMIT 10" % lit(q)).split()))
        exact = set(map(int, be.run("SELECT id FROM v_local ORDER BY v <=> %s LIMIT 10" % lit(q)).split()))
        hits.append(len(ann & exact))
    print("recall@10 over %d queries: %.3f (min %d of 10)" % (len(hits), sum(hits) / (10.0 * len(hits)), min(hits)))

    if not a.keep:
        be.run("SELECT cql_execute('bench_sai', 'DROP KEYSPACE %s')" % KS)
        be.run("DROP SCHEMA bs CASCADE")
    be.close()


if __name__ == "__main__":
    main()
