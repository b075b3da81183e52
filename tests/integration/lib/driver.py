"""
The DataStax Python driver the cross-checks read Cassandra with.

Debian 12's python3-cassandra (3.25) predates vector support; the cqlsh
venv of the test bed has 3.30+.  use_venv_driver() re-executes the running
script with the venv's Python when the driver at hand is too old (once: the
CROSSCHECK_REEXEC variable stops a loop).
"""
import os
import sys

VENV_PY = os.path.expanduser("~/.cache/cql_fdw/venv/bin/python")


def _driver_ok():
    """True when the importable driver has VectorType (3.29 and later)."""
    try:
        import cassandra
        from cassandra.cqltypes import VectorType  # noqa: F401
        return tuple(int(x) for x in cassandra.__version__.split(".")[:2]) >= (3, 29)
    except Exception:
        return False


def use_venv_driver():
    """Re-execute this script with the venv's Python if the driver is too old."""
    if not _driver_ok() and os.path.exists(VENV_PY) and \
            os.path.realpath(sys.executable) != os.path.realpath(VENV_PY) and \
            not os.environ.get("CROSSCHECK_REEXEC"):
        os.environ["CROSSCHECK_REEXEC"] = "1"
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
