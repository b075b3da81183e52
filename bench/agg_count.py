#!/usr/bin/env python3
"""
Aggregate pushdown (issue 14): count(*), sum and min/max of one
100,000-row partition, and count(*) of the whole bench.rows (one count per
token range, summed), computed by Cassandra (pushed) and by PostgreSQL
from every row (aggregate_pushdown 'false'), side by side with the CPU
seconds of Cassandra and of the backend.

    python3 bench/agg_count.py [ROWS]        (default 100000)

Needs the services of bench/run.sh and the server "bench" it creates;
makes and drops the table bench.wide.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Backend, cpu_seconds, node_pid  # noqa: E402

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
QUERIES = [
    ("count(*)", "SELECT count(*) FROM bench.wide WHERE p = 1"),
    ("count, sum, min, max", "SELECT count(*), sum(v), min(c), max(c) FROM bench.wide WHERE p = 1"),
]


def timed(be, sql, repeat=5):
    """best wall time of 'repeat' runs, with the CPU of Cassandra and of the backend"""
    pid = node_pid("single")
    best = None
    for _ in range(repeat):
        c0, b0, t0 = cpu_seconds(pid), cpu_seconds(be.pid), time.monotonic()
        out = be.run(sql)
        wall = time.monotonic() - t0
        res = (wall, cpu_seconds(pid) - c0, cpu_seconds(be.pid) - b0, out)
        if best is None or wall < best[0]:
            best = res
    return best


def main():
    be = Backend()
    be.run("SELECT cql_execute('bench', 'DROP TABLE IF EXISTS bench.wide')")
    be.run("SELECT cql_execute('bench', 'CREATE TABLE bench.wide (p int, c int, v int, PRIMARY KEY (p, c))')")
    be.run("DROP FOREIGN TABLE IF EXISTS bench.wide")
    be.run("CREATE FOREIGN TABLE bench.wide (p int, c int, v int) SERVER bench "
           "OPTIONS (keyspace 'bench', \"table\" 'wide')")
    be.run("INSERT INTO bench.wide SELECT 1, g, g %% 1000 FROM generate_series(1, %d) g" % ROWS)
    for label, sql in QUERIES:
        be.run("ALTER FOREIGN TABLE bench.wide OPTIONS (ADD aggregate_pushdown 'true')")
        plan = be.run("EXPLAIN (VERBOSE, COSTS OFF) " + sql)
        assert "Aggregate on" in plan, plan
        pushed = timed(be, sql)
        be.run("ALTER FOREIGN TABLE bench.wide OPTIONS (SET aggregate_pushdown 'false')")
        local = timed(be, sql)
        be.run("ALTER FOREIGN TABLE bench.wide OPTIONS (DROP aggregate_pushdown)")
        if pushed[3] != local[3]:
            raise SystemExit("%s: pushed %s, local %s" % (label, pushed[3], local[3]))
        for name, r in (("pushed", pushed), ("local", local)):
            print("%-22s %-6s %8.1f ms  Cassandra %.2f CPU s  backend %.2f CPU s  (%s)"
                  % (label, name, r[0] * 1000, r[1], r[2], r[3]))
        print("%-22s pushed is %.1fx faster" % (label, local[0] / pushed[0]))
    # the whole table: per-range counts against reading every row
    n = be.run("SELECT count(*) FROM pg_class WHERE oid = 'bench.rows'::regclass")
    if n == "1":
        sql = "SELECT count(*) FROM bench.rows"
        plan = be.run("EXPLAIN (VERBOSE, COSTS OFF) " + sql)
        assert "Aggregate on" in plan, plan
        pushed = timed(be, sql, 3)
        be.run("ALTER FOREIGN TABLE bench.rows OPTIONS (ADD aggregate_pushdown 'false')")
        try:
            local = timed(be, sql, 3)
        finally:
            be.run("ALTER FOREIGN TABLE bench.rows OPTIONS (DROP aggregate_pushdown)")
        if pushed[3] != local[3]:
            raise SystemExit("whole table: pushed %s, local %s" % (pushed[3], local[3]))
        for name, r in (("pushed", pushed), ("local", local)):
            print("%-22s %-6s %8.1f ms  Cassandra %.2f CPU s  backend %.2f CPU s  (%s)"
                  % ("count(*) bench.rows", name, r[0] * 1000, r[1], r[2], r[3]))
        print("%-22s pushed is %.1fx faster" % ("count(*) bench.rows", local[0] / pushed[0]))
    be.run("DROP FOREIGN TABLE bench.wide")
    be.run("SELECT cql_execute('bench', 'DROP TABLE bench.wide')")
    be.close()


if __name__ == "__main__":
    main()
