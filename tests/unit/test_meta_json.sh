#!/usr/bin/env bash
# test_meta_json.sh
#	META.json, the PGXN distribution metadata (https://pgxn.org/meta/spec.txt,
#	version 1.0.0): valid JSON, every key the spec requires, a semantic
#	version that is the control file's default_version (0.7 -> 0.7.0) for the
#	distribution and the extension it provides, the PostgreSQL License of
#	LICENSE, and the files it names exist.  TAP output; no services.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)

exec python3 - "$REPO_ROOT" <<'PY'
import json
import os
import re
import sys

root = sys.argv[1]
checks = []


def ok(cond, what, why=""):
    checks.append((bool(cond), what, why))


try:
    with open(os.path.join(root, "META.json"), encoding="utf-8") as f:
        meta = json.load(f)
    parsed = isinstance(meta, dict)
    err = "" if parsed else "not a JSON object"
except (OSError, ValueError) as e:
    meta, parsed, err = {}, False, str(e)
ok(parsed, "META.json is a JSON object", err)

required = ["name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"]
missing = [k for k in required if k not in meta]
ok(not missing, "META.json has every key PGXN requires", "missing: %s" % missing)

spec = meta.get("meta-spec", {})
ok(isinstance(spec, dict) and spec.get("version") == "1.0.0",
   "meta-spec version is 1.0.0", repr(spec))

with open(os.path.join(root, "cql_fdw.control"), encoding="utf-8") as f:
    m = re.search(r"^default_version\s*=\s*'([^']+)'", f.read(), re.M)
control = m.group(1) if m else "?"
semver = control + ".0" if re.fullmatch(r"\d+\.\d+", control) else control
ok(meta.get("name") == "cql_fdw", "the distribution is named cql_fdw", repr(meta.get("name")))
ok(meta.get("version") == semver,
   "its version %s is the control file's default_version %s" % (meta.get("version"), control))
ok(re.fullmatch(r"\d+\.\d+\.\d+", str(meta.get("version", ""))), "the version is a semantic version")

provides = meta.get("provides", {})
ext = provides.get("cql_fdw", {}) if isinstance(provides, dict) else {}
ok(ext.get("version") == semver and ext.get("abstract"),
   "it provides the extension cql_fdw %s with an abstract" % semver, repr(ext))
named = [ext.get("file"), ext.get("docfile")]
absent = [f for f in named if not f or not os.path.isfile(os.path.join(root, f))]
ok(not absent, "the files META.json names exist", "absent: %s" % absent)

with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
    lic = f.readline().strip()
ok(meta.get("license") == "postgresql" and lic == "PostgreSQL License",
   "license postgresql, as LICENSE", "%r / %r" % (meta.get("license"), lic))
maint = meta.get("maintainer")
ok(isinstance(maint, (str, list)) and maint, "a maintainer is named")

print("1..10")  # the checks above, counted: one gone missing fails the plan
for i, (good, what, why) in enumerate(checks, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", i, what))
    if not good and why:
        print("#   %s" % why)
PY
