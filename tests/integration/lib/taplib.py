"""
Small shared helpers of the Python integration tests (TAP output).

  plan(n)               prints the plan "1..n" first, when the count of
                        assertions is known up front (done() then checks it)
  ok(cond, name, diag)  one TAP test line; diag lines follow a failure
  setup_step(cond, name, diag)
                        a setup step (a keyspace made, a node stopped),
                        not a test: "# setup ok - name" or "# setup not
                        ok - name", which scripts/lib_tap.sh counts apart
                        from the tests and the plan; a failed one makes
                        done() return 1.  Returns cond.
  skip(name, reason)    an assertion not checked in this run:
                        "ok N - name # SKIP reason" (counted as skipped)
  skip_all(reason)      the whole file is skipped: "1..0 # SKIP reason"
  note(text)            a TAP comment ("# ...")
  done()                prints the plan ("1..N") unless plan() did;
                        returns the exit status (1 on a failure, when
                        the planned count did not run, or when no test
                        ran at all: then no plan is printed, "1..0"
                        would say the file passed)
  psql(sql)             one-shot psql -c, ON_ERROR_STOP; (returncode, output)
  Session               one long-lived psql process fed statement by
                        statement, so a test controls what happens between
                        two statements of the same backend

Needs PGHOST/PGPORT/PGUSER/PGDATABASE of a server with cql_fdw installed.
"""
import os
import select
import subprocess
import sys
import time

n_tests = 0
n_failed = 0
n_planned = None
n_setup_failed = 0


def plan(n):
    global n_planned
    n_planned = n
    print("1..%d" % n)
    sys.stdout.flush()


def ok(cond, name, diag=None):
    global n_tests, n_failed
    n_tests += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n_tests, name))
    if not cond:
        n_failed += 1
        if diag:
            for line in str(diag).splitlines():
                print("#   " + line)
    sys.stdout.flush()
    return cond


def setup_step(cond, name, diag=None):
    global n_setup_failed
    print("# setup %s - %s" % ("ok" if cond else "not ok", name))
    if not cond:
        n_setup_failed += 1
        if diag:
            for line in str(diag).splitlines():
                print("#   " + line)
    sys.stdout.flush()
    return cond


def skip(name, reason):
    global n_tests
    n_tests += 1
    print("ok %d - %s # SKIP %s" % (n_tests, name, reason))
    sys.stdout.flush()


def skip_all(reason):
    """The whole file is skipped; the caller exits 0 after this."""
    print("1..0 # SKIP %s" % reason)
    sys.stdout.flush()
    return 0


def note(text):
    for line in str(text).splitlines():
        print("# " + line)
    sys.stdout.flush()


def done():
    if n_planned is None and n_tests == 0:
        # no plan and no test: "1..0" would read as a file that passed
        print("# no test ran (and no plan or skip_all() said why)")
        sys.stdout.flush()
        return 1
    if n_planned is None:
        print("1..%d" % n_tests)
    elif n_tests != n_planned:
        print("# planned %d tests but ran %d" % (n_planned, n_tests))
        sys.stdout.flush()
        return 1
    sys.stdout.flush()
    return 1 if n_failed or n_setup_failed else 0


def psql(sql, timeout=120):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


class Session:
    """
    One psql session; run() sends a statement and returns (output, seconds).
    Errors come with their SQLSTATE (VERBOSITY verbose).  A statement that
    does not answer within the timeout returns with "<<psql did not
    answer>>" appended; send() + wait() let the caller keep waiting for it.
    """

    def __init__(self):
        self.p = subprocess.Popen(
            ["stdbuf", "-oL", "-eL", "psql", "-X", "-q", "-At", "-v", "VERBOSITY=verbose"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1)
        self.n = 0
        self.pending = ""
        self.out = []
        self.t0 = time.monotonic()
        self.marker = None

    def send(self, sql):
        self.n += 1
        self.marker = "__done_%d__" % self.n
        self.out = []
        self.t0 = time.monotonic()
        # a query, not \echo, marks the end: its output comes after the
        # statement's, errors included (stderr is merged)
        try:
            self.p.stdin.write(sql.rstrip().rstrip(";") + ";\nSELECT '" + self.marker + "';\n")
            self.p.stdin.flush()
        except OSError:
            pass                # psql is gone: wait() says so

    def wait(self, timeout=60):
        """(output so far, seconds since send, finished?)"""
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while True:
            # lines already read count first: select() cannot see them
            while "\n" in self.pending:
                line, self.pending = self.pending.split("\n", 1)
                if line.strip() == self.marker:
                    return "\n".join(self.out), time.monotonic() - self.t0, True
                self.out.append(line)
            r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                return "\n".join(self.out), time.monotonic() - self.t0, False
            chunk = os.read(fd, 65536)
            if not chunk:
                return ("\n".join(self.out) + "\n<<psql exited>>",
                        time.monotonic() - self.t0, True)
            self.pending += chunk.decode("utf-8", "replace")

    def run(self, sql, timeout=60):
        self.send(sql)
        out, secs, finished = self.wait(timeout)
        if not finished:
            out += "\n<<psql did not answer>>"
        return out, secs

    def pid(self):
        out, _ = self.run("SELECT pg_backend_pid()")
        return int(out.strip().splitlines()[-1])

    def close(self):
        try:
            self.p.stdin.write("\\q\n")
            self.p.stdin.flush()
            self.p.wait(timeout=10)
        except Exception:
            self.kill()

    def kill(self):
        try:
            self.p.kill()
            self.p.wait(timeout=10)
        except Exception:
            pass
