#!/usr/bin/env python3
"""
bench/java/resolve.py - a small Maven resolver for the Java driver anchor.

Reads POMs from Maven Central (parents, properties, dependencyManagement with
imported BOMs, exclusions) and resolves the runtime closure of the root
artifacts the way Maven does for a project that declares them: compile and
runtime scopes, optional dependencies of dependencies dropped, nearest
declaration wins, the project's (here: the first root's) dependencyManagement
pins transitive versions.  Downloads every jar into DEST, checks it against
Central's .sha1, and prints the classpath (one jar path a line) on stdout.

    resolve.py DEST group:artifact:version [group:artifact:version ...]

Only what this benchmark needs: no version ranges, no profiles activated by
the JDK or OS, no relocations.  POMs are cached in DEST/poms.
"""
import hashlib
import os
import re
import sys
import urllib.request
import xml.etree.ElementTree as ET
from collections import deque

CENTRAL = os.environ.get("MAVEN_CENTRAL", "https://repo1.maven.org/maven2")
DEST = sys.argv[1]
ROOTS = sys.argv[2:]
POMS = os.path.join(DEST, "poms")
os.makedirs(POMS, exist_ok=True)


def log(msg):
    print(msg, file=sys.stderr)


def path_of(g, a, v, ext, classifier=None):
    name = "%s-%s%s.%s" % (a, v, "-" + classifier if classifier else "", ext)
    return "%s/%s/%s/%s" % (g.replace(".", "/"), a, v, name)


def download(rel, dest, verify=True):
    if os.path.exists(dest):
        return dest
    url = CENTRAL + "/" + rel
    with urllib.request.urlopen(url, timeout=60) as r:
        data = r.read()
    if verify:
        with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
            want = r.read().decode().split()[0].strip().lower()
        got = hashlib.sha1(data).hexdigest()
        if got != want:
            raise RuntimeError("sha1 mismatch for %s: %s != %s" % (url, got, want))
    tmp = dest + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dest)
    return dest


def strip_ns(root):
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]
    return root


def text(el, tag, default=None):
    c = el.find(tag) if el is not None else None
    return c.text.strip() if c is not None and c.text else default


_pom_cache = {}


def load_pom(g, a, v):
    key = (g, a, v)
    if key in _pom_cache:
        return _pom_cache[key]
    rel = path_of(g, a, v, "pom")
    dest = os.path.join(POMS, rel.replace("/", "_"))
    download(rel, dest)
    root = strip_ns(ET.parse(dest).getroot())
    model = Model(root)
    _pom_cache[key] = model
    return model


class Model:
    """the effective model of a POM, as far as dependencies go"""

    def __init__(self, root):
        self.parent = None
        p = root.find("parent")
        if p is not None:
            self.parent = load_pom(text(p, "groupId"), text(p, "artifactId"), text(p, "version"))
        self.group = text(root, "groupId") or (self.parent.group if self.parent else None)
        self.artifact = text(root, "artifactId")
        self.version = text(root, "version") or (self.parent.version if self.parent else None)
        self.packaging = text(root, "packaging", "jar")
        self.props = dict(self.parent.props) if self.parent else {}
        props = root.find("properties")
        if props is not None:
            for c in props:
                if isinstance(c.tag, str):
                    self.props[c.tag] = (c.text or "").strip()
        self.props.update({
            "project.groupId": self.group, "pom.groupId": self.group,
            "project.artifactId": self.artifact,
            "project.version": self.version, "pom.version": self.version, "version": self.version,
        })
        if self.parent:
            self.props["project.parent.version"] = self.parent.version
            self.props["project.parent.groupId"] = self.parent.group
        # dependencyManagement: own entries first, then imported BOMs, then the parent's
        self.managed = {}
        dm = root.find("dependencyManagement/dependencies")
        imports = []
        if dm is not None:
            for d in dm.findall("dependency"):
                dep = self.dep(d)
                if dep["scope"] == "import" and dep["type"] == "pom":
                    imports.append(dep)
                else:
                    self.managed.setdefault(dep["key"], dep)
        for imp in imports:
            bom = load_pom(imp["group"], imp["artifact"], imp["version"])
            for k, dep in bom.managed.items():
                self.managed.setdefault(k, dep)
        if self.parent:
            for k, dep in self.parent.managed.items():
                self.managed.setdefault(k, dep)
        self.deps = [self.dep(d) for d in root.findall("dependencies/dependency")]
        if self.parent:  # dependencies declared in a parent are inherited
            own = {d["key"] for d in self.deps}
            self.deps += [d for d in self.parent.deps if d["key"] not in own]
        # fill in versions / scopes from dependencyManagement
        for d in self.deps:
            m = self.managed.get(d["key"])
            if m:
                d["version"] = d["version"] or m["version"]
                if d["scope_declared"] is None:
                    d["scope"] = m["scope"]
                if not d["exclusions"]:
                    d["exclusions"] = m["exclusions"]

    def interp(self, s):
        if s is None:
            return None
        for _ in range(10):
            n = re.sub(r"\$\{([^}]+)\}", lambda m: self.props.get(m.group(1), m.group(0)), s)
            if n == s:
                break
            s = n
        return s

    def dep(self, d):
        g, a = self.interp(text(d, "groupId")), self.interp(text(d, "artifactId"))
        typ = self.interp(text(d, "type", "jar"))
        cls = self.interp(text(d, "classifier"))
        scope = self.interp(text(d, "scope"))
        excl = set()
        for e in d.findall("exclusions/exclusion"):
            excl.add((self.interp(text(e, "groupId")), self.interp(text(e, "artifactId"))))
        return {
            "group": g, "artifact": a, "version": self.interp(text(d, "version")),
            "type": typ, "classifier": cls, "scope": scope or "compile",
            "scope_declared": scope,
            "optional": self.interp(text(d, "optional", "false")) == "true",
            "exclusions": excl, "key": (g, a, typ, cls),
        }


def excluded(dep, exclusions):
    for g, a in exclusions:
        if (g in ("*", dep["group"])) and (a in ("*", dep["artifact"])):
            return True
    return False


def main():
    roots = [r.split(":") for r in ROOTS]
    project_mgmt = load_pom(*roots[0]).managed   # the driver's BOM pins versions
    chosen = {}           # (g, a, classifier) -> (version, type)
    order = []
    queue = deque()
    for g, a, v in roots:
        queue.append(({"group": g, "artifact": a, "version": v, "type": "jar", "classifier": None,
                       "scope": "compile", "key": (g, a, "jar", None)}, frozenset(), 0, "root"))
    while queue:
        dep, exclusions, depth, via = queue.popleft()
        ga = (dep["group"], dep["artifact"], dep["classifier"])
        if ga in chosen:
            if chosen[ga][0] != dep["version"]:
                log("  %s:%s:%s omitted for %s (nearer: %s)" % (dep["group"], dep["artifact"],
                                                                dep["version"], via, chosen[ga][0]))
            continue
        chosen[ga] = (dep["version"], dep["type"])
        order.append((dep, depth, via))
        if dep["type"] != "jar":
            continue
        model = load_pom(dep["group"], dep["artifact"], dep["version"])
        for d in model.deps:
            if d["scope"] not in ("compile", "runtime") or d["optional"]:
                continue
            if excluded(d, exclusions):
                continue
            d = dict(d)
            m = project_mgmt.get(d["key"])
            if m and m["version"]:
                d["version"] = m["version"]
            if not d["version"]:
                raise RuntimeError("no version for %s:%s in %s" % (d["group"], d["artifact"], via))
            if depth > 0 and d["scope"] == "compile" and dep["scope"] == "runtime":
                d["scope"] = "runtime"
            queue.append((d, exclusions | frozenset(d["exclusions"]), depth + 1,
                          "%s:%s" % (dep["artifact"], dep["version"])))
    jars = []
    for dep, depth, via in order:
        g, a, v, c = dep["group"], dep["artifact"], dep["version"], dep["classifier"]
        rel = path_of(g, a, v, "jar", c)
        dest = os.path.join(DEST, os.path.basename(rel))
        new = not os.path.exists(dest)
        download(rel, dest)
        log("%s%s:%s:%s%s  (via %s)%s" % ("  " * depth, g, a, v, ":" + c if c else "", via,
                                        "  downloaded" if new else ""))
        jars.append(dest)
    print("\n".join(jars))


if __name__ == "__main__":
    main()
