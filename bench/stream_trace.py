#!/usr/bin/env python3
#
# bench/stream_trace.py - where the stream's backend spends its CPU, per
# kind of statement, from the trace "cqlbridge stream" writes with
# CQLBRIDGE_STREAM_TRACE=FILE (one line per statement: the backend's CPU
# microseconds, a tab, the statement; src/bridge/cli/capture/sql.c).
#
#   python3 bench/stream_trace.py TRACE [CHANGES]
#
# Prints per kind: statements, CPU ms, us per statement, share, and with
# CHANGES (the changes the stream applied meanwhile) us per change.
import re
import sys

KINDS = [
    ("direct: upsert + lineage + vanished keys", r"^WITH f AS MATERIALIZED "),
    ("recompute: upsert + lineage + vanished keys", r"^WITH cur AS MATERIALIZED "),
    ("derive: old keys (lineage table)", r"^SELECT DISTINCT k\.\* FROM unnest.*stream_keys_"),
    ("derive: old keys (collection, old row)", r"^SELECT DISTINCT k\.\* FROM unnest.*FROM \(SELECT \(u\.c"),
    ("derive: new keys (affected SQL)", r"^SELECT DISTINCT k\.\* FROM unnest"),
    ("derive: all keys (TRUNCATE, partitions)", r"^SELECT .* FROM \S+ *$"),
    ("lineage add (before the writes)", r"^INSERT INTO \S+\.stream_keys_\d+ SELECT .* EXCEPT "),
    ("upsert (rows SQL)", r"^INSERT INTO \S+ \(.*\) SELECT \* FROM \(SELECT "),
    ("vanished keys", r"^SELECT u\.\* FROM \(SELECT "),
    ("delete, per key", r"^DELETE FROM \S+ t WHERE "),
    ("deletes, one block", r"^DO \$cqlbridge"),
    ("deletes, one cql_bridge_delete_keys call", r"^SELECT (\S+\.)?cql_bridge_delete_keys\("),
    ("lineage delete", r"^DELETE FROM \S+\.stream_keys_"),
    ("lineage insert", r"^INSERT INTO \S+\.stream_keys_"),
    ("visibility of the batch", r"^WITH c AS \(SELECT pg_catalog\.pg_current_snapshot"),
    ("lock of the source views", r"^LOCK TABLE "),
    ("BEGIN / COMMIT", r"^(BEGIN|COMMIT|ROLLBACK)"),
    ("write mode", r"^SET LOCAL cql_fdw\.write_mode"),
    ("status row", r"stream_state"),
]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: stream_trace.py TRACE [CHANGES]")
    changes = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    pats = [(k, re.compile(p)) for k, p in KINDS]
    count = {}
    cpu = {}
    total = 0
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            us, _, stmt = line.rstrip("\n").partition("\t")
            kind = "other"
            for k, p in pats:
                if p.search(stmt):
                    kind = k
                    break
            count[kind] = count.get(kind, 0) + 1
            cpu[kind] = cpu.get(kind, 0) + int(us or 0)
            total += int(us or 0)
    print("%-46s %8s %9s %8s %6s%s" % ("statement kind", "count", "CPU ms", "us/stmt", "share",
                                        "  us/change" if changes else ""))
    for kind in sorted(cpu, key=lambda k: -cpu[k]):
        print("%-46s %8d %9.1f %8.1f %5.1f%%%s" % (
            kind, count[kind], cpu[kind] / 1000, cpu[kind] / count[kind],
            100.0 * cpu[kind] / total if total else 0,
            "  %9.2f" % (cpu[kind] / changes) if changes else ""))
    print("%-46s %8d %9.1f%s" % ("total", sum(count.values()), total / 1000,
                                 "           %9.2f us per change (%d changes)" % (total / changes, changes)
                                 if changes else ""))


if __name__ == "__main__":
    main()
