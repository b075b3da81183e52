#!/usr/bin/env python3
"""Insert rows with the Python driver, concurrent execution: rows/s."""
import sys, time, datetime
from cassandra.cluster import Cluster
from cassandra.concurrent import execute_concurrent_with_args

host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
cluster = Cluster([host], protocol_version=5)
session = cluster.connect()
session.execute("TRUNCATE bench.rows_py")
ps = session.prepare("INSERT INTO bench.rows_py (id, a, b, c, d) VALUES (?, ?, ?, ?, ?)")
epoch = datetime.datetime(2024, 1, 1)
t0 = time.monotonic()
chunk = 50000
for start in range(1, nrows + 1, chunk):
    args = [(i, i * 7, "row %d" % i, i / 3.0, epoch + datetime.timedelta(seconds=i))
            for i in range(start, min(start + chunk, nrows + 1))]
    execute_concurrent_with_args(session, ps, args, concurrency=256, raise_on_first_error=True)
secs = time.monotonic() - t0
print("python-driver concurrent insert: %d rows in %.2f s = %.0f rows/s" % (nrows, secs, nrows / secs))
cluster.shutdown()
