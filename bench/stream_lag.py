#!/usr/bin/env python3
"""
bench/stream_lag.py - commit -> confirmation lag of a logical replication
slot, measured from outside the consumer (bench/stream_compare.sh).

    stream_lag.py sample SLOT OUT [EXTRA_SQL]
        Every 50 ms, in one psql session (PG* environment): the server's
        clock, pg_current_wal_lsn() and the slot's confirmed_flush_lsn (and
        EXTRA_SQL's value, e.g. the stream's change counter), one line of
        OUT each, until SIGTERM.
    stream_lag.py lag OUT T0 T1
        For every sample taken between T0 and T1 (epoch seconds): the time
        until the slot confirmed the WAL position of that sample, i.e. until
        every transaction committed by then was confirmed by the consumer
        (for cqlbridge stream: acknowledged by Cassandra).  Prints
        "p50 X s, p99 Y s, max Z s, N samples, U unconfirmed".
    stream_lag.py caughtup OUT T LSN
        The first sample time >= T at which the slot confirmed LSN
        ("nan" if never).
    stream_lag.py catchup OUT READY [END]
        After an outage that ended at READY: when the slot's confirmed
        position moved again, when the lag (confirmation of the WAL written
        3 s earlier) fell under 3 s or the slot confirmed END (an LSN: the
        end of the load), and the EXTRA_SQL counter's changes/s
        in between.
    stream_lag.py rate OUT T0 T1
        The EXTRA_SQL values at the first sample >= T0 and the last <= T1,
        and their difference per second: "V0 V1 PER_S".
"""
import signal
import subprocess
import sys
import time


def lsn(s):
    hi, lo = s.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def load(path):
    rows = []
    for line in open(path):
        p = line.split()
        if len(p) < 3:
            continue
        rows.append((float(p[0]), lsn(p[1]), lsn(p[2]), float(p[3]) if len(p) > 3 else 0.0))
    return rows


def sample(slot, out, extra):
    q = ("SELECT extract(epoch FROM clock_timestamp()), pg_current_wal_lsn(), "
         "coalesce((SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '%s'), '0/0')"
         % slot.replace("'", "''"))
    if extra:
        q += ", coalesce((%s), 0)" % extra
    q += ";\n"
    f = open(out, "w")
    ps = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-F", " "], stdin=subprocess.PIPE,
                          stdout=f, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    while not stop:
        try:
            ps.stdin.write(q)
            ps.stdin.flush()
        except BrokenPipeError:
            break
        time.sleep(0.05)
    ps.stdin.close()
    ps.wait()


def lag(rows, t0, t1):
    out = []
    unconfirmed = 0
    j = 0
    for i, (t, wal, _c, _x) in enumerate(rows):
        if t < t0 or t > t1:
            continue
        j = max(j, i)
        while j < len(rows) and rows[j][2] < wal:
            j += 1
        if j == len(rows):
            unconfirmed += 1
        else:
            out.append(rows[j][0] - t)
    out.sort()
    p = lambda q: out[min(len(out) - 1, int(q * len(out)))] if out else float("nan")
    print("p50 %.3f s, p99 %.3f s, max %.3f s, %d samples, %d unconfirmed"
          % (p(0.5), p(0.99), out[-1] if out else float("nan"), len(out), unconfirmed))


def catchup(rows, ready, end=None):
    """after an outage: when the slot moved again after READY (the node
    back), when the lag fell under 3 s again (an idle stream confirms
    with its 2 s heartbeat) or the slot confirmed END (the end of the
    load), and the changes/s (the EXTRA_SQL counter) in between"""
    after = [r for r in rows if r[0] >= ready]
    if not after:
        print("catch-up: no samples after the node came back")
        return
    c_ready = after[0][2]
    resume = next((r for r in after if r[2] > c_ready), None)
    if resume is None:
        print("catch-up: the slot did not move after the node came back")
        return
    caught = None
    j = 0
    for r in after:
        if r[0] <= resume[0]:
            continue
        while j + 1 < len(rows) and rows[j + 1][0] <= r[0] - 3.0:
            j += 1
        if r[2] >= (min(rows[j][1], end) if end else rows[j][1]):
            caught = r
            break
    if caught is None:
        print("catch-up: resumed %.1f s after the node was back, lag never under 3 s again"
              % (resume[0] - ready))
        return
    span = caught[0] - resume[0]
    print("catch-up: the slot moved again %.1f s after the node was back, lag under 3 s %.1f s "
          "later: %d changes in %.1f s = %.0f changes/s"
          % (resume[0] - ready, span, caught[3] - resume[3], span,
             (caught[3] - resume[3]) / span if span > 0 else float("nan")))


def main():
    cmd = sys.argv[1]
    if cmd == "sample":
        sample(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
        return
    rows = load(sys.argv[2])
    if cmd == "lag":
        lag(rows, float(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "caughtup":
        t, want = float(sys.argv[3]), lsn(sys.argv[4])
        hit = [r[0] for r in rows if r[0] >= t and r[2] >= want]
        print("%.3f" % hit[0] if hit else "nan")
    elif cmd == "catchup":
        catchup(rows, float(sys.argv[3]), lsn(sys.argv[4]) if len(sys.argv) > 4 else None)
    elif cmd == "rate":
        t0, t1 = float(sys.argv[3]), float(sys.argv[4])
        a = [r for r in rows if r[0] >= t0]
        b = [r for r in rows if r[0] <= t1]
        if not a or not b or b[-1][0] <= a[0][0]:
            print("nan nan nan")
        else:
            print("%d %d %.1f" % (a[0][3], b[-1][3], (b[-1][3] - a[0][3]) / (b[-1][0] - a[0][0])))
    else:
        sys.exit("stream_lag.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main()
