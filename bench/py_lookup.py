#!/usr/bin/env python3
"""Single-partition lookups with a prepared statement: mean latency."""
import random, sys, time
from cassandra.cluster import Cluster

host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
nrows = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
cluster = Cluster([host], protocol_version=5)
session = cluster.connect()
ps = session.prepare("SELECT id, a, b, c, d FROM bench.rows WHERE id = ?")
rnd = random.Random(42)
for _ in range(200):                      # warm up
    session.execute(ps, (rnd.randint(1, nrows),))
t0 = time.monotonic()
for _ in range(count):
    session.execute(ps, (rnd.randint(1, nrows),)).one()
secs = time.monotonic() - t0
print("python-driver prepared lookup: %d in %.2f s, mean %.3f ms" % (count, secs, 1000 * secs / count))
cluster.shutdown()
