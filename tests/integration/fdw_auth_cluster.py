#!/usr/bin/env python3
"""
require_auth on every connection of cql_fdw, end to end, against the
test bed's 3-node auth cluster (TAP output).

tap-needs: auth

A non-superuser PostgreSQL role with a user mapping (a Cassandra role of its
own and its password) reads and writes a foreign table on the auth cluster:
cql_fdw then requires every connection it opens to be asked for that
password, the control connection and the per-node connections that
token-aware routing opens to the peers (discover_peers: the control node
names them in system.peers).  The keyspace has RF 3 and 60 partitions, so
that the writes, the lookups by key and the token-range scan each go to all
three nodes.  cql_fdw shows no per-node connections (cql_fdw_get_connections
lists the control connection), so each node is asked itself: its
system_views.clients must list a connection of driver cql_fdw logged in as
that Cassandra role while the session holds its connections.

Refused: the same role on a server whose node does not ask for a password
(2F003, password is required), and a wrong password on the auth cluster
(HV00N); neither message shows the password.

Environment: CQL_AUTH_HOST, CQL_AUTH_PORT (a node of the auth cluster),
CQL_USER, CQL_PASSWORD (its superuser), CQL_HOST, CQL_PORT (a node without
authentication), CQL_AUTH_CLUSTER_SIZE (3), PGHOST/PGPORT/PGUSER/PGDATABASE
of a server with cql_fdw installed, PGUSER a superuser.  Skipped when the
auth cluster is not running.
"""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import Session, done, note, ok, psql, setup_step  # noqa: E402

AUTH_HOST = os.environ.get("CQL_AUTH_HOST", "127.0.0.4")
AUTH_PORT = int(os.environ.get("CQL_AUTH_PORT", "9042"))
SUPER = os.environ.get("CQL_USER", "cassandra")
SUPER_PW = os.environ.get("CQL_PASSWORD", "cassandra")
PLAIN_HOST = os.environ.get("CQL_HOST", "127.0.0.1")
PLAIN_PORT = int(os.environ.get("CQL_PORT", "9042"))
SIZE = int(os.environ.get("CQL_AUTH_CLUSTER_SIZE", "3"))

KS = "fdw_auth_cluster"
CASS_ROLE = "fdw_auth_cluster_user"
CASS_PW = "fac-pw-5309"             # distinctive: must never appear in output
WRONG_PW = "fac-wrong-8675"
PG_ROLE = "fdw_auth_cluster_pg"
ROWS = 60


def reachable(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return True
    except OSError:
        return False


def cleanup():
    psql(f"""
DROP SCHEMA IF EXISTS fac CASCADE;
DROP SERVER IF EXISTS fac_srv CASCADE;
DROP SERVER IF EXISTS fac_wrong CASCADE;
DROP SERVER IF EXISTS fac_noauth CASCADE;
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{PG_ROLE}') THEN
    EXECUTE 'DROP OWNED BY {PG_ROLE}';
    EXECUTE 'DROP ROLE {PG_ROLE}';
  END IF;
END $$;
""")


def node_servers():
    """one superuser server per node of the auth cluster: [(address, server)]"""
    rc, out = psql("""
SELECT r->>'rpc_address' FROM cql_query('fac_admin', 'SELECT rpc_address FROM system.local') r
UNION ALL
SELECT r->>'native_address' FROM cql_query('fac_admin', 'SELECT native_address FROM system.peers_v2') r
""")
    if rc != 0:
        note(out)
        return []
    nodes = []
    for i, addr in enumerate(sorted(a for a in out.split() if a)):
        srv = "fac_node%d" % i
        rc, out = psql(f"""
DROP SERVER IF EXISTS {srv} CASCADE;
CREATE SERVER {srv} FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{addr}', port '{AUTH_PORT}');
CREATE USER MAPPING FOR CURRENT_USER SERVER {srv} OPTIONS (username '{SUPER}', password '{SUPER_PW}');
""")
        if rc != 0:
            note(out)
        nodes.append((addr, srv))
    return nodes


def fdw_clients(srv):
    """the node's client connections of driver cql_fdw logged in as CASS_ROLE"""
    rc, out = psql(f"""
SELECT coalesce(jsonb_agg(r), '[]') FROM cql_query('{srv}',
  'SELECT address, port, driver_name, username, connection_stage FROM system_views.clients') r
WHERE r->>'driver_name' = 'cql_fdw' AND r->>'username' = '{CASS_ROLE}'
""")
    if rc != 0:
        return None, out
    return json.loads(out.strip()), out


def main():
    if not reachable(AUTH_HOST, AUTH_PORT):
        print("1..0 # SKIP the auth cluster is not running (scripts/cassandra.sh start auth)")
        return 0
    cleanup()
    rc, out = psql(f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
DROP SERVER IF EXISTS fac_admin CASCADE;
CREATE SERVER fac_admin FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{AUTH_HOST}', port '{AUTH_PORT}');
CREATE USER MAPPING FOR CURRENT_USER SERVER fac_admin OPTIONS (username '{SUPER}', password '{SUPER_PW}');
SELECT cql_execute('fac_admin', 'DROP KEYSPACE IF EXISTS {KS}');
SELECT cql_execute('fac_admin', $$CREATE KEYSPACE {KS} WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 3}}$$);
SELECT cql_execute('fac_admin', 'CREATE TABLE {KS}.t (k int PRIMARY KEY, v text)');
SELECT cql_execute('fac_admin', 'DROP ROLE IF EXISTS {CASS_ROLE}');
SELECT cql_execute('fac_admin', $$CREATE ROLE {CASS_ROLE} WITH PASSWORD = '{CASS_PW}' AND LOGIN = true$$);
SELECT cql_execute('fac_admin', 'GRANT SELECT ON KEYSPACE {KS} TO {CASS_ROLE}');
SELECT cql_execute('fac_admin', 'GRANT MODIFY ON KEYSPACE {KS} TO {CASS_ROLE}');

CREATE ROLE {PG_ROLE} LOGIN;
CREATE SCHEMA fac;
GRANT USAGE ON SCHEMA fac TO {PG_ROLE};
-- the auth cluster, one contact point: the peers come from system.peers
CREATE SERVER fac_srv FOREIGN DATA WRAPPER cql_fdw
  OPTIONS (host '{AUTH_HOST}', port '{AUTH_PORT}', discover_peers 'true',
           consistency 'QUORUM', write_consistency 'QUORUM');
CREATE USER MAPPING FOR {PG_ROLE} SERVER fac_srv
  OPTIONS (username '{CASS_ROLE}', password '{CASS_PW}');
CREATE FOREIGN TABLE fac.t (k int, v text) SERVER fac_srv OPTIONS (keyspace '{KS}', "table" 't');
-- the same, with a wrong password
CREATE SERVER fac_wrong FOREIGN DATA WRAPPER cql_fdw
  OPTIONS (host '{AUTH_HOST}', port '{AUTH_PORT}', discover_peers 'true');
CREATE USER MAPPING FOR {PG_ROLE} SERVER fac_wrong
  OPTIONS (username '{CASS_ROLE}', password '{WRONG_PW}');
CREATE FOREIGN TABLE fac.t_wrong (k int, v text) SERVER fac_wrong OPTIONS (keyspace '{KS}', "table" 't');
-- a node that does not ask for a password
CREATE SERVER fac_noauth FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{PLAIN_HOST}', port '{PLAIN_PORT}');
CREATE USER MAPPING FOR {PG_ROLE} SERVER fac_noauth
  OPTIONS (username '{CASS_ROLE}', password '{CASS_PW}');
CREATE FOREIGN TABLE fac.local (key text, release_version text)
  SERVER fac_noauth OPTIONS (keyspace 'system', "table" 'local');
GRANT SELECT, INSERT, UPDATE, DELETE ON fac.t, fac.t_wrong, fac.local TO {PG_ROLE};
GRANT USAGE ON FOREIGN SERVER fac_srv, fac_wrong, fac_noauth TO {PG_ROLE};
""")
    if not setup_step(rc == 0, "keyspace (RF 3), Cassandra role, PostgreSQL role, servers", out):
        cleanup()
        return done()

    nodes = node_servers()
    ok(len(nodes) == SIZE, "the auth cluster has %d nodes: %s" % (SIZE, " ".join(a for a, _ in nodes)))

    # nothing of the role is connected before the session starts
    before = {}
    for addr, srv in nodes:
        rows, out = fdw_clients(srv)
        before[addr] = rows
    ok(all(r == [] for r in before.values()),
       "no cql_fdw connection of %s on any node yet" % CASS_ROLE, json.dumps(before))

    s = Session()
    out, _ = s.run(f"SET ROLE {PG_ROLE}")
    out, _ = s.run("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    ok(out.strip() == "f", "the session runs as a non-superuser (cql_fdw requires authentication)", out)

    out, _ = s.run(f"INSERT INTO fac.t SELECT g, 'v' || g FROM generate_series(1, {ROWS}) g")
    ok(out.strip() == "", "%d rows written through the foreign table" % ROWS, out)
    out, _ = s.run("SELECT count(*), sum(k) FROM fac.t")
    ok(out.strip() == "%d|%d" % (ROWS, ROWS * (ROWS + 1) // 2),
       "a whole-table scan (token ranges over every node) reads them back", out)
    out, _ = s.run("SELECT string_agg(v, ',' ORDER BY k) FROM fac.t WHERE k IN (7, 21, 42, 59)")
    ok(out.strip() == "v7,v21,v42,v59", "lookups by key", out)
    n_ok = 0
    for k in range(1, ROWS + 1, 3):
        out, _ = s.run(f"SELECT v FROM fac.t WHERE k = {k}")
        n_ok += out.strip() == "v%d" % k
    ok(n_ok == len(range(1, ROWS + 1, 3)), "%d single-partition reads, each routed to its replica" % n_ok)
    out, _ = s.run("UPDATE fac.t SET v = 'w' || k WHERE k = 5")
    out, _ = s.run("SELECT v FROM fac.t WHERE k = 5")
    ok(out.strip() == "w5", "an update by key", out)

    # every node has an authenticated connection of this backend
    for addr, srv in nodes:
        rows, out = fdw_clients(srv)
        good = rows is not None and len(rows) >= 1 and \
            all(r.get("connection_stage") == "ready" for r in rows)
        ok(good, "node %s: a cql_fdw connection logged in as %s" % (addr, CASS_ROLE),
           out if rows is None else json.dumps(rows))

    # refused: a node that does not ask for the password
    out, _ = s.run("SELECT count(*) FROM fac.local")
    ok("2F003" in out and "password is required" in out,
       "a server whose node does not ask for a password is refused: 2F003", out)
    ok("did not ask for authentication" in out, "... the reason is given", out)
    ok(CASS_PW not in out, "... without the password")

    # refused: a wrong password on the auth cluster
    out, _ = s.run("SELECT count(*) FROM fac.t_wrong")
    ok("HV00N" in out and "authentication failed" in out,
       "a wrong password on the auth cluster: HV00N, authentication failed", out)
    ok(WRONG_PW not in out and CASS_PW not in out, "... without the password")

    # the session still works after the refusals
    out, _ = s.run("SELECT count(*) FROM fac.t")
    ok(out.strip() == str(ROWS), "the role's own server still works", out)
    s.close()

    rc, out = psql(f"""
SELECT cql_execute('fac_admin', 'DROP KEYSPACE IF EXISTS {KS}');
SELECT cql_execute('fac_admin', 'DROP ROLE IF EXISTS {CASS_ROLE}');
""")
    ok(rc == 0, "cleanup in Cassandra", out)
    cleanup()
    psql("DROP SERVER IF EXISTS fac_admin CASCADE;" +
         "".join("DROP SERVER IF EXISTS %s CASCADE;" % srv for _, srv in nodes))
    return done()


if __name__ == "__main__":
    sys.exit(main())
