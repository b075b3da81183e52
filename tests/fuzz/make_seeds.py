#!/usr/bin/env python3
"""make_seeds.py: seed corpora for fuzz_values and fuzz_metadata.

Writes tests/fuzz/corpus/fuzz_values/* and tests/fuzz/corpus/fuzz_metadata/*
(the input layouts are described at the top of each fuzz_*.c).  Run from the
repository root:  python3 tests/fuzz/make_seeds.py
"""
import os
import struct
import uuid

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def s(text):                        # [string]
    b = text.encode()
    return struct.pack(">H", len(b)) + b


def bytes_(b):                      # [bytes]
    return struct.pack(">i", len(b)) + b


def opt(tid, *subs):
    return struct.pack(">H", tid) + b"".join(subs)


INT, TEXT, DEC, DUR, VARINT = opt(0x09), opt(0x0D), opt(0x06), opt(0x15), opt(0x0E)
VEC = opt(0x00) + s("org.apache.cassandra.db.marshal.VectorType("
                    "org.apache.cassandra.db.marshal.FloatType, 3)")

# ---- fuzz_values, op 0: [option] + cell bytes ----------------------------
values = {
    "int": INT + struct.pack(">i", -42),
    "text": TEXT + "héllo 'x'".encode(),
    "bigint": opt(0x02) + struct.pack(">q", 2 ** 40),
    "double": opt(0x07) + struct.pack(">d", 1.5),
    "float_nan": opt(0x08) + b"\x7f\xc0\x00\x01",
    "decimal": DEC + struct.pack(">i", 3) + b"\x30\x39",
    "decimal_huge_scale": DEC + struct.pack(">i", -2000000000) + b"\x01",
    "varint": VARINT + b"\xff\x00\x00\x00\x00\x00\x00\x00\x00\x01",
    "duration": DUR + b"\x02\x04\xf0\x00\x00\x00\x10",
    "date": opt(0x11) + struct.pack(">I", 2 ** 31 + 19000),
    "time": opt(0x12) + struct.pack(">q", 45296789000000),
    "timestamp": opt(0x0B) + struct.pack(">q", 1700000000000),
    "inet6": opt(0x10) + bytes(15) + b"\x01",
    "uuid": opt(0x0C) + uuid.UUID("123e4567-e89b-12d3-a456-426614174000").bytes,
    "list_int": opt(0x20, INT) + struct.pack(">i", 2) + bytes_(struct.pack(">i", 1)) + bytes_(struct.pack(">i", 2)),
    "set_text_null": opt(0x22, TEXT) + struct.pack(">i", 2) + bytes_(b"a") + struct.pack(">i", -1),
    "map_text_int": opt(0x21, TEXT, INT) + struct.pack(">i", 1) + bytes_(b"k") + bytes_(struct.pack(">i", 7)),
    "tuple": opt(0x31) + struct.pack(">H", 3) + INT + TEXT + DEC
             + bytes_(struct.pack(">i", 1)) + bytes_(b"x") + struct.pack(">i", -1),
    "udt": opt(0x30) + s("ks") + s("addr") + struct.pack(">H", 2) + s("street") + TEXT + s("Zip") + INT
           + bytes_(b"main") + bytes_(struct.pack(">i", 5)),
    "vector": VEC + struct.pack(">fff", 1.0, 2.5, -0.0),
    "nested": opt(0x20, opt(0x21, TEXT, opt(0x22, DUR))) + struct.pack(">i", 1)
              + bytes_(struct.pack(">i", 1) + bytes_(b"a") + bytes_(struct.pack(">i", 1) + bytes_(b"\x02\x02\x02"))),
}
for name, data in values.items():
    write("fuzz_values", "cell_" + name, b"\x00" + data)
write("fuzz_values", "cell_null_int", b"\x04" + INT)

# ---- op 1: type strings; op 2: marshal names ---------------------------------
types = ["int", "map<text, frozen<list<int>>>", "vector<float, 3>", "frozen<ua>",
         "tuple<int, text, tuple<uuid, inet>>", "set<frozen<map<date, duration>>>",
         "ks.ub", "\"Quoted\"", "list<frozen<ua>>", "frozen<tuple<varint, decimal>>"]
for i, t in enumerate(types):
    write("fuzz_values", "type_%d" % i, b"\x01" + t.encode())
P = "org.apache.cassandra.db.marshal."
marshal = [P + "Int32Type", P + "ListType(" + P + "UTF8Type)",
           P + "MapType(" + P + "UTF8Type," + P + "FrozenType(" + P + "SetType(" + P + "Int32Type)))",
           P + "VectorType(" + P + "FloatType, 3)", P + "TupleType(" + P + "Int32Type," + P + "DurationType)",
           P + "UserType(ks,61646472,737472656574:" + P + "UTF8Type,7a6970:" + P + "Int32Type)",
           P + "ReversedType(" + P + "TimestampType)", "com.example.Custom(1,2)"]
for i, m in enumerate(marshal):
    write("fuzz_values", "marshal_%d" % i, b"\x02" + m.encode())

# ---- op 3: cql_value_parse (type index into value_types[], style) -----------
parse = [(0, 0, "-42"), (4, 0, "123456789012345678901234567890"), (5, 1, "1.50E-3"),
         (6, 0, "NaN"), (8, 1, "true"), (9, 0, "'it''s'"), (9, 2, "raw text"),
         (11, 0, "0xcafe"), (12, 0, "123e4567-e89b-12d3-a456-426614174000"),
         (14, 2, "::1"), (15, 0, "'2024-02-29'"), (16, 0, "'12:34:56.789'"),
         (17, 1, "\"2024-01-01 00:00:00.000Z\""), (18, 0, "1y2mo3d4h5m6s7ms8us9ns"),
         (18, 0, "P1Y2M3DT4H"), (20, 0, "[1, 2, 3]"), (21, 1, "[\"a\", \"b\"]"),
         (22, 0, "{'a': 1}"), (23, 1, "[[1, [\"x\"]]]"), (24, 0, "(1, 'x', 2.5)"),
         (25, 0, "{a: 1, b: 'x'}"), (26, 0, "[1.0, 2.0, 3.0]"), (28, 0, "[(1.5, 2)]"),
         (30, 1, "{\"123e4567-e89b-12d3-a456-426614174000\": \"1d\"}")]
for i, (ti, style, text) in enumerate(parse):
    write("fuzz_values", "parse_%d" % i, bytes([3 | (style << 2), ti]) + text.encode())


# ---- fuzz_metadata ------------------------------------------------------------
def cell(b):
    return b"\xff\xff" if b is None else struct.pack(">H", len(b)) + b


def textset(items):
    return struct.pack(">i", len(items)) + b"".join(bytes_(x.encode()) for x in items)


def textmap(d):
    return struct.pack(">i", len(d)) + b"".join(bytes_(k.encode()) + bytes_(v.encode()) for k, v in d.items())


M3 = "org.apache.cassandra.dht.Murmur3Partitioner"
local = [b"Test Cluster", b"dc1", b"r1", uuid.UUID(int=1).bytes, M3.encode(), b"5.0.2",
         textset(["-9000000000000000000", "0", "4000000000000000000"]), bytes([127, 0, 0, 1])]


def peer_v2(i, dc, rack, toks):
    return [bytes([10, 0, 0, 2 + i]), bytes([127, 0, 0, 2 + i]), struct.pack(">i", 9042),
            dc.encode(), rack.encode(), uuid.UUID(int=10 + i).bytes, b"5.0.2", textset(toks)]


def peer_v1(i, dc, rack, toks):
    return [bytes([10, 0, 0, 2 + i]), bytes([127, 0, 0, 2 + i]), dc.encode(), rack.encode(),
            uuid.UUID(int=10 + i).bytes, b"4.0.1", textset(toks)]


ks_rows = [b"ks_simple", textmap({"class": "org.apache.cassandra.locator.SimpleStrategy",
                                  "replication_factor": "2"}),
           b"ks_nts", textmap({"class": "org.apache.cassandra.locator.NetworkTopologyStrategy",
                               "dc1": "2", "dc2": "3/1"}),
           b"system", textmap({"class": "org.apache.cassandra.locator.LocalStrategy"}),
           b"ks_every", textmap({"class": "EverywhereStrategy"})]
tokens = b"".join(struct.pack("<q", t) for t in (-2 ** 63, -5, 0, 10 ** 18, 2 ** 63 - 1))

peers = [peer_v2(0, "dc1", "r1", ["-3000000000000000000"]),
         peer_v2(1, "dc2", "r2", ["100", "200"]),
         peer_v2(2, "dc2", "r1", ["5000000000000000000"])]
write("fuzz_metadata", "topology_v2",
      bytes([0 | (3 << 4)]) + b"".join(cell(c) for c in local)
      + b"".join(cell(c) for p in peers for c in p) + b"".join(cell(c) for c in ks_rows) + tokens)
peers1 = [peer_v1(0, "dc1", "r1", ["-3000000000000000000"]), peer_v1(1, "dc1", "r2", ["7"])]
write("fuzz_metadata", "topology_v1",
      bytes([4 | (2 << 4)]) + b"".join(cell(c) for c in local)
      + b"".join(cell(c) for p in peers1 for c in p) + b"".join(cell(c) for c in ks_rows) + tokens)
bad = list(local)
bad[6] = textset(["12x"])
write("fuzz_metadata", "topology_bad_token",
      bytes([0 | (1 << 4)]) + b"".join(cell(c) for c in bad)
      + b"".join(cell(c) for c in peers[0]) + tokens)

for i, lines in enumerate([
        "class=NetworkTopologyStrategy\ndc1=2\ndc2=1\ndc3=3",
        "class=org.apache.cassandra.locator.SimpleStrategy\nreplication_factor=3",
        "class=NetworkTopologyStrategy\ndc1=3/1\ndc2=0",
        "class=EverywhereStrategy", "class=LocalStrategy", "class=Bogus\nx=y"]):
    write("fuzz_metadata", "replication_%d" % i, b"\x01" + lines.encode())

write("fuzz_metadata", "strings_0",
      b"\x02" + b"-9223372036854775808\n9223372036854775807\n12x\n"
      b"127.0.0.1,127.0.0.2:9043,[::1]:9042,[fe80::1]\n::1\n 10.0.0.1 , 10.0.0.1 \n[::1:9042")

RS, US = b"\x1e", b"\x1f"


def col(name, kind, pos, order, typ):
    return US.join([b"C", name.encode(), kind.encode(), str(pos).encode(), order.encode(), typ.encode()])


def udt(name, *fields):
    return US.join([b"U", name.encode()] + [f.encode() for f in fields])


schema = [
    [col("k", "partition_key", 0, "none", "int"), col("c", "clustering", 0, "desc", "text"),
     col("s", "static", -1, "none", "set<int>"), col("v", "regular", -1, "none", "map<text, frozen<addr>>"),
     udt("addr", "street", "text", "zip", "int", "geo", "frozen<point>"), udt("point", "x", "double", "y", "double")],
    [col("a", "partition_key", 0, "none", "uuid"), col("b", "partition_key", 1, "none", "timeuuid"),
     col("v", "regular", -1, "none", "vector<float, 3>")],
    [col("k", "partition_key", 1, "none", "int")],
    [col("k", "partition_key", 0, "none", "frozen<loop>"), udt("loop", "f", "frozen<loop>")],
]
for i, recs in enumerate(schema):
    write("fuzz_metadata", "schema_%d" % i, b"\x03" + RS.join(recs))
