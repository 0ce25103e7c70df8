"""No new circle of files that call each other (tools/filecycles.py).

The circles below exist today.  Breaking them is work of its own; until
then this test fails on any circle not listed (so none can appear) and on
a listed one that is gone (so the list only shrinks: take it out).
"""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import filecycles  # noqa: E402

KNOWN = set()  # every circle is gone; a new one fails


def test_circles_are_the_known_ones():
    build = os.environ.get("FD_BUILD_DIR")
    if not build:
        pytest.skip("FD_BUILD_DIR (a build directory) is not set")
    graph = filecycles.build_graph(build, ROOT)
    # Fewer files would mean objects were not found, not that all is well.
    assert len(graph) > 50, "only %d source files in %s" % (len(graph), build)
    found = set(filecycles.cycles(graph))
    print("%d files, %d circles (known: %d)" % (len(graph), len(found),
                                                len(KNOWN)))
    new = found - KNOWN
    gone = KNOWN - found
    assert not new, "new circles of files calling each other: %s" % sorted(new)
    assert not gone, ("circles no longer there (take them out of KNOWN): %s"
                      % sorted(gone))


def test_cycles_of_a_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"},
             "f": {"g"}, "g": {"f", "a"}}
    assert filecycles.cycles(graph) == [("a", "b", "c"), ("f", "g")]
    assert filecycles.cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("nm") is None,
                    reason="needs cc and nm")
def test_detector_on_objects(tmp_path):
    """Three real object files: a.c and b.c call each other, c.c calls a.c
    only, so the circle is a.c and b.c, and c.c stays out of it.
    """
    sources = {
        "a.c": "int b (int); int a (int x) { return x ? b (x - 1) : 0; }\n",
        "b.c": "int a (int); int b (int x) { return a (x); }\n",
        "c.c": "int a (int); static int b (void) { return 1; }\n"
               "int c (void) { return a (b ()); }\n",
    }
    objects = {}
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
        obj = tmp_path / (name + ".o")
        subprocess.run(["cc", "-c", "-o", str(obj), str(tmp_path / name)],
                       check=True)
        objects[name] = [str(obj)]
    graph = filecycles.graph_from_objects(objects)
    assert graph == {"a.c": {"b.c"}, "b.c": {"a.c"}, "c.c": {"a.c"}}
    assert filecycles.cycles(graph) == [("a.c", "b.c")]


# harness/'s folders, top to bottom: a file may call into its own folder
# and the folders below it, never up.
HARNESS_LAYERS = ("cli", "report", "campaign", "engine", "disk", "records",
                  "workload")


def upward_calls(graph):
    """(caller, callee) pairs of harness files whose folder is higher up
    for the callee than for the caller."""
    def layer(path):
        parts = path.split("/")
        if parts[0] != "harness" or len(parts) < 3:
            return None
        return HARNESS_LAYERS.index(parts[1])
    return sorted((a, b) for a, bs in graph.items() for b in bs
                  if layer(a) is not None and layer(b) is not None
                  and layer(b) < layer(a))


def test_harness_folders_are_layers():
    build = os.environ.get("FD_BUILD_DIR")
    if not build:
        pytest.skip("FD_BUILD_DIR (a build directory) is not set")
    graph = filecycles.build_graph(build, ROOT)
    for path in graph:
        parts = path.split("/")
        if parts[0] == "harness" and len(parts) > 2:
            assert parts[1] in HARNESS_LAYERS, "%s: not in a layer" % path
    assert upward_calls(graph) == []


def test_upward_calls_are_found():
    graph = {"harness/workload/a.c": {"harness/cli/b.c"},
             "harness/cli/b.c": {"harness/workload/a.c"}}
    assert upward_calls(graph) == [("harness/workload/a.c",
                                    "harness/cli/b.c")]
