#!/usr/bin/python3
#
# crosscheck_replicas.py
#	Independent check of our token-aware routing with the DataStax Python
#	driver (Debian package python3-cassandra): for many partition keys the
#	routing key bytes, the token, the replica set and the coordinator our C
#	library picks must agree with what the driver's metadata computes.
#
#	Our side is the tool mode of build/integration/test_cluster:
#	  test_cluster --print-replicas KEYSPACE NKEYS
#	prints "host ..." lines and one "key ..." line per key (see that file).
#	The driver side builds the routing keys itself from the key values.
#
# Usage: crosscheck_replicas.py [path/to/test_cluster]
# Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042), CQL_TOPOLOGY
# ("cluster" for the 3-node bed), CQL_CROSSCHECK_KEYS (2000).
# Output: TAP.  An unreachable node is a failure, not a skip.
#
# IDENTIFICATION
#	tests/integration/crosscheck_replicas.py
#
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    HERE, "..", "..", "build", "integration", "test_cluster")
HOST = os.environ.get("CQL_HOST", "127.0.0.1")
PORT = int(os.environ.get("CQL_PORT", "9042"))
NKEYS = int(os.environ.get("CQL_CROSSCHECK_KEYS", "2000"))

count = 0
failed = 0


def ok(cond, name, diag=None):
    global count, failed
    count += 1
    print("%sok %d - %s" % ("" if cond else "not ", count, name))
    if not cond:
        failed += 1
        if diag:
            for line in str(diag).splitlines():
                print("#   " + line)
    sys.stdout.flush()
    return cond


def finish():
    print("1..%d" % count)
    sys.exit(1 if failed else 0)


def bail(msg):
    ok(False, msg)
    finish()


try:
    from cassandra.cluster import Cluster
except ImportError as e:
    bail("python3-cassandra is importable (%s)" % e)


def connect():
    last = None
    for version in (5, 4):
        try:
            cl = Cluster([HOST], port=PORT, protocol_version=version,
                         connect_timeout=20, control_connection_timeout=20)
            return cl, cl.connect()
        except Exception as e:  # the driver raises several kinds here
            last = e
    bail("driver connects to %s:%d (%s)" % (HOST, PORT, last))


def pack_composite(parts):
    return b"".join(struct.pack(">H", len(p)) + p + b"\x00" for p in parts)


def driver_key(kind, fields):
    """Routing key bytes built by this script from the key values."""
    if kind == "int":
        return struct.pack(">i", int(fields[0]))
    if kind == "bigint":
        return struct.pack(">q", int(fields[0]))
    if kind == "text":
        return bytes.fromhex(fields[0]) if fields[0] != "-" else b""
    if kind == "comp":
        text = bytes.fromhex(fields[1]) if fields[1] != "-" else b""
        return pack_composite([struct.pack(">i", int(fields[0])), text])
    raise ValueError("unknown key kind " + kind)


def main():
    cl, session = connect()
    ok(session is not None and len(cl.metadata.all_hosts()) > 0,
       "driver connected to %s:%d and sees %d host(s)" % (HOST, PORT, len(cl.metadata.all_hosts())))
    dcs = sorted({h.datacenter for h in cl.metadata.all_hosts()})
    dc = dcs[0]
    nhosts = len(cl.metadata.all_hosts())
    keyspaces = {
        "cql_fdw_xc_rf1": "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        "cql_fdw_xc_rf2": "{'class': 'SimpleStrategy', 'replication_factor': 2}",
        "cql_fdw_xc_nts": "{'class': 'NetworkTopologyStrategy', '%s': 2}" % dc,
    }
    for ks, repl in keyspaces.items():
        session.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s" % (ks, repl))
    cl.shutdown()

    # A fresh driver instance whose initial metadata has the keyspaces.
    cl, session = connect()
    meta = cl.metadata
    if os.environ.get("CQL_TOPOLOGY") == "cluster":
        want = int(os.environ.get("CQL_CLUSTER_SIZE", "3"))
        ok(len(meta.all_hosts()) == want,
           "driver sees %d hosts (CQL_TOPOLOGY=cluster)" % want,
           "got %d" % len(meta.all_hosts()))
    ok(meta.partitioner.endswith("Murmur3Partitioner"),
       "partitioner is Murmur3 (%s)" % meta.partitioner)

    for ks in keyspaces:
        try:
            out = subprocess.run([TOOL, "--print-replicas", ks, str(NKEYS)],
                                 capture_output=True, text=True, timeout=600)
        except Exception as e:
            ok(False, "%s: run %s" % (ks, TOOL), e)
            continue
        if not ok(out.returncode == 0, "%s: C tool ran" % ks,
                  out.stdout[-2000:] + out.stderr[-2000:]):
            continue
        hosts = {}
        keys = []
        for line in out.stdout.splitlines():
            f = line.split()
            if not f:
                continue
            if f[0] == "host":
                # host IDX ADDRESS PORT DC RACK NTOKENS
                hosts[f[2]] = (f[4], f[5], int(f[6]))
            elif f[0] == "key":
                keys.append(f[1:])
        # host list: same addresses, data centers, racks and token counts
        drv_hosts = {}
        for h in meta.all_hosts():
            ntok = sum(1 for t, o in meta.token_map.token_to_host_owner.items() if o is h)
            drv_hosts[h.address] = (h.datacenter, h.rack, ntok)
        ok(hosts == drv_hosts, "%s: host list (address, dc, rack, token count) agrees" % ks,
           "C: %r\ndriver: %r" % (hosts, drv_hosts))
        ok(len(keys) >= NKEYS, "%s: C tool printed %d keys" % (ks, len(keys)))

        bad_bytes = bad_token = bad_set = bad_coord = 0
        first = []
        for k in keys:
            # key KIND FIELD [FIELD] HEX TOKEN COORD REPLICAS
            try:
                kind = k[0]
                nf = 2 if kind == "comp" else 1
                fields = k[1:1 + nf]
                hexkey, token, coord, reps = k[1 + nf:5 + nf]
                ours = bytes.fromhex(hexkey) if hexkey != "-" else b""
                mine = driver_key(kind, fields)
                int(token)
            except (ValueError, IndexError) as e:
                bad_bytes += 1
                if len(first) < 5:
                    first.append("unparsable line %r: %s" % (k, e))
                continue
            if mine != ours:
                bad_bytes += 1
                if len(first) < 5:
                    first.append("key %r: bytes %s vs driver %s" % (k, hexkey, mine.hex()))
                continue
            dtok = meta.token_map.token_class.from_key(mine).value
            if dtok != int(token):
                bad_token += 1
                if len(first) < 5:
                    first.append("key %r: token %s vs driver %d" % (k, token, dtok))
            drv = [h.address for h in meta.get_replicas(ks, mine)]
            c_reps = reps.split(",") if reps != "-" else []
            if sorted(drv) != sorted(c_reps):
                bad_set += 1
                if len(first) < 5:
                    first.append("key %r: replicas %s vs driver %s" % (k, reps, drv))
            if drv and coord not in drv:
                bad_coord += 1
                if len(first) < 5:
                    first.append("key %r: coordinator %s not in driver replicas %s" % (k, coord, drv))
            if not drv and nhosts > 0:
                bad_set += 1
        diag = "\n".join(first)
        ok(bad_bytes == 0, "%s: routing key bytes agree for every key" % ks, diag)
        ok(bad_token == 0, "%s: tokens agree for every key" % ks, diag)
        ok(bad_set == 0, "%s: replica sets agree for every key" % ks, diag)
        ok(bad_coord == 0, "%s: our coordinator is a replica for every key" % ks, diag)

    cl.shutdown()
    finish()


if __name__ == "__main__":
    main()
