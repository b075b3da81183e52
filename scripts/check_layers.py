#!/usr/bin/env python3
"""Check the layering of src/cql (docs/architecture.md, "The layers").

Every src/cql/*.c names its layer in its header ("layer: codec",
"transport", "session" or "cluster").  A layer may call only the layers
below it: this reads the symbols of the objects of `make unit`
(build/lib/*.o) with nm and lists every call that goes up.  It also checks
that src/fdw includes no private header (src/cql/*_int.h, cql_sysrows.h).

Usage: make unit && python3 scripts/check_layers.py   (exit 1 on a finding)
"""
import glob
import os
import re
import subprocess
import sys

RANK = {"codec": 0, "transport": 1, "session": 2, "cluster": 3}
PRIVATE = re.compile(r'#include\s+"(cql_\w+_int\.h|cql_sysrows\.h)"')


def nm(args, obj):
    out = subprocess.run(["nm"] + args + [obj], capture_output=True,
                         text=True, check=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.environ.get("BUILD", os.path.join(root, "build"))
    layer, defined, problems = {}, {}, []
    for src in sorted(glob.glob(os.path.join(root, "src/cql/*.c"))):
        name = os.path.basename(src)[:-2]
        m = re.search(r"\* layer: (\w+)", open(src).read())
        if not m or m.group(1) not in RANK:
            problems.append(f"{name}.c: no 'layer:' line in its header")
            continue
        layer[name] = m.group(1)
    for name in layer:
        obj = os.path.join(build, "lib", name + ".o")
        if not os.path.exists(obj):
            sys.exit(f"{obj} missing: run make unit first")
        for f in nm(["--defined-only"], obj):
            if len(f) == 3 and f[1] in "TDRB":
                defined[f[2]] = name
    for name in sorted(layer):
        for f in nm(["-u"], os.path.join(build, "lib", name + ".o")):
            callee = defined.get(f[-1])
            if callee and RANK[layer[callee]] > RANK[layer[name]]:
                problems.append(f"{name}.c ({layer[name]}) calls {f[-1]} "
                                f"of {callee}.c ({layer[callee]})")
    for src in sorted(glob.glob(os.path.join(root, "src/fdw/*.[ch]"))):
        for no, line in enumerate(open(src), 1):
            if PRIVATE.search(line):
                problems.append(f"{os.path.relpath(src, root)}:{no}: "
                                f"includes a private header: {line.strip()}")
    for p in problems:
        print(p)
    print(f"{len(layer)} files, {len(problems)} layering problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
