"""tools/recorddiff.py: two campaign databases compared on what the code
decides, so a refactor's "no behaviour change" is checked, not claimed."""
import os
import sqlite3
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(TOP, "tools", "recorddiff.py")


def make(path, night, check_outcome="CLEAN", reads=10, wall=1.0):
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE IF NOT EXISTS trials (id INTEGER PRIMARY KEY, "
        "recorded TEXT, fs TEXT, profile TEXT, size TEXT, seed INTEGER, "
        "fill_pct REAL, faults TEXT, target TEXT, files INTEGER, "
        "error TEXT, version TEXT, record TEXT, campaign TEXT, run_id TEXT, "
        "crash INTEGER, time_mode TEXT, think TEXT, mount TEXT);"
        "CREATE TABLE IF NOT EXISTS phases (trial_id INTEGER, seq INTEGER, "
        "name TEXT, virtual_s REAL, wall_s REAL, cpu_s REAL, reads INTEGER, "
        "writes INTEGER, bytes_read INTEGER, bytes_written INTEGER, "
        "exit INTEGER, signal INTEGER, outcome TEXT, read_errors INTEGER);"
        "CREATE TABLE IF NOT EXISTS audit (trial_id INTEGER, class TEXT, "
        "files INTEGER);"
        "CREATE TABLE IF NOT EXISTS durability (trial_id INTEGER, "
        "class TEXT, files INTEGER);"
        "CREATE TABLE IF NOT EXISTS damaged (trial_id INTEGER, class TEXT, "
        "path TEXT, cause TEXT);"
        "CREATE TABLE IF NOT EXISTS passes (trial_id INTEGER, phase TEXT, "
        "pass TEXT, seconds REAL);")
    cur = db.execute(
        "INSERT INTO trials (recorded, fs, profile, size, seed, fill_pct, "
        "faults, target, files, error, version, record, campaign, run_id, "
        "crash, time_mode, think, mount) VALUES (datetime('now'), 'ext4', "
        "'roadmap-2006', '512M', 1, 10, '', 'inode', 50, '', 'v', '{}', "
        "'demo', ?, 0, 'virtual', 'real', 'MOUNTED')", (night,))
    db.execute("INSERT INTO phases VALUES (?, 3, 'check', 1.5, ?, 0.1, ?, 0, "
               "0, 0, 4, 0, ?, 0)", (cur.lastrowid, wall, reads,
                                     check_outcome))
    db.commit()
    db.close()


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                          text=True)


def test_same_decisions_other_times_is_no_difference(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1", wall=1.0)
    make(b, "n9", wall=7.0)
    r = run(a, b)
    assert r.returncode == 0, r.stdout
    assert "1 trials before, 1 after, 0 difference(s)" in r.stdout


def test_a_changed_outcome_is_found(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1")
    make(b, "n1", check_outcome="FIXED")
    for extra in ([], ["--outcomes"]):
        r = run(a, b, *extra)
        assert r.returncode == 1
        assert "phases" in r.stdout and "FIXED" in r.stdout


def test_io_counts_matter_unless_outcomes_only(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1", reads=10)
    make(b, "n1", reads=11)
    assert run(a, b).returncode == 1
    assert run(a, b, "--outcomes").returncode == 0


def test_only_the_newest_night_unless_all(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1", check_outcome="FIXED")
    make(a, "n2")
    make(b, "n1")
    assert run(a, b).returncode == 0
    r = run(a, b, "--all")
    assert r.returncode == 1
    assert "2 trial(s) before, 1 after" in r.stdout


def test_not_a_database(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_text("not sqlite")
    r = run(str(bad), str(bad))
    assert r.returncode == 2
    assert "x.db" in r.stderr
