#!/usr/bin/env python3
"""Check the layering of src/cql (docs/architecture.md, "The layers").

Every src/cql/*.c names its layer in its header ("layer: codec",
"transport", "session" or "cluster").  A layer may call only the layers
below it: this reads the symbols of the objects of `make unit`
(build/lib/*.o) with nm and lists every call that goes up.  It also checks
that src/fdw includes no private header (src/cql/*_int.h, cql_sysrows.h).

src/fdw (fdw_call_cycles): the files of the FDW have levels too, though not
named ones: from the compiled objects (src/fdw/*.o of `make`), a file calls
another when its undefined symbols are defined there; any cycle in that
graph is a finding.  Without the objects this part is skipped with a note.

The version (check_version): cql_fdw.control's default_version is the one
version number; the Makefile and the sources derive it, and the newest
update script must lead to it.

Usage: make unit && make && python3 scripts/check_layers.py   (exit 1 on a finding)
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
    fdw = fdw_call_cycles(root)
    version = check_version(root)
    return 1 if problems or fdw or version else 0


# ---------------------------------------------------------------------------
# src/fdw: no call cycle between files
# ---------------------------------------------------------------------------

def fdw_call_graph(root):
    """{file: {callee file: [symbols]}} of src/fdw, from src/fdw/*.o; None
    when the objects are missing or older than their sources."""
    graph, defined, objs = {}, {}, {}
    for src in sorted(glob.glob(os.path.join(root, "src/fdw/*.c"))):
        obj = src[:-2] + ".o"
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
            return None
        objs[os.path.basename(src)[:-2]] = obj
    for name, obj in objs.items():
        for f in nm(["--defined-only"], obj):
            if len(f) == 3 and f[1] in "TDRB":
                defined[f[2]] = name
    for name, obj in objs.items():
        graph[name] = {}
        for f in nm(["-u"], obj):
            callee = defined.get(f[-1])
            if callee and callee != name:
                graph[name].setdefault(callee, []).append(f[-1])
    return graph


def strong_components(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def fdw_call_cycles(root):
    """Print every call cycle between files of src/fdw; return their number."""
    graph = fdw_call_graph(root)
    if graph is None:
        print("src/fdw: objects missing or stale: run make first (not checked)")
        return 0
    cycles = strong_components(graph)
    for comp in cycles:
        print("src/fdw call cycle among " + ", ".join(f"{c}.c" for c in comp) + ":")
        for a in comp:
            for b in sorted(graph[a]):
                if b in comp:
                    print(f"  {a}.c -> {b}.c: " + " ".join(sorted(set(graph[a][b]))))
    print(f"src/fdw: {len(graph)} files, {len(cycles)} call cycles")
    return len(cycles)


# ---------------------------------------------------------------------------
# One version number
# ---------------------------------------------------------------------------

def check_version(root):
    """The control file's default_version is the only literal version: the
    Makefile derives EXTVERSION from it, no source defines CQLFDW_VERSION,
    and the newest update script ends at it.  Returns the problems found."""
    problems = []
    control = open(os.path.join(root, "cql_fdw.control")).read()
    m = re.search(r"^default_version\s*=\s*'([^']+)'", control, re.M)
    if not m:
        problems.append("cql_fdw.control: no default_version")
        version = None
    else:
        version = m.group(1)
    for no, line in enumerate(open(os.path.join(root, "Makefile")), 1):
        if re.match(r"\s*EXTVERSION\s*:?=", line) and "cql_fdw.control" not in line:
            problems.append(f"Makefile:{no}: EXTVERSION not derived from cql_fdw.control: {line.strip()}")
    for src in sorted(glob.glob(os.path.join(root, "src/**/*.[ch]"), recursive=True)):
        for no, line in enumerate(open(src), 1):
            if re.match(r"\s*#\s*define\s+CQLFDW_VERSION\s", line):
                problems.append(f"{os.path.relpath(src, root)}:{no}: a second version number: {line.strip()}")
    ends = [re.match(r"cql_fdw--[\d.]+--([\d.]+)\.sql$", os.path.basename(f))
            for f in glob.glob(os.path.join(root, "cql_fdw--*--*.sql"))]
    newest = max((e.group(1) for e in ends if e),
                 key=lambda v: [int(x) for x in v.split(".")], default=None)
    if version and newest and newest != version:
        problems.append(f"cql_fdw.control: default_version {version}, but the newest update script leads to {newest}")
    for p in problems:
        print(p)
    print(f"version {version}: {len(problems)} version problems")
    return len(problems)


if __name__ == "__main__":
    sys.exit(main())
