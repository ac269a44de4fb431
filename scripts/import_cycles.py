#!/usr/bin/env python3
"""Import cycles between the files of each crate (`make lint` runs this; it fails on any cycle not allowed below).

An edge a.rs -> b.rs is a `crate::`, `super::` or `self::` path in a.rs (in a `use` or inline, comments left out)
that names module file b.rs. Edges into a crate root (lib.rs, main.rs) and from a mod.rs to its own children are
left out: a module declaring its children does not import them. A cycle is a strongly connected component of two
or more files. Usage: scripts/import_cycles.py [workspace root, default: this script's parent directory]."""
import os
import re
import sys

# The one cycle allowed: jvmti's event table generates the hub's trampolines (events.rs names EventHost) and
# the hub switches the table's events (hub.rs names Event). Each entry: every file of the cycle, no more.
ALLOWED = [
    {"crates/jvmti/src/events.rs", "crates/jvmti/src/hub.rs"},
]

PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
GROUP = re.compile(r"\b(crate|super|self)((?:::\w+)*)::\{([^}]*)\}", re.S)


def module_files(src):
    """Module path (a tuple of names) -> file, for every .rs file under a crate's src/."""
    mods = {}
    for d, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            mods[tuple(rel)] = path
    return mods


def imports(mods):
    """File -> the files of its own crate it names."""
    out = {}
    for mod, path in mods.items():
        with open(path, encoding="utf-8", errors="replace") as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        is_dir = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        paths = [(m.group(1), m.group(2)) for m in PATH.finditer(text)]
        for g in GROUP.finditer(text):
            for item in g.group(3).split(","):
                item = item.strip().split(" as ")[0].strip()
                if item and item != "self":
                    paths.append((g.group(1), g.group(2) + "::" + item.split("::")[0]))
        targets = set()
        for base, rest in paths:
            segs = [s for s in rest.split("::") if s]
            if base == "crate":
                cur = []
            elif base == "self":
                cur = list(mod)
            else:
                cur = list(mod[:-1])
                while segs and segs[0] == "super":
                    segs.pop(0)
                    cur = cur[:-1]
            found = None
            for i in range(len(segs), -1, -1):
                cand = tuple(cur + segs[:i])
                if cand in mods:
                    found = cand
                    break
            if found is None or found == mod or found == ():
                continue
            if is_dir and len(found) == len(mod) + 1 and found[: len(mod)] == mod:
                continue
            targets.add(mods[found])
        out[path] = targets
    return out


def cycles(graph):
    """Tarjan's strongly connected components of two or more files."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
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
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = 0
    for crate in sorted(os.listdir(os.path.join(root, "crates"))):
        src = os.path.join(root, "crates", crate, "src")
        if not os.path.isdir(src):
            continue
        for comp in cycles(imports(module_files(src))):
            names = [os.path.relpath(p, root).replace(os.sep, "/") for p in comp]
            if set(names) in ALLOWED:
                continue
            bad += 1
            print(f"import cycle ({len(names)} files): {', '.join(names)}")
    if bad:
        print(f"{bad} import cycle(s) between files; make the dependencies flow one way (see scripts/import_cycles.py)")
    sys.exit(1 if bad else 0)


main()
