#!/usr/bin/env python3
"""png_stats.py PNG R,G,B: what a screenshot shows, for test_report_html.sh.

Prints "WIDTH HEIGHT NONWHITE_PERMILLE COLOR_PIXELS": the image size, how
many pixels in a thousand are not (near) white, and how many pixels have
exactly the colour R,G,B (the header colour of the diagrams' table nodes,
which only the rendered SVG uses).  Decodes 8-bit RGB/RGBA PNGs (what
Chromium writes) with the standard library alone; anything else is an
error (exit 2), never a guess.
"""
import struct
import sys
import zlib


def decode(path):
    """Width, height, channels and the unfiltered rows of an 8-bit PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if ihdr is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)"
                         % (depth, ctype, interlace))
    ch = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * ch
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - ch] if x >= ch else 0
            b = prev[x]
            c = prev[x - ch] if x >= ch else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
            elif ftype != 0:
                raise ValueError("bad filter type %d" % ftype)
        rows.append(line)
        prev = line
    return width, height, ch, rows


def main():
    if len(sys.argv) != 3:
        print("usage: png_stats.py PNG R,G,B", file=sys.stderr)
        return 2
    want = tuple(int(v) for v in sys.argv[2].split(","))
    try:
        width, height, ch, rows = decode(sys.argv[1])
    except (OSError, ValueError, zlib.error) as e:
        print("png_stats.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    nonwhite = colour = 0
    for line in rows:
        for x in range(0, width * ch, ch):
            px = (line[x], line[x + 1], line[x + 2])
            if min(px) < 240:
                nonwhite += 1
            if px == want:
                colour += 1
    print(width, height, nonwhite * 1000 // (width * height), colour)
    return 0


if __name__ == "__main__":
    sys.exit(main())
