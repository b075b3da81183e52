#!/usr/bin/env python3
"""
Fault injection for cql_fdw (TAP output).

A TCP proxy sits between PostgreSQL and a real Cassandra node and can
stall, reset or corrupt what the server sends.  psql runs one session
through it, statement by statement, while the test switches the proxy's
mode in between.  Checked: statement_timeout and pg_cancel_backend stop a
scan that waits on a silent server within about a second; a reset or
garbage bytes give an ERROR with a connection SQLSTATE, never a crash or a
hang; the next statement reconnects and works.  A write statement that
fails with writes still in flight returns its error only after Cassandra
answered them (so none lands after the next statement), in an exception
block as at top level; a server that never answers them costs at most the
settle timeout (10 s) and a WARNING, not a hang.  Deferred writes
(write_mode 'on_commit', batched per partition at COMMIT) wait for held
answers and are all written; a reset during the COMMIT fails it cleanly.

Upstream is a node of the PasswordAuthenticator cluster (CQL_AUTH_HOST).
The proxied server lists only the proxy and does not set discover_peers,
so every request of the session goes through the proxy (with the peers of
system.peers the FDW would route around it).
Needs PGHOST/PGPORT/PGUSER/PGDATABASE of a server with cql_fdw installed.
"""
import os
import select
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import Session, done, ok, plan, psql, setup_step  # noqa: E402

UP_HOST = os.environ.get("CQL_AUTH_HOST", "127.0.0.4")
UP_PORT = int(os.environ.get("CQL_AUTH_PORT", "9042"))
USER = os.environ.get("CQL_USER", "cassandra")
PASSWORD = os.environ.get("CQL_PASSWORD", "cassandra")


def last_line(out):
    """the last line psql printed (the count of a SELECT count(*))"""
    lines = out.strip().splitlines()
    return lines[-1].strip() if lines else ""


SERVER_START = ("SELECT pg_postmaster_start_time() || ' / checkpointer since ' || "
                "(SELECT backend_start FROM pg_stat_activity WHERE backend_type = 'checkpointer')")


def postmaster_start():
    """
    When PostgreSQL last (re)started.  pg_postmaster_start_time() alone does
    not change when the postmaster reinitializes after a backend crash (seen
    on 18); the checkpointer is restarted then, so its backend_start does.
    """
    rc, out = psql(SERVER_START, timeout=30)
    return out.strip() if rc == 0 else None


class Proxy:
    """Forwards bytes; the server-to-client direction obeys self.mode."""

    def __init__(self):
        self.mode = "pass"          # pass | stall | reset | garbage
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.bytes_down = 0
        self.conns = []
        self.stop = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection((UP_HOST, UP_PORT), timeout=5)
            except OSError:
                c.close()
                continue
            self.conns.append((c, u))
            threading.Thread(target=self.pump, args=(c, u), daemon=True).start()

    def pump(self, c, u):
        held = []
        try:
            while not self.stop:
                if held and self.mode == "pass":
                    for h in held:      # released: what was held goes first
                        c.sendall(h)
                    held = []
                r, _, _ = select.select([c, u], [], [], 0.05)
                if c in r:
                    data = c.recv(65536)
                    if not data:
                        break
                    u.sendall(data)
                if u in r:
                    data = u.recv(65536)
                    if not data:
                        break
                    mode = self.mode
                    if mode == "stall":
                        held.append(data)       # keep reading, deliver nothing
                    elif mode == "reset":
                        break
                    elif mode == "garbage":
                        c.sendall(b"\xff" * len(data))
                    else:
                        for h in held:
                            c.sendall(h)
                        held = []
                        c.sendall(data)
                        self.bytes_down += len(data)
        except OSError:
            pass
        for s in (c, u):
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.close()
            except OSError:
                pass


def main():
    plan(29)
    started = postmaster_start()
    proxy = Proxy()
    setup = f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
DROP SERVER IF EXISTS faults_direct CASCADE;
DROP SERVER IF EXISTS faults_proxy CASCADE;
DROP SCHEMA IF EXISTS faults CASCADE;
CREATE SERVER faults_direct FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{UP_HOST}', port '{UP_PORT}');
CREATE USER MAPPING FOR CURRENT_USER SERVER faults_direct OPTIONS (username '{USER}', password '{PASSWORD}');
SELECT cql_execute('faults_direct', 'DROP KEYSPACE IF EXISTS fdw_faults');
SELECT cql_execute('faults_direct', $$CREATE KEYSPACE fdw_faults WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('faults_direct', 'CREATE TABLE fdw_faults.t (k int, c int, v text, PRIMARY KEY ((k), c))');
CREATE SCHEMA faults;
IMPORT FOREIGN SCHEMA fdw_faults FROM SERVER faults_direct INTO faults;
INSERT INTO faults.t (k, c, v) SELECT 1, g, repeat('x', 200) FROM generate_series(1, 3000) g;
CREATE SERVER faults_proxy FOREIGN DATA WRAPPER cql_fdw
  OPTIONS (host '127.0.0.1', port '{proxy.port}', request_timeout '60000', fetch_size '100');
CREATE USER MAPPING FOR CURRENT_USER SERVER faults_proxy OPTIONS (username '{USER}', password '{PASSWORD}');
CREATE FOREIGN TABLE faults.pt (k int, c int, v text)
  SERVER faults_proxy OPTIONS (keyspace 'fdw_faults', "table" 't');
CREATE FOREIGN TABLE faults.pw (k int, c int, v text)
  SERVER faults_proxy OPTIONS (keyspace 'fdw_faults', "table" 't', batch_size '50');
"""
    rc, out = psql(setup)
    if not setup_step(rc == 0, "keyspace, table and servers through the real node", out):
        done()                  # fewer than planned: a failure
        return 1

    s = Session()
    pid = s.pid()
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "a scan through the proxy works", out)
    ok(proxy.bytes_down > 0, "the session's traffic goes through the proxy")

    # a silent server: statement_timeout stops the waiting scan
    s.run("SET statement_timeout = '1s'")
    proxy.mode = "stall"
    out, secs = s.run("SELECT count(*) FROM faults.pt WHERE k = 1", timeout=30)
    ok("57014" in out, "statement_timeout cancels a scan waiting on a stalled server (57014)", out)
    ok(secs < 5.0, "... within seconds, not at the 60 s request timeout (%.2f s)" % secs)
    proxy.mode = "pass"
    s.run("RESET statement_timeout")
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the same session works afterwards", out)

    # pg_cancel_backend from another session
    proxy.mode = "stall"
    canceller = threading.Timer(1.0, lambda: psql(f"SELECT pg_cancel_backend({pid})"))
    canceller.start()
    out, secs = s.run("SELECT count(*) FROM faults.pt WHERE k = 1", timeout=30)
    canceller.join()
    ok("57014" in out, "pg_cancel_backend cancels a waiting scan (57014)", out)
    ok(secs < 5.0, "... promptly, not at the request timeout (%.2f s)" % secs)
    proxy.mode = "pass"
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "works again after the cancel", out)

    # the server resets the connection mid-scan
    proxy.mode = "reset"
    out, secs = s.run("SELECT count(*) FROM faults.pt WHERE k = 1", timeout=60)
    ok("ERROR" in out and ("08006" in out or "HV00N" in out),
       "a reset connection is an ERROR with a connection SQLSTATE", out)
    ok(secs < 30, "... without waiting for the request timeout (%.2f s)" % secs)
    proxy.mode = "pass"
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the next statement reconnects", out)

    # the server sends garbage
    proxy.mode = "garbage"
    out, secs = s.run("SELECT count(*) FROM faults.pt WHERE k = 1", timeout=60)
    ok("ERROR" in out and ("08006" in out or "HV00N" in out),
       "garbage from the server is an ERROR with a connection SQLSTATE", out)
    ok(secs < 30, "... without hanging (%.2f s)" % secs)
    proxy.mode = "pass"
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the next statement reconnects after garbage", out)

    # a write statement fails (division by zero at row 500) while the
    # batches of the rows before it are in flight and Cassandra's answers
    # are held: in an exception block (a subtransaction abort) the error
    # comes back only once the answers are released (2 s later), so no
    # write of the failed statement can land after the next one
    failing_insert = ("INSERT INTO faults.pw SELECT 2, g, "
                      "CASE WHEN g = 500 THEN (1 / (g - 500))::text ELSE 'w' END "
                      "FROM generate_series(1, 1000) g")
    out, _ = s.run("INSERT INTO faults.pw VALUES (3, 1, 'prepared first')")
    ok("ERROR" not in out, "a write through the proxy works (its statement is prepared)", out)
    proxy.mode = "stall"
    releaser = threading.Timer(2.0, lambda: setattr(proxy, "mode", "pass"))
    releaser.start()
    out, secs = s.run("DO $$BEGIN %s; EXCEPTION WHEN division_by_zero THEN "
                      "RAISE NOTICE 'caught'; END$$" % failing_insert, timeout=60)
    releaser.join()
    ok("caught" in out and "WARNING" not in out,
       "a failed write statement in an exception block is caught, no warning", out)
    ok(secs >= 1.9, "... after the answers of its writes in flight arrived "
       "(%.2f s, released at 2 s)" % secs)
    rc, out = psql("SELECT count(*) FROM faults.t WHERE k = 2")
    ok(rc == 0 and 0 < int(last_line(out) or 0) < 500,
       "the rows sent before the error were written, none after", out)
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the session works after the settled abort", out)

    # the same at top level
    proxy.mode = "stall"
    releaser = threading.Timer(2.0, lambda: setattr(proxy, "mode", "pass"))
    releaser.start()
    out, secs = s.run(failing_insert, timeout=60)
    releaser.join()
    ok("22012" in out and "WARNING" not in out and secs >= 1.9,
       "at top level the error also waits for the answers in flight (%.2f s)" % secs, out)

    # answers that never come: the abort gives up after the settle timeout
    # with a WARNING, closes the connection, and the next statement reconnects
    proxy.mode = "stall"
    out, secs = s.run(failing_insert, timeout=60)
    ok("22012" in out and "still unanswered" in out,
       "answers that never come: the error, and a WARNING naming the unanswered requests", out)
    ok(secs < 30, "... after the 10 s settle timeout, not a hang (%.2f s)" % secs)
    proxy.mode = "pass"
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the next statement reconnects after the abandoned answers", out)

    # deferred writes (write_mode 'on_commit') go at COMMIT as one batch per
    # partition: with Cassandra's answers held for 2 s the COMMIT returns
    # after them and every row is there; a connection reset while the
    # COMMIT's batches are in flight fails the COMMIT with a connection
    # SQLSTATE (no hang, no crash), and the next statement reconnects
    defer = ("DO $$BEGIN FOR i IN 1..600 LOOP UPDATE faults.pw SET v = '%s' "
             "WHERE k = 4 + i %% 3 AND c = i; END LOOP; END$$")
    s.run("BEGIN")
    s.run("SET LOCAL cql_fdw.write_mode = 'on_commit'")
    out, _ = s.run(defer % "deferred")
    proxy.mode = "stall"
    releaser = threading.Timer(2.0, lambda: setattr(proxy, "mode", "pass"))
    releaser.start()
    out, secs = s.run("COMMIT", timeout=60)
    releaser.join()
    ok("ERROR" not in out and secs >= 1.9,
       "deferred writes: COMMIT returns once Cassandra answered them (%.2f s, released at 2 s)" % secs, out)
    rc, out = psql("SELECT count(*) FROM faults.t WHERE k IN (4, 5, 6) AND v = 'deferred'")
    ok(rc == 0 and last_line(out) == "600", "... and all 600 rows (3 partitions, batched) are written", out)
    s.run("BEGIN")
    s.run("SET LOCAL cql_fdw.write_mode = 'on_commit'")
    s.run(defer % "reset")
    proxy.mode = "reset"
    out, secs = s.run("COMMIT", timeout=60)
    ok("ERROR" in out and ("08006" in out or "HV00N" in out) and "at COMMIT" in out,
       "a reset during COMMIT's batches fails the COMMIT with a connection SQLSTATE", out)
    ok(secs < 30, "... without waiting for the request timeout (%.2f s)" % secs)
    proxy.mode = "pass"
    out, _ = s.run("SELECT count(*) FROM faults.pt WHERE k = 1")
    ok(last_line(out) == "3000", "the next statement reconnects after the failed COMMIT", out)

    # the backend survived all of it: the session still has its backend, and
    # PostgreSQL did not restart (after a crash a new session connects to
    # the restarted server, so "SELECT 1" alone proves nothing)
    out, _ = s.run("SELECT pg_backend_pid()")
    now = postmaster_start()
    ok(started is not None and now == started and last_line(out) == str(pid),
       "no backend crashed: the session keeps backend %d, PostgreSQL did not restart" % pid,
       "postmaster started %s, now %s; session answered: %s" % (started, now, out))
    s.close()
    proxy.stop = True
    psql("DROP SCHEMA faults CASCADE; DROP SERVER faults_proxy CASCADE; DROP SERVER faults_direct CASCADE;")
    return done()


if __name__ == "__main__":
    sys.exit(main())
