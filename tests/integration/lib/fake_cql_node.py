#!/usr/bin/env python3
"""
A scripted fake Cassandra node: just enough of the CQL native protocol for
cql_fdw to connect, read the schema of one table and scan it, and a hook
through which a test answers any request with crafted bytes.

What it speaks
  * protocol v4 (9-byte envelope headers on the socket) and v5 (the same
    envelopes inside CRC24/CRC32 frames once STARTUP is answered); the
    version is the one of the client's first envelope.  LZ4: SUPPORTED
    offers it; compressed requests (v4 bodies, v5 LZ4 frames) are read,
    answers go out uncompressed (allowed by both versions).  lz4_repeat()
    builds an LZ4 block that inflates about 255 times, for floods.
  * OPTIONS -> SUPPORTED, STARTUP -> READY (or AUTHENTICATE when
    require_auth is set; any AUTH_RESPONSE succeeds), REGISTER -> READY.
  * QUERY / PREPARE / EXECUTE / BATCH:
      - the control-connection queries: system.local (a single node, one
        token, Murmur3Partitioner), system.peers_v2 / peers (no rows),
        system_schema.keyspaces (SimpleStrategy RF 1), schema_version;
      - the schema queries for the table layout: system_schema.keyspaces,
        tables, views, types, columns, system_virtual_schema.*;
      - SELECT / INSERT / UPDATE / DELETE on the table(s) it holds: a
        PREPARE is answered with an id, bind-marker metadata (types taken
        from the statement text: "col" = ?, token(...) > ?, IN ?, LIMIT ?,
        USING TTL ?) and the result columns; an EXECUTE or QUERY of a SELECT
        returns the table's rows, paged by the client's page size (paging
        state = row offset).  Bound values are not used to filter: every
        scan sees all rows once per partition (token ranges are answered by
        a fake token per row, so a token scan still sees each row once).
        A SELECT of counts only (count(*), count("col")) answers one row:
        the counts of those rows.  Writes answer Void and change nothing.
      - anything else: ERROR Invalid (0x2200).

The hook
  node.handler = fn(req) is called for every QUERY, PREPARE, EXECUTE and
  BATCH (system queries included: check req.is_system / req.table) before
  the default answer is made.  It returns
      None            the default answer;
      bytes           sent as they are (use req.envelope(...) for a
                      well-formed envelope, framed on a v5 connection);
      a list          of bytes and actions, in order:
                        Close()           close the connection
                        Sleep(seconds)    pause
                        Flood(chunk, max_seconds=60)
                                          send chunk over and over until the
                                          client goes away, node.stop_floods
                                          is set, drop_connections() is
                                          called or max_seconds pass
                      An empty list answers nothing (a silent server).
  req carries: opcode, stream, version, query (for EXECUTE the prepared
  text), values (raw bytes), page_size, paging_state, flags, statement
  (the analysed statement: table, result columns, bind columns), conn.
  req.default_rows(), req.rows_body(...), req.envelope(...) and the module
  functions rows_body(), prepared_body(), error_body(), event_body() build
  replies; rows_body() can lie about every count (ncols, rows_count) and
  take raw cells, which is what the hostile-server tests are about.

  Frames: envelope(), v5_frame() (CRC format, can lie about its length),
  v5_lz4_frame(), v5_frames() (slices a large message).

  Other knobs: node.require_auth, node.drop_connections() (closes every
  client socket: unpins a backend stuck reading a flood), node.log (what
  was asked: (connection id, opcode name, query text)), node.hits (counter
  a handler bumps, req.node.hits += 1, to prove its crafted reply was
  sent), node.executes() (the EXECUTEd texts), node.reset()
  (handler None, stop_floods cleared, log emptied).

Run standalone (default answers only) for manual poking:
    python3 tests/integration/lib/fake_cql_node.py [--host 127.0.0.9] [--port 9042]
"""
import hashlib
import ipaddress
import re
import socket
import struct
import threading
import time
import uuid
import zlib

# --- opcodes --------------------------------------------------------------------
ERROR, STARTUP, READY, AUTHENTICATE = 0x00, 0x01, 0x02, 0x03
OPTIONS, SUPPORTED, QUERY, RESULT = 0x05, 0x06, 0x07, 0x08
PREPARE, EXECUTE, REGISTER, EVENT = 0x09, 0x0A, 0x0B, 0x0C
BATCH, AUTH_CHALLENGE, AUTH_RESPONSE, AUTH_SUCCESS = 0x0D, 0x0E, 0x0F, 0x10
OPCODE_NAMES = {v: k for k, v in dict(
    ERROR=ERROR, STARTUP=STARTUP, READY=READY, AUTHENTICATE=AUTHENTICATE,
    OPTIONS=OPTIONS, SUPPORTED=SUPPORTED, QUERY=QUERY, RESULT=RESULT,
    PREPARE=PREPARE, EXECUTE=EXECUTE, REGISTER=REGISTER, EVENT=EVENT,
    BATCH=BATCH, AUTH_CHALLENGE=AUTH_CHALLENGE, AUTH_RESPONSE=AUTH_RESPONSE,
    AUTH_SUCCESS=AUTH_SUCCESS).items()}

# RESULT kinds and Rows metadata flags
VOID, ROWS, SET_KEYSPACE, PREPARED, SCHEMA_CHANGE = 1, 2, 3, 4, 5
GLOBAL_TABLES_SPEC, HAS_MORE_PAGES, NO_METADATA, METADATA_CHANGED = 0x1, 0x2, 0x4, 0x8

# query flags
Q_VALUES, Q_SKIP_METADATA, Q_PAGE_SIZE, Q_PAGING_STATE = 0x01, 0x02, 0x04, 0x08
Q_SERIAL, Q_TIMESTAMP, Q_NAMES, Q_KEYSPACE, Q_NOW = 0x10, 0x20, 0x40, 0x80, 0x100

# error codes
ERR_SERVER, ERR_PROTOCOL, ERR_INVALID, ERR_UNPREPARED = 0x0000, 0x000A, 0x2200, 0x2500

V5_MAX_PAYLOAD = 131071


# --- primitives -------------------------------------------------------------------
def short(n):
    return struct.pack(">H", n)


def int32(n):
    return struct.pack(">i", n)


def string(s):
    b = s.encode()
    return short(len(b)) + b


def long_string(s):
    b = s.encode()
    return int32(len(b)) + b


def string_list(items):
    return short(len(items)) + b"".join(string(s) for s in items)


def string_multimap(m):
    return short(len(m)) + b"".join(string(k) + string_list(v) for k, v in m.items())


def bytes_(b):
    """[bytes]: None is null (-1)."""
    return int32(-1) if b is None else int32(len(b)) + b


def short_bytes(b):
    return short(len(b)) + b


def inet(addr, port):
    packed = ipaddress.ip_address(addr).packed
    return bytes([len(packed)]) + packed + int32(port)


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated request")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def byte(self):
        return self.take(1)[0]

    def short(self):
        return struct.unpack(">H", self.take(2))[0]

    def int(self):
        return struct.unpack(">i", self.take(4))[0]

    def long(self):
        return struct.unpack(">q", self.take(8))[0]

    def string(self):
        return self.take(self.short()).decode()

    def long_string(self):
        return self.take(self.int()).decode()

    def bytes(self):
        n = self.int()
        return None if n < 0 else self.take(n)

    def short_bytes(self):
        return self.take(self.short())


# --- types ------------------------------------------------------------------------
TYPE_IDS = {"custom": 0x00, "ascii": 0x01, "bigint": 0x02, "blob": 0x03, "boolean": 0x04,
            "counter": 0x05, "decimal": 0x06, "double": 0x07, "float": 0x08, "int": 0x09,
            "timestamp": 0x0B, "uuid": 0x0C, "text": 0x0D, "varchar": 0x0D, "varint": 0x0E,
            "timeuuid": 0x0F, "inet": 0x10, "date": 0x11, "time": 0x12, "smallint": 0x13,
            "tinyint": 0x14, "list": 0x20, "map": 0x21, "set": 0x22, "tuple": 0x31}


def parse_type(s):
    """'map<text, frozen<list<int>>>' -> ('map', ('text',), ('list', ('int',)))"""
    s = s.strip()
    m = re.match(r"^(\w+)\s*<(.*)>$", s, re.S)
    if not m:
        return (s.lower(),)
    name, inner = m.group(1).lower(), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "<") - (ch == ">")
        cur += ch
    parts.append(cur)
    if name == "frozen":
        return parse_type(parts[0])
    return (name,) + tuple(parse_type(p) for p in parts)


def type_option(t):
    """[option] of a type string or parsed type"""
    if isinstance(t, str):
        t = parse_type(t)
    out = short(TYPE_IDS[t[0]])
    if t[0] == "tuple":
        out += short(len(t) - 1)
    return out + b"".join(type_option(sub) for sub in t[1:])


def encode_value(t, v):
    """A Python value as the [bytes] content of CQL type t (None = null)."""
    if v is None:
        return None
    if isinstance(t, str):
        t = parse_type(t)
    name = t[0]
    if name in ("int",):
        return struct.pack(">i", v)
    if name in ("bigint", "counter", "timestamp", "time"):
        return struct.pack(">q", v)
    if name == "smallint":
        return struct.pack(">h", v)
    if name == "tinyint":
        return struct.pack(">b", v)
    if name == "boolean":
        return b"\x01" if v else b"\x00"
    if name == "double":
        return struct.pack(">d", v)
    if name == "float":
        return struct.pack(">f", v)
    if name in ("text", "varchar", "ascii"):
        return v.encode()
    if name in ("uuid", "timeuuid"):
        return uuid.UUID(str(v)).bytes
    if name == "inet":
        return ipaddress.ip_address(v).packed
    if name == "blob":
        return bytes(v)
    if name in ("list", "set"):
        return int32(len(v)) + b"".join(bytes_(encode_value(t[1], e)) for e in v)
    if name == "map":
        return int32(len(v)) + b"".join(bytes_(encode_value(t[1], k)) + bytes_(encode_value(t[2], x))
                                        for k, x in v.items())
    raise ValueError("no encoder for %r" % (t,))


# --- message bodies -------------------------------------------------------------
def envelope(opcode, stream, body, version=4, flags=0):
    """A response envelope: 9-byte header + body (not v5-framed)."""
    return struct.pack(">BBhBi", 0x80 | version, flags, stream, opcode, len(body)) + body


def rows_body(columns, rows, ks="ks", table="t", paging_state=None, flags=0,
              ncols=None, rows_count=None, cells=None, new_metadata_id=None):
    """
    RESULT Rows.  columns: [(name, type)]; rows: lists of Python values.
    Lies on request: ncols / rows_count replace the true counts, cells (raw
    bytes) replace the encoded rows; flags may add NO_METADATA (no column
    specs written) or METADATA_CHANGED (needs new_metadata_id, v5).
    """
    if paging_state is not None:
        flags |= HAS_MORE_PAGES
    if new_metadata_id is not None:
        flags |= METADATA_CHANGED
    if not flags & NO_METADATA:
        flags |= GLOBAL_TABLES_SPEC
    out = int32(ROWS) + int32(flags) + int32(len(columns) if ncols is None else ncols)
    if paging_state is not None:
        out += bytes_(paging_state)
    if new_metadata_id is not None:
        out += short_bytes(new_metadata_id)
    if not flags & NO_METADATA:
        out += string(ks) + string(table)
        for name, typ in columns:
            out += string(name) + type_option(typ)
    out += int32(len(rows) if rows_count is None else rows_count)
    if cells is not None:
        return out + cells
    for row in rows:
        for (_, typ), v in zip(columns, row):
            out += bytes_(encode_value(typ, v))
    return out


def prepared_body(stmt_id, binds, columns, pk_indexes=(), ks="ks", table="t",
                  version=4, result_metadata_id=b"", result_ncols=None):
    """RESULT Prepared: id, bind-marker metadata, result metadata."""
    out = int32(PREPARED) + short_bytes(stmt_id)
    if version >= 5:
        out += short_bytes(result_metadata_id)
    out += int32(GLOBAL_TABLES_SPEC) + int32(len(binds)) + int32(len(pk_indexes))
    out += b"".join(short(i) for i in pk_indexes)
    out += string(ks) + string(table)
    for name, typ in binds:
        out += string(name) + type_option(typ)
    if columns:
        out += int32(GLOBAL_TABLES_SPEC)
        out += int32(len(columns) if result_ncols is None else result_ncols)
        out += string(ks) + string(table)
        for name, typ in columns:
            out += string(name) + type_option(typ)
    else:
        out += int32(NO_METADATA) + int32(0)
    return out


def void_body():
    return int32(VOID)


def error_body(code, message):
    return int32(code) + string(message)


def event_body(change="UP", addr="127.0.0.9", port=9042):
    return string("STATUS_CHANGE") + string(change) + inet(addr, port)


# --- v5 framing -----------------------------------------------------------------
def crc24(data):
    crc = 0x875060
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1974F0B
    return crc & 0xFFFFFF


CRC32_PRIME = zlib.crc32(b"\xfa\x2d\x55\xca")


def crc32(data):
    return zlib.crc32(data, CRC32_PRIME) & 0xFFFFFFFF


def v5_frame(payload, self_contained=True, header_len=None):
    """One v5 uncompressed frame; header_len lies about the payload length."""
    n = len(payload) if header_len is None else header_len
    h = (n | (int(self_contained) << 17)).to_bytes(3, "little")
    return h + crc24(h).to_bytes(3, "little") + payload + struct.pack("<I", crc32(payload))


def v5_lz4_frame(payload, uncompressed_len=0, self_contained=True):
    """
    One v5 LZ4-format frame.  uncompressed_len 0 means the payload is
    stored as it is; else payload is an LZ4 block of that size.
    """
    h = (len(payload) | (uncompressed_len << 17) | (int(self_contained) << 34)).to_bytes(5, "little")
    return h + crc24(h).to_bytes(3, "little") + payload + struct.pack("<I", crc32(payload))


def v5_frames(data, lz4=False):
    """Envelope bytes as v5 frames: one self-contained, or slices of a large one."""
    frame = v5_lz4_frame if lz4 else v5_frame
    if len(data) <= V5_MAX_PAYLOAD:
        return frame(data)
    return b"".join(frame(data[i:i + V5_MAX_PAYLOAD], self_contained=False)
                    for i in range(0, len(data), V5_MAX_PAYLOAD))


# --- LZ4 blocks ---------------------------------------------------------------------
def lz4_decompress(src, size):
    """An LZ4 block (no frame header) of size bytes; small inputs only."""
    out, i = bytearray(), 0
    while i < len(src):
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while True:
                lit += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        out += src[i:i + lit]
        i += lit
        if i >= len(src):
            break
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        n = token & 15
        if n == 15:
            while True:
                n += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        start = len(out) - offset
        for k in range(n + 4):
            out.append(out[start + k])
    if len(out) != size:
        raise ValueError("LZ4 block decodes to %d bytes, not %d" % (len(out), size))
    return bytes(out)


def _lz4_length(n):
    return b"\xff" * (n // 255) + bytes([n % 255])


def lz4_repeat(unit, count):
    """
    An LZ4 block of unit * count, about 255 times smaller: unit as
    literals, one overlapping match, unit again as the closing literals
    (LZ4 wants at least 5 literal bytes at the end, and the last match to
    start 12 bytes before it: unit must be at least 12 bytes).
    """
    size = len(unit)
    match = size * count - 2 * size
    if size < 12 or match < 4:
        raise ValueError("lz4_repeat needs a unit of 12 bytes or more, 3 times or more")

    def literals(token_low):
        tok = (min(size, 15) << 4) | token_low
        return bytes([tok]) + (_lz4_length(size - 15) if size >= 15 else b"") + unit

    out = literals(min(match - 4, 15)) + struct.pack("<H", size)
    if match - 4 >= 15:
        out += _lz4_length(match - 4 - 15)
    return out + literals(0)


# --- actions a handler can return -----------------------------------------------
class Close:
    """Close the connection."""


class Sleep:
    def __init__(self, seconds):
        self.seconds = seconds


class Flood:
    """Send chunk again and again (see the module docstring)."""

    def __init__(self, chunk, max_seconds=60):
        self.chunk, self.max_seconds = chunk, max_seconds


# --- the schema the node holds ----------------------------------------------------
class Table:
    """
    A table: columns [(name, type)], partition key and clustering column
    names, and rows (lists of Python values in column order).
    """

    def __init__(self, keyspace, name, columns, partition_key, clustering=(), rows=()):
        self.keyspace, self.name = keyspace, name
        self.columns = list(columns)
        self.types = dict(columns)
        self.partition_key, self.clustering = list(partition_key), list(clustering)
        self.rows = [list(r) for r in rows]

    def kind(self, col):
        if col in self.partition_key:
            return "partition_key", self.partition_key.index(col)
        if col in self.clustering:
            return "clustering", self.clustering.index(col)
        return "regular", -1

    def token(self, row):
        """A stable fake token per row (not Murmur3: the FDW does not check)."""
        key = repr([row[i] for i, (n, _) in enumerate(self.columns) if n in self.partition_key])
        return struct.unpack(">q", hashlib.md5(key.encode()).digest()[:8])[0]


class Statement:
    """What the node understood of a CQL text."""

    def __init__(self, query, table=None, columns=(), binds=(), pk_indexes=(), is_select=False):
        self.query, self.table = query, table
        self.columns, self.binds = list(columns), list(binds)
        self.pk_indexes, self.is_select = list(pk_indexes), is_select
        self.id = hashlib.md5(query.encode()).digest()
        self.metadata_id = hashlib.md5(repr(self.columns).encode()).digest()


def _unquote(ident):
    ident = ident.strip()
    return ident[1:-1].replace('""', '"') if ident.startswith('"') else ident.lower()


_TABLE_RE = r'(?:FROM|INTO|UPDATE)\s+("(?:[^"]|"")+"|\w+)\s*\.\s*("(?:[^"]|"")+"|\w+)'
_MARKER_RE = re.compile(
    r'(token\s*\([^)]*\))\s*(?:>=|<=|>|<)\s*\?'          # token(k) > ?
    r'|("(?:[^"]|"")+"|\w+)\s*(=|>=|<=|>|<)\s*\?'        # "col" = ?
    r'|("(?:[^"]|"")+"|\w+)\s+IN\s*\?'                   # "col" IN ?
    r'|(LIMIT|TTL|TIMESTAMP)\s*\?', re.I)


def analyse(query, tables):
    """A Statement for a SELECT / INSERT / UPDATE / DELETE on one of tables."""
    m = re.search(_TABLE_RE, query, re.I)
    if not m:
        return Statement(query)
    key = (_unquote(m.group(1)), _unquote(m.group(2)))
    table = tables.get(key)
    if table is None:
        return Statement(query)
    verb = query.lstrip().split(None, 1)[0].upper()
    binds, columns = [], []
    if verb == "SELECT":
        sel = re.match(r"\s*SELECT\s+(.*?)\s+FROM\s", query, re.I | re.S).group(1)
        if sel.strip() == "*":
            columns = list(table.columns)
        else:
            for part in sel.split(","):
                if re.match(r"\s*count\s*\(", part, re.I):
                    columns.append((part.strip(), "bigint"))     # an aggregate
                    continue
                name = _unquote(part)
                columns.append((name, table.types.get(name, "int")))
    if verb == "INSERT":
        cols = re.search(r"\(([^)]*)\)\s*VALUES", query, re.I).group(1)
        for c in cols.split(","):
            name = _unquote(c)
            binds.append((name, table.types[name]))
    for mm in _MARKER_RE.finditer(query):
        if mm.group(1):
            binds.append(("partition key token", "bigint"))
        elif mm.group(2):
            name = _unquote(mm.group(2))
            binds.append((name, table.types.get(name, "int")))
        elif mm.group(4):
            name = _unquote(mm.group(4))
            binds.append((name, "list<%s>" % table.types.get(name, "int")))
        else:
            word = mm.group(5).upper()
            binds.append(({"LIMIT": "[limit]", "TTL": "[ttl]", "TIMESTAMP": "[timestamp]"}[word],
                          "bigint" if word == "TIMESTAMP" else "int"))
    pk_indexes = []
    for pk in table.partition_key:
        idx = [i for i, (n, _) in enumerate(binds) if n == pk]
        if not idx:
            pk_indexes = []
            break
        pk_indexes.append(idx[0])
    return Statement(query, table, columns, binds, pk_indexes, verb == "SELECT")


# --- requests -----------------------------------------------------------------------
class Request:
    """One request from the client, as a handler sees it."""

    def __init__(self, conn, version, flags, stream, opcode, body):
        self.conn, self.version, self.env_flags = conn, version, flags
        self.stream, self.opcode, self.body = stream, opcode, body
        self.query, self.values, self.flags = None, [], 0
        self.page_size, self.paging_state, self.statement = None, None, None
        self.prepared_id = None

    @property
    def name(self):
        return OPCODE_NAMES.get(self.opcode, hex(self.opcode))

    @property
    def node(self):
        return self.conn.node

    @property
    def table(self):
        return self.statement.table if self.statement else None

    @property
    def is_system(self):
        return self.query is not None and bool(re.search(r"\bsystem(_\w+)?\.", self.query))

    def envelope(self, opcode, body, flags=0, stream=None):
        """A well-formed answer envelope (v5-framed on a framed connection)."""
        env = envelope(opcode, self.stream if stream is None else stream, body,
                       self.version, flags)
        return self.conn.frames(env)

    def rows_body(self, rows=None, **kw):
        """rows_body() with this statement's columns and table names."""
        st = self.statement
        return rows_body(kw.pop("columns", st.columns), st.table.rows if rows is None else rows,
                         ks=st.table.keyspace, table=st.table.name, **kw)

    def default_rows(self):
        """(rows of this page, paging_state or None) of the default answer."""
        st = self.statement
        names = [n for n, _ in st.table.columns]
        if st.columns and all(re.match(r"count\s*\(", c, re.I) for c, _ in st.columns):
            # count(*) / count(col) of the matching rows: one row
            matching = self._matching_rows()
            row = []
            for c, _ in st.columns:
                inner = c[c.index("(") + 1:c.rindex(")")].strip()
                if inner == "*":
                    row.append(len(matching))
                else:
                    i = names.index(_unquote(inner))
                    row.append(sum(1 for r in matching if r[i] is not None))
            return [row], None
        rows = [[r[names.index(c)] for c, _ in st.columns]
                for r in self._matching_rows()]
        start = struct.unpack(">i", self.paging_state)[0] if self.paging_state else 0
        size = self.page_size if self.page_size and self.page_size > 0 else len(rows) + 1
        page = rows[start:start + size]
        more = struct.pack(">i", start + size) if start + size < len(rows) else None
        return page, more

    def _matching_rows(self):
        """Rows in the bound token range (token scans); all rows otherwise."""
        st = self.statement
        rows = st.table.rows
        tok = [i for i, (n, _) in enumerate(st.binds) if n == "partition key token"]
        if len(tok) == 2 and len(self.values) >= 2 and None not in self.values[:2]:
            low = struct.unpack(">q", self.values[tok[0]])[0]
            high = struct.unpack(">q", self.values[tok[1]])[0]
            rows = [r for r in rows if low < st.table.token(r) <= high]
        return rows


def _read_params(r, req):
    """<consistency><flags>[values][page size][paging state]... into req"""
    r.short()
    req.flags = r.int() if req.version >= 5 else r.byte()
    if req.flags & Q_VALUES:
        for _ in range(r.short()):
            if req.flags & Q_NAMES:
                r.string()
            n = r.int()
            req.values.append(r.take(n) if n >= 0 else None)
    if req.flags & Q_PAGE_SIZE:
        req.page_size = r.int()
    if req.flags & Q_PAGING_STATE:
        req.paging_state = r.bytes()


# --- the node -------------------------------------------------------------------
class FakeCqlNode:
    def __init__(self, host="127.0.0.9", port=0, tables=(), cluster_name="fake cluster",
                 datacenter="dc1", rack="rack1"):
        self.tables = {(t.keyspace, t.name): t for t in tables}
        self.cluster_name, self.datacenter, self.rack = cluster_name, datacenter, rack
        self.host_id = uuid.uuid4()
        self.schema_version = uuid.uuid4()
        self.handler = None
        self.require_auth = False
        self.stop_floods = threading.Event()
        self.hits = 0
        self.log = []
        self.conns = []
        self.statements = {}
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(64)
        self.host, self.port = self.sock.getsockname()[:2]
        self.stopped = False

    def start(self):
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def stop(self):
        self.stopped = True
        self.stop_floods.set()
        try:
            self.sock.close()
        except OSError:
            pass
        self.drop_connections()

    def reset(self):
        self.handler = None
        self.stop_floods.clear()
        self.hits = 0
        with self.lock:
            self.log = []

    def drop_connections(self):
        """Close every client connection (a stuck client then sees EOF)."""
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            c.close()

    def executes(self):
        return [q for _, op, q in self.log if op == "EXECUTE"]

    def _accept_loop(self):
        n = 0
        while not self.stopped:
            try:
                s, _ = self.sock.accept()
            except OSError:
                return
            n += 1
            c = _Connection(self, s, n)
            with self.lock:
                self.conns.append(c)
            threading.Thread(target=c.run, daemon=True).start()

    # default answers --------------------------------------------------------
    def _system_rows(self, req):
        """(columns, rows, ks, table) for a system query, or None."""
        q = " ".join(req.query.split())
        ql = q.lower()
        v = req.values
        text = lambda i: v[i].decode() if i < len(v) and v[i] is not None else None
        if "from system.local" in ql:
            cols = [("key", "text"), ("bootstrapped", "text"), ("broadcast_address", "inet"),
                    ("cluster_name", "text"), ("cql_version", "text"), ("data_center", "text"),
                    ("host_id", "uuid"), ("listen_address", "inet"),
                    ("native_protocol_version", "text"), ("partitioner", "text"),
                    ("rack", "text"), ("release_version", "text"), ("rpc_address", "inet"),
                    ("rpc_port", "int"), ("schema_version", "uuid"), ("tokens", "set<text>")]
            row = ["local", "COMPLETED", self.host, self.cluster_name, "3.4.5", self.datacenter,
                   self.host_id, self.host, "5", "org.apache.cassandra.dht.Murmur3Partitioner",
                   self.rack, "4.1.0", self.host, self.port, self.schema_version, ["0"]]
            if ql.startswith("select schema_version"):
                cols, row = [cols[14]], [row[14]]
            return cols, [row], "system", "local"
        if re.search(r"from system\.peers(_v2)?\b", ql):
            cols = [("peer", "inet"), ("data_center", "text"), ("host_id", "uuid"),
                    ("rack", "text"), ("release_version", "text"), ("rpc_address", "inet"),
                    ("schema_version", "uuid"), ("tokens", "set<text>")]
            if "peers_v2" in ql:
                cols[5:6] = [("native_address", "inet"), ("native_port", "int")]
            if ql.startswith("select schema_version"):
                cols = [("schema_version", "uuid")]
            return cols, [], "system", "peers_v2" if "peers_v2" in ql else "peers"
        keyspaces = sorted({ks for ks, _ in self.tables})
        if "from system_schema.keyspaces" in ql:
            if "replication" in ql:
                cols = [("keyspace_name", "text"), ("replication", "map<text, text>")]
                repl = {"class": "org.apache.cassandra.locator.SimpleStrategy",
                        "replication_factor": "1"}
                return cols, [[ks, repl] for ks in keyspaces], "system_schema", "keyspaces"
            rows = [[ks] for ks in keyspaces if "?" not in q or ks == text(0)]
            return [("keyspace_name", "text")], rows, "system_schema", "keyspaces"
        if "from system_schema.tables" in ql:
            want = [t for (ks, name), t in sorted(self.tables.items())
                    if ks == text(0) and (text(1) is None or name == text(1))]
            if ql.startswith("select table_name, flags"):
                return ([("table_name", "text"), ("flags", "set<text>")],
                        [[t.name, ["compound"]] for t in want], "system_schema", "tables")
            return [("table_name", "text")], [[t.name] for t in want], "system_schema", "tables"
        if "from system_schema.columns" in ql:
            t = self.tables.get((text(0), text(1)))
            cols = [("column_name", "text"), ("kind", "text"), ("position", "int"),
                    ("clustering_order", "text"), ("type", "text")]
            rows = []
            for name, typ in (t.columns if t else []):
                kind, pos = t.kind(name)
                rows.append([name, kind, pos, "asc" if kind == "clustering" else "none", typ])
            return cols, rows, "system_schema", "columns"
        for what, cols in (("views", [("view_name", "text")]),
                           ("types", [("type_name", "text"), ("field_names", "list<text>"),
                                      ("field_types", "list<text>")])):
            if "from system_schema." + what in ql:
                return cols, [], "system_schema", what
        if "from system_virtual_schema." in ql:
            name = ql.split("from system_virtual_schema.", 1)[1].split()[0]
            return [(ql.split()[1].rstrip(","), "text")], [], "system_virtual_schema", name
        return None

    def default_answer(self, req):
        if req.opcode == BATCH:
            return req.envelope(RESULT, void_body())
        if req.opcode == PREPARE:
            st = req.statement
            if st.table is None and not req.is_system:
                return req.envelope(ERROR, error_body(ERR_INVALID, "fake node: cannot prepare " + req.query))
            with self.lock:
                self.statements[st.id] = st
            if st.table is None:
                return req.envelope(RESULT, prepared_body(st.id, [], [], version=req.version,
                                                          result_metadata_id=st.metadata_id))
            t = st.table
            return req.envelope(RESULT, prepared_body(
                st.id, st.binds, st.columns, st.pk_indexes, t.keyspace, t.name,
                req.version, st.metadata_id))
        if req.is_system:
            found = self._system_rows(req)
            if found is None:
                return req.envelope(ERROR, error_body(ERR_INVALID, "fake node: unknown table in " + req.query))
            cols, rows, ks, table = found
            return req.envelope(RESULT, rows_body(cols, rows, ks, table))
        st = req.statement
        if st is None or st.table is None:
            return req.envelope(ERROR, error_body(ERR_INVALID, "fake node: cannot run %r" % (req.query,)))
        if not st.is_select:
            return req.envelope(RESULT, void_body())
        rows, more = req.default_rows()
        skip = req.opcode == EXECUTE and req.flags & Q_SKIP_METADATA
        return req.envelope(RESULT, req.rows_body(rows, paging_state=more,
                                                  flags=NO_METADATA if skip else 0))


class _Connection:
    def __init__(self, node, sock, cid):
        self.node, self.sock, self.id = node, sock, cid
        self.version = None
        self.framed = False
        self.compression = None     # "lz4" after a STARTUP asking for it
        self.closed = False
        self.buf = b""
        self.pending = []       # envelopes already unframed

    def close(self):
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    def _recv_exact(self, n):
        while len(self.buf) < n:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frames(self, env):
        """Envelope bytes as this connection sends them (v5: framed)."""
        return v5_frames(env, self.compression == "lz4") if self.framed else env

    def _next_envelope(self):
        if not self.framed:
            hdr = self._recv_exact(9)
            body = self._recv_exact(struct.unpack(">i", hdr[5:9])[0])
            if hdr[1] & 0x01 and self.compression == "lz4":     # v4 compressed body
                body = lz4_decompress(body[4:], struct.unpack(">I", body[:4])[0])
            return hdr, body
        while not self.pending:
            n = 5 if self.compression == "lz4" else 3
            hdr = self._recv_exact(n + 3)
            if crc24(hdr[:n]) != int.from_bytes(hdr[n:], "little"):
                raise EOFError          # a real node closes on a bad header CRC
            h = int.from_bytes(hdr[:n], "little")
            payload = self._recv_exact(h & 0x1FFFF)
            self._recv_exact(4)
            if n == 5 and (h >> 17) & 0x1FFFF:
                payload = lz4_decompress(payload, (h >> 17) & 0x1FFFF)
            # client requests are small: self-contained frames, whole envelopes
            while payload:
                n = struct.unpack(">i", payload[5:9])[0]
                self.pending.append((payload[:9], payload[9:9 + n]))
                payload = payload[9 + n:]
        return self.pending.pop(0)

    def send(self, data):
        self.sock.sendall(data)

    def run(self):
        try:
            while not self.closed:
                hdr, body = self._next_envelope()
                version, flags, stream, opcode = hdr[0] & 0x7F, hdr[1], struct.unpack(">h", hdr[2:4])[0], hdr[4]
                if self.version is None:
                    self.version = version
                req = Request(self, self.version, flags, stream, opcode, body)
                if not self._serve(req):
                    break
        except (EOFError, OSError, ValueError):
            pass
        finally:
            self.close()

    def _serve(self, req):
        node = self.node
        if req.opcode in (OPTIONS, STARTUP, REGISTER, AUTH_RESPONSE):
            with node.lock:
                node.log.append((self.id, req.name, None))
            if req.opcode == STARTUP:
                r = Reader(req.body)
                options = {r.string().upper(): r.string() for _ in range(r.short())}
                self.compression = options.get("COMPRESSION", "").lower() or None
            self.send(self._handshake_answer(req))
            if req.opcode == STARTUP and self.version >= 5:
                self.framed = True
            return True
        r = Reader(req.body)
        if req.opcode == QUERY:
            req.query = r.long_string()
            _read_params(r, req)
        elif req.opcode == PREPARE:
            req.query = r.long_string()
        elif req.opcode == EXECUTE:
            req.prepared_id = r.short_bytes()
            if self.version >= 5:
                r.short_bytes()
            with node.lock:
                st = node.statements.get(req.prepared_id)
            if st is None:
                self.send(req.envelope(ERROR, error_body(ERR_UNPREPARED, "unknown prepared id")
                                       + short_bytes(req.prepared_id)))
                return True
            req.query = st.query
            _read_params(r, req)
        if req.query is not None:
            req.statement = analyse(req.query, node.tables)
        with node.lock:
            node.log.append((self.id, req.name, req.query))
        reply = node.handler(req) if node.handler else None
        if reply is None:
            reply = node.default_answer(req)
        return self._perform(reply)

    def _handshake_answer(self, req):
        env = lambda op, body: envelope(op, req.stream, body, self.version)
        if req.opcode == OPTIONS:
            return env(SUPPORTED, string_multimap({
                "CQL_VERSION": ["3.4.5"], "COMPRESSION": ["lz4"],
                "PROTOCOL_VERSIONS": ["3/v3", "4/v4", "5/v5"]}))
        if req.opcode == STARTUP:
            if self.node.require_auth:
                return env(AUTHENTICATE, string("org.apache.cassandra.auth.PasswordAuthenticator"))
            return env(READY, b"")
        out = env(AUTH_SUCCESS, bytes_(None)) if req.opcode == AUTH_RESPONSE else env(READY, b"")
        return self.frames(out)

    def _perform(self, reply):
        """Carry out a handler's answer; False = the connection is done."""
        for item in (reply if isinstance(reply, list) else [reply]):
            if isinstance(item, (bytes, bytearray)):
                self.send(item)
            elif isinstance(item, Close):
                return False
            elif isinstance(item, Sleep):
                time.sleep(item.seconds)
            elif isinstance(item, Flood):
                end = time.monotonic() + item.max_seconds
                while not self.closed and not self.node.stop_floods.is_set() \
                        and time.monotonic() < end:
                    self.send(item.chunk)
            else:
                raise TypeError("handler returned %r" % (item,))
        return True


def demo_table(keyspace="ks", name="t", nrows=5):
    """t (k int, c int, v text, l list<int>, PRIMARY KEY ((k), c)) with nrows rows."""
    return Table(keyspace, name,
                 [("k", "int"), ("c", "int"), ("v", "text"), ("l", "list<int>")],
                 ["k"], ["c"],
                 [[1, c, "row %d" % c, [c, c * 10]] for c in range(1, nrows + 1)])


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.9")
    ap.add_argument("--port", type=int, default=9042)
    ap.add_argument("--keyspace", default="ks")
    args = ap.parse_args()
    node = FakeCqlNode(args.host, args.port, [demo_table(args.keyspace)]).start()
    print("fake CQL node on %s:%d, table %s.t" % (node.host, node.port, args.keyspace))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        node.stop()
