#!/usr/bin/env python3
"""Circles of source files that call each other, from a build's objects.

File A depends on file B when A calls a function defined in B.  The
edges come from `nm` on the object files of a CMake build directory: an
undefined symbol of A's object that B's object defines as a function
(T or W).  That is the linker's own view, so macros, comments, strings
and same-named static helpers cannot mislead it, at the cost of needing
a build.  Every strongly connected component of more than one file is a
circle: each of its files reaches every other one through calls.

    python3 tools/filecycles.py BUILD_DIR     # prints the circles, then the count
"""
import os
import subprocess
import sys

# The project's own code; tests, benchmarks and fuzzers are left out.
FOLDERS = ("common", "faultmodels", "fs-under-test", "harness", "nbdplugin")
SKIP_PARTS = ("tests", "bench", "fuzz", "CMakeFiles")


def source_of(build, src_root, obj):
    """The source file an object was compiled from, relative to the tree,
    or None.  CMake puts DIR/x.c of the tree at BUILD/DIR/CMakeFiles/
    TARGET.dir/x.c.o, spelling '..' as '__'.
    """
    rel = os.path.relpath(obj, build).split(os.sep)
    if "CMakeFiles" not in rel:
        return None
    i = rel.index("CMakeFiles")
    parts = rel[:i] + ["" if p == "__" else p for p in rel[i + 2:]]
    parts = [".." if p == "" else p for p in parts]
    path = os.path.normpath(os.path.join(*parts))
    if not path.endswith(".o"):
        return None
    path = path[:-2]
    if not os.path.exists(os.path.join(src_root, path)):
        return None
    return path


def wanted(path):
    parts = path.split(os.sep)
    return parts[0] in FOLDERS and not any(p in SKIP_PARTS for p in parts)


def symbols(obj):
    """(defined functions, undefined symbols) of one object file."""
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        if f[1] in ("T", "W"):
            defined.add(f[0])
        elif f[1] == "U":
            undefined.add(f[0])
    return defined, undefined


def graph_from_objects(objects):
    """{file: set of files it calls into} from {file: [object paths]}."""
    defs, uses = {}, {}
    for src, objs in objects.items():
        d, u = set(), set()
        for o in objs:
            od, ou = symbols(o)
            d |= od
            u |= ou
        defs[src], uses[src] = d, u
    owner = {}
    for src, d in defs.items():
        for s in d:
            owner.setdefault(s, set()).add(src)
    return {src: {b for s in u for b in owner.get(s, ()) if b != src}
            for src, u in uses.items()}


def build_graph(build, src_root):
    objects = {}
    for dirpath, _, names in os.walk(build):
        for n in names:
            if not n.endswith(".o"):
                continue
            obj = os.path.join(dirpath, n)
            src = source_of(build, src_root, obj)
            if src and wanted(src):
                objects.setdefault(src, []).append(obj)
    return graph_from_objects(objects)


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan),
    each a sorted tuple, sorted.
    """
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # Iterative, so a long chain of calls cannot exhaust the stack.
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(tuple(sorted(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main(argv):
    if len(argv) != 2:
        print("usage: filecycles.py BUILD_DIR", file=sys.stderr)
        return 2
    src_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    graph = build_graph(argv[1], src_root)
    found = cycles(graph)
    for c in found:
        print("circle of %d files: %s" % (len(c), " ".join(c)))
    print("%d files, %d circles" % (len(graph), len(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
