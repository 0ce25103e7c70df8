"""Populate once, break many times: `futuredisk campaign` shares one
populated disk among the trials of a night that would populate the same
disk, each breaking a copy-on-write clone of it (the plugin's base=), and
--no-reuse populates every trial afresh.  A clone's record is the fresh
trial's, but for wall times and `cloned`, and for what the kernel's own
timing moves between any two fresh trials of the same seed (the I/O
counts of writeback and readahead, the virtual times they cost, the
block a target lands on); this test leaves those out by name."""
import json
import os
import re
import sqlite3
import subprocess

import pytest

from conftest import leftovers

CAMPAIGN = """[campaign]
name = r
size = 256M
fill = 10
seeds = 1
# device-bound times: the machine's load does not move them
think = zero

[matrix iron]
fs = ext4
target = none superblock data:1

[matrix crash]
fs = ext4
crash = yes
"""

# What differs between two fresh trials of one seed on this kernel.
NOISE_PHASE = {"virtual_s", "reads", "writes", "bytes_read", "bytes_written",
               "read_errors", "passes", "virtual_passes", "decisions"}
KEEP_DISK = {"profile", "size", "seed", "power"}


def campaign(futuredisk, tmp_path, db, *args):
    ini = tmp_path / "r.ini"
    ini.write_text(CAMPAIGN)
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "JOB_COMPLETION", "FUTUREDISK_RUN",
                                "FUTUREDISK_SHARD"))}
    env["TMPDIR"] = str(scratch)
    p = subprocess.run([futuredisk, "campaign", str(ini), "--db", str(db),
                        "--run-id", "night", "--jobs", "2", *args],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    # The bases went with the night: nothing is left in the scratch dir.
    assert os.listdir(scratch) == [], os.listdir(scratch)
    assert leftovers(str(scratch)) == []
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT target, crash, record FROM trials").fetchall()
    return p.stderr, {(t, crash): json.loads(r) for t, crash, r in rows}


def comparable(rec):
    """The record less wall times, `cloned` and the kernel's noise."""
    r = dict(rec)
    del r["cloned"]
    r["phases"] = [{k: v for k, v in ph.items()
                    if k not in NOISE_PHASE | {"wall_s", "cpu_s"}}
                   for ph in rec["phases"]]
    r["disk"] = {k: v for k, v in rec["disk"].items() if k in KEEP_DISK}
    if r["restore"]:
        # fsck's virtual time, and so which is quicker where the two
        # are close
        r["restore"] = {k: v for k, v in rec["restore"].items()
                        if k not in ("fsck_s", "quicker")}
    # "KIND TYPE PATH OFFSET": the offset is where ext4 put the block.
    r["targets_hit"] = " ".join(rec["targets_hit"].split(" ")[:3])
    # The trial's directory is named after its night's scratch dir, and
    # the disk is whichever loop device was free (mount's "/dev/loop3",
    # the kernel's "EXT4-fs (loop3)").
    r["error"] = re.sub(r"futuredisk-campaign\.\w+", "WORK", rec["error"])
    r["error"] = re.sub(r"\bloop\d+", "loopN", r["error"])
    if r["mount"]:
        r["mount"] = {**rec["mount"], "reason": re.sub(
            r"\bloop\d+", "loopN", rec["mount"]["reason"])}
    return r


def test_clones_record_what_fresh_trials_record(futuredisk, tmp_path):
    out, reused = campaign(futuredisk, tmp_path, tmp_path / "a.db")
    assert "2 trials broke a clone of one of 1 populated disks" in out, out
    out, fresh = campaign(futuredisk, tmp_path, tmp_path / "b.db",
                          "--no-reuse")
    assert "broke a clone" not in out
    assert sorted(reused) == sorted(fresh) and len(fresh) == 4

    # The first of the three iron trials populated, the others cloned;
    # the crash trial shares its disk with none, so populated it alone.
    assert [reused[("", 0)]["cloned"], reused[("superblock", 0)]["cloned"],
            reused[("data:1", 0)]["cloned"], reused[("", 1)]["cloned"]] == \
        [False, True, True, False]
    assert not any(r["cloned"] for r in fresh.values())
    # (A power cut loses what the kernel had in flight then, which its
    # writeback timing decides: two fresh crash trials differ too.)
    for key in [k for k in fresh if not k[1]]:
        a, b = comparable(reused[key]), comparable(fresh[key])
        for field in sorted(set(a) | set(b)):
            assert a.get(field) == b.get(field), (key, field)

    # A clone's populate is the base's, to the virtual nanosecond and the
    # write, with no wall or CPU time of its own.
    maker = reused[("", 0)]["phases"][:2]
    for target in ("superblock", "data:1"):
        clone = reused[(target, 0)]["phases"][:2]
        assert [p["name"] for p in clone] == ["populate", "unmount"]
        for p, q in zip(clone, maker):
            assert p["wall_s"] == p["cpu_s"] == 0
            assert {k: v for k, v in p.items() if k not in ("wall_s",
                                                            "cpu_s")} == \
                {k: v for k, v in q.items() if k not in ("wall_s", "cpu_s")}
    # Each of them broke the same tree.
    assert len({r["files"] for k, r in reused.items() if not k[1]}) == 1


@pytest.mark.parametrize("args,message", [
    (["--base", "/nonexistent/base"], "not a populated disk"),
    (["--base", "/x", "--base-out", "/y"], "one or the other"),
    (["--base-out", "/y", "--crash-points", "3", "--crash"],
     "a disk of its own"),
    # It rewrites the store file, in a clone the overlay's, in place.
    (["--base-out", "/y", "--target", "inode:1:lost-write"],
     "a disk of its own"),
    # A garbled stripe too.
    (["--base-out", "/y", "--target", "dir:2:stripe"], "a disk of its own"),
])
def test_run_refuses_bad_bases(run, tmp_path, args, message):
    p = run("run", "--fs", "ext4", "--size", "256M", "--dir",
            str(tmp_path / "t"), *args)
    assert p.returncode == 2
    assert message in p.stderr, p.stderr
