#!/usr/bin/env python3
"""
tests/bridge/read_back.py - the bridge's load read back by an independent
reader: the DataStax Python driver, not cql_fdw.

    read_back.py DB KEYSPACE.TABLE SOURCE_VIEW "col, col, ..."

For one target of a plan (the "table", "source_view" and "columns" lines of
its 003_load.sql), the rows of the Cassandra table as the driver reads them
equal the rows of the source view as PostgreSQL computes them (row_to_json,
TimeZone UTC), after both are put in one canonical form per value: uuid and
text as text, integers as integers, timestamps as milliseconds since the
epoch, durations as [months, days, nanoseconds], sets as sorted lists, lists as lists, decimals as Decimal.  A symmetric
encode/decode fault of cql_fdw survives a comparison through cql_fdw; it
does not survive this one.

Exit status 0 when equal, 1 when not (the first differing rows printed as
TAP comments), 2 on an error; the calling suite prints the TAP line
(tests/bridge/lib.sh read_back_all).  Environment: CQL_HOST, CQL_PORT and
the PG* variables of the database's server.
"""
import calendar
import datetime
import decimal
import json
import os
import re
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration", "lib"))
from driver import use_venv_driver  # noqa: E402

use_venv_driver()

from cassandra.cluster import Cluster  # noqa: E402
from cassandra.util import Duration, SortedSet  # noqa: E402

# PostgreSQL's interval output under IntervalStyle iso_8601 (every field
# with its own sign)
ISO_INTERVAL = re.compile(r"^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
                          r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?$")


def interval_parts(text):
    """(months, days, nanoseconds) of an iso_8601 interval text."""
    m = ISO_INTERVAL.match(text)
    if not m:
        raise ValueError("not an iso_8601 interval: %r" % text)
    y, mo, d, h, mi, s = (g or "0" for g in m.groups())
    seconds = decimal.Decimal(s) + 60 * int(mi) + 3600 * int(h)
    return [12 * int(y) + int(mo), int(d), int(seconds * 1000000000)]


def epoch_ms(dt):
    """Milliseconds since 1970 of a datetime (naive = UTC)."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return calendar.timegm(dt.timetuple()) * 1000 + dt.microsecond // 1000


def from_driver(v):
    """A value read by the driver, in canonical form."""
    if v is None:
        return None
    if isinstance(v, (set, frozenset, SortedSet)):
        return sorted(from_driver(x) for x in v)
    if isinstance(v, (list, tuple)):
        return [from_driver(x) for x in v]
    if isinstance(v, dict):
        return sorted((from_driver(k), from_driver(x)) for k, x in v.items())
    if isinstance(v, datetime.datetime):
        return epoch_ms(v)
    if isinstance(v, Duration):
        return [v.months, v.days, v.nanoseconds]
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return v.normalize()
    if isinstance(v, float):
        return repr(v)
    return v


def from_json(v, like):
    """A row_to_json value in canonical form; 'like' is the driver's value
    of the same column (None when that is NULL), which says what a JSON
    string or array stands for."""
    if v is None:
        return None
    if isinstance(like, (set, frozenset, SortedSet)):
        return sorted(from_json(x, next(iter(like), None)) for x in v)
    if isinstance(like, (list, tuple)):
        return [from_json(x, like[0] if like else None) for x in v]
    if isinstance(like, datetime.datetime):
        return epoch_ms(datetime.datetime.fromisoformat(v))
    if isinstance(like, Duration):
        return interval_parts(v)
    if isinstance(like, decimal.Decimal):
        return decimal.Decimal(str(v)).normalize()
    if isinstance(like, float):
        return repr(float(v))
    return v


def main():
    db, table, view, columns = sys.argv[1:5]
    cols = [c.strip().strip('"') for c in columns.split(",")]
    qcols = ", ".join('"%s"' % c for c in cols)
    cluster = Cluster([os.environ.get("CQL_HOST", "127.0.0.1")],
                      port=int(os.environ.get("CQL_PORT", "9042")),
                      protocol_version=5)
    try:
        rows = list(cluster.connect().execute("SELECT %s FROM %s" % (qcols, table)))
    finally:
        cluster.shutdown()
    # per column, a non-NULL value read by the driver says its kind
    like = {}
    for r in rows:
        for c, v in zip(cols, r):
            if v is not None and (c not in like or
                                  (isinstance(v, (set, frozenset, SortedSet, list)) and v)):
                like[c] = v
    cass = sorted(json.dumps([from_driver(v) for v in r], default=str) for r in rows)
    # the alias is no column name: row_to_json(alias) must name the row
    sql = ("SET TimeZone = 'UTC'; SET IntervalStyle = 'iso_8601'; SELECT row_to_json(read_back_row) "
           "FROM (SELECT %s FROM %s) read_back_row" % (qcols, view))
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-d", db, "-c", sql], capture_output=True, text=True)
    if p.returncode != 0:
        print("# the source view failed: " + p.stderr.strip().replace("\n", "\n# "))
        return 2
    src = []
    for line in p.stdout.splitlines():
        if line.strip():
            o = json.loads(line, parse_float=decimal.Decimal)
            src.append(json.dumps([from_json(o[c], like.get(c)) for c in cols], default=str))
    src.sort()
    print("# %s: %d rows read by the Python driver, %d in %s" % (table, len(cass), len(src), view))
    if cass == src and cass:
        return 0
    sc, ss = set(cass), set(src)
    for r in [r for r in cass if r not in ss][:3]:
        print("#   only in Cassandra: " + r)
    for r in [r for r in src if r not in sc][:3]:
        print("#   only in the view:  " + r)
    return 1


if __name__ == "__main__":
    sys.exit(main())
