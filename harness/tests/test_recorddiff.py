"""tools/recorddiff.py: two campaign databases compared on everything the
code decides, so a refactor's "no behaviour change" is checked, not
claimed; what only names the machine (a loop device's number, a scratch
directory, a pid) is no difference.

The databases are made by futuredisk itself (`merge` into a new file
creates the schema), then given a trial shaped as a campaign's are."""
import copy
import json
import os
import sqlite3
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(TOP, "tools", "recorddiff.py")


def phase(name, reads, writes=0, vs=1.0, outcome=None, exit_=0,
          passes=None):
    p = {"name": name, "virtual_s": vs, "wall_s": 0.5, "cpu_s": 0.1,
         "reads": reads, "writes": writes, "bytes_read": 4096 * reads,
         "bytes_written": 4096 * writes, "read_errors": 0}
    if outcome:
        p.update({"exit": exit_, "signal": 0, "outcome": outcome,
                  "charged_s": 0.25, "passes": {n: 0.1 for n in passes or []},
                  "virtual_passes": [[n, vs / 2] for n in passes or []]})
    return p


# One crash trial of ext4 as `futuredisk campaign` records it: the
# tests change a copy of it.
TRIAL = {
    "fs": "ext4", "profile": "roadmap-2006", "size": "512M", "seed": 1,
    "fill_pct": 20, "meta_only": 0, "crash": True, "tree": "mixed",
    "time": "virtual", "think": "real", "host": "native", "attach": "loop",
    "cloned": False, "campaign": "demo", "run_id": "2026-12-08T00:30:56Z",
    "rep": 0, "faults": "", "target": "inode:1",
    "targets_hit": "ure inode d22/f365 39665664", "files": 1335,
    "bytes": 102407717,
    "phases": [phase("populate", 4, 2289), phase("crash", 0),
               phase("inject", 10),
               phase("check", 23, 0, 12.5, "UNFIXED", 4, ["pass 1"]),
               phase("repair", 825, 50, 80.0, "FIXED", 1,
                     ["pass 1", "pass 2"]),
               phase("recheck", 24, 0, 13.0, "CLEAN", 0, ["pass 1"]),
               phase("audit", 1743)],
    "audit": {"intact": 566, "lost_found": 0, "partial": 320,
              "corrupted": 14, "unreadable": 0, "missing": 1,
              "link_lost": 0, "extra": 0, "zeroed_blocks": 237,
              "stale_blocks": 0, "foreign_blocks": 0, "garbled_blocks": 0},
    "durability": {"durable_intact": 674, "durable_broken": 1,
                   "inflight_lost": 260, "inflight_survived": 176,
                   "violations": [{"how": "fsync", "found": "partial",
                                   "path": "d13/f426"}]},
    "crash_points": None,
    "iron": {"detection": "error-code", "recovery": "repair"},
    "damaged": [{"class": "partial", "path": "d13/f426", "cause": ""},
                {"class": "missing", "path": "d4/f431", "cause": "ure"}],
    "restore": {"bytes": 102407717, "rate": 0, "restore_s": 0.67,
                "fsck_s": 105.5, "quicker": "restore"},
    "repair_cut": None,
    "mount": {"outcome": "MOUNTED", "reason": ""},
    "version": "0.1.0", "write_probe": True, "error": "",
    "disk": {"profile": "roadmap-2006", "size": 536870912, "seed": 1,
             "virtual_ns": 110000000000, "busy_ns": 100000000000,
             "reads": 2629, "writes": 2339, "flushes": 31, "seeks": 292,
             "seek_ns": 2000000000, "cache_hits": 2062,
             "cached_writes": 2339, "stored_bytes": 181030912,
             "faults": {"ure": 1, "lse": 0, "flip": 0}},
}
HOST = "build-host-7"


def make(path, night="n1", trial=None, host=HOST):
    """A new futuredisk database at path holding one trial (TRIAL, or
    trial)."""
    if os.path.exists(path):
        os.unlink(path)
    empty = path + ".empty"
    open(empty, "w").close()
    subprocess.run([os.environ.get("FUTUREDISK", os.path.join(
        TOP, "build", "harness", "futuredisk")), "merge", path, empty],
        check=True, capture_output=True)
    os.unlink(empty)
    t = copy.deepcopy(trial or TRIAL)
    t["run_id"] = night
    db = sqlite3.connect(path)
    env = db.execute("INSERT INTO environments (host, kernel, futuredisk, "
                     "nbdkit, e2fsprogs, xfsprogs, btrfs_progs) VALUES "
                     "(?, '6.1', '0.1.0', '1.32', '', '', '')",
                     (host,)).lastrowid
    tid = db.execute(
        "INSERT INTO trials (fs, profile, size, seed, fill_pct, faults, "
        "target, targets_hit, files, bytes, write_probe, error, version, "
        "record, campaign, run_id, rep, crash, meta_only, time_mode, think, "
        "scenario, tree, mount, mount_reason, env_id, host) VALUES (?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?)",
        (t["fs"], t["profile"], t["size"], t["seed"], t["fill_pct"],
         t["faults"], t["target"], t["targets_hit"], t["files"], t["bytes"],
         int(t["write_probe"]), t["error"], t["version"], json.dumps(t),
         t["campaign"], t["run_id"], t["rep"], int(t["crash"]),
         t["meta_only"], t["time"], t["think"],
         "fs=%s think=%s" % (t["fs"], t["think"]), t["tree"],
         t["mount"]["outcome"], t["mount"]["reason"], env,
         t["host"])).lastrowid
    for seq, p in enumerate(t["phases"]):
        db.execute("INSERT INTO phases (trial_id, seq, name, virtual_s, "
                   "wall_s, cpu_s, reads, writes, bytes_read, bytes_written, "
                   "exit, signal, outcome, read_errors) VALUES (?, ?, ?, ?, "
                   "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (tid, seq, p["name"], p["virtual_s"], p["wall_s"],
                    p["cpu_s"], p["reads"], p["writes"], p["bytes_read"],
                    p["bytes_written"], p.get("exit"), p.get("signal"),
                    p.get("outcome"), p["read_errors"]))
        for name, s in p.get("passes", {}).items():
            db.execute("INSERT INTO passes VALUES (?, ?, ?, ?)",
                       (tid, p["name"], name, s))
    for table in ("audit", "durability"):
        for cls, n in t[table].items():
            if isinstance(n, int) and not cls.endswith("_blocks"):
                db.execute("INSERT INTO %s VALUES (?, ?, ?)" % table,
                           (tid, cls, n))
    for d in t["damaged"]:
        db.execute("INSERT INTO damaged VALUES (?, ?, ?, ?)",
                   (tid, d["class"], d["path"], d["cause"]))
    for name in ("check.out", "repair.out", "kernel.log"):
        db.execute("INSERT INTO evidence VALUES (?, ?, 3, 3, x'00')",
                   (tid, name))
    db.commit()
    db.close()


def changed(**paths):
    """A copy of TRIAL with each path (a__b__0 is t["a"]["b"][0]) set."""
    t = copy.deepcopy(TRIAL)
    for path, value in paths.items():
        keys = [int(k) if k.isdigit() else k for k in path.split("__")]
        o = t
        for k in keys[:-1]:
            o = o[k]
        o[keys[-1]] = value
    return t


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True,
                          text=True)


def pair(tmp_path, before, after, host_after=HOST):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1", before)
    make(b, "n9", after, host=host_after)
    return run(a, b)


def no_difference(r):
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 trials before, 1 after, 0 difference(s)" in r.stdout


def one_difference(r, field, *shown):
    assert r.returncode == 1, r.stdout + r.stderr
    assert ", 1 difference(s)" in r.stdout, r.stdout
    assert ": %s\n" % field in r.stdout, r.stdout
    for s in shown:
        assert s in r.stdout, r.stdout


def test_same_decisions_other_night_times_and_host(tmp_path):
    after = copy.deepcopy(TRIAL)
    for p in after["phases"]:
        p["wall_s"] *= 7
        p["cpu_s"] *= 3
        p["virtual_s"] += 0.5  # think=real: the clock ran on this machine
        if "passes" in p:
            p["passes"] = {n: 9.9 for n in p["passes"]}
            p["charged_s"] = 4.0
    after["disk"].update(virtual_ns=1, busy_ns=2, seeks=9, cache_hits=8)
    after["restore"].update(fsck_s=0.1, quicker="fsck")
    after["version"] = "0.2.0"
    no_difference(pair(tmp_path, TRIAL, after, host_after="other-host"))


@pytest.mark.parametrize("column,before,after", [
    ("mount_reason", "EXT4-fs (loop0): unable to read superblock",
     "EXT4-fs (loop1): unable to read superblock"),
    ("mount_reason", "Buffer I/O error on dev nbd3, logical block 16",
     "Buffer I/O error on dev nbd12, logical block 16"),
    ("mount_reason", "BTRFS: device fsid 288fd445-723a-4110-9586-642314f0ced7"
     " devid 1 transid 6 /dev/loop1 (7:1) scanned by mount (26638)",
     "BTRFS: device fsid 0b1e2f3a-0000-4aaa-8bbb-123456789abc devid 1 "
     "transid 6 /dev/loop4 (7:4) scanned by mount (311)"),
    ("mount_reason", "mount: /var/tmp/futuredisk-campaign.Ab12Cd/t000004/mnt:"
     " can't read superblock on /dev/loop1.",
     "mount: /scratch/futuredisk-campaign.zZ9yY8/t000004/mnt: can't read "
     "superblock on /dev/loop0."),
    ("error", "nbdkit (pid 4242) died under the disk; /tmp/futuredisk-sock."
     "q1W2e3/ctl: connection closed before a reply",
     "nbdkit (pid 977) died under the disk; /tmp/futuredisk-sock.R4t5Y6/ctl:"
     " connection closed before a reply"),
    ("error", "chunkfs on build-host-7 at 2026-12-08T00:30:56Z: timed out",
     "chunkfs on other-host at 2026-12-09T13:02:11Z: timed out"),
])
def test_what_names_the_machine_is_no_difference(tmp_path, column, before,
                                                 after):
    key = {"mount_reason": "mount__reason", "error": "error"}[column]
    no_difference(pair(tmp_path, changed(**{key: before}),
                       changed(**{key: after}), host_after="other-host"))


def test_a_genuine_difference_beside_a_machine_name_is_found(tmp_path):
    r = pair(tmp_path,
             changed(mount__reason="Buffer I/O error on dev loop1, logical "
                     "block 16, async page read"),
             changed(mount__reason="can't read superblock on /dev/loop0."))
    one_difference(r, "mount_reason", "dev loopN", "/dev/loopN.")


def test_a_lost_file_count_in_the_audit_is_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(audit__missing=2, audit__intact=565))
    assert r.returncode == 1
    assert "audit.missing\n  before: 1\n  after:  2" in r.stdout
    assert "audit.intact\n" in r.stdout
    assert ", 2 difference(s)" in r.stdout


def test_a_durability_class_is_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(durability__inflight_lost=261))
    one_difference(r, "durability.inflight_lost", "261")


def test_a_broken_promise_is_found(tmp_path):
    r = pair(tmp_path, TRIAL,
             changed(durability__violations__0__found="missing"))
    one_difference(r, "durability.violations[0].found", "'missing'")


def test_a_damaged_path_is_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(damaged__1__path="d4/f432"))
    assert r.returncode == 1
    assert "damaged[d4/f431]\n  before: ['missing (ure)']\n  after:  None" \
        in r.stdout
    assert "damaged[d4/f432]\n  before: None\n  after:  ['missing (ure)']" \
        in r.stdout
    assert "     1  damaged[]" in r.stdout


def test_a_damaged_file_s_cause_is_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(damaged__1__cause="lse"))
    one_difference(r, "damaged[d4/f431]", "missing (lse)")


def test_outcomes_and_io_counts_are_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(phases__5__outcome="FIXED"))
    one_difference(r, "phases[5:recheck].outcome", "FIXED")
    r = pair(tmp_path, TRIAL, changed(phases__3__exit=1))
    one_difference(r, "phases[3:check].exit")
    r = pair(tmp_path, TRIAL, changed(phases__6__reads=1744))
    one_difference(r, "phases[6:audit].reads", "1744")
    r = pair(tmp_path, TRIAL, changed(mount__outcome="UNMOUNTABLE"))
    one_difference(r, "mount", "UNMOUNTABLE")


def test_what_only_the_record_holds_is_found(tmp_path):
    r = pair(tmp_path, TRIAL, changed(iron__recovery="none"))
    one_difference(r, "iron.recovery")
    r = pair(tmp_path, TRIAL, changed(audit__zeroed_blocks=238))
    one_difference(r, "audit.zeroed_blocks")
    r = pair(tmp_path, TRIAL, changed(disk__faults__ure=2))
    one_difference(r, "disk.faults.ure")
    r = pair(tmp_path, TRIAL, changed(cloned=True))
    one_difference(r, "cloned")


def test_think_zero_compares_the_virtual_clock(tmp_path):
    zero = changed(think="zero")
    later = changed(think="zero", phases__3__virtual_s=12.75,
                    disk__seeks=300)
    r = pair(tmp_path, zero, later)
    assert r.returncode == 1
    assert "phases[3:check].virtual_s\n  before: 12.5\n  after:  12.75" \
        in r.stdout
    assert "disk.seeks\n" in r.stdout
    # think=real: the same numbers ran on this machine's time.
    no_difference(pair(tmp_path, TRIAL,
                       changed(phases__3__virtual_s=12.75, disk__seeks=300)))


def test_the_summary_counts_each_field(tmp_path):
    r = pair(tmp_path, TRIAL, changed(phases__0__writes=2290,
                                      phases__6__reads=1700,
                                      disk__reads=2600))
    assert r.returncode == 1
    summary = r.stdout.split("differences by field (trials):\n")[1]
    assert summary.splitlines()[:3] == ["     1  disk.reads",
                                        "     1  phases[audit].reads",
                                        "     1  phases[populate].writes"]


def test_only_the_newest_night_unless_all(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    make(a, "n1", changed(phases__5__outcome="FIXED"))
    db = sqlite3.connect(a)
    cols = ("fs, profile, size, seed, fill_pct, faults, target, targets_hit, "
            "files, bytes, write_probe, error, version, %s, campaign, %s, "
            "rep, crash, time_mode, think, scenario, tree, mount, "
            "mount_reason, env_id, host")
    db.execute("INSERT INTO trials (%s) SELECT %s FROM trials"
               % (cols % ("record", "run_id"), cols % ("?", "'n2'")),
               (json.dumps(TRIAL),))
    n2 = db.execute("SELECT max(id) FROM trials").fetchone()[0]
    for table in ("phases", "audit", "durability", "damaged", "passes",
                  "evidence"):
        cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % table)]
        rest = ", ".join(c for c in cols if c != "trial_id")
        db.execute("INSERT INTO %s (trial_id, %s) SELECT ?, %s FROM %s"
                   % (table, rest, rest, table), (n2,))
    db.execute("UPDATE phases SET outcome = 'CLEAN' WHERE trial_id = ? AND "
               "seq = 5", (n2,))
    db.commit()
    db.close()
    make(b, "n1")
    no_difference(run(a, b))
    r = run(a, b, "--all")
    assert r.returncode == 1
    assert "2 trial(s) before, 1 after" in r.stdout


def test_outcomes_only_is_gone(tmp_path):
    a = str(tmp_path / "a.db")
    make(a)
    r = run(a, a, "--outcomes")
    assert r.returncode == 2
    assert "--outcomes" in r.stderr


def test_not_a_database(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_text("not sqlite")
    r = run(str(bad), str(bad))
    assert r.returncode == 2
    assert "x.db" in r.stderr
