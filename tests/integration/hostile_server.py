#!/usr/bin/env python3
"""
A hostile or broken Cassandra node must never crash or hang a PostgreSQL
backend using cql_fdw (TAP output).

Design
  A fake CQL node (lib/fake_cql_node.py) listens on its own loopback
  address (CQL_FAKE_HOST, default 127.0.0.9, ephemeral port).  It answers
  the handshake, the control-connection and schema queries like a one-node
  cluster holding hostile.t (k int, c int, v text, l list<int>, PRIMARY KEY
  ((k), c)) with 5 rows, and PREPARE / EXECUTE of that table.  Two foreign
  servers point at it: hostile_v4 (protocol_version '4') and hostile_v5
  (protocol_version '5'), both with request_timeout 3 s.

  Each scenario sets the node's handler, which answers one kind of request
  with crafted bytes (and bumps node.hits, so a scenario that never reached
  its crafted answer fails instead of passing by accident), then runs one
  statement in a new psql session and checks:
    1. the statement ends with an ERROR whose SQLSTATE class fits (08 / HV
       for bad data, 57014 for a cancel; never XX000, and for claimed sizes
       never an out-of-memory error) and whose message says what is wrong,
       within a bound (about a second for bad data, the request timeout for
       a silent server, 1-2 s for a cancel).  A few write paths that do not
       read result rows may also succeed;
    2. the backend did not crash: no "server process (PID n) was terminated
       by signal" for its pid in the server log, a long-lived watcher
       session is still connected, pg_postmaster_start_time() and the
       checkpointer's start (restarted after a crash) are unchanged;
    3. a new session's scan of the same table works (default answers).
  For claimed sizes it also reads the backend's VmPeak from /proc: the
  allocation a 17-byte frame can cause is shown and bounded (64 MB).

  Nothing can block the run: a statement that does not answer in time is
  recorded as a hang, then the fake node closes its sockets (a backend
  pinned in a read loop sees EOF), then pg_terminate_backend, then psql is
  killed.  After a crash the test waits until the postmaster has logged
  "ready to accept connections" and reopens the watcher.  All scenarios
  share a 100 s budget (those left over fail as "not run"); a run takes
  30-50 s today, with its hangs and crashes.

  CQL_FDW_LIBRARY=/path/to/cql_fdw.so tests that build instead of the
  installed extension, without installing it: the test creates its own
  wrapper hostile_fdw from the library (S6f, cql_execute(), is then
  skipped: it only accepts servers of the extension's wrapper).

Scenarios
  S1 fewer result columns than the scan expects (v4, v5, [applied], PREPARE)
  S2 ncols = 0 with rows_count = 1
  S3 metadata flipping between pages (count, types, 300 flips that convert)
  S4 huge claims: frame length (v4 2 GB, 250 MB; a 17-byte v5 frame),
     cell length, list count, rows_count, LZ4 inflated size
  S5 endless frames while the scan waits, vs statement_timeout 1s and
     pg_cancel_backend: EVENTs (v4, v5), stray RESULTs, and LZ4 frames that
     inflate 250 times (v5 EVENTs, v4 16 MB stray RESULTs)
  S6 the same on ANALYZE, direct modify UPDATE, INSERT with if_not_exists,
     cql_execute(), and the connect/layout queries (system.local,
     system_schema.columns)
  S7 garbage after a valid handshake (random bytes, wrong version byte,
     request direction, unknown RESULT kind, bad v5 CRC24 / CRC32)
  S8 the coordinator's own timeouts on this one-node cluster: an idempotent
     INSERT's Write_timeout and a scan's Read_timeout are sent again to the
     same node (there is no other) and succeed; a Write_timeout that
     persists ends after max_retries; a lightweight transaction's (CAS) is
     never replayed; the same for a write deferred to COMMIT (write_mode
     'on_commit'), which once went unretried (max_retries was not carried
     to COMMIT)

Failing today (2026-11-24, before the fixes written in parallel).
  Baseline build of c63aba3 (CQL_FDW_LIBRARY=<that build>/cql_fdw.so):
    S2a S2b  v4/v5 Rows with ncols 0, rows_count 1: the scan reads NULL
             cells, backend SIGSEGV (signal 11), postmaster restarts all
    S6a      the same on ANALYZE: SIGSEGV
    S6b      ANALYZE after a PREPARE with 2 of 4 result columns reads
             meta->cols[2..3]: SIGSEGV
    S1b S1d  rows with 2 of 3 columns that the cache does not adopt (first
             column "[applied]"; v5 without METADATA_CHANGED): the scan reads
             past the cell array, ERROR 22021 "invalid byte sequence for
             encoding UTF8: 0x00" (heap bytes returned as a text value)
    S6c      the same on ANALYZE (it never checks the page's column count)
    S4c      a 17-byte v5 frame starting a 250 MB message: the backend
             allocates the 250 MB up front (VmPeak +251 MB), then times out
    S5e S5f S5g  LZ4 floods: statement_timeout and pg_cancel_backend do
             nothing, the backend reads until the server closes (hang)
    S5a-S5d  plain floods: the cancel comes 0-1.5 s late or not at all,
             depending on the machine's load (read_some loops while recv()
             returns data)
  Installed build of 19:09 (an FDW fix in progress, library unfixed):
    S1-S4 and S6 pass (HV021 "Cassandra returned rows that do not match
    the statement"; claimed sizes refused at once); S5 still hangs, or
    ends by request_timeout (HV00L after 3 s) instead of the 1 s cancel.

Needs PGHOST/PGPORT/PGUSER/PGDATABASE of a server with cql_fdw installed
(a superuser: the user mapping has no password).  The server log is read
from CQL_PG_LOG, else $PGHOST/postgres.log.
"""
import os
import random
import re
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import Session, done, note, ok, plan, psql, setup_step, skip  # noqa: E402
from fake_cql_node import (  # noqa: E402
    ERROR, EVENT, EXECUTE, NO_METADATA, PREPARE, QUERY, RESULT, Flood, FakeCqlNode,
    bytes_, demo_table, envelope, error_body, event_body, int32, lz4_repeat,
    prepared_body, rows_body, short, string, v5_frame, v5_frames, v5_lz4_frame,
    void_body)

FAKE_HOST = os.environ.get("CQL_FAKE_HOST", "127.0.0.9")
# a cql_fdw.so to test instead of the installed extension (e.g. a build of
# another commit): the test then makes its own FDW hostile_fdw from it
LIBRARY = os.environ.get("CQL_FDW_LIBRARY")
PG_LOG = os.environ.get("CQL_PG_LOG") or os.path.join(os.environ.get("PGHOST", "/tmp"), "postgres.log")
REQUEST_TIMEOUT_MS = 3000
RUN_BUDGET = 100                                # seconds for all scenarios
MEMORY_LIMIT_MB = 64

QUICK = 2.0                                     # an error about bad data
SILENT = REQUEST_TIMEOUT_MS / 1000.0 + 1.5      # the FDW has to time out
CANCEL = 1.5                                    # a cancel after it was asked

node = None


# --- crafted answers --------------------------------------------------------------
def crafted(make, opcodes=(EXECUTE,), select=True, system=None):
    """
    A handler that answers with make(req) the requests of the given opcodes
    on the user table (SELECTs, or else writes), or with system=<text> the
    system queries containing that text; default answers otherwise.
    """
    def handler(req):
        if req.opcode not in opcodes:
            return None
        if system is not None:
            if not (req.is_system and system in req.query):
                return None
        elif req.table is None or req.statement.is_select != select:
            return None
        req.node.hits += 1
        return make(req)
    return handler


def fewer_columns(req, first=None):
    """The first 2 columns only; the first one renamed if first is given."""
    cols = req.statement.columns[:2]
    if first:
        cols = [(first, cols[0][1])] + cols[1:]
    rows = [r[:2] for r in req.table.rows]
    return req.envelope(RESULT, req.rows_body(rows, columns=cols))


def zero_columns(req, flags=0):
    return req.envelope(RESULT, req.rows_body([], columns=[], rows_count=1, flags=flags))


def paged_flip(page2_columns, page2_rows):
    """Page 1 as prepared (2 rows, more pages); page 2 with other columns."""
    def make(req):
        if req.paging_state is None:
            rows = [[1, c, "row %d" % c] for c in (1, 2)]
            return req.envelope(RESULT, req.rows_body(rows, paging_state=b"page2"))
        return req.envelope(RESULT, req.rows_body(page2_rows, columns=page2_columns))
    return make


FLIP_PAGES = 300


def flip_many(req):
    """FLIP_PAGES pages of 2 rows; v alternates between text 'ab' and int 12345."""
    n = struct.unpack(">i", req.paging_state)[0] if req.paging_state else 0
    v_int = n % 2 == 1
    values = {"k": 1, "c": 2 * n, "v": 12345 if v_int else "ab", "l": [n]}
    cols = [(c, "int" if c == "v" and v_int else t) for c, t in req.statement.columns]
    rows = [[values[c] for c, _ in cols]] * 2
    more = struct.pack(">i", n + 1) if n + 1 < FLIP_PAGES else None
    return req.envelope(RESULT, req.rows_body(rows, columns=cols, paging_state=more))


def claim_frame_v4(length, extra=b"\0" * 64):
    def make(req):
        return [struct.pack(">BBhBi", 0x84, 0, req.stream, RESULT, length) + extra]
    return make


def claim_frame_v5(length):
    """A 17-byte v5 frame: the first slice of a 'large message' of length bytes."""
    def make(req):
        return [v5_frame(struct.pack(">BBhBi", 0x85, 0, req.stream, RESULT, length), False)]
    return make


def huge_cell(req):
    cells = bytes_(int32(1)) + bytes_(int32(1)) + int32(0x7FFFFFF0) + b"abc"
    return req.envelope(RESULT, req.rows_body([], rows_count=1, cells=cells))


def huge_collection(req):
    """l claims 10,000,000 elements in 12 bytes."""
    cells = bytes_(int32(1)) + bytes_(int32(1)) + bytes_(int32(10_000_000) + int32(4) + int32(7))
    return req.envelope(RESULT, req.rows_body([], rows_count=1, cells=cells))


def huge_rows_count(req):
    rows = [[1, 1, "row 1"]]
    return req.envelope(RESULT, req.rows_body(rows, rows_count=0x7FFFFFFF))


def event_flood(req):
    env = envelope(EVENT, -1, event_body(), req.version)
    chunk = v5_frame(env * (131071 // len(env))) if req.conn.framed else env * 1500
    return [Flood(chunk * 4, max_seconds=30)]


def lz4_event_flood(req):
    """v5 LZ4 frames of 20 bytes... that each inflate to 128 KB of EVENTs."""
    env = envelope(EVENT, -1, event_body(), 5)
    n = 131071 // len(env)
    frame = v5_lz4_frame(lz4_repeat(env, n), len(env) * n)
    return [Flood(frame * 2000, max_seconds=30)]


def lz4_stray_flood(req):
    """v4 compressed stray RESULTs: 64 KB each that inflate to 16 MB."""
    size = 16 << 20
    body = struct.pack(">I", size) + lz4_repeat(b"\0" * 16, size // 16)
    env = struct.pack(">BBhBi", 0x84, 0x01, 32000, RESULT, len(body)) + body
    return [Flood(env * 16, max_seconds=30)]


def lz4_claim(req):
    """a v4 compressed body of 20 bytes claiming 250 MB once inflated"""
    body = struct.pack(">I", 250 << 20) + lz4_repeat(b"\0" * 16, 3)
    return [struct.pack(">BBhBi", 0x84, 0x01, req.stream, RESULT, len(body)) + body]


def stray_flood(req):
    stray = envelope(RESULT, 32000, void_body()) * 500
    big = envelope(RESULT, 32001, rows_body([("v", "text")], [["x" * 100]] * 500, "hostile", "t"))
    return [Flood((stray + big) * 4, max_seconds=30)]


GARBAGE = random.Random(7).randbytes(4096)


def garbage(req):
    return [GARBAGE]


def wrong_version(req):
    rows, _ = req.default_rows()
    return [envelope(RESULT, req.stream, req.rows_body(rows), version=3)]


def request_direction(req):
    body = void_body()
    return [struct.pack(">BBhBi", 0x04, 0, req.stream, RESULT, len(body)) + body]


def unknown_kind(req):
    return req.envelope(RESULT, int32(0x77) + b"junk")


def v5_bad_header_crc(req):
    rows, _ = req.default_rows()
    f = bytearray(v5_frames(envelope(RESULT, req.stream, req.rows_body(rows), 5)))
    f[3] ^= 0x01
    return [bytes(f)]


def v5_bad_payload_crc(req):
    rows, _ = req.default_rows()
    f = bytearray(v5_frames(envelope(RESULT, req.stream, req.rows_body(rows), 5)))
    f[-1] ^= 0x01
    return [bytes(f)]


def prepare_fewer_columns(req):
    st = req.statement
    return req.envelope(RESULT, prepared_body(
        st.id, st.binds, st.columns[:2], st.pk_indexes, st.table.keyspace, st.table.name,
        req.version, st.metadata_id))


def system_zero_columns(ks, table, nrows):
    def make(req):
        return req.envelope(RESULT, rows_body([], [], ks, table, rows_count=nrows))
    return make


def server_timeout(write_type=None, times=None):
    """
    The coordinator's Write_timeout (of write_type) or, without one, its
    Read_timeout (0 of 1 replicas answered), for the first 'times' requests
    (all of them if None); later ones get the default answer.
    """
    def make(req):
        if times is not None and req.node.hits > times:
            return None
        if write_type:
            body = (error_body(0x1100, "Operation timed out - received only 0 responses.")
                    + short(1) + int32(0) + int32(1) + string(write_type))
        else:
            body = (error_body(0x1200, "Operation timed out - received only 0 responses.")
                    + short(1) + int32(0) + int32(1) + bytes([0]))
        return req.envelope(ERROR, body)
    return make


# --- scenarios --------------------------------------------------------------------
class Scenario:
    def __init__(self, sid, title, sql, handler, kind, bound=QUICK, setup=None,
                 cancel_after=None, may_succeed=None, skip=None, hits=None):
        self.sid, self.title, self.sql, self.handler = sid, title, sql, handler
        self.kind, self.bound, self.setup = kind, bound, setup
        self.cancel_after = cancel_after
        self.may_succeed = may_succeed      # regex a successful output must match
        self.skip = skip
        self.hits = hits                    # crafted answers the node must have sent


SEL4 = "SELECT k, c, v FROM hostile.t4 WHERE k = 1"
SEL5 = "SELECT k, c, v FROM hostile.t5 WHERE k = 1"
SEL4Z = "SELECT k, c, v FROM hostile.t4z WHERE k = 1"       # lz4 compression
SEL5Z = "SELECT k, c, v FROM hostile.t5z WHERE k = 1"
ST_1S = "SET statement_timeout = '1s'"
DEFERRED_INSERT = ("BEGIN; SET LOCAL cql_fdw.write_mode = 'on_commit'; "
                   "INSERT INTO hostile.t4 VALUES (9, 9, 'x', '{1}'); COMMIT")

SCENARIOS = [
    Scenario("S1a", "v4 Rows with 2 of the 3 columns (full metadata)",
             SEL4, crafted(fewer_columns), "shape"),
    Scenario("S1b", "v4 Rows with 2 of 3 columns, the first named [applied]",
             SEL4, crafted(lambda r: fewer_columns(r, "[applied]")), "shape"),
    Scenario("S1c", "v4 Rows NO_METADATA claiming 2 columns (3 cached)",
             SEL4, crafted(lambda r: r.envelope(RESULT, r.rows_body(
                 [x[:2] for x in r.table.rows], columns=r.statement.columns[:2],
                 flags=NO_METADATA))), "shape"),
    Scenario("S1d", "v5 Rows with 2 of 3 columns, no METADATA_CHANGED",
             SEL5, crafted(fewer_columns), "shape"),
    Scenario("S1e", "PREPARE answer with 2 result columns for a 3-column SELECT",
             SEL4, crafted(prepare_fewer_columns, (PREPARE,)), "shape"),
    Scenario("S2a", "v4 Rows with ncols = 0 and rows_count = 1",
             SEL4, crafted(zero_columns), "shape"),
    Scenario("S2b", "v5 Rows with ncols = 0 and rows_count = 1",
             SEL5, crafted(zero_columns), "shape"),
    Scenario("S2c", "v4 Rows NO_METADATA with ncols = 0 and rows_count = 1",
             SEL4, crafted(lambda r: zero_columns(r, NO_METADATA)), "shape"),
    Scenario("S3a", "page 1 right, page 2 with 2 columns",
             SEL4, crafted(paged_flip([("k", "int"), ("c", "int")], [[1, 3]])), "shape"),
    Scenario("S3b", "page 1 right, page 2 with other types (c text, v int)",
             SEL4, crafted(paged_flip([("k", "int"), ("c", "text"), ("v", "int")], [[1, "3", 3]])), "shape"),
    Scenario("S3c", "%d pages flipping v between text and int" % FLIP_PAGES,
             "SELECT count(*), sum(length(v)) FROM hostile.t4 WHERE k = 1",
             crafted(flip_many), "shape", bound=5.0,
             may_succeed=r"^%d\|%d$" % (2 * FLIP_PAGES, FLIP_PAGES // 2 * (2 * 2 + 2 * 5))),
    Scenario("S4a", "v4 frame header claiming a 2 GB body",
             SEL4, crafted(claim_frame_v4(0x7FFFFFFF)), "claim", bound=SILENT),
    Scenario("S4b", "v4 frame header claiming 250 MB, 64 bytes sent",
             SEL4, crafted(claim_frame_v4(250 << 20)), "claim", bound=SILENT),
    Scenario("S4c", "v5 17-byte frame starting a 250 MB message",
             SEL5, crafted(claim_frame_v5(250 << 20)), "claim", bound=SILENT),
    Scenario("S4d", "a cell claiming 2 GB in a short body",
             SEL4, crafted(huge_cell), "claim"),
    Scenario("S4e", "a list<int> cell claiming 10,000,000 elements in 12 bytes",
             "SELECT k, c, l FROM hostile.t4 WHERE k = 1", crafted(huge_collection), "claim"),
    Scenario("S4f", "rows_count claiming 2^31-1 rows, one sent",
             SEL4, crafted(huge_rows_count), "claim"),
    Scenario("S4g", "v4 LZ4 body of 70 bytes claiming 250 MB inflated",
             SEL4Z, crafted(lz4_claim), "claim", bound=SILENT),
    Scenario("S5a", "endless EVENT frames (v4) vs statement_timeout 1s",
             SEL4, crafted(event_flood), "flood", bound=1.0 + CANCEL, setup=ST_1S),
    Scenario("S5b", "endless EVENT frames (v4) vs pg_cancel_backend after 1s",
             SEL4, crafted(event_flood), "flood", bound=CANCEL, cancel_after=1.0),
    Scenario("S5c", "endless stray RESULT frames (v4) vs statement_timeout 1s",
             SEL4, crafted(stray_flood), "flood", bound=1.0 + CANCEL, setup=ST_1S),
    Scenario("S5d", "endless EVENT frames (v5) vs statement_timeout 1s",
             SEL5, crafted(event_flood), "flood", bound=1.0 + CANCEL, setup=ST_1S),
    Scenario("S5e", "endless LZ4 v5 frames inflating to EVENTs vs statement_timeout 1s",
             SEL5Z, crafted(lz4_event_flood), "flood", bound=1.0 + CANCEL, setup=ST_1S),
    Scenario("S5f", "endless LZ4 v5 frames inflating to EVENTs vs pg_cancel_backend",
             SEL5Z, crafted(lz4_event_flood), "flood", bound=CANCEL, cancel_after=1.0),
    Scenario("S5g", "endless LZ4 v4 stray RESULTs inflating to 16 MB vs statement_timeout 1s",
             SEL4Z, crafted(lz4_stray_flood), "flood", bound=1.0 + CANCEL, setup=ST_1S),
    Scenario("S6a", "ANALYZE: Rows with ncols = 0 and rows_count = 1",
             "ANALYZE hostile.t4", crafted(zero_columns), "shape"),
    Scenario("S6b", "ANALYZE: PREPARE answer with 2 of 4 result columns",
             "ANALYZE hostile.t4", crafted(prepare_fewer_columns, (PREPARE,)), "shape"),
    Scenario("S6c", "ANALYZE: Rows with 2 of 4 columns (full metadata)",
             "ANALYZE hostile.t4", crafted(fewer_columns), "shape"),
    Scenario("S6d", "direct modify UPDATE answered with ncols = 0, rows_count = 1",
             "UPDATE hostile.t4 SET v = 'x' WHERE k = 1 AND c = 1",
             crafted(zero_columns, select=False), "shape", may_succeed=r"^$"),
    Scenario("S6e", "INSERT (if_not_exists) answered with ncols = 0, rows_count = 1",
             "INSERT INTO hostile.t4_lwt VALUES (9, 9, 'x', '{1}')",
             crafted(zero_columns, select=False), "shape", may_succeed=r"^$"),
    Scenario("S6f", "cql_execute(SELECT) answered with ncols = 0, rows_count = 1",
             "SELECT cql_execute('hostile_v4', 'SELECT * FROM hostile.t')",
             crafted(zero_columns, (QUERY,)), "shape", may_succeed=r"^$",
             skip=LIBRARY and "cql_execute() only runs on servers of the extension's cql_fdw"),
    Scenario("S6g", "connect: system.local with ncols = 0, rows_count = 1",
             "SELECT count(*) FROM hostile.t4",
             crafted(system_zero_columns("system", "local", 1), (QUERY,), system="system.local"),
             "shape", may_succeed=r"^5$"),
    Scenario("S6h", "table layout: system_schema.columns with ncols = 0, rows_count = 4",
             "SELECT count(*) FROM hostile.t4",
             crafted(system_zero_columns("system_schema", "columns", 4), (QUERY,),
                     system="system_schema.columns"), "shape"),
    Scenario("S7a", "4 KB of garbage in answer to the first control query",
             "SELECT count(*) FROM hostile.t4",
             crafted(garbage, (QUERY,), system="system.local"), "garbage"),
    Scenario("S7b", "4 KB of garbage in answer to the scan's EXECUTE",
             SEL4, crafted(garbage), "garbage"),
    Scenario("S7c", "a v3 envelope on a v4 connection",
             SEL4, crafted(wrong_version), "garbage"),
    Scenario("S7d", "an envelope with the request direction bit",
             SEL4, crafted(request_direction), "garbage"),
    Scenario("S7e", "a RESULT of unknown kind 0x77",
             SEL4, crafted(unknown_kind), "garbage"),
    Scenario("S7f", "v5 frame with a corrupt header CRC24",
             SEL5, crafted(v5_bad_header_crc), "garbage"),
    Scenario("S7g", "v5 frame with a corrupt payload CRC32",
             SEL5, crafted(v5_bad_payload_crc), "garbage", bound=SILENT),
    Scenario("S8a", "INSERT answered Write_timeout (SIMPLE) once: sent again to the only node",
             "INSERT INTO hostile.t4 VALUES (9, 9, 'x', '{1}')",
             crafted(server_timeout("SIMPLE", 1), select=False), "timeout",
             may_succeed=r"^$", hits=2),
    Scenario("S8b", "INSERT answered Write_timeout (SIMPLE) every time: max_retries (3), then the error",
             "INSERT INTO hostile.t4 VALUES (9, 9, 'x', '{1}')",
             crafted(server_timeout("SIMPLE"), select=False), "timeout", hits=4),
    Scenario("S8c", "INSERT (if_not_exists) answered Write_timeout (CAS): never replayed",
             "INSERT INTO hostile.t4_lwt VALUES (9, 9, 'x', '{1}')",
             crafted(server_timeout("CAS"), select=False), "timeout", hits=1),
    Scenario("S8e", "write deferred to COMMIT answered Write_timeout (SIMPLE) once: sent again, COMMIT succeeds",
             DEFERRED_INSERT, crafted(server_timeout("SIMPLE", 1), select=False), "timeout",
             may_succeed=r"^$", hits=2),
    Scenario("S8f", "write deferred to COMMIT answered Write_timeout (SIMPLE) every time: max_retries (3), then the error",
             DEFERRED_INSERT, crafted(server_timeout("SIMPLE"), select=False), "timeout", hits=4),
    Scenario("S8d", "scan page answered Read_timeout once: sent again to the only node",
             SEL4, crafted(server_timeout(None, 1)), "timeout",
             may_succeed=r"^1\|5\|row 5$", hits=2),
]

CLASSES = {"shape": ("HV", "08"), "claim": ("HV", "08"), "garbage": ("HV", "08"),
           "flood": ("57014",), "timeout": ("HV00L",)}
MESSAGES = {
    "shape": r"(?i)column|metadata|cell|row|malformed|invalid|truncated",
    "claim": r"(?i)large|length|size|malformed|invalid|truncat|exceed|limit|count|timed out",
    "garbage": r"(?i)invalid|malformed|protocol|unexpected|version|checksum|crc|closed|timed out",
    "flood": r"canceling statement due to (statement timeout|user request)",
    "timeout": r"(?i)timed out",
}
OUT_OF_MEMORY = ("HV014", "53200")


# --- PostgreSQL health --------------------------------------------------------------
def log_size():
    try:
        return os.path.getsize(PG_LOG)
    except OSError:
        return None


def log_since(offset):
    if offset is None:
        return ""
    try:
        with open(PG_LOG, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def postmaster_start():
    """
    When PostgreSQL last (re)started.  pg_postmaster_start_time() alone does
    not change when the postmaster reinitializes after a backend crash (seen
    on 18); the checkpointer is restarted then, so its backend_start does.
    """
    rc, out = psql("SELECT pg_postmaster_start_time() || ' / checkpointer since ' || "
                   "(SELECT backend_start FROM pg_stat_activity WHERE backend_type = 'checkpointer')",
                   timeout=10)
    return out.strip() if rc == 0 else None


def wait_for_postgres(seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            rc, _ = psql("SELECT 1", timeout=5)
            if rc == 0:
                return True
        except Exception:
            pass
        time.sleep(0.5)
    return False


def vm_peak_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


class Health:
    """A watcher session, the postmaster start time and the server log."""

    def __init__(self):
        self.start_time = postmaster_start()
        self.watcher = Session()
        self.watcher.run("SELECT 1", timeout=10)

    def check(self, pid, log_offset, out):
        """(crashed by this backend?, evidence, restarted?)"""
        pattern = (r"server process \(PID %d\) (was terminated by [^\n]*|exited with exit code [^\n]*)"
                   % pid)
        text = log_since(log_offset)
        mine = re.search(pattern, text)
        # psql lost its backend: give the postmaster a moment to log why
        deadline = time.monotonic() + 10
        while (not mine and "connection to server was lost" in out
               and time.monotonic() < deadline):
            time.sleep(0.2)
            text = log_since(log_offset)
            mine = re.search(pattern, text)
        if mine:
            # a crash restarts every backend: wait for the restart to finish
            deadline = time.monotonic() + 30
            while ("ready to accept connections" not in text[mine.end():]
                   and time.monotonic() < deadline):
                time.sleep(0.2)
                text = log_since(log_offset)
        out, _ = self.watcher.run("SELECT 1", timeout=10)
        watcher_alive = out.strip().splitlines()[-1:] == ["1"] and "<<" not in out
        restarted = (bool(mine) or not watcher_alive
                     or "terminating any other active server processes" in text)
        if restarted:
            wait_for_postgres()
            self.watcher.kill()
            self.watcher = Session()
            self.watcher.run("SELECT 1", timeout=10)
        start = postmaster_start()
        if start and self.start_time and start != self.start_time:
            restarted = True
            self.start_time = start
        evidence = mine.group(0) if mine else ""
        if restarted and not mine:
            other = re.search(r"server process \(PID \d+\) [^\n]*", text)
            evidence = other.group(0) if other else "watcher session lost"
        return bool(mine), evidence, restarted


# --- running one scenario -----------------------------------------------------------
def first_error(out):
    """(SQLSTATE, message, detail) of the first error in psql's output"""
    m = re.search(r"(ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}):\s+(.*)", out)
    if not m:
        return None, None, ""
    d = re.search(r"^DETAIL:\s+(.*)", out[m.end():], re.M)
    return m.group(2), m.group(3).strip(), d.group(1).strip() if d else ""


def run_statement(sc):
    """Run sc.sql in a new session; never blocks for long.  Returns a dict."""
    s = Session()
    s.run("SET statement_timeout = '15s'", timeout=10)
    if sc.setup:
        s.run(sc.setup, timeout=10)
    pid = s.pid()
    peak0 = vm_peak_kb(pid)
    r = {"pid": pid, "hung": False, "cancel_secs": None}
    cancel_at = []
    if sc.cancel_after:
        def cancel():
            cancel_at.append(time.monotonic())
            psql("SELECT pg_cancel_backend(%d)" % pid, timeout=10)
        timer = threading.Timer(sc.cancel_after, cancel)
        timer.start()
    t0 = time.monotonic()
    s.send(sc.sql)
    out, secs, finished = s.wait(sc.bound + (sc.cancel_after or 0) + 1.5)
    if not finished:
        # a hang: unpin the backend step by step, so the run goes on
        r["hung"] = True
        node.stop_floods.set()
        node.drop_connections()
        out, secs, finished = s.wait(3)
        if not finished:
            psql("SELECT pg_terminate_backend(%d)" % pid, timeout=10)
            out, secs, finished = s.wait(2)
        if not finished:
            s.kill()
            out += "\n<<psql killed>>"
    if sc.cancel_after:
        timer.join()
        if cancel_at:
            r["cancel_secs"] = t0 + secs - cancel_at[0]
    r["peak_mb"] = None
    peak1 = vm_peak_kb(pid)
    if peak0 is not None and peak1 is not None:
        r["peak_mb"] = (peak1 - peak0) / 1024.0
    s.close()
    r.update(out=out, secs=secs, hits=node.hits)
    return r


def describe(r, sqlstate, msg, crashed, evidence):
    if crashed:
        return "CRASH (%s)" % evidence
    if r["hung"]:
        return "HANG (no answer within the bound; %s)" % (
            "ended by closing the fake node's sockets after %.1f s" % r["secs"]
            if sqlstate else "psql had to be killed")
    if sqlstate:
        return "ERROR %s after %.2f s: %s" % (sqlstate, r["secs"], msg)
    return "no error after %.2f s: %s" % (r["secs"], r["out"].strip()[:200] or "(no output)")


def lines_of(sc):
    """TAP lines check_scenario prints for a scenario: the plan is known up front"""
    return 4 if sc.kind == "claim" else 3


def check_scenario(sc, health):
    """Run one scenario and print its TAP lines; a summary dict (None if skipped)."""
    if sc.skip:
        for i in range(lines_of(sc)):
            skip("%s %s%s" % (sc.sid, sc.title, " (check %d)" % (i + 1) if i else ""), sc.skip)
        return None
    node.reset()
    node.handler = sc.handler
    offset = log_size()
    r = run_statement(sc)
    node.reset()
    sqlstate, msg, detail = first_error(r["out"])
    crashed, evidence, restarted = health.check(r["pid"], offset, r["out"])
    what = describe(r, sqlstate, msg, crashed, evidence)

    # seconds from the cancel (statement_timeout 1s or pg_cancel_backend) to the error
    cancel_secs = None
    if sc.kind == "flood" and sqlstate == "57014":
        cancel_secs = r["cancel_secs"] if sc.cancel_after else r["secs"] - 1.0
    took = r["cancel_secs"] if sc.cancel_after and r["cancel_secs"] is not None else r["secs"]

    problems = []
    succeeded = (sqlstate is None and not crashed and not r["hung"] and sc.may_succeed
                 and re.search(sc.may_succeed, r["out"].strip(), re.M))
    if succeeded:
        pass
    elif crashed:
        problems.append("the backend crashed")
    elif r["hung"]:
        problems.append("no answer within %.1f s" % sc.bound)
    elif sqlstate is None:
        problems.append("no ERROR")
    else:
        if not sqlstate.startswith(CLASSES[sc.kind]):
            problems.append("SQLSTATE %s is not of class %s" % (sqlstate, "/".join(CLASSES[sc.kind])))
        if sc.kind == "claim" and sqlstate in OUT_OF_MEMORY:
            problems.append("out of memory: the claimed size was allocated")
        if not re.search(MESSAGES[sc.kind], "%s %s" % (msg, detail)):
            problems.append("message does not say what is wrong")
        if took > sc.bound:
            problems.append("took %.2f s (bound %.1f s)" % (took, sc.bound))
    if r["hits"] == 0:
        problems.append("the fake node never sent the crafted answer")
    elif sc.hits is not None and r["hits"] != sc.hits:
        problems.append("the node was asked %d times, not %d" % (r["hits"], sc.hits))
    passed = ok(not problems, "%s %s: %s" % (sc.sid, sc.title, what),
                "\n".join(problems + ["output:", r["out"]]))

    passed &= ok(not crashed and not restarted, "%s: the backend did not crash" % sc.sid,
                 evidence or "PostgreSQL restarted")
    if sc.kind == "claim" and r["peak_mb"] is None:
        skip("%s: backend peak memory" % sc.sid, "VmPeak of the backend not readable from /proc")
    elif sc.kind == "claim":
        grew = ok(r["peak_mb"] < MEMORY_LIMIT_MB, "%s: backend peak memory grew by %.0f MB (limit %d MB)"
                  % (sc.sid, r["peak_mb"], MEMORY_LIMIT_MB))
        if not grew:
            what += "; backend VmPeak +%.0f MB" % r["peak_mb"]
        passed &= grew
    rc, out = psql("SELECT count(*) FROM hostile.t4", timeout=30)
    passed &= ok(rc == 0 and out.strip() == "5", "%s: a new session works afterwards" % sc.sid, out)
    return dict(sid=sc.sid, what=what, passed=passed, crashed=crashed or restarted,
                hung=r["hung"], cancel_secs=cancel_secs)


SERVERS = [("v4", "4", "none"), ("v5", "5", "none"), ("v4z", "4", "lz4"), ("v5z", "5", "lz4")]


def setup_sql(node):
    """Servers hostile_v4 ... hostile_v5z, tables hostile.t4 ... t5z, on the fake node."""
    fdw = "cql_fdw"
    sql = "CREATE EXTENSION IF NOT EXISTS cql_fdw;\n"
    sql += "".join("DROP SERVER IF EXISTS hostile_%s CASCADE;\n" % name for name, _, _ in SERVERS)
    sql += "DROP FOREIGN DATA WRAPPER IF EXISTS hostile_fdw CASCADE;\n"
    sql += "DROP SCHEMA IF EXISTS hostile CASCADE;\nCREATE SCHEMA hostile;\n"
    if LIBRARY:
        fdw = "hostile_fdw"
        sql += f"""
CREATE FUNCTION hostile.fdw_handler() RETURNS fdw_handler AS '{LIBRARY}', 'cql_fdw_handler' LANGUAGE C STRICT;
CREATE FUNCTION hostile.fdw_validator(text[], oid) RETURNS void AS '{LIBRARY}', 'cql_fdw_validator' LANGUAGE C STRICT;
CREATE FOREIGN DATA WRAPPER hostile_fdw HANDLER hostile.fdw_handler VALIDATOR hostile.fdw_validator;
"""
    for name, version, compression in SERVERS:
        sql += f"""
CREATE SERVER hostile_{name} FOREIGN DATA WRAPPER {fdw} OPTIONS (host '{node.host}', port '{node.port}',
  protocol_version '{version}', compression '{compression}',
  connect_timeout '{REQUEST_TIMEOUT_MS}', request_timeout '{REQUEST_TIMEOUT_MS}');
CREATE USER MAPPING FOR CURRENT_USER SERVER hostile_{name};
CREATE FOREIGN TABLE hostile.t{name[1:]} (k int, c int, v text, l int[]) SERVER hostile_{name}
  OPTIONS (keyspace 'hostile', "table" 't');
"""
    return sql + """
CREATE FOREIGN TABLE hostile.t4_lwt (k int, c int, v text, l int[]) SERVER hostile_v4
  OPTIONS (keyspace 'hostile', "table" 't', if_not_exists 'true');
"""


def main():
    global node
    plan(1 + sum(lines_of(sc) for sc in SCENARIOS))
    try:
        node = FakeCqlNode(FAKE_HOST, 0, [demo_table("hostile")]).start()
    except OSError as e:
        note("cannot listen on %s (%s): using 127.0.0.1" % (FAKE_HOST, e))
        node = FakeCqlNode("127.0.0.1", 0, [demo_table("hostile")]).start()
    rc, out = psql(setup_sql(node))
    if not setup_step(rc == 0, "foreign servers and tables on the fake node %s:%d%s"
                      % (node.host, node.port, " (FDW from %s)" % LIBRARY if LIBRARY else ""), out):
        return done()
    rc, out = psql("SELECT count(*) FROM hostile.t4; SELECT count(*) FROM hostile.t5; "
                   "SELECT count(*) FROM hostile.t4z; SELECT count(*) FROM hostile.t5z")
    if not ok(rc == 0 and out.split() == ["5"] * 4,
              "the fake node serves scans with default answers (v4, v5, with and without LZ4)", out):
        return done()

    health = Health()
    t_run = time.monotonic()
    results = []
    for sc in SCENARIOS:
        if time.monotonic() - t_run > RUN_BUDGET:
            ok(False, "%s %s: not run, the run's time budget (%d s) is spent" % (sc.sid, sc.title, RUN_BUDGET))
            results.append(dict(sid=sc.sid, what="not run (time budget spent)", passed=False,
                                crashed=False, hung=False, cancel_secs=None))
            continue
        results.append(check_scenario(sc, health))
    node.stop()
    health.watcher.close()
    run = [r for r in results if r]
    crashes = [r["sid"] for r in run if r["crashed"]]
    hangs = [r["sid"] for r in run if r["hung"]]
    cancels = [r["cancel_secs"] for r in run if r["cancel_secs"] is not None]
    note("scenario results (%s):" % (LIBRARY or "installed cql_fdw"))
    note("\n".join("%-4s %-4s %s" % (r["sid"], "ok" if r["passed"] else "FAIL", r["what"]) for r in run))
    note("scenarios run: %d, passed: %d, failed: %d"
         % (len(run), sum(r["passed"] for r in run), sum(not r["passed"] for r in run)))
    note("crashes: %d %s" % (len(crashes), " ".join(crashes)))
    note("hangs: %d %s" % (len(hangs), " ".join(hangs)))
    note("max time to cancel (statement_timeout 1s or pg_cancel_backend): %s"
         % ("hung (%s)" % " ".join(h for h in hangs if h.startswith("S5")) if any(h.startswith("S5") for h in hangs)
            else "%.2f s" % max(cancels) if cancels else "n/a"))
    note("scenario time: %.1f s" % (time.monotonic() - t_run))
    psql("DROP SCHEMA IF EXISTS hostile CASCADE; DROP FOREIGN DATA WRAPPER IF EXISTS hostile_fdw CASCADE; "
         + "".join("DROP SERVER IF EXISTS hostile_%s CASCADE; " % name for name, _, _ in SERVERS))
    return done()


if __name__ == "__main__":
    sys.exit(main())
