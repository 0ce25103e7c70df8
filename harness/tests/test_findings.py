"""A file system the repair leaves unmountable is a finding, not an
error; --escalate runs what an administrator runs next; each trial's
evidence is kept in the database and `futuredisk show` prints it."""
import json
import shutil
import sqlite3
import subprocess

import pytest


def fd(futuredisk, *args, check=None):
    p = subprocess.run([futuredisk, *args], capture_output=True, text=True,
                       timeout=600)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def trial(futuredisk, db, target, *extra):
    """One ext4 trial with one bad block of `target`, recorded in db."""
    return fd(futuredisk, "run", "--fs", "ext4", "--size", "512M", "--fill",
              "10", "--target", target, "--db", str(db), *extra, check=0)


def row(db, sql, *args):
    with sqlite3.connect(db) as c:
        return c.execute(sql, args).fetchone()


@pytest.fixture(scope="module")
def unmountable(futuredisk, tmp_path_factory):
    """An unreadable primary superblock: e2fsck cannot open the disk, and
    the kernel cannot mount it."""
    db = tmp_path_factory.mktemp("findings") / "t.db"
    trial(futuredisk, db, "superblock")
    return db


def test_unmountable_is_a_finding_not_an_error(unmountable):
    error, mount, reason, record = row(
        unmountable, "SELECT error, mount, mount_reason, record FROM trials")
    assert error == ""
    assert mount == "UNMOUNTABLE"
    assert reason.startswith("EXT4-fs (") and "superblock" in reason, reason
    rec = json.loads(record)
    assert rec["mount"] == {"outcome": "UNMOUNTABLE", "reason": reason}
    assert rec["error"] == "" and rec["audit"] is None


def test_evidence_is_kept_and_shown(futuredisk, unmountable):
    with sqlite3.connect(unmountable) as c:
        names = [n for (n,) in c.execute(
            "SELECT name FROM evidence WHERE trial_id = 1 ORDER BY rowid")]
        env = c.execute("SELECT e.host, kernel, e2fsprogs, nbdkit FROM "
                        "environments e JOIN trials t ON t.env_id = e.id"
                        ).fetchone()
    assert names[:3] == ["check.out", "repair.out", "recheck.out"], names
    assert "faults.jsonl" in names and "kernel.log" in names, names
    assert env[2].startswith("e2fsck 1.") and env[3].startswith("nbdkit 1.")
    p = fd(futuredisk, "show", str(unmountable), "1", check=0)
    assert "mount after the repair: UNMOUNTABLE: EXT4-fs (" in p.stdout
    assert f"kernel {env[1]}" in p.stdout and env[2] in p.stdout
    assert "==> kernel.log (" in p.stdout
    # The fault log says which read failed: the superblock's.
    assert '"kind": "ure", "offset": 1024' in p.stdout
    # An item alone, exactly as kept: the command line first.
    p = fd(futuredisk, "show", str(unmountable), "1", "check.out", check=0)
    assert p.stdout.startswith("$ e2fsck ")
    assert "Input/output error while trying to open" in p.stdout


def test_escalate_recovers_with_a_backup_superblock(futuredisk, tmp_path):
    """Group descriptor 0 unreadable: e2fsck gives up, e2fsck -b 32768
    repairs from the backup, and the audit then finds every file."""
    db = tmp_path / "t.db"
    trial(futuredisk, db, "gdt", "--escalate")
    mount, scenario, record = row(
        db, "SELECT mount, scenario, record FROM trials")
    assert mount == "RECOVERED" and scenario.endswith(" escalate")
    rec = json.loads(record)
    phases = {p["name"]: p for p in rec["phases"]}
    assert phases["repair"]["outcome"] == "CHECKER_ERROR"
    assert phases["escalate"]["outcome"] == "FIXED"
    lost = {k: v for k, v in rec["audit"].items()
            if k not in ("intact", "extra") and v}
    assert rec["audit"]["intact"] > 0 and lost == {}, rec["audit"]
    # Recovery's time counts in what fsck costs against a restore.
    fsck = sum(phases[n]["virtual_s"] for n in ("check", "repair",
                                                "escalate"))
    assert rec["restore"]["fsck_s"] == pytest.approx(fsck, abs=1e-5)
    p = fd(futuredisk, "show", str(db), "1", "escalate.out", check=0)
    first = p.stdout.split("\n")[0]
    assert first.startswith("$ e2fsck ") and " -fy -b 32768 /dev/" in first
    # The report's table of escalations: the trial, recovered, nothing lost.
    page = tmp_path / "r.html"
    fd(futuredisk, "report", str(db), "-o", str(page), check=0)
    section = page.read_text().split('<h2 id="escalation">')[1].split("<h2")[0]
    row_ = section.split('<a href="#trial-1">1</a>')[1].split("</tr>")[0]
    assert ">FIXED<" in row_ and ">RECOVERED<" in row_, row_
    assert '<td class="num" data-v="0">0</td>' in row_, row_


def test_without_escalate_nothing_more_runs(unmountable):
    names = row(unmountable, "SELECT group_concat(name) FROM phases")[0]
    assert "escalate" not in names and "audit" not in names


def test_show_bad_input(futuredisk, unmountable, tmp_path):
    p = fd(futuredisk, "show", str(unmountable), "1x", check=2)
    assert "TRIAL_ID '1x' is not a trial id" in p.stderr
    p = fd(futuredisk, "show", str(unmountable), "99", check=1)
    assert p.stderr.strip().endswith("no trial 99")
    p = fd(futuredisk, "show", str(unmountable), "1", "nothing.out", check=1)
    assert "no evidence named 'nothing.out'; it has: check.out, " in p.stderr
    fd(futuredisk, "show", str(unmountable), check=2)
    p = fd(futuredisk, "show", str(tmp_path / "none.db"), "1", check=1)
    assert "none.db" in p.stderr
    newer = tmp_path / "newer.db"
    shutil.copy(unmountable, newer)
    with sqlite3.connect(newer) as c:
        c.execute("PRAGMA user_version = 99")
    p = fd(futuredisk, "show", str(newer), "1", check=1)
    assert "schema version 99, this futuredisk knows up to 7" in p.stderr
    # Refused, never altered.
    assert row(newer, "PRAGMA user_version")[0] == 99


def test_show_prints_a_table_named_as_an_item(futuredisk, unmountable):
    """`show DB 1 phases`: not evidence but the trial's table, so its rows,
    tab-separated under the column names (trial_id left out)."""
    p = fd(futuredisk, "show", str(unmountable), "1", "phases", "audit",
           check=0)
    with sqlite3.connect(unmountable) as c:
        rows = c.execute("SELECT seq, name, outcome FROM phases "
                         "ORDER BY seq").fetchall()
    lines = p.stdout.splitlines()
    assert lines[0].startswith("seq\tname\tvirtual_s\t"), lines[0]
    assert [tuple(line.split("\t")[i] for i in (0, 1, 11))
            for line in lines[1:len(rows) + 1]] == [
        (str(s), n, o or "") for s, n, o in rows]
    # Unmountable: no audit, so its table is the heading alone.
    assert lines[len(rows) + 1:] == ["class\tfiles"]


def test_older_database_is_upgraded_in_place(futuredisk, unmountable,
                                            tmp_path):
    """A version 4 database, where the unmountable trial was an error:
    upgraded on first use, it is a finding with the kernel's reason."""
    old = tmp_path / "v4.db"
    shutil.copy(unmountable, old)
    reason = row(old, "SELECT mount_reason FROM trials")[0]
    with sqlite3.connect(old) as c:
        c.execute("UPDATE trials SET error = 'mount after repair: mount -t "
                  "ext4 /dev/loop1 /m: exit 32: mount: /m: bad; kernel: ' "
                  "|| mount_reason")
        for col in ("mount", "mount_reason", "env_id", "escalate", "host",
                    "evidence_missing", "model_version"):
            c.execute(f"ALTER TABLE trials DROP COLUMN {col}")
        c.execute("DROP TABLE evidence")
        c.execute("DROP TABLE environments")
        c.execute("PRAGMA user_version = 4")
    p = fd(futuredisk, "show", str(old), "1", check=0)
    assert f"mount after the repair: UNMOUNTABLE: {reason}" in p.stdout
    assert ("evidence: none kept: recorded before schema 5, which began "
            "keeping it\n") in p.stdout
    assert row(old, "PRAGMA user_version")[0] == 7
    assert row(old, "SELECT error, mount, mount_reason FROM trials") == (
        "", "UNMOUNTABLE", reason)


def test_merge_carries_evidence_and_machine(futuredisk, unmountable, tmp_path):
    """A shard's trials merged into another database keep their evidence
    and the machine they ran on; merging twice adds nothing."""
    dest = tmp_path / "all.db"
    for _ in range(2):
        fd(futuredisk, "merge", str(dest), str(unmountable), check=0)
    with sqlite3.connect(dest) as c:
        assert c.execute("SELECT count(*) FROM trials").fetchone() == (1,)
        assert c.execute("SELECT count(*) FROM environments").fetchone() == (1,)
    a = fd(futuredisk, "show", str(unmountable), "1", check=0).stdout
    b = fd(futuredisk, "show", str(dest), "1", check=0).stdout
    assert a.split("\n", 1)[1] == b.split("\n", 1)[1]
    assert "machine: " in b and "==> kernel.log" in b

