#!/usr/bin/env python3
"""
Cassandra's response warnings reach the PostgreSQL client (TAP output).

A partition with more tombstone cells than tombstone_warn_threshold (1000
by default) makes the coordinator attach a warning to its answer; cql_fdw
turns it into a WARNING that names the coordinator, counted in
cql_fdw_statistics().  A statement whose pages all carry the same warning
reports it once; the server counts per page, so a paged read warns once
for each page over the threshold.  Needs PGHOST/PGPORT/PGUSER/PGDATABASE
of a server with cql_fdw installed and CQL_CLUSTER_HOSTS (or CQL_HOST).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import done, note, ok, plan, psql  # noqa: E402

HOSTS = os.environ.get("CQL_CLUSTER_HOSTS", os.environ.get("CQL_HOST", "127.0.0.1"))


def psql_all(sql):
    """psql -c with stdout and stderr kept apart: (rc, stdout, stderr)"""
    p = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    plan(7)
    rc, out = psql(f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
DROP SERVER IF EXISTS warn_srv CASCADE;
DROP SCHEMA IF EXISTS warn CASCADE;
CREATE SERVER warn_srv FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{HOSTS}');
CREATE USER MAPPING FOR CURRENT_USER SERVER warn_srv;
SELECT cql_execute('warn_srv', 'DROP KEYSPACE IF EXISTS fdw_warnings');
SELECT cql_execute('warn_srv', $$CREATE KEYSPACE fdw_warnings WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('warn_srv', 'CREATE TABLE fdw_warnings.t (k int, c int, v text, PRIMARY KEY ((k), c))');
CREATE SCHEMA warn;
IMPORT FOREIGN SCHEMA fdw_warnings FROM SERVER warn_srv INTO warn;
-- 1500 rows whose v is null: one tombstone cell each
INSERT INTO warn.t (k, c, v) SELECT 1, g, NULL FROM generate_series(1, 1500) g;
INSERT INTO warn.t (k, c, v) SELECT 2, g, 'x' FROM generate_series(1, 10) g;
""")
    ok(rc == 0, "a partition with 1500 tombstone cells written", out)
    if rc != 0:
        return done()

    rc, stdout, stderr = psql_all("SELECT count(*) FROM warn.t WHERE k = 2")
    ok(rc == 0 and stdout.strip() == "10" and "WARNING" not in stderr,
       "a clean partition: no warning", stdout + stderr)

    rc, stdout, stderr = psql_all(
        "SELECT count(*) FROM warn.t WHERE k = 1; "
        "SELECT warnings FROM cql_fdw_statistics()")
    lines = stdout.split()
    ok(rc == 0 and lines[:1] == ["1500"], "the rows are read", stdout + stderr)
    m = re.search(r"WARNING:  Cassandra warning from (127\.0\.0\.\d+:\d+): (.*tombstone.*)", stderr)
    ok(m is not None, "the tombstone warning is a PostgreSQL WARNING naming the coordinator",
       stderr)
    if m:
        note("warning: " + m.group(0))
    ok(len(lines) == 2 and lines[1] == "1", "cql_fdw_statistics() counts it", stdout)

    # Cassandra counts tombstones per page (per read command): pages of 600
    # rows (600, 600, 300) each stay below the threshold, so no warning at
    # all; pages of 1100 rows: the first one warns, the second (400) does
    # not -- exactly one WARNING, for that page, never one per row
    rc, stdout, stderr = psql_all(
        "ALTER FOREIGN TABLE warn.t OPTIONS (ADD fetch_size '600'); "
        "SELECT count(*) FROM warn.t WHERE k = 1")
    ok(rc == 0 and stdout.split()[-1:] == ["1500"] and stderr.count("WARNING") == 0,
       "pages of 600 rows stay below the threshold: no warning", stdout + stderr)
    rc, stdout, stderr = psql_all(
        "ALTER FOREIGN TABLE warn.t OPTIONS (SET fetch_size '1100'); "
        "SELECT count(*) FROM warn.t WHERE k = 1")
    ok(rc == 0 and stdout.split()[-1:] == ["1500"] and stderr.count("WARNING") == 1
       and "Read 1100 live rows and 1100 tombstone cells" in stderr,
       "pages of 1100 rows: exactly one WARNING, for the first page", stdout + stderr)

    psql("SELECT cql_execute('warn_srv', 'DROP KEYSPACE IF EXISTS fdw_warnings'); "
         "DROP SERVER warn_srv CASCADE; DROP SCHEMA warn CASCADE")
    return done()


if __name__ == "__main__":
    sys.exit(main())
