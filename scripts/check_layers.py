#!/usr/bin/env python3
"""Check the layering of src/cql and src/bridge (docs/architecture.md).

Every src/cql/*.c names its layer in its header ("layer: codec",
"transport", "session" or "cluster").  A layer may call only the layers
below it: this reads the symbols of the objects of `make unit`
(build/lib/*.o) with nm and lists every call that goes up.  It also checks
that src/fdw includes no private header (src/cql/*_int.h, cql_sysrows.h).

src/bridge (check_bridge): every file of the cqlbridge program
(src/bridge/cli) names its layer, "common" (common/), "command" (plan/,
load/, sync/, check/) or "main" (main.c); a file includes only headers of
its layer or below and calls (nm of build/bridge/**/*.o, `make bridge`)
only functions of its layer or below, and no files call each other in a
loop.  The extension's part (src/bridge/*.c, layer "extension", objects of
`make`) includes nothing of the program and has no call loop either.

src/fdw (check_fdw): the files of the FDW have levels too, though not named
ones: from the compiled objects (src/fdw/*.o of `make`), a file calls
another when its undefined symbols are defined there; a call loop between
files is a finding.

The version (check_version): cql_fdw.control's default_version is the one
version number; the Makefile and the sources derive it, and the newest
update script must lead to it.

Objects that are missing or older than their sources are an error (run the
builds first), never a silent pass.

Usage: make && make unit && make bridge && python3 scripts/check_layers.py
(exit 1 on a finding)
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


# ---------------------------------------------------------------------------
# src/bridge: the cqlbridge program (src/bridge/cli) and the extension's part
# ---------------------------------------------------------------------------
BRIDGE_RANK = {"common": 0, "command": 1, "main": 2}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def call_loops(calls):
    """The groups of files that call each other in a loop (Tarjan's SCCs
    of the file-level call graph {file: {callee files}}), largest first."""
    index, low, stack, on, loops = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(calls.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    return sorted(loops, key=len, reverse=True)


def file_calls(objs):
    """{file: {files whose functions it calls}} from nm of objs {file: .o}."""
    defined, calls = {}, {}
    for name, obj in objs.items():
        for f in nm(["--defined-only"], obj):
            if len(f) == 3 and f[1] in "TDRB":
                defined[f[2]] = name
    for name, obj in objs.items():
        calls[name] = {}
        for f in nm(["-u"], obj):
            callee = defined.get(f[-1])
            if callee and callee != name:
                calls[name].setdefault(callee, []).append(f[-1])
    return calls


def check_bridge(root, build):
    """Layers, includes and call loops of src/bridge; (files, problems)."""
    cli = os.path.join(root, "src/bridge/cli")
    problems, layer = [], {}
    files = sorted(glob.glob(os.path.join(cli, "*.[ch]")) +
                   glob.glob(os.path.join(cli, "*/*.[ch]")))
    for path in files:
        rel = os.path.relpath(path, cli)
        want = ("main" if "/" not in rel else
                "common" if rel.startswith("common/") else "command")
        m = re.search(r"\* layer: (\w+)", open(path).read())
        if not m or m.group(1) not in BRIDGE_RANK:
            problems.append(f"src/bridge/cli/{rel}: no 'layer: common|command|main' line in its header")
            continue
        if m.group(1) != want:
            problems.append(f"src/bridge/cli/{rel}: layer {m.group(1)}, but its folder is of layer {want}")
        layer[rel] = m.group(1)
    for rel in sorted(layer):
        for no, line in enumerate(open(os.path.join(cli, rel)), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if inc not in layer:
                problems.append(f"src/bridge/cli/{rel}:{no}: includes \"{inc}\", not a header of "
                                f"src/bridge/cli (name it from src/bridge/cli: \"common/common.h\")")
            elif BRIDGE_RANK[layer[inc]] > BRIDGE_RANK[layer[rel]]:
                problems.append(f"src/bridge/cli/{rel}:{no} ({layer[rel]}) includes "
                                f"{inc} ({layer[inc]})")
    objs = {}
    for rel in layer:
        if rel.endswith(".c"):
            obj = os.path.join(build, "bridge", rel[:-2] + ".o")
            if not os.path.exists(obj):
                sys.exit(f"{obj} missing: run make bridge first")
            objs[rel] = obj
    calls = file_calls(objs)
    for rel in sorted(calls):
        for callee, syms in sorted(calls[rel].items()):
            if BRIDGE_RANK[layer[callee]] > BRIDGE_RANK[layer[rel]]:
                problems.append(f"src/bridge/cli/{rel} ({layer[rel]}) calls {', '.join(sorted(syms))} "
                                f"of {callee} ({layer[callee]})")
    for group in call_loops({k: set(v) for k, v in calls.items()}):
        problems.append("src/bridge/cli: call loop between " + ", ".join(group))

    # the extension's part: compiled into cql_fdw.so, knows nothing of the program
    ext = sorted(glob.glob(os.path.join(root, "src/bridge/*.[ch]")))
    ext_objs = {}
    for path in ext:
        rel = os.path.relpath(path, root)
        text = open(path).read()
        if not re.search(r"\* layer: extension\b", text):
            problems.append(f"{rel}: no 'layer: extension' line in its header")
        for no, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if m and ("cli/" in m.group(1) or m.group(1) in layer):
                problems.append(f"{rel}:{no}: the extension includes {m.group(1)} of the cqlbridge program")
        if path.endswith(".c"):
            obj = path[:-2] + ".o"
            if not os.path.exists(obj):
                sys.exit(f"{os.path.relpath(obj, root)} missing: run make first")
            ext_objs[rel] = obj
    for group in call_loops({k: set(v) for k, v in file_calls(ext_objs).items()}):
        problems.append("src/bridge: call loop between " + ", ".join(group))
    return len(layer) + len(ext), problems


# ---------------------------------------------------------------------------
# src/fdw: no call loop between files
# ---------------------------------------------------------------------------
def check_fdw(root):
    """Call loops between the files of src/fdw; (files, problems)."""
    objs = {}
    for src in sorted(glob.glob(os.path.join(root, "src/fdw/*.c"))):
        obj = src[:-2] + ".o"
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
            sys.exit(f"{os.path.relpath(obj, root)} missing or older than its source: run make first")
        objs[os.path.basename(src)] = obj
    calls = file_calls(objs)
    problems = []
    for group in call_loops({k: set(v) for k, v in calls.items()}):
        detail = "; ".join(f"{a} -> {b}: {' '.join(sorted(set(calls[a][b])))}"
                           for a in group for b in sorted(calls[a]) if b in group)
        problems.append("src/fdw: call loop between " + ", ".join(group) + " (" + detail + ")")
    return len(objs), problems


# ---------------------------------------------------------------------------
# One version number
# ---------------------------------------------------------------------------
def check_version(root):
    """The control file's default_version is the only literal version: the
    Makefile derives EXTVERSION from it, no source defines CQLFDW_VERSION
    (nor cqlbridge's or cqlcli's) or sets a literal driver_version,
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
            if re.match(r"\s*#\s*define\s+(CQLFDW|CQLBRIDGE|CQLCLI)_VERSION\s", line):
                problems.append(f"{os.path.relpath(src, root)}:{no}: a second version number: {line.strip()}")
            # a program's version is the Makefile's -D..._VERSION, never a literal
            if re.search(r"driver_version\s*=\s*\"", line):
                problems.append(f"{os.path.relpath(src, root)}:{no}: a literal driver version: {line.strip()}")
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
    nbridge, bridge_problems = check_bridge(root, build)
    nfdw, fdw_problems = check_fdw(root)
    for p in problems + bridge_problems + fdw_problems:
        print(p)
    print(f"src/cql: {len(layer)} files, {len(problems)} layering problems")
    print(f"src/bridge: {nbridge} files, {len(bridge_problems)} layering problems")
    print(f"src/fdw: {nfdw} files, {len(fdw_problems)} call loops")
    version = check_version(root)
    return 1 if problems or bridge_problems or fdw_problems or version else 0


if __name__ == "__main__":
    sys.exit(main())
