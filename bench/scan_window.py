#!/usr/bin/env python3
"""
Whole-table reads through cql_fdw against the server's limit (issue 14).

Runs the same full scan of bench.rows (every column, aggregated so that
only one row comes back) with scan_window 1, 2, 4, 8, 16 in one backend,
then as a parallel plan with 0, 2 and 4 workers, and prints per run: wall
seconds, rows/s, the CPU seconds Cassandra used (from /proc of each node
of the test bed that runs) and the CPU seconds of PostgreSQL (the backend,
plus its parallel workers, which the postmaster reaps).  "limit" is
Cassandra's CPU seconds divided by the cores it can use: no client can be
faster than that, so wall / limit is the distance to the server's limit.

    python3 bench/scan_window.py [NODE...]    (default: single)

Needs bench.rows loaded (bench/run.sh step 1), PG* of the server with
cql_fdw, and the foreign table bench.rows (bench/run.sh creates it).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Backend, cpu_seconds, node_pid  # noqa: E402

QUERY = "SELECT count(*), sum(a), sum(length(b)), sum(c::numeric), max(d) FROM bench.rows"
NODES = sys.argv[1:] or ["single"]


def reaped_children_cpu(pid):
    """CPU seconds of a process's children it has waited for (cutime + cstime)"""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def postmaster_pid(be):
    """the postmaster: parent of our backend"""
    with open("/proc/%d/stat" % be.pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def run(be, label, settings):
    pids = [node_pid(n) for n in NODES]
    pm = postmaster_pid(be)
    for s in settings:
        be.run(s)
    be.run(QUERY)                               # warm: pages cached, statements prepared
    c0 = sum(cpu_seconds(p) for p in pids)
    b0 = cpu_seconds(be.pid) + reaped_children_cpu(pm)
    t0 = time.monotonic()
    out = be.run(QUERY)
    wall = time.monotonic() - t0
    ccpu = sum(cpu_seconds(p) for p in pids) - c0
    bcpu = cpu_seconds(be.pid) + reaped_children_cpu(pm) - b0
    rows = int(out.split("|")[0])
    limit = ccpu / os.cpu_count()
    print("%-34s %6.2f s %9.0f rows/s  Cassandra %5.2f CPU s  PostgreSQL %5.2f CPU s  "
          "wall/limit %.2f" % (label, wall, rows / wall, ccpu, bcpu, wall / limit))
    return out


def main():
    be = Backend()
    be.run("SET max_parallel_workers_per_gather = 0")
    ref = None
    for w in (1, 2, 4, 8, 16):
        be.run("ALTER FOREIGN TABLE bench.rows OPTIONS (ADD scan_window '%d')" % w)
        try:
            out = run(be, "scan_window %d" % w, [])
        finally:
            be.run("ALTER FOREIGN TABLE bench.rows OPTIONS (DROP scan_window)")
        if ref is not None and out != ref:
            raise SystemExit("scan_window %d returned %s, not %s" % (w, out, ref))
        ref = out
    be.run("ANALYZE bench.rows")
    for workers in (0, 2, 4):
        out = run(be, "parallel, %d workers (window 8)" % workers,
                  ["SET max_parallel_workers_per_gather = %d" % workers,
                   "SET parallel_setup_cost = 0", "SET min_parallel_table_scan_size = 0"])
        if out != ref:
            raise SystemExit("%d workers returned %s, not %s" % (workers, out, ref))
    be.close()


if __name__ == "__main__":
    main()
