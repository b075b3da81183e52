#!/usr/bin/env python3
"""Full scan of bench.rows with the DataStax Python driver: rows/s."""
import sys, time
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement

host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
cluster = Cluster([host], protocol_version=5)
session = cluster.connect()
t0 = time.monotonic()
n = 0
total = 0
stmt = SimpleStatement("SELECT id, a, b, c, d FROM bench.rows", fetch_size=5000)
for row in session.execute(stmt):
    n += 1
    total += row.a
secs = time.monotonic() - t0
print("python-driver full scan: %d rows in %.2f s = %.0f rows/s (checksum %d)" % (n, secs, n / secs, total))
cluster.shutdown()
