#!/usr/bin/env python3
"""
cql_fdw over TLS (TAP output), against the real TLS nodes of the test bed
and a TLS-terminating proxy that presents chosen certificates.

  tls   127.0.0.6  client encryption, optional (TLS or plaintext), no client
                   certificate required
  mtls  127.0.0.7  TLS only, client certificate required
  certificates     made by scripts/cassandra.sh at start-up (tls-certs/)

Happy paths: a foreign table scanned and written over verify-full TLS, and
over mutual TLS.  Every error case is an ERROR with a SQLSTATE and a hint,
and no message shows a key's path or contents: plaintext client to a
TLS-only node, TLS client to a plaintext node, a certificate from another
CA, a certificate for another host name (verify-full fails, verify-ca
passes), an expired certificate, a missing or unreadable key, a key that
does not match its certificate, a client certificate required but not
given, an invalid sslmode, a non-superuser naming a file; and a stalled
handshake stops at connect_timeout, at statement_timeout and on
pg_cancel_backend.  Needs PGHOST/PGPORT/PGUSER/PGDATABASE of a server with
cql_fdw installed; skipped when the TLS nodes are not running.
tap-needs: tls
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import Session, done, note, ok, plan, psql, skip  # noqa: E402

RUN_DIR = os.environ.get("CASSANDRA_RUN_DIR") or os.path.join(
    os.environ.get("CQL_FDW_CACHE", os.path.expanduser("~/.cache/cql_fdw")), "run")
CERTS = os.path.join(RUN_DIR, "tls-certs")
TLS_HOST = os.environ.get("CQL_TLS_HOST", "127.0.0.6")
MTLS_HOST = os.environ.get("CQL_MTLS_HOST", "127.0.0.7")
PLAIN_HOST = os.environ.get("CQL_HOST", "127.0.0.1")


def sh(*args, cwd=None):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_extra_certs(d):
    """another CA; a server certificate for another name; an expired one"""
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key",
       "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=another CA", cwd=d)
    # signed by the test bed's CA, naming wrong.example only
    sh("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
       "-out", "wronghost.key", cwd=d)
    sh("openssl", "req", "-new", "-key", "wronghost.key", "-out", "wronghost.csr",
       "-subj", "/CN=wrong.example", cwd=d)
    with open(os.path.join(d, "wronghost.ext"), "w") as f:
        f.write("subjectAltName=DNS:wrong.example\n")
    sh("openssl", "x509", "-req", "-in", "wronghost.csr", "-CA", os.path.join(CERTS, "ca.pem"),
       "-CAkey", os.path.join(CERTS, "ca.key"), "-CAcreateserial", "-CAserial", "serial",
       "-out", "wronghost.pem", "-days", "2", "-extfile", "wronghost.ext", cwd=d)
    # expired: 'openssl ca' takes explicit dates
    os.makedirs(os.path.join(d, "ca"), exist_ok=True)
    open(os.path.join(d, "ca", "index.txt"), "w").close()
    with open(os.path.join(d, "ca", "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write(f"""[ca]
default_ca = test
[test]
dir = {d}/ca
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
default_md = sha256
policy = any
copy_extensions = copy
[any]
commonName = supplied
""")
    sh("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
       "-out", "expired.key", cwd=d)
    sh("openssl", "req", "-new", "-key", "expired.key", "-out", "expired.csr",
       "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", cwd=d)
    sh("openssl", "ca", "-batch", "-config", "ca.cnf", "-cert", os.path.join(CERTS, "ca.pem"),
       "-keyfile", os.path.join(CERTS, "ca.key"), "-in", "expired.csr", "-out", "expired.pem",
       "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-notext", cwd=d)


class TlsProxy:
    """
    Accepts TLS with the given certificate and forwards the decrypted bytes
    to a plaintext node; with stall=True it accepts TCP and never answers.
    """

    def __init__(self, cert, key, upstream, stall=False):
        self.upstream = upstream
        self.stall = stall
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.stall:
                self.held.append(c)
                continue
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        try:
            t = self.ctx.wrap_socket(c, server_side=True)
        except (ssl.SSLError, OSError):
            c.close()
            return
        try:
            u = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            t.close()
            return

        def pump(a, b):
            try:
                while True:
                    data = a.recv(65536)
                    if not data:
                        break
                    b.sendall(data)
            except OSError:
                pass
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass
        threading.Thread(target=pump, args=(u, t), daemon=True).start()
        pump(t, u)


def server_os_uid():
    rc, out = psql("SHOW data_directory")
    path = out.strip().splitlines()[-1].strip()
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def psqlv(sql, timeout=120):
    """statements one by one (each its own transaction), errors with SQLSTATE"""
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                        "-v", "VERBOSITY=verbose", "-f", "-"],
                       input=sql, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def last_line(out):
    """the last line psql printed (a count: exactly, so that 11000 is not 1000)"""
    lines = out.strip().splitlines()
    return lines[-1].strip() if lines else ""


def fail_case(name, sql, want_state, want_text, forbidden=()):
    """one error case: SQLSTATE, message text, a hint, and no secrets"""
    rc, out = psqlv(sql)
    good = rc != 0 and want_state in out and want_text in out and "HINT" in out
    for f in forbidden:
        good = good and f not in out
    ok(good, name, out)


def main():
    if not os.path.exists(os.path.join(CERTS, "ca.pem")):
        print("1..0 # SKIP the TLS nodes are not running (scripts/cassandra.sh start tls-nodes)")
        return 0
    work = tempfile.mkdtemp(prefix="cql_fdw_tls.")
    try:
        return run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work):
    plan(22)                    # every check below runs (one of them may be a skip)
    # the PostgreSQL server reads the files: its OS user must be able to
    for f in ("ca.pem", "client.pem", "client.key"):
        shutil.copy(os.path.join(CERTS, f), work)
    make_extra_certs(work)
    uid = server_os_uid()
    for root, dirs, files in os.walk(work):
        for n in dirs + files:
            p = os.path.join(root, n)
            if uid is not None and os.geteuid() == 0:
                os.chown(p, uid, -1)
    if uid is not None and os.geteuid() == 0:
        os.chown(work, uid, -1)
    os.chmod(work, 0o711)
    ca, ccert, ckey = (os.path.join(work, f) for f in ("ca.pem", "client.pem", "client.key"))
    other_ca = os.path.join(work, "other-ca.pem")

    rc, out = psql(f"""
CREATE EXTENSION IF NOT EXISTS cql_fdw;
DROP SERVER IF EXISTS tls_full, tls_mutual, tls_plain CASCADE;
DROP SCHEMA IF EXISTS tls CASCADE;
CREATE SERVER tls_full FOREIGN DATA WRAPPER cql_fdw OPTIONS (
  host '{TLS_HOST}', sslmode 'verify-full', sslrootcert '{ca}');
CREATE USER MAPPING FOR CURRENT_USER SERVER tls_full;
SELECT cql_execute('tls_full', 'DROP KEYSPACE IF EXISTS fdw_tls');
SELECT cql_execute('tls_full', $$CREATE KEYSPACE fdw_tls WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('tls_full', 'CREATE TABLE fdw_tls.t (k int, c int, v text, PRIMARY KEY ((k), c))');
CREATE SCHEMA tls;
IMPORT FOREIGN SCHEMA fdw_tls FROM SERVER tls_full INTO tls;
INSERT INTO tls.t SELECT g % 50, g, md5(g::text) FROM generate_series(1, 20000) g;
""", timeout=300)
    ok(rc == 0, "verify-full TLS to the tls node: keyspace, IMPORT FOREIGN SCHEMA, 20000-row INSERT", out)
    rc, out = psql("""SELECT count(*) || ' ' || (sum(hashtext(v)::numeric) =
  (SELECT sum(hashtext(md5(g::text))::numeric) FROM generate_series(1, 20000) g)) FROM tls.t""")
    ok(rc == 0 and last_line(out) == "20000 true",
       "a token-range scan over TLS returns every row (count and checksum)", out)
    rc, out = psql("SELECT count(*) FROM tls.t WHERE k = 7")
    ok(rc == 0 and last_line(out) == "400", "a single-partition read over TLS", out)

    rc, out = psql(f"""
CREATE SERVER tls_mutual FOREIGN DATA WRAPPER cql_fdw OPTIONS (
  host '{MTLS_HOST}', sslmode 'verify-full', sslrootcert '{ca}');
CREATE USER MAPPING FOR CURRENT_USER SERVER tls_mutual OPTIONS (sslcert '{ccert}', sslkey '{ckey}');
SELECT cql_execute('tls_mutual', 'DROP KEYSPACE IF EXISTS fdw_mtls');
SELECT cql_execute('tls_mutual', $$CREATE KEYSPACE fdw_mtls WITH replication =
  {{'class': 'SimpleStrategy', 'replication_factor': 1}}$$);
SELECT cql_execute('tls_mutual', 'CREATE TABLE fdw_mtls.t (k int PRIMARY KEY, v text)');
CREATE FOREIGN TABLE tls.m (k int, v text) SERVER tls_mutual OPTIONS (keyspace 'fdw_mtls', "table" 't');
INSERT INTO tls.m SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
SELECT count(*) FROM tls.m;
""")
    ok(rc == 0 and last_line(out) == "1000",
       "mutual TLS (client certificate in the user mapping): INSERT and scan", out)

    # ---- error cases ----
    fail_case("plaintext client to a TLS-only node: HV00N, hint names sslmode",
              f"""CREATE SERVER tls_plain FOREIGN DATA WRAPPER cql_fdw OPTIONS (host '{MTLS_HOST}');
CREATE USER MAPPING FOR CURRENT_USER SERVER tls_plain;
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "sslmode")
    fail_case("TLS client to a plaintext node: HV00N, 'does not speak TLS'",
              f"""ALTER SERVER tls_plain OPTIONS (SET host '{PLAIN_HOST}', ADD sslmode 'require');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "does not speak TLS")
    fail_case("a certificate from another CA: certificate verify failed",
              f"""ALTER SERVER tls_plain OPTIONS (SET host '{TLS_HOST}', SET sslmode 'verify-ca', ADD sslrootcert '{other_ca}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N",
              "unable to get local issuer certificate")
    fail_case("mutual TLS required, no client certificate: 'certificate required'",
              f"""ALTER SERVER tls_plain OPTIONS (SET host '{MTLS_HOST}', SET sslrootcert '{ca}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "certificate required")

    wrong = TlsProxy(os.path.join(work, "wronghost.pem"), os.path.join(work, "wronghost.key"),
                     (PLAIN_HOST, 9042))
    fail_case("verify-full against a certificate for another host name: hostname mismatch",
              f"""ALTER SERVER tls_plain OPTIONS (SET host '127.0.0.1', ADD port '{wrong.port}', SET sslmode 'verify-full');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "mismatch")
    rc, out = psqlv(f"""ALTER SERVER tls_plain OPTIONS (SET sslmode 'verify-ca');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""")
    ok(rc == 0, "... the same certificate passes verify-ca (the chain is good)", out)
    expired = TlsProxy(os.path.join(work, "expired.pem"), os.path.join(work, "expired.key"),
                       (PLAIN_HOST, 9042))
    fail_case("an expired certificate: 'certificate has expired'",
              f"""ALTER SERVER tls_plain OPTIONS (SET port '{expired.port}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "expired")

    missing = os.path.join(work, "no-such.key")
    fail_case("a missing key file: the option is named, not the path",
              f"""ALTER SERVER tls_plain OPTIONS (SET host '{MTLS_HOST}', DROP port, SET sslmode 'verify-full');
ALTER USER MAPPING FOR CURRENT_USER SERVER tls_plain OPTIONS (ADD sslcert '{ccert}', ADD sslkey '{missing}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N",
              "client key (sslkey): No such file", forbidden=(missing,))
    os.chmod(os.path.join(work, "wronghost.key"), 0)
    unreadable = os.path.join(work, "wronghost.key")
    if os.geteuid() == 0 and uid not in (None, 0):
        fail_case("an unreadable key file: 'Permission denied', no path",
                  f"""ALTER USER MAPPING FOR CURRENT_USER SERVER tls_plain OPTIONS (SET sslkey '{unreadable}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N",
                  "Permission denied", forbidden=(unreadable,))
    else:
        skip("an unreadable key file: 'Permission denied', no path",
             "an unreadable key needs a PostgreSQL server running as another OS user")
    os.chmod(os.path.join(work, "wronghost.key"), 0o600)
    fail_case("a key that does not belong to the certificate",
              f"""ALTER USER MAPPING FOR CURRENT_USER SERVER tls_plain OPTIONS (SET sslkey '{os.path.join(work, "expired.key")}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""", "HV00N", "does not match")
    with open(ckey) as f:
        key_text = f.read()
    rc, out = psqlv(f"""ALTER USER MAPPING FOR CURRENT_USER SERVER tls_plain OPTIONS (SET sslkey '{ckey}');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""")
    ok(rc == 0, "... and with the right key it connects", out)
    ok("PRIVATE KEY" not in out and key_text[40:80] not in out, "no key material in any output")

    rc, out = psqlv("ALTER SERVER tls_plain OPTIONS (SET sslmode 'prefer')")
    ok(rc != 0 and "invalid value for option \"sslmode\"" in out and "HINT" in out,
       "an invalid sslmode is refused where it is set", out)
    rc, out = psqlv(f"""DROP ROLE IF EXISTS tls_nobody; CREATE ROLE tls_nobody;
GRANT USAGE ON FOREIGN SERVER tls_plain TO tls_nobody;
SET ROLE tls_nobody;
CREATE USER MAPPING FOR tls_nobody SERVER tls_plain OPTIONS (sslkey '{ckey}', password 'x')""")
    ok(rc != 0 and "42501" in out and "only a superuser can set option \"sslkey\"" in out,
       "a non-superuser cannot name a file for the server process to read (42501)", out)
    psql("DROP OWNED BY tls_nobody; DROP ROLE IF EXISTS tls_nobody")

    # ---- a stalled handshake ----
    stall = TlsProxy(os.path.join(work, "wronghost.pem"), os.path.join(work, "wronghost.key"),
                     (PLAIN_HOST, 9042), stall=True)
    t0 = time.monotonic()
    rc, out = psqlv(f"""ALTER SERVER tls_plain OPTIONS (SET host '127.0.0.1', ADD port '{stall.port}',
  SET sslmode 'require', ADD connect_timeout '1500');
SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')""")
    secs = time.monotonic() - t0
    ok(rc != 0 and "TLS handshake" in out and secs < 10,
       "a stalled handshake ends at connect_timeout (%.1f s)" % secs, out)
    psqlv("ALTER SERVER tls_plain OPTIONS (SET connect_timeout '60000')")
    s = Session()
    s.run("SET statement_timeout = '1s'")
    out, secs = s.run("SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')", timeout=30)
    ok("57014" in out and secs < 5, "statement_timeout stops a stalled handshake (%.1f s)" % secs, out)
    s.run("RESET statement_timeout")
    pid = s.pid()
    s.send("SELECT cql_execute('tls_plain', 'SELECT now() FROM system.local')")
    time.sleep(1)
    psql("SELECT pg_cancel_backend(%d)" % pid)
    out, secs, fin = s.wait(30)
    ok(fin and "57014" in out and secs < 5, "pg_cancel_backend stops it too (%.1f s)" % secs, out)
    out, _ = s.run("SELECT count(*) FROM tls.m")
    ok(last_line(out) == "1000", "the session is usable afterwards", out)
    s.close()

    psql("SELECT cql_execute('tls_full', 'DROP KEYSPACE IF EXISTS fdw_tls'); "
         "SELECT cql_execute('tls_mutual', 'DROP KEYSPACE IF EXISTS fdw_mtls'); "
         "DROP SERVER tls_full, tls_mutual, tls_plain CASCADE; DROP SCHEMA tls CASCADE")
    return done()


if __name__ == "__main__":
    sys.exit(main())
