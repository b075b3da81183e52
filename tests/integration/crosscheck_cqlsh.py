#!/usr/bin/env python3
#
# crosscheck_cqlsh.py
#	Independent check that our CQL client writes and reads every CQL type
#	exactly like the reference clients: cqlsh (PyPI) and the DataStax
#	Python driver.
#
#	(a) cqlsh writes: the data set below is turned into CQL literals here
#	    (no code of ours involved) and INSERTed by cqlsh into
#	    crosscheck.sh_scalars / sh_composite / sh_counter.  Our client
#	    (build/cqlcli --json) reads them; the JSON is converted back to
#	    Python values by type and compared with the data set.  The driver
#	    reads them too, which proves the data set and the literals agree.
#	(b) our client writes: build/integration/test_types_roundtrip binds the
#	    SAME data set with our encoders (PREPARE/EXECUTE) into
#	    crosscheck.ours_*.  The driver reads those rows and compares them
#	    with the data set; the raw bytes of every scalar (typeAsBlob())
#	    must equal those of the rows cqlsh wrote; and cqlsh itself must
#	    print the ours_* rows exactly as it prints the sh_* rows (plain
#	    SELECT and SELECT JSON).  cqlcli reads ours_* back as well.
#
#	cqlsh's own output is only compared between the two tables, never
#	parsed into values: its display format is lossy (float precision,
#	escapes, server JSON turns NaN into null and misquotes UDT field
#	names), so value-level comparisons use the driver, which decodes
#	exactly.  Timestamps are read as blobAsBigint(timestampAsBlob(ts)):
#	the driver cannot build a datetime for years outside 1..9999.
#
#	The data set is mirrored in test_types_roundtrip.c (build_scalars,
#	build_composite, test_counters); keep the two in step.
#	scripts/test.sh runs build/integration/test_* before *.py, so the
#	ours_* tables exist; run standalone, this script runs the C program
#	itself when they are missing (or when CROSSCHECK_REFRESH=1).
#
# Usage: crosscheck_cqlsh.py
# Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042), CQLSH (cqlsh from
# the cache venv), CQLCLI (build/cqlcli), CQL_ROUNDTRIP (the C program).
# Output: TAP; exit status 1 on any failure.  An unreachable node is a
# failure, not a skip.
#
# IDENTIFICATION
#	tests/integration/crosscheck_cqlsh.py
#
import datetime
import ipaddress
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "lib"))
from driver import use_venv_driver  # noqa: E402

# The Debian driver (3.25) predates vector support: use the venv's (3.30+).
use_venv_driver()

HOST = os.environ.get("CQL_HOST", "127.0.0.1")
PORT = int(os.environ.get("CQL_PORT", "9042"))
CQLSH = os.environ.get("CQLSH") or os.path.expanduser("~/.cache/cql_fdw/venv/bin/cqlsh")
CQLCLI = os.environ.get("CQLCLI") or os.path.join(ROOT, "build", "cqlcli")
ROUNDTRIP = os.environ.get("CQL_ROUNDTRIP") or os.path.join(
    ROOT, "build", "integration", "test_types_roundtrip")
KS = "crosscheck"

count = 0
failed = 0
setup_failed = 0


def ok(cond, name, diag=None):
    global count, failed
    count += 1
    print("%sok %d - %s" % ("" if cond else "not ", count, name))
    if not cond:
        failed += 1
        if diag:
            for line in str(diag).splitlines()[:40]:
                print("#   " + line[:400])
    sys.stdout.flush()
    return cond


def setup_step(cond, name, diag=None):
    """a setup step, not a test: "# setup ok - name" or "# setup not ok -
    name" (scripts/lib_tap.sh counts them apart from the tests); a failed
    one fails the file"""
    global setup_failed
    print("# setup %s - %s" % ("ok" if cond else "not ok", name))
    if not cond:
        setup_failed += 1
        if diag:
            for line in str(diag).splitlines()[:40]:
                print("#   " + line[:400])
    sys.stdout.flush()
    return cond


def finish():
    print("1..%d" % count)
    sys.exit(1 if failed or setup_failed else 0)


def bail(msg, diag=None):
    ok(False, msg, diag)
    finish()


# ---------------------------------------------------------------------------
# Types: a tiny parser of CQL type strings
# ---------------------------------------------------------------------------
UDT_FIELDS = [("street", "text"), ("zip", "int"), ("Tags", "frozen<set<text>>")]


def parse_type(s):
    s = s.strip()
    m = re.match(r"^(\w+)\s*(?:<(.*)>)?$", s, re.S)
    if not m:
        raise ValueError(s)
    name, inner = m.group(1), m.group(2)
    if name == "frozen":
        return parse_type(inner)
    if inner is None:
        if name == "address":
            return ("udt", [(f, parse_type(t)) for f, t in UDT_FIELDS])
        return (name,)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    if name == "vector":
        return ("vector", parse_type(parts[0]), int(parts[1]))
    return (name,) + tuple(parse_type(p) for p in parts) if name != "tuple" else \
        ("tuple", [parse_type(p) for p in parts])


TEXTLIKE = ("ascii", "text", "varchar")
INTLIKE = ("tinyint", "smallint", "int", "bigint", "counter", "varint")

# ---------------------------------------------------------------------------
# The data set (mirror of test_types_roundtrip.c).  Values are canonical:
# date = days since epoch, time = ns, timestamp = ms, duration =
# (months, days, ns), inet = packed bytes, decimal = Decimal (scale kept),
# double/float = Python float (compared by bit pattern), set/list/vector =
# list in server order, map = list of pairs, tuple = tuple, UDT = dict.
# None = null, EMPTY = zero-length value; a missing column = unset.
# ---------------------------------------------------------------------------
EMPTY = object()

SCALAR_COLS = [
    ("a", "ascii"), ("bi", "bigint"), ("bl", "blob"), ("bo", "boolean"),
    ("da", "date"), ("de", "decimal"), ("db", "double"), ("du", "duration"),
    ("fl", "float"), ("ie", "inet"), ("i", "int"), ("si", "smallint"),
    ("t", "text"), ("tm", "time"), ("ts", "timestamp"), ("tu", "timeuuid"),
    ("ti", "tinyint"), ("u", "uuid"), ("vc", "varchar"), ("vi", "varint")]

COMPOSITE_COLS = [
    ("li", "list<int>"),
    ("se", "set<text>"),
    ("ma", "map<text, int>"),
    ("fli", "frozen<list<double>>"),
    ("nest", "map<int, frozen<list<frozen<set<text>>>>>"),
    ("tup", "tuple<int, text, bigint>"),
    ("tupn", "frozen<tuple<int, frozen<tuple<text, boolean>>>>"),
    ("ad", "frozen<address>"),
    ("adn", "address"),
    ("vf", "vector<float, 3>"),
    ("vt", "vector<text, 2>"),
    ("vsi", "vector<smallint, 2>"),
    ("mu", "map<uuid, frozen<address>>"),
    ("lv", "list<frozen<vector<int, 2>>>"),
    ("mi", "map<inet, date>"),
    ("ldu", "list<duration>"),
    ("tdt", "tuple<date, time, timestamp, inet, blob>"),
    ("mvd", "map<varint, decimal>")]


def days(y, m, d):
    return (datetime.date(y, m, d) - datetime.date(1970, 1, 1)).days


def ip(s):
    return ipaddress.ip_address(s).packed


U = uuid.UUID
NAN = float("nan")
INF = float("inf")
FLT_MAX = struct.unpack(">f", bytes.fromhex("7f7fffff"))[0]
FLT_MIN_SUB = struct.unpack(">f", bytes.fromhex("00000001"))[0]

DATA_SCALARS = {
    1: dict(a="hello world", bi=1234567890123, bl=bytes.fromhex("cafebabe"), bo=True,
            da=days(2024, 2, 29), de=Decimal("123.45"), db=1.5, du=(1, 2, 3000000004),
            fl=struct.unpack(">f", struct.pack(">f", 0.1))[0], ie=ip("192.168.1.10"),
            i=42, si=1234, t='h\u00e9llo \u2713 \u65e5\u672c "q" it\'s',
            tm=45296789012345, ts=1704110400123,
            tu=U("e7c5a1a0-8b1f-11ee-b9d1-0242ac120002"), ti=-7,
            u=U("123e4567-e89b-42d3-a456-426614174000"), vc="it's ok",
            vi=12345678901234567890123),
    2: dict(a="~!@#$%^&*()_+`'\"", bi=-2**63, bl=bytes.fromhex("00ff00"), bo=False,
            da=-2**31, de=Decimal("-1234567890123456789012345678901234567890.000000000000000000001"),
            db=-INF, du=(-14, -3, -14706007008009), fl=-0.0, ie=ip("::"), i=-2**31,
            si=-32768, t="line1\nline2\ttab\x01end", tm=0, ts=-62135596800000,
            tu=U("00000000-0000-1000-8000-000000000000"), ti=-128,
            u=U("00000000-0000-0000-0000-000000000000"), vc="\U0001F600 4-byte",
            vi=-2**127 - 1),
    3: dict(a="ABC xyz 0123456789", bi=2**63 - 1, bl=bytes(range(256)), bo=True,
            da=2**31 - 1, de=Decimal("0.000000000000000000000000000000000000001"),
            db=1.7976931348623157e308, du=(2**31 - 1, 2**31 - 1, 2**63 - 1), fl=FLT_MAX,
            ie=ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), i=2**31 - 1, si=32767,
            t="x" * 200000, tm=86399999999999, ts=253402300799999,
            tu=U("ffffffff-ffff-1fff-bfff-ffffffffffff"), ti=127,
            u=U("ffffffff-ffff-ffff-ffff-ffffffffffff"), vc="\u65e5\u672c\u8a9e",
            vi=2**200),
    # zero-length values; date/time/smallint/tinyint/duration refuse them
    4: dict(a="", bi=EMPTY, bl=b"", bo=EMPTY, da=None, de=EMPTY, db=EMPTY, du=None,
            fl=EMPTY, ie=EMPTY, i=EMPTY, si=None, t="", tm=None, ts=EMPTY, tu=EMPTY,
            ti=None, u=EMPTY, vc="", vi=EMPTY),
    5: {c: None for c, _ in SCALAR_COLS},
    6: {},
    7: dict(a="x", bi=0, bl=b"\x00", bo=False, da=days(1, 1, 1), de=Decimal("1E+10"),
            db=NAN, du=(0, 0, 0), fl=INF, ie=ip("::ffff:1.2.3.4"), i=-1, si=0,
            t="$$dollar$$ and \\ backslash", tm=1, ts=-2**63,
            tu=U("5e4bfa00-1dd2-11b2-8080-808080808080"), ti=0,
            u=U("00112233-4455-6677-8899-aabbccddeeff"), vc='a"b', vi=-1),
    8: dict(da=2932897, ts=253402300800000, de=Decimal("0.00"), db=5e-324,
            fl=FLT_MIN_SUB, du=(0, 0, -1), bi=-1, i=128, si=-1, vi=128),
}

UUID1 = U("123e4567-e89b-42d3-a456-426614174000")
DATA_COMPOSITE = {
    1: dict(li=[1, -2, 2147483647], se=["a", "b'c", "\u00fc"], ma=[("k1", 1), ("k2", -1)],
            fli=[1.5, -0.0, NAN, INF], nest=[(1, [["x", "y"], []]), (2, [])],
            tup=(1, "x", None), tupn=(7, ("deep", True)),
            ad={"street": "Main St", "zip": 12345, "Tags": ["home", "work"]},
            adn={"street": "x", "zip": None, "Tags": None},
            vf=[1.0, -2.5, 3.25], vt=["a", "bc"], vsi=[1, -1],
            mu=[(UUID1, {"street": "s", "zip": 1, "Tags": []})],
            lv=[[1, 2], [3, 4]], mi=[(ip("10.0.0.1"), days(2024, 1, 1))],
            ldu=[(1, 2, 3), (-1, 0, -5)],
            tdt=(days(2024, 1, 1), 1, 1704110400123, ip("10.0.0.1"), b"\x01\x02"),
            mvd=[(-10**30, Decimal("1.50")), (7, Decimal("-0.001"))]),
    # empty non-frozen collections (and an all-null non-frozen UDT) are
    # stored as nothing and read back as null: written empty, expected None
    2: dict(li=[], se=[], ma=[], nest=[], mu=[], lv=[], mi=[], ldu=[], mvd=[],
            tdt=(None,) * 5,
            adn={"street": None, "zip": None, "Tags": None},
            fli=[], tup=(None, None, None), tupn=(None, None),
            ad={"street": None, "zip": None, "Tags": None}, vf=None, vt=["", ""],
            vsi=[0, 0]),
    3: {c: None for c, _ in COMPOSITE_COLS},
    4: {},
}
READS_NULL = {(2, c) for c in ("li", "se", "ma", "nest", "mu", "lv", "mi", "adn", "ldu", "mvd")}

DATA_COUNTER = {1: 3, 2: 2**63 - 1, 3: -2**63, 4: -1}
COUNTER_DELTAS = {1: [5, -2], 2: [2**63 - 1], 3: [-2**63], 4: [-1]}

TABLES = [("scalars", SCALAR_COLS, DATA_SCALARS), ("composite", COMPOSITE_COLS, DATA_COMPOSITE)]


def expected(table, k, col, raw=False):
    """What a reader must see: None for null/unset/empty (unless raw)."""
    v = TABLES_BY_NAME[table][1][k].get(col)
    if (k, col) in READS_NULL and table == "composite":
        return None
    if v is EMPTY:
        return EMPTY if raw else None
    return v


TABLES_BY_NAME = {n: (cols, data) for n, cols, data in TABLES}

# ---------------------------------------------------------------------------
# CQL literals for cqlsh (independent of our C code)
# ---------------------------------------------------------------------------
EPOCH = datetime.date(1970, 1, 1)


def lit_float(v):
    if v != v:
        return "NaN"
    if v in (INF, -INF):
        return "Infinity" if v > 0 else "-Infinity"
    return repr(v)


def lit_duration(d):
    m, dd, ns = d
    sign = "-" if (m < 0 or dd < 0 or ns < 0) else ""
    return "%s%dmo%dd%dns" % (sign, abs(m), abs(dd), abs(ns))


def literal(t, v):
    kind = t[0]
    if v is None:
        return "null"
    if v is EMPTY:
        return "blobAs%s(0x)" % kind
    if kind in TEXTLIKE:
        return "'" + v.replace("'", "''") + "'"
    if kind in INTLIKE:
        return str(v)
    if kind == "blob":
        return "0x" + v.hex()
    if kind == "boolean":
        return "true" if v else "false"
    if kind == "decimal":
        return str(v)
    if kind in ("double", "float"):
        return lit_float(v)
    if kind == "date":
        if -719162 <= v <= 2932896:
            return "'%s'" % (EPOCH + datetime.timedelta(days=v)).isoformat()
        return "'%d'" % (v + 2**31)     # raw wire value as a digit string
    if kind == "time":
        s, ns = divmod(v, 10**9)
        return "'%02d:%02d:%02d.%09d'" % (s // 3600, s // 60 % 60, s % 60, ns)
    if kind == "timestamp":
        return str(v)                   # milliseconds
    if kind == "duration":
        return lit_duration(v)
    if kind == "inet":
        if len(v) == 16 and v[:12] == b"\0" * 10 + b"\xff\xff":
            # Java would store '::ffff:1.2.3.4' as 4 bytes: keep all 16
            return "blobAsInet(0x%s)" % v.hex()
        return "'%s'" % ipaddress.ip_address(v)
    if kind in ("uuid", "timeuuid"):
        return str(v)
    if kind in ("list", "vector"):
        return "[" + ", ".join(literal(t[1], e) for e in v) + "]"
    if kind == "set":
        return "{" + ", ".join(literal(t[1], e) for e in v) + "}"
    if kind == "map":
        return "{" + ", ".join("%s: %s" % (literal(t[1], a), literal(t[2], b)) for a, b in v) + "}"
    if kind == "tuple":
        return "(" + ", ".join(literal(st, e) for st, e in zip(t[1], v)) + ")"
    if kind == "udt":
        return "{" + ", ".join('"%s": %s' % (f, literal(ft, v[f])) for f, ft in t[1]) + "}"
    raise ValueError(kind)


# ---------------------------------------------------------------------------
# Canonical comparison
# ---------------------------------------------------------------------------
def same(t, a, b):
    """Exact equality of canonical values of type t."""
    if a is None or b is None or a is EMPTY or b is EMPTY:
        return a is b
    kind = t[0]
    if kind == "double":
        return struct.pack(">d", a) == struct.pack(">d", b)
    if kind == "float":
        return struct.pack(">f", a) == struct.pack(">f", b)
    if kind == "decimal":
        return a.as_tuple() == b.as_tuple() or (a == 0 and b == 0 and
                                               a.as_tuple().exponent == b.as_tuple().exponent)
    if kind in ("list", "set", "vector"):
        return len(a) == len(b) and all(same(t[1], x, y) for x, y in zip(a, b))
    if kind == "map":
        return len(a) == len(b) and all(same(t[1], x[0], y[0]) and same(t[2], x[1], y[1])
                                        for x, y in zip(a, b))
    if kind == "tuple":
        return len(a) == len(b) and all(same(st, x, y) for st, x, y in zip(t[1], a, b))
    if kind == "udt":
        return set(a) == set(b) and all(same(ft, a[f], b[f]) for f, ft in t[1])
    return type(a) is type(b) and a == b


def show(v):
    s = repr(v)
    return s if len(s) < 300 else s[:140] + " ... " + s[-60:] + " (%d chars)" % len(s)


# --- from the Python driver ---------------------------------------------------
def from_driver(t, v):
    if v is None:
        return None
    kind = t[0]
    if kind == "date":
        return v.days_from_epoch
    if kind == "time":
        return v.nanosecond_time
    if kind == "timestamp":
        if isinstance(v, datetime.datetime):    # inside a composite
            return (v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)
        return v                        # top level: read as bigint, see select_list
    if kind == "duration":
        return (v.months, v.days, v.nanoseconds)
    if kind == "inet":
        return ipaddress.ip_address(v).packed
    if kind in ("list", "set", "vector"):
        return [from_driver(t[1], e) for e in v]
    if kind == "map":
        return [(from_driver(t[1], a), from_driver(t[2], b)) for a, b in v.items()]
    if kind == "tuple":
        return tuple(from_driver(st, e) for st, e in zip(t[1], v))
    if kind == "udt":
        return {f: from_driver(ft, getattr(v, f)) for f, ft in t[1]}
    return v


# --- from cqlcli --json (our formatter) -------------------------------------------
DUR_RE = re.compile(r"(\d+)(y|mo|d|h|ms|us|ns|m|s)")
DUR_NS = {"h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def parse_duration(s):
    neg = s.startswith("-")
    body = s[1:] if neg else s
    pos, m, d, ns = 0, 0, 0, 0
    for mt in DUR_RE.finditer(body):
        if mt.start() != pos:
            raise ValueError(s)
        pos = mt.end()
        n, u = int(mt.group(1)), mt.group(2)
        if u == "y":
            m += 12 * n
        elif u == "mo":
            m += n
        elif u == "d":
            d += n
        else:
            ns += n * DUR_NS[u]
    if pos != len(body) or not body:
        raise ValueError(s)
    return (-m, -d, -ns) if neg else (m, d, ns)


def from_ours(t, v):
    if v is None:
        return None
    kind = t[0]
    if kind in TEXTLIKE or kind == "boolean":
        return v
    if kind in INTLIKE:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError("not an integer: %r" % (v,))
        return v
    # numbers must be JSON numbers; only NaN and the infinities are strings
    if kind == "decimal":
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
            raise ValueError("not a JSON number: %r" % (v,))
        return Decimal(v)
    if kind in ("double", "float"):
        if isinstance(v, str):
            if v not in ("NaN", "Infinity", "-Infinity"):
                raise ValueError("number as a string: %r" % (v,))
            return float(v)
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
            raise ValueError("not a JSON number: %r" % (v,))
        return float(v)
    if kind == "blob":
        if not v.startswith("0x"):
            raise ValueError(v)
        return bytes.fromhex(v[2:])
    if kind == "date":
        if re.fullmatch(r"\d+", v):
            return int(v) - 2**31
        return (datetime.date.fromisoformat(v) - EPOCH).days
    if kind == "time":
        mt = re.fullmatch(r"(\d\d):(\d\d):(\d\d)\.(\d{9})", v)
        return ((int(mt.group(1)) * 60 + int(mt.group(2))) * 60 + int(mt.group(3))) * 10**9 + \
            int(mt.group(4))
    if kind == "timestamp":
        if re.fullmatch(r"-?\d+", v):
            return int(v)
        mt = re.fullmatch(r"(\d{4}-\d\d-\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})Z", v)
        dd = (datetime.date.fromisoformat(mt.group(1)) - EPOCH).days
        return (((dd * 24 + int(mt.group(2))) * 60 + int(mt.group(3))) * 60 +
                int(mt.group(4))) * 1000 + int(mt.group(5))
    if kind == "duration":
        return parse_duration(v)
    if kind == "inet":
        return ipaddress.ip_address(v).packed
    if kind in ("uuid", "timeuuid"):
        return U(v)
    if kind in ("list", "set", "vector"):
        return [from_ours(t[1], e) for e in v]
    if kind == "map":
        if isinstance(v, dict):
            if t[1][0] not in TEXTLIKE:
                raise ValueError("object for a non-text map key")
            return [(k, from_ours(t[2], e)) for k, e in v.items()]
        return [(from_ours(t[1], a), from_ours(t[2], b)) for a, b in v]
    if kind == "tuple":
        return tuple(from_ours(st, e) for st, e in zip(t[1], v))
    if kind == "udt":
        if set(v) != {f for f, _ in t[1]}:
            raise ValueError("UDT fields %r" % sorted(v))
        return {f: from_ours(ft, v[f]) for f, ft in t[1]}
    raise ValueError(kind)


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------
def wait_for_node(timeout=90):
    import socket
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection((HOST, PORT), 2).close()
            return True
        except OSError:
            time.sleep(1)
    return False


def cqlsh(stmts, timeout=300):
    """Run CQL text through cqlsh -f; returns (rc, stdout, stderr)."""
    with tempfile.NamedTemporaryFile("w", suffix=".cql", delete=False, encoding="utf-8") as f:
        f.write(stmts)
        path = f.name
    try:
        for attempt in range(3):
            p = subprocess.run([CQLSH, HOST, str(PORT), "--no-color", "--request-timeout=60",
                                "--float-precision=9", "--double-precision=17",
                                "--encoding=utf8", "-f", path],
                               capture_output=True, timeout=timeout)
            out = p.stdout.decode("utf-8", "replace")
            err = p.stderr.decode("utf-8", "replace")
            if not connect_failed(out + err) or attempt == 2:
                break
            # a node restarted by someone else: waiting for it is a setup
            # step, counted as one
            setup_step(wait_for_node(), "cqlsh could not connect: %s:%d waited for" % (HOST, PORT),
                       (out + err)[-500:])
        return p.returncode, out, err
    finally:
        os.unlink(path)


def connect_failed(text):
    """A node restarted by someone else is waited for, not a test result."""
    return "Connection refused" in text or "Unable to connect to any servers" in text


def cqlsh_errors(err):
    return [ln for ln in err.splitlines()
            if ln.strip() and "WARNING: cqlsh was built against" not in ln
            and "All features may not work" not in ln]


def node_reachable():
    """a TCP connection to the node opens now (not through our client)"""
    import socket
    try:
        socket.create_connection((HOST, PORT), 2).close()
        return True
    except OSError:
        return False


def cqlcli_json(query):
    """Rows of a SELECT through our client, as JSON objects.  Our client
    failing to connect to a node that accepts connections is a failure (no
    retry); only while the node itself is unreachable (restarted by someone
    else) is it waited for, as a setup step, and asked again."""
    for attempt in range(3):
        p = subprocess.run([CQLCLI, "-h", HOST, "-p", str(PORT), "-t", "60000", "--json",
                            "-e", query], capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode == 0 or not connect_failed(err) or attempt == 2 or node_reachable():
            break
        setup_step(wait_for_node(),
                   "cqlcli could not connect and %s:%d was unreachable: waited for it" % (HOST, PORT),
                   err[-500:])
    if p.returncode != 0:
        raise RuntimeError("cqlcli exit %d: %s" % (p.returncode, p.stderr.decode()[:500]))
    rows = []
    for line in p.stdout.decode("utf-8").splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line, parse_float=Decimal))
    return rows


def select_list(cols):
    """Column list for driver reads: timestamps as bigint (see header)."""
    out = ["k"]
    for c, ty in cols:
        out.append("blobAsBigint(timestampAsBlob(%s)) AS %s" % (c, c) if ty == "timestamp" else c)
    return ", ".join(out)


# ---------------------------------------------------------------------------
# (a) cqlsh writes, our client reads
# ---------------------------------------------------------------------------
def schema_cql(prefix):
    out = ["CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
           "{'class': 'SimpleStrategy', 'replication_factor': 1};" % KS,
           'CREATE TYPE IF NOT EXISTS %s.address (street text, zip int, "Tags" frozen<set<text>>);' % KS]
    for name, cols, _ in TABLES:
        out.append("DROP TABLE IF EXISTS %s.%s_%s;" % (KS, prefix, name))
        out.append("CREATE TABLE %s.%s_%s (k int PRIMARY KEY, %s);" % (
            KS, prefix, name, ", ".join("%s %s" % (c, t) for c, t in cols)))
    out.append("DROP TABLE IF EXISTS %s.%s_counter;" % (KS, prefix))
    out.append("CREATE TABLE %s.%s_counter (k int PRIMARY KEY, c counter);" % (KS, prefix))
    return "\n".join(out) + "\n"


def insert_cql(prefix):
    out = []
    for name, cols, data in TABLES:
        types = {c: parse_type(t) for c, t in cols}
        for k, row in sorted(data.items()):
            names = [c for c, _ in cols if c in row]
            vals = [literal(types[c], row[c]) for c in names]
            out.append("INSERT INTO %s.%s_%s (%s) VALUES (%s);" % (
                KS, prefix, name, ", ".join(["k"] + names), ", ".join([str(k)] + vals)))
    for k, deltas in sorted(COUNTER_DELTAS.items()):
        for d in deltas:
            out.append("UPDATE %s.%s_counter SET c = c + %d WHERE k = %d;" % (KS, prefix, d, k))
    return "\n".join(out) + "\n"


def compare_rows(source, table, rows, conv):
    """rows: {k: {col: value}} as read; conv(type, value) -> canonical."""
    cols, data = TABLES_BY_NAME[table]
    ok(sorted(rows) == sorted(data), "%s %s: rows %s" % (source, table, sorted(data)),
       "got keys %s" % sorted(rows))
    for k in sorted(data):
        if k not in rows:
            continue
        for c, ty in cols:
            t = parse_type(ty)
            want = expected(table, k, c)
            try:
                got = conv(t, rows[k][c])
                good = same(t, got, want)
            except Exception as e:      # a conversion failure is a mismatch
                got, good = "error: %r (raw %s)" % (e, show(rows[k].get(c))), False
            ok(good, "%s %s k=%d %s (%s)" % (source, table, k, c, ty),
               "got:      %s\nexpected: %s" % (show(got), show(want)))


def read_driver(session, prefix, table):
    cols, _ = TABLES_BY_NAME[table]
    rs = session.execute("SELECT %s FROM %s.%s_%s" % (select_list(cols), KS, prefix, table))
    return {r.k: r._asdict() for r in rs}


def read_ours(prefix, table):
    cols, _ = TABLES_BY_NAME[table]
    rows = cqlcli_json("SELECT k, %s FROM %s.%s_%s" % (", ".join(c for c, _ in cols), KS,
                                                       prefix, table))
    return {r["k"]: r for r in rows}


def check_counters(source, got):
    ok(got == DATA_COUNTER, "%s counter: values %s" % (source, DATA_COUNTER),
       "got %s" % got)


def main():
    if not os.access(CQLSH, os.X_OK):
        bail("cqlsh found at %s (run scripts/deps.sh)" % CQLSH)
    if not os.access(CQLCLI, os.X_OK):
        bail("cqlcli found at %s (make tools)" % CQLCLI)
    if not wait_for_node():
        bail("Cassandra reachable at %s:%d" % (HOST, PORT))

    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy
    from cassandra.cluster import ExecutionProfile, EXEC_PROFILE_DEFAULT
    prof = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([HOST]),
                            request_timeout=60)
    session = None
    for attempt in range(3):
        # a Cluster that failed to connect is shut down: a new one per try
        cluster = Cluster([HOST], port=PORT, execution_profiles={EXEC_PROFILE_DEFAULT: prof},
                          connect_timeout=20, control_connection_timeout=20)
        try:
            session = cluster.connect()
            break
        except Exception as e:
            why = repr(e)
            wait_for_node()
    if session is None:
        bail("python driver connects to %s:%d" % (HOST, PORT), why)

    # ---- (a) cqlsh writes the sh_* tables ----
    rc, out, err = cqlsh(schema_cql("sh"))
    ok(rc == 0 and not cqlsh_errors(err), "cqlsh: create keyspace %s and tables sh_*" % KS, err)
    cluster.control_connection.wait_for_schema_agreement()
    rc, out, err = cqlsh(insert_cql("sh"))
    ok(rc == 0 and not cqlsh_errors(err), "cqlsh: insert every row of the data set as literals",
       err)

    for table in TABLES_BY_NAME:
        try:
            rows = read_ours("sh", table)
        except Exception as e:
            ok(False, "cqlcli --json reads sh_%s" % table, repr(e))
            continue
        compare_rows("cqlsh->ours", table, rows, from_ours)
    try:
        check_counters("cqlsh->ours", {r["k"]: r["c"] for r in
                                       cqlcli_json("SELECT k, c FROM %s.sh_counter" % KS)})
    except Exception as e:
        ok(False, "cqlcli --json reads sh_counter", repr(e))

    # the driver agrees with the data set too, so the expectations are right
    for table in TABLES_BY_NAME:
        compare_rows("cqlsh->driver", table, read_driver(session, "sh", table), from_driver)

    # Java stores the literal '::ffff:1.2.3.4' as IPv4: our reader must agree
    rc, out, err = cqlsh("INSERT INTO %s.sh_scalars (k, ie) VALUES (9, '::ffff:1.2.3.4');\n" % KS)
    rows = cqlcli_json("SELECT ie, inetAsBlob(ie) AS b FROM %s.sh_scalars WHERE k = 9" % KS)
    ok(rows == [{"ie": "1.2.3.4", "b": "0x01020304"}],
       "cqlsh literal '::ffff:1.2.3.4' reads back as 1.2.3.4 (4 bytes)", repr(rows))
    session.execute("DELETE FROM %s.sh_scalars WHERE k = 9" % KS)

    # ---- (b) our client wrote the ours_* tables ----
    # present, with this data set's columns (else written by an older build)
    have = set()
    for r in session.execute("SELECT table_name, column_name FROM system_schema.columns "
                             "WHERE keyspace_name = %s", (KS,)):
        have.add((r.table_name, r.column_name))
    need = {("ours_counter", "c")}
    for name, cols, _ in TABLES:
        need |= {("ours_" + name, c) for c, _ in cols}
    if not need <= have or os.environ.get("CROSSCHECK_REFRESH") == "1":
        if not os.access(ROUNDTRIP, os.X_OK):
            bail("%s built (make integration)" % ROUNDTRIP)
        p = subprocess.run([ROUNDTRIP], capture_output=True, timeout=600,
                           env=dict(os.environ, CQL_HOST=HOST, CQL_PORT=str(PORT)))
        notok = [ln for ln in p.stdout.decode().splitlines()
                 if ln.startswith("not ok") or ln.startswith("#")]
        ok(p.returncode == 0, "ran %s to write the ours_* tables" % os.path.basename(ROUNDTRIP),
           "\n".join(notok[:20]) or p.stderr.decode()[-2000:])
        cluster.control_connection.wait_for_schema_agreement()

    for table in TABLES_BY_NAME:
        try:
            rows = read_driver(session, "ours", table)
        except Exception as e:
            ok(False, "driver reads ours_%s" % table, repr(e))
            continue
        compare_rows("ours->driver", table, rows, from_driver)
    check_counters("ours->driver", {r.k: r.c for r in
                                    session.execute("SELECT k, c FROM %s.ours_counter" % KS)})

    # bytes of every scalar: our encoders vs the server's literal parser
    cols, data = TABLES_BY_NAME["scalars"]
    exprs = ", ".join(c if ty == "blob" else "%sAsBlob(%s)" % (ty, c) for c, ty in cols)
    ours_b = {r[0]: r[1:] for r in session.execute("SELECT k, %s FROM %s.ours_scalars" % (exprs, KS))}
    sh_b = {r[0]: r[1:] for r in session.execute("SELECT k, %s FROM %s.sh_scalars" % (exprs, KS))}
    for k in sorted(data):
        for i, (c, ty) in enumerate(cols):
            a = ours_b.get(k, (None,) * len(cols))[i]
            b = sh_b.get(k, (None,) * len(cols))[i]
            want = expected("scalars", k, c, raw=True)
            ok(a == b and (a is None) == (want is None) and (want is not EMPTY or a == b""),
               "bytes ours = cqlsh: scalars k=%d %s (%s)" % (k, c, ty),
               "ours:  %s\ncqlsh: %s" % (show(a and a.hex()), show(b and b.hex())))

    # cqlsh prints our rows exactly as it prints its own
    for name, _, data in TABLES + [("counter", None, DATA_COUNTER)]:
        for mode, pre in (("SELECT", "EXPAND ON;\n"), ("SELECT JSON", "")):
            # Cassandra 5.0.x answers SELECT JSON of an empty boolean with a
            # server error (NullPointerException in toJSONString), for its
            # own rows as well as ours: leave the zero-length row out there.
            keys = [k for k in sorted(data)
                    if not (mode == "SELECT JSON" and name == "scalars" and k == 4)]
            q = pre + "PAGING OFF;\n" + "".join(
                "%s * FROM %s.%%s_%s WHERE k = %d;\n" % (mode, KS, name, k) for k in keys)
            rc1, out1, err1 = cqlsh(q.replace("%s_", "ours_"))
            rc2, out2, err2 = cqlsh(q.replace("%s_", "sh_"))
            # every row exists (an INSERT of the key alone writes a row marker)
            nrows = out1.count("(1 rows)")
            ok(rc1 == 0 and rc2 == 0 and out1 == out2 and nrows == len(keys),
               "cqlsh %s shows ours_%s exactly like sh_%s (%d rows)" % (mode, name, name, nrows),
               "\n".join(cqlsh_errors(err1 + err2)) + "\n" + "\n".join(
                   "ours:  %s\ncqlsh: %s" % (x[:300], y[:300])
                   for x, y in zip(out1.splitlines(), out2.splitlines()) if x != y))

    # and our client reads back what it wrote, judged by this script
    for table in TABLES_BY_NAME:
        try:
            rows = read_ours("ours", table)
        except Exception as e:
            ok(False, "cqlcli --json reads ours_%s" % table, repr(e))
            continue
        compare_rows("ours->ours", table, rows, from_ours)

    cluster.shutdown()
    finish()


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:          # anything unexpected is a failure, with a plan
        import traceback
        ok(False, "crosscheck ran to the end", traceback.format_exc())
        finish()
