"""Every trial of a campaign keeps its evidence (harness/SCHEMA.md, the
evidence table), end to end: the demo's campaign (harness/campaigns/
demo.ini) with each list but its file systems cut to one value, so every
trial kind the demo has runs on every file system once, among them an
xfs crash trial whose first repair refuses the dirty log and whose second
repairs.  Each checker phase's output is there under a name of its own
(repair.out, repair-2.out), and `futuredisk show` says truthfully why a
trial has no evidence or no item of the name asked for."""
import os
import shutil
import sqlite3
import subprocess

import pytest

SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEMO = os.path.join(SRC, "harness", "campaigns", "demo.ini")


def fd(futuredisk, *args, check=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "JOB_COMPLETION", "FUTUREDISK_RUN",
                                "FUTUREDISK_SHARD"))}
    p = subprocess.run([futuredisk, *args], capture_output=True, text=True,
                       env=env, timeout=900)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def entries(text):
    """The INI's sections and their keys in file order, an indented line
    continuing the value above it: [(section, [[key, value], ...])]."""
    out = []
    for line in text.splitlines():
        bare = line.split(" #")[0].rstrip()
        if not bare.strip() or bare.lstrip().startswith(("#", ";")):
            continue
        if bare.startswith("["):
            out.append((bare, []))
        elif bare[0].isspace():
            out[-1][1][-1][1] += " " + bare.strip()
        else:
            key, value = bare.split("=", 1)
            out[-1][1].append([key.strip(), value.strip()])
    return out


def small_demo():
    """demo.ini with every matrix list but `fs` cut to its first value, a
    repeated key (one fault spec per line) to its first line, every disk
    512 MiB (the demo's full-size ones took chunkfs 95 s) and at most 2000
    files allocated by meta-only (20000 fill chunkfs's 512 MiB)."""
    lines = []
    for section, keys in entries(open(DEMO).read()):
        lines.append(section)
        seen = set()
        for key, value in keys:
            if section.startswith("[matrix") and key in seen:
                continue
            seen.add(key)
            if section.startswith("[matrix") and key != "fs":
                value = "512M" if key == "size" else value.split()[0]
            if key == "meta-only":
                value = str(min(int(value), 2000))
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def query(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def night(futuredisk, tmp_path_factory):
    """The small demo run as one night: the database."""
    tmp = tmp_path_factory.mktemp("evidence")
    ini = tmp / "demo-small.ini"
    ini.write_text(small_demo())
    db = str(tmp / "demo.db")
    listed = fd(futuredisk, "campaign", str(ini), "--list", check=0)
    p = fd(futuredisk, "campaign", str(ini), "--db", db, "--jobs", "2",
           "--run-id", "n1")
    assert p.returncode == 0, p.stderr[-4000:]
    assert len(query(db, "SELECT id FROM trials")) == \
        len(listed.stdout.splitlines())
    return db


def expected_items(db, tid):
    """The checker outputs a trial keeps: each checker phase's NAME.out,
    the Kth of a name NAME-K.out (replay-mount is a mount, no checker)."""
    names, seen = [], {}
    for (name,) in query(db, "SELECT name FROM phases WHERE trial_id = ? "
                         "AND outcome IS NOT NULL AND name != 'replay-mount' "
                         "ORDER BY seq", tid):
        seen[name] = seen.get(name, 0) + 1
        names.append(f"{name}.out" if seen[name] == 1
                     else f"{name}-{seen[name]}.out")
    return names


def test_every_trial_keeps_its_evidence(night):
    trials = query(night, "SELECT id, scenario, error FROM trials "
                   "ORDER BY id")
    kinds = {s.split(" ")[0] for _, s, _ in trials}
    assert kinds == {"fs=ext4", "fs=xfs", "fs=btrfs", "fs=chunkfs"}, kinds
    for tid, scenario, error in trials:
        kept = [n for (n,) in query(night, "SELECT name FROM evidence WHERE "
                                    "trial_id = ? ORDER BY rowid", tid)]
        want = expected_items(night, tid)
        # Each ran its checkers (a rig error would leave fewer to keep).
        assert error == "" and want, (tid, scenario, error)
        assert set(want) <= set(kept), (tid, scenario, want, kept)
        assert "kernel.log" in kept or scenario.startswith("fs=chunkfs"), \
            (tid, scenario, kept)
    # Nothing was left out, so nothing is said to be.
    assert query(night, "SELECT id, evidence_missing FROM trials WHERE "
                 "evidence_missing != ''") == []


def xfs_repaired_twice(db):
    """The xfs crash trial whose first repair refused the dirty log."""
    (tid,), = query(db, "SELECT id FROM trials WHERE fs = 'xfs' AND crash")
    phases = [n for (n,) in query(db, "SELECT name FROM phases WHERE "
                                  "trial_id = ? ORDER BY seq", tid)]
    assert phases.count("repair") == 2, phases
    assert "replay-mount" in phases, phases
    return tid


def test_xfs_crash_trial_keeps_both_repairs(futuredisk, night):
    tid = xfs_repaired_twice(night)
    first = fd(futuredisk, "show", night, str(tid), "repair.out",
               check=0).stdout
    second = fd(futuredisk, "show", night, str(tid), "repair-2.out",
                check=0).stdout
    assert first.startswith("$ xfs_repair") and second.startswith(
        "$ xfs_repair"), (first, second)
    # The first refused the log the mount then replayed; the second did not.
    assert "log" in first and "replayed" in first, first
    assert first != second
    whole = fd(futuredisk, "show", night, str(tid), check=0).stdout
    assert "==> repair.out (" in whole and "==> repair-2.out (" in whole
    assert "none kept" not in whole


@pytest.fixture
def copy(night, tmp_path):
    path = tmp_path / "copy.db"
    shutil.copy(night, path)
    return str(path)


def test_show_names_the_items_a_trial_has(futuredisk, night):
    tid = xfs_repaired_twice(night)
    p = fd(futuredisk, "show", night, str(tid), "repair.log", check=1)
    kept = ", ".join(n for (n,) in query(
        night, "SELECT name FROM evidence WHERE trial_id = ? ORDER BY rowid",
        tid))
    assert (f"trial {tid} has no evidence named 'repair.log'; it has: "
            f"{kept}\n") in p.stderr, p.stderr
    assert "repair.out, " in kept and "repair-2.out" in kept


def test_show_prints_a_table_asked_for_as_an_item(futuredisk, night):
    """`show DB ID damaged`: a table of the trial's, not an evidence item:
    its rows, tab-separated under their column names."""
    (tid, n), = query(night, "SELECT trial_id, count(*) FROM damaged "
                      "GROUP BY trial_id ORDER BY count(*) DESC LIMIT 1")
    p = fd(futuredisk, "show", night, str(tid), "damaged", check=0)
    lines = p.stdout.splitlines()
    assert lines[0] == "class\tpath\tcause", lines[:2]
    assert lines[1:] == ["\t".join(r) for r in query(
        night, "SELECT class, path, cause FROM damaged WHERE trial_id = ? "
        "ORDER BY rowid", tid)]
    assert len(lines) == n + 1
    p = fd(futuredisk, "show", night, str(tid), "phases", check=0)
    assert p.stdout.startswith("seq\tname\tvirtual_s\t"), p.stdout


def test_show_says_why_a_trial_kept_no_evidence(futuredisk, copy):
    tid = xfs_repaired_twice(copy)
    with sqlite3.connect(copy) as c:
        c.execute("DELETE FROM evidence WHERE trial_id = ?", (tid,))
        c.execute("UPDATE trials SET evidence_missing = 'repair.out: disk "
                  "full' WHERE id = ?", (tid,))
    out = fd(futuredisk, "show", copy, str(tid), check=0).stdout
    assert "evidence: none kept: repair.out: disk full\n" in out, out
    p = fd(futuredisk, "show", copy, str(tid), "repair.out", check=1)
    assert (f"trial {tid} has no evidence named 'repair.out'; it kept none: "
            "repair.out: disk full\n") in p.stderr, p.stderr


def test_show_tells_old_trials_apart(futuredisk, copy):
    """Upgraded from schema 6, a trial with no evidence is one whose
    evidence was lost (the reason was said on the run's standard error
    only); upgraded from schema 4, one recorded before evidence was
    kept."""
    tid = xfs_repaired_twice(copy)
    with sqlite3.connect(copy) as c:
        c.execute("DELETE FROM evidence WHERE trial_id = ?", (tid,))
        c.execute("ALTER TABLE trials DROP COLUMN evidence_missing")
        c.execute("ALTER TABLE trials DROP COLUMN model_version")
        c.execute("PRAGMA user_version = 6")
    out = fd(futuredisk, "show", copy, str(tid), check=0).stdout
    assert "before schema 5" not in out
    assert ("evidence: none kept: why was not recorded (before schema 7 "
            "futuredisk run said it on standard error only)") in out, out
    other = query(copy, "SELECT min(id) FROM trials WHERE id != ?", tid)[0][0]
    assert "none kept" not in fd(futuredisk, "show", copy, str(other),
                                 check=0).stdout
    with sqlite3.connect(copy) as c:
        c.execute("UPDATE trials SET env_id = NULL WHERE id = ?", (other,))
        c.execute("DELETE FROM evidence WHERE trial_id = ?", (other,))
        c.execute("ALTER TABLE trials DROP COLUMN evidence_missing")
        c.execute("ALTER TABLE trials DROP COLUMN model_version")
        c.execute("PRAGMA user_version = 6")
    out = fd(futuredisk, "show", copy, str(other), check=0).stdout
    assert ("evidence: none kept: recorded before schema 5, which began "
            "keeping it") in out, out
    assert query(copy, "PRAGMA user_version") == [(7,)]
