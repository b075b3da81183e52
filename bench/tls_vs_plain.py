#!/usr/bin/env python3
"""
TLS against plaintext through cql_fdw, side by side on the same node (run by
hand, not in CI).

The test bed's `tls` node (127.0.0.6) has client encryption with
`optional: true`, so one node serves both: two foreign servers point at it,
one with sslmode 'require' (or verify-full), one without.  For each, in
alternation and repeated:

  load   INSERT ... SELECT of N generated rows (one row per partition)
  scan   SELECT count(*), sum(...) over the whole table (token-range scan)

Recorded per run: wall seconds, rows/s, the PostgreSQL backend's CPU seconds
and the Cassandra node's CPU seconds (both from /proc), and the TLS/plain
ratio of the medians.  Usage:

  CASSANDRA_C2=1 bash scripts/cassandra.sh start tls   # full JIT, as a production node
  eval "$(bash scripts/pg.sh env)"
  python3 bench/tls_vs_plain.py [--rows 500000] [--runs 3] [--mode require]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

from benchlib import RUN_DIR, Backend, cpu_seconds, node_pid


def measure(be, sql, npid):
    c0, s0, t0 = cpu_seconds(be.pid), cpu_seconds(npid), time.monotonic()
    be.run(sql)
    return (time.monotonic() - t0, cpu_seconds(be.pid) - c0, cpu_seconds(npid) - s0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1, help="unrecorded runs of each first")
    ap.add_argument("--mode", default="require", choices=["require", "verify-ca", "verify-full"])
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="cql_tls_bench.")
    ca = os.path.join(work, "ca.pem")
    shutil.copy(os.path.join(RUN_DIR, "tls-certs", "ca.pem"), ca)
    os.chmod(work, 0o755)
    os.chmod(ca, 0o644)
    npid = node_pid("tls")
    be = Backend()
    be.run(f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
DROP SERVER IF EXISTS bench_plain, bench_tls CASCADE;
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bench_tls CASCADE;
CREATE SCHEMA bench_tls;
CREATE SERVER bench_plain FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '127.0.0.6');
CREATE SERVER bench_tls FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '127.0.0.6',
  sslmode '{a.mode}', sslrootcert '{ca}');
CREATE USER MAPPING FOR CURRENT_USER SERVER bench_plain;
CREATE USER MAPPING FOR CURRENT_USER SERVER bench_tls;
SELECT cql_execute('bench_plain', 'DROP KEYSPACE IF EXISTS bench_tls');
SELECT cql_execute('bench_plain', $$CREATE KEYSPACE bench_tls WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('bench_plain', 'CREATE TABLE bench_tls.t (id int PRIMARY KEY, a bigint, b text, c double)');
CREATE FOREIGN TABLE bench_tls.t_plain (id int, a bigint, b text, c double precision)
  SERVER bench_plain OPTIONS (keyspace 'bench_tls', "table" 't', truncatable 'true');
CREATE FOREIGN TABLE bench_tls.t_tls (id int, a bigint, b text, c double precision)
  SERVER bench_tls OPTIONS (keyspace 'bench_tls', "table" 't', truncatable 'true');
""")
    results = {("load", "plain"): [], ("load", "tls"): [], ("scan", "plain"): [], ("scan", "tls"): []}
    for r in range(-a.warmup, a.runs):
        for kind in ("plain", "tls") if r % 2 == 0 else ("tls", "plain"):
            be.run("TRUNCATE bench_tls.t_plain")
            load = measure(be, f"""INSERT INTO bench_tls.t_{kind} SELECT g, g * 7, md5(g::text), g / 3.0
FROM generate_series(1, {a.rows}) g""", npid)
            scan = measure(be, f"SELECT count(*), sum(a), sum(length(b)) FROM bench_tls.t_{kind}", npid)
            if r >= 0:
                results[("load", kind)].append(load)
                results[("scan", kind)].append(scan)
            print("%s %-5s load %6.2f s (backend %5.2f, node %6.2f CPU s)  "
                  "scan %6.2f s (backend %5.2f, node %6.2f CPU s)"
                  % ("run %d" % (r + 1) if r >= 0 else "warm-up", kind, load[0], load[1], load[2], scan[0], scan[1], scan[2]), flush=True)
    print("\n%d rows, sslmode %s, medians of %d runs:" % (a.rows, a.mode, a.runs))
    for what in ("load", "scan"):
        p = [statistics.median(x[i] for x in results[(what, "plain")]) for i in range(3)]
        t = [statistics.median(x[i] for x in results[(what, "tls")]) for i in range(3)]
        print("  %s: plaintext %.2f s (%.0f rows/s; backend %.2f, node %.2f CPU s), "
              "TLS %.2f s (%.0f rows/s; backend %.2f, node %.2f CPU s): TLS/plain %.3f"
              % (what, p[0], a.rows / p[0], p[1], p[2], t[0], a.rows / t[0], t[1], t[2], t[0] / p[0]))
    be.run("SELECT cql_execute('bench_plain', 'DROP KEYSPACE bench_tls'); "
           "DROP SERVER bench_plain, bench_tls CASCADE; DROP SCHEMA bench_tls CASCADE")
    be.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
