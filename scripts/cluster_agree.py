#!/usr/bin/env python3
"""scripts/cluster_agree.py - does a change of schema made on one node of a
Cassandra test cluster reach every other node?

Usage: cluster_agree.py HOST,HOST,... [--timeout SECONDS] [--user U --password P]

A canary table is created on the first host (a new name each time, in the
keyspace cqlfdw_bed_canary), and every host is asked until it has it, for at
most --timeout seconds (default 30).  Prints one line; exit 0 when every
host has it, 1 when some do not or cannot be asked (their addresses on
the last line of stdout, for the caller to restart them), 2 when the
first host cannot make the change.

Why: nodes that start at once on a busy machine can drop each other from
gossip for a moment ("FatClient ... has been silent, removing from gossip");
seen once in a test run, the first node then sent no schema change to the
third for about five minutes, and every test that created a table failed
on it (INCOMPATIBLE_SCHEMA).  scripts/test.sh runs this after the nodes
are up and restarts a node that does not follow.
"""
import argparse
import os
import sys
import time
import warnings

# the driver's notice about its legacy parameters is not this script's output
warnings.filterwarnings("ignore", category=DeprecationWarning)
try:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy
except ImportError as e:  # the cqlsh venv has the driver (scripts/deps.sh)
    print(f"cluster_agree: the Cassandra Python driver is missing: {e}")
    sys.exit(2)

KEYSPACE = "cqlfdw_bed_canary"


def session_of(host, auth):
    """A session that sends every request to this one host."""
    cluster = Cluster([host], port=9042, protocol_version=4, auth_provider=auth,
                      load_balancing_policy=WhiteListRoundRobinPolicy([host]),
                      max_schema_agreement_wait=0, connect_timeout=10,
                      control_connection_timeout=10)
    return cluster.connect()


def has_table(sessions, host, auth, table):
    """Does this host's schema have the canary table?  A host that cannot
    be asked (no connection, no answer) has not got it yet."""
    try:
        if host not in sessions:
            sessions[host] = session_of(host, auth)
        rows = sessions[host].execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (KEYSPACE, table), timeout=5)
        return rows.one() is not None
    except Exception:  # noqa: BLE001 - asked again until the timeout
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hosts")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--user")
    ap.add_argument("--password")
    a = ap.parse_args()
    hosts = [h for h in a.hosts.split(",") if h]
    auth = PlainTextAuthProvider(a.user, a.password) if a.user else None
    table = f"t{os.getpid()}_{int(time.time())}"
    sessions = {}
    try:
        first = sessions[hosts[0]] = session_of(hosts[0], auth)
        first.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                      "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=30)
        t0 = time.monotonic()
        first.execute(f"CREATE TABLE {KEYSPACE}.{table} (k int PRIMARY KEY)", timeout=30)
        missing = list(hosts)
        while missing and time.monotonic() - t0 < a.timeout:
            missing = [h for h in missing
                       if not has_table(sessions, h, auth, table)]
            if missing:
                time.sleep(0.5)
        took = time.monotonic() - t0
        if missing:
            print(f"cluster_agree: a table created on {hosts[0]} had not reached "
                  f"{', '.join(missing)} after {took:.1f} s")
            print(" ".join(missing))
            return 1
        first.execute(f"DROP TABLE {KEYSPACE}.{table}", timeout=30)
        print(f"cluster_agree: a table created on {hosts[0]} reached every node "
              f"({', '.join(hosts)}) in {took:.1f} s")
        return 0
    except Exception as e:  # noqa: BLE001 - any driver error is the answer
        print(f"cluster_agree: {type(e).__name__}: {e}")
        return 2
    finally:
        for s in sessions.values():
            s.cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
