"""Rules of the project's own source that a reviewer should not have to
police by eye: every function fits on a screen (in every folder of C),
the repo stands alone, error messages are set one way, and every
Check case is registered with CTest.
"""
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MAX_LINES = 80


def sources(*exts, under=("",)):
    """Paths (relative to the top) of the project's files, not builds."""
    for sub in under:
        for root, dirs, files in os.walk(os.path.join(TOP, sub)):
            rel = os.path.relpath(root, TOP)
            dirs[:] = [d for d in dirs
                       if not (rel == "." and (d.startswith("build")
                                               or d in ("out", ".git")))
                       and d not in ("__pycache__", "Testing")]
            for f in files:
                if f.endswith(exts):
                    yield os.path.normpath(os.path.join(rel, f))


def functions(text):
    """(name, lines, first line) of each definition.  The layout is
    clang-format's GNU style: the name starts a line, the body's braces
    stand alone at column 0."""
    name = start = None
    for i, line in enumerate(text.split("\n"), 1):
        m = re.match(r"([A-Za-z_]\w*) \(", line)
        if m:
            name = m.group(1)
        if line == "{" and name:
            start = i
        elif line == "}" and start is not None:
            yield name, i - start + 1, start
            name = start = None


def test_functions_fit_on_a_screen():
    long = []
    for path in sources(".c", under=("harness", "fs-under-test", "nbdplugin",
                                     "faultmodels", "common")):
        with open(os.path.join(TOP, path), errors="replace") as f:
            for name, n, first in functions(f.read()):
                if n > MAX_LINES:
                    long.append(f"{path}:{first}: {name} is {n} lines")
    assert long == [], "\n".join(long)


def test_the_measure_sees_long_functions():
    body = "\n".join(["  x++;"] * MAX_LINES)
    text = f"static int\nf (int x)\n{{\n{body}\n  return x;\n}}\n"
    assert list(functions(text)) == [("f", MAX_LINES + 3, 3)]


def test_repo_stands_alone():
    """Nothing points at the design notes the project started from: the
    project's docs/ describe it, and sources are cited by public address."""
    bad = re.compile(r"\.\./shared/|shared/reference|DESIGN\.md|"
                     r"(disk-models|modern-drives|harness-anchors|"
                     r"nbdkit-peers|style-anchors)\.md")
    found = []
    for path in sources(".c", ".h", ".py", ".md", ".pod", ".ini", ".txt",
                        ".sh", ".yaml", ".sbatch", ".in"):
        if path == os.path.join("harness", "tests", "test_source.py"):
            continue
        with open(os.path.join(TOP, path), errors="replace") as f:
            for i, line in enumerate(f, 1):
                if bad.search(line):
                    found.append(f"{path}:{i}: {line.strip()}")
    for path in ("futuredisk", os.path.join(".ci", "run")):
        with open(os.path.join(TOP, path)) as f:
            if bad.search(f.read()):
                found.append(path)
    assert found == [], "\n".join(found)


def test_errors_are_set_one_way():
    """fm_fail and cfs_fail set an error's message; nothing else does."""
    hand = re.compile(r"\bv?snprintf \(\w+(->|\.)msg,\s*sizeof")
    found = []
    for path in sources(".c"):
        with open(os.path.join(TOP, path), errors="replace") as f:
            text = f.read()
        for m in hand.finditer(text):
            found.append(f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
    # The helpers themselves format with vsnprintf into err->msg.
    assert found and all(
        p.startswith(("faultmodels/src/units.c", "fs-under-test/chunkfs/src/io.c"))
        for p in found), found


def check_cases():
    """{program: its cases} as the C of each Check program lists them
    (fd_check_main's table) and as CMake registers them (fd_check_cases),
    each program named by its source file."""
    listed, registered = {}, {}
    for path in sources(".c"):
        with open(os.path.join(TOP, path), errors="replace") as f:
            m = re.search(r"struct fd_check_case cases\[\] = \{(.*?)\};",
                          f.read(), re.S)
        if m:
            name = os.path.basename(path)[:-2]
            listed[name] = set(re.findall(r'\{\s*"([\w-]+)"\s*,', m.group(1)))
    for path in sources("CMakeLists.txt"):
        with open(os.path.join(TOP, path)) as f:
            for m in re.finditer(
                    r"^\s*fd_check_cases\(\s*([\w-]+)\s+([^)]*)\)",
                    f.read(), re.M):
                registered.setdefault(m.group(1), set()).update(
                    m.group(2).split())
    return listed, registered


def test_every_check_case_runs_in_ctest():
    """A case missing from fd_check_cases never runs: CTest runs each
    program once per registered name (CK_RUN_CASE)."""
    listed, registered = check_cases()
    assert len(listed) > 20
    for name in sorted(set(listed) | set(registered)):
        assert listed.get(name) == registered.get(name), \
            (name, "not registered:",
             sorted(listed.get(name, set()) - registered.get(name, set())),
             "registered, not in the table:",
             sorted(registered.get(name, set()) - listed.get(name, set())))
