"""
Shared pieces of the cql_fdw benchmarks (bench/*.py): CPU seconds of a
process from /proc, one psql session that runs statements and returns
their output, and where the test bed keeps its nodes.
"""
import os
import subprocess

RUN_DIR = os.environ.get("CASSANDRA_RUN_DIR") or os.path.join(
    os.environ.get("CQL_FDW_CACHE", os.path.expanduser("~/.cache/cql_fdw")), "run")
HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """user + system CPU seconds of a process"""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def node_pid(name):
    """pid of a test-bed Cassandra node (scripts/cassandra.sh)"""
    with open(os.path.join(RUN_DIR, name, "pid")) as f:
        return int(f.read().strip())


class Backend:
    """one psql session; statements are timed with the backend's CPU"""

    def __init__(self):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-At"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  bufsize=1)
        self.pid = int(self.run("SELECT pg_backend_pid()"))

    def run(self, sql):
        marker = "__end__"
        self.p.stdin.write(sql.rstrip().rstrip(";") + ";\nSELECT '%s';\n" % marker)
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("psql exited: " + "".join(out))
            if line.strip() == marker:
                break
            out.append(line)
        text = "".join(out).strip()
        if "ERROR" in text:
            raise RuntimeError(text)
        return text

    def close(self):
        self.p.stdin.write("\\q\n")
        self.p.stdin.flush()
        self.p.wait()
