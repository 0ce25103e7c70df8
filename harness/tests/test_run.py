"""`futuredisk run`: one fault trial end to end on ext4 over the emulated
disk — the audit reports exactly the damage injected, the same seed gives
the same record, and a killed trial leaves nothing behind."""
import json
import os
import signal
import subprocess

import pytest

from phases import wait_for_phase

from conftest import leftovers

BASE = ["run", "--fs", "ext4", "--size", "256M", "--fill", "20"]


def trial(run, tmp_path, *args, name="t"):
    out = tmp_path / f"{name}.jsonl"
    p = run(*BASE, "--dir", str(tmp_path / name), "--json=" + str(out), *args)
    assert p.returncode == 0, (p.stdout, p.stderr)
    rec = json.loads(out.read_text().splitlines()[-1])
    assert leftovers(str(tmp_path / name)) == []
    return rec


def phase(rec, name):
    return next(p for p in rec["phases"] if p["name"] == name)


def test_data_block_ure_loses_exactly_that_file(run, tmp_path):
    rec = trial(run, tmp_path, "--seed", "2", "--target", "data:1",
                "--faults", "erc=100ms")
    kind, btype, path, _ = rec["targets_hit"].split(" ")
    assert (kind, btype) == ("ure", "data")
    # e2fsck reads no file data: the file system is clean.
    assert [phase(rec, n)["outcome"] for n in ("check", "repair",
                                                "recheck")] == ["CLEAN"] * 3
    assert rec["audit"]["unreadable"] == 1
    # The loss is explained by the fault log.
    assert rec["damaged"] == [{"class": "unreadable", "path": path,
                               "cause": "ure"}]
    files = sum(v for k, v in rec["audit"].items() if not k.endswith("blocks"))
    assert rec["audit"]["intact"] == files - 1
    assert rec["write_probe"] is True
    assert rec["disk"]["faults"]["ure"] >= 1  # the audit's read ran into it


def test_flipped_bit_silently_corrupts_that_file(run, tmp_path):
    rec = trial(run, tmp_path, "--seed", "2", "--target", "data:1:rot")
    kind, btype, path, _ = rec["targets_hit"].split(" ")
    assert kind == "rot"
    assert phase(rec, "check")["outcome"] == "CLEAN"
    assert rec["audit"]["corrupted"] == 1 and rec["audit"]["unreadable"] == 0
    # One wrong block, not zeroed.  Which class: where the flipped bit
    # landed, which follows ext4's block placement (not fixed from run to
    # run): in the block's file id or index it reads as another file's
    # (foreign), in its generation as stale, elsewhere as garbled.
    audit = rec["audit"]
    assert audit["zeroed_blocks"] == 0
    assert audit["garbled_blocks"] + audit["foreign_blocks"] + \
        audit["stale_blocks"] == 1, audit
    assert rec["damaged"] == [{"class": "corrupted", "path": path,
                               "cause": "rot"}]


def test_lost_write_on_a_durable_file_is_a_violation(run, tmp_path):
    """Writes the disk acknowledged and never made, while the file system
    was populated (lost-write= strikes the populate): every file synced
    before the end that lost a block is a broken durability promise, and
    the fault log names the lost write."""
    rec = trial(run, tmp_path, "--seed", "2", "--faults", "lost-write=0.01")
    dur = rec["durability"]
    assert dur["durable_broken"] >= 1, dur
    assert dur["inflight_lost"] == 0 and dur["inflight_survived"] == 0
    # Both lists stop at 200 (futuredisk(1)): a lost directory block may
    # take hundreds of files with it, and which write is lost follows
    # the kernel's writeback order, not the seed alone.
    causes = {d["path"]: d["cause"] for d in rec["damaged"]}
    lost = [p for p, c in causes.items() if "lost-write" in c.split(",")]
    assert lost or len(rec["damaged"]) == 200, rec["damaged"]
    broken = {v["path"]: v for v in dur["violations"]}
    for path in lost:
        assert path in broken or len(broken) == 200, (path, len(broken))
        assert path not in broken or broken[path]["how"] == "sync", \
            broken[path]
    assert min(dur["durable_broken"], 200) == len(rec["damaged"])


def test_files_lost_with_their_directory_block_name_it(run, tmp_path):
    """A lost write to a directory's block: the files whose names it held
    are lost from the tree (in lost+found, missing, or a name short),
    their own blocks untouched; each names the fault on the directory
    where its name was, as dir:lost-write."""
    rec = trial(run, tmp_path, "--seed", "3", "--target", "dir:1:lost-write")
    assert rec["targets_hit"].split(" ")[:2] == ["lost-write", "dir"]
    lost = [d for d in rec["damaged"]
            if d["class"] in ("missing", "lost_found", "link_lost")]
    assert lost, rec["damaged"]
    assert all(d["cause"] == "dir:lost-write" for d in lost), rec["damaged"]


@pytest.mark.parametrize("fs,size,n", [("ext4", "256M", 6),
                                        ("xfs", "512M", 3)])
def test_crash_points_rebuild_the_disk_at_flushes(run, tmp_path, fs, size, n):
    """--crash-points N: the crash workload's writes logged once, the disk
    rebuilt at N flushes spread over them (the last among them), each
    checked, repaired and audited against the promises made by then.
    ext4 and xfs keep every promise at every point.  (xfs copies share a
    UUID and cannot be mounted side by side: its points run one at a
    time, which a concurrent mount failing would show as errors.)"""
    out = tmp_path / "p.jsonl"
    p = run("run", "--fs", fs, "--size", size, "--fill", "10", "--seed", "3",
            "--crash-points", str(n), "--think", "zero", "--dir",
            str(tmp_path / "p"), "--json=" + str(out))
    assert p.returncode == 0, p.stderr[-3000:]
    rec = json.loads(out.read_text())
    assert rec["crash"] is True and rec["audit"] is None
    cp = rec["crash_points"]
    points = cp["points"]
    assert len(points) == n and cp["flushes"] >= n, cp
    flushes = [q["flush"] for q in points]
    assert flushes == sorted(set(flushes)) and flushes[-1] == cp["flushes"]
    promises = [q["promises"] for q in points]
    assert promises == sorted(promises) and promises[-1] == cp["promises"] > 0
    for q in points:
        assert q["error"] == "" and q["audited"], q
        assert q["recheck"] == "CLEAN" and q["durable_broken"] == 0, q
    # Later points owe more: more files are durable and intact.
    assert points[-1]["durable_intact"] > points[0]["durable_intact"]
    assert f"crash points: {n} of {cp['flushes']} flushes" in p.stdout
    assert leftovers(str(tmp_path / "p")) == []


@pytest.mark.parametrize("fs,detection,recovery,cls", [
    ("ext4", "none", "none", "corrupted"),
    ("btrfs", "checksum", "propagate", "unreadable")])
def test_torn_write_target_and_the_iron_axes(run, tmp_path, fs, detection,
                                             recovery, cls):
    """data:1:torn-write: the last write to a file's first block only
    partly made it (the populate's write log says what was there before).
    ext4 does not checksum data: the file reads wrong and nobody notices;
    btrfs's data checksum refuses it and the application gets EIO.  Both
    damages carry the fault as their cause."""
    out = tmp_path / "w.jsonl"
    p = run("run", "--fs", fs, "--size", "512M", "--fill", "10", "--seed",
            "2", "--target", "data:1:torn-write", "--think", "zero", "--dir",
            str(tmp_path / "w"), "--json=" + str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    rec = json.loads(out.read_text())
    assert rec["targets_hit"].split(" ")[:2] == ["torn-write", "data"]
    assert rec["iron"] == {"detection": detection, "recovery": recovery}
    assert [(d["class"], d["cause"]) for d in rec["damaged"]] == [
        (cls, "torn-write")]
    assert f"IRON: detection {detection}, recovery {recovery}" in p.stdout
    assert leftovers(str(tmp_path / "w")) == []


CUT = ["--size", "256M", "--fill", "10", "--seed", "2", "--target",
       "gdt:1:rot", "--faults", "erc=10ms"]


def test_power_cut_during_repair(run, tmp_path):
    """--repair-cut 1: a flipped bit in the group descriptors makes
    e2fsck repair with several writes; the power goes after the first and
    stays off (the rest never reach the disk), then the checker repairs
    again and the outcome says how it ended."""
    out = tmp_path / "c.jsonl"
    p = run("run", "--fs", "ext4", *CUT, "--repair-cut", "1", "--dir",
            str(tmp_path / "c"), "--json=" + str(out))
    rec = json.loads(out.read_text())
    assert rec["repair_cut"]["after"] == 1 and rec["repair_cut"]["cut"], rec
    assert rec["repair_cut"]["outcome"] in (
        "recovered", "needs-another-repair", "unrecoverable")
    names = [ph["name"] for ph in rec["phases"]]
    assert names[names.index("repair"):names.index("recheck")] == [
        "repair", "repair-after-cut"]
    assert phase(rec, "repair")["writes"] == 1
    assert rec["disk"]["refused"] > 0 and rec["disk"]["power"] == "on"
    assert "repair cut after write 1: " in p.stdout
    assert leftovers(str(tmp_path / "c")) == []


def test_repair_cut_sweep_compares_with_the_uncut_repair(run, tmp_path):
    """sweep:2: the uncut repair first, then a cut at a third and two
    thirds of its writes; each cut trial says how many more files it lost
    than the uncut one (the same seed: the same tree and damage)."""
    out = tmp_path / "s.jsonl"
    p = run("run", "--fs", "ext4", *CUT, "--repair-cut", "sweep:2", "--dir",
            str(tmp_path / "s"), "--json=" + str(out))
    assert p.returncode == 0, p.stderr
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 3 and recs[0]["repair_cut"] is None
    writes = phase(recs[0], "repair")["writes"]
    assert writes >= 3, recs[0]["phases"]
    cuts = [r["repair_cut"] for r in recs[1:]]
    assert [c["after"] for c in cuts] == [(writes + 2) // 3,
                                          (2 * writes + 2) // 3]
    for c in cuts:
        assert c["cut"] and "lost_vs_uninterrupted" in c, c
    assert leftovers(str(tmp_path / "s")) == []


def test_repair_cut_past_the_last_write_is_not_reached(run, tmp_path):
    rec = trial(run, tmp_path, *CUT[4:], "--repair-cut", "100000")
    assert rec["repair_cut"] == {"after": 100000, "cut": False,
                                 "outcome": "not-reached"}
    assert "repair-after-cut" not in [ph["name"] for ph in rec["phases"]]
    assert rec["disk"]["refused"] == 0


def test_inode_table_block_is_reported_and_losses_counted(run, tmp_path):
    rec = trial(run, tmp_path, "--seed", "2", "--target", "inode:1",
                "--faults", "erc=100ms")
    assert phase(rec, "check")["outcome"] != "CLEAN"
    assert phase(rec, "check")["exit"] != 0
    lost = sum(rec["audit"][k] for k in ("unreadable", "missing",
                                          "lost_found", "corrupted"))
    assert lost >= 1 and len(rec["damaged"]) == lost


def test_largest_seed_reaches_every_step(run, tmp_path):
    """A seed above INT64_MAX is recorded as value - 2^64, as the database
    holds it, and the steps that read the plugin's stats (the checker's
    clock, the IRON verdict) read it too."""
    rec = trial(run, tmp_path, "--seed", str(2**64 - 1), "--target",
                "inode:1", "--faults", "erc=100ms")
    assert rec["seed"] == -1 and rec["disk"]["seed"] == -1
    assert phase(rec, "check")["outcome"] != "CLEAN"
    assert rec["iron"]["detection"] == "error-code"


def test_same_seed_same_record(run, tmp_path):
    args = ["--seed", "5", "--faults", "ber=1e-9,erc=10ms"]
    a = trial(run, tmp_path, *args, name="a")
    b = trial(run, tmp_path, *args, name="b")
    for key in ("files", "bytes", "audit", "damaged", "targets_hit"):
        assert a[key] == b[key], key
    for n in ("check", "repair", "recheck"):
        assert phase(a, n)["exit"] == phase(b, n)["exit"]
    assert a["disk"]["faults"]["faulty_sectors"] == \
        b["disk"]["faults"]["faulty_sectors"]
    c = trial(run, tmp_path, "--seed", "6", name="c")
    assert c["bytes"] != a["bytes"] or c["files"] != a["files"]


def layout(tmp_path, d):
    """What of the kept ext4 disk in d the seed should decide: its
    identity (mke2fs's UUID and directory hash seed), every group's
    bitmaps and free ranges (checksums seeded by the UUID), and each
    file's blocks."""
    img = f"{d}/disk.store?offset=4096"  # past the plugin's store header
    head = subprocess.run(["dumpe2fs", "-h", img], capture_output=True,
                          text=True, check=True).stdout
    ident = [line for line in head.splitlines()
             if line.startswith(("Filesystem UUID:", "Directory Hash Seed:"))]
    full = subprocess.run(["dumpe2fs", img], capture_output=True, text=True,
                          check=True).stdout
    groups = full[full.index("\nGroup 0:"):]
    files = [line.split("\t")[0] for line in
             (d / "manifest.tsv").read_text().splitlines()[1:]
             if line.split("\t")[1] == "file"]
    cmds = tmp_path / f"{d.name}.debugfs"
    cmds.write_text("".join(f'blocks "/{f}"\n' for f in files))
    blocks = subprocess.run(["debugfs", "-c", "-f", str(cmds), img],
                            capture_output=True, text=True,
                            check=True).stdout
    assert len(ident) == 2 and len(files) > 100, (ident, len(files))
    return ident, groups, blocks


@pytest.mark.parametrize("fill", [["--meta-only", "300"], [],
                                  ["--fill", "60", "--tree", "aged"]],
                         ids=["meta-only", "data", "aged"])
def test_same_seed_same_layout(run, tmp_path, fill):
    """The same seed lays ext4 out the same: mkfs's identity is the
    seed's, and the populate's allocations come from one CPU's
    preallocation, written back by populate itself (not a flusher on any
    CPU) as written extents (no conversion on I/O completion), with an
    aged tree's deletes committed between its rounds; else the check
    reads another layout each run."""
    def kept(seed, name):
        trial(run, tmp_path, "--seed", str(seed), *fill, "--keep", name=name)
        return layout(tmp_path, tmp_path / name)
    a, b = kept(5, "a"), kept(5, "b")
    assert a[0] == b[0]
    assert a[1] == b[1]
    assert a[2] == b[2]
    if fill[:1] == ["--meta-only"]:  # another seed, another identity (once)
        c = kept(6, "c")
        assert all(x != y for x, y in zip(a[0], c[0])), (a[0], c[0])


@pytest.mark.parametrize("phase", ["attach", "populate", "inject", "check",
                                   "audit"])
def test_killed_trial_leaves_nothing(futuredisk, tmp_path, phase):
    """SIGTERM as the trial enters each phase (as it says on stderr;
    "attach": as soon as nbdkit starts), rather than after fixed delays
    that land in different phases on machines of different speed."""
    d = str(tmp_path / "k")
    p = subprocess.Popen([futuredisk, *BASE[:-2], "--fill", "40", "--dir", d,
                          "--faults", "erc=50ms", "--target", "data:3"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    seen = wait_for_phase(p, d, phase)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    err = "".join(seen) + err
    assert p.returncode in (0, 130), (p.returncode, out, err)
    assert leftovers(d) == [], err
    assert not os.path.ismount(os.path.join(d, "mnt"))


def test_interrupted_predict_records_nothing(futuredisk, tmp_path):
    """SIGTERM during predict's populate: exit 130, everything detached,
    and no record and no table row for the disk it did not finish (as
    `run` records no interrupted trial)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out = tmp_path / "p.jsonl"
    prof = tmp_path / "small.profile"
    prof.write_text("base = roadmap-2006\nname = small\ncapacity = 4GB\n")
    p = subprocess.Popen([futuredisk, "predict", "--fs", "ext4", "--profile",
                          str(prof), "--files", "20000", "--json=" + str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "TMPDIR": str(scratch)})
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.startswith("futuredisk: populate "):
            break
    p.send_signal(signal.SIGTERM)
    stdout, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, stdout, "".join(seen) + err)
    assert not out.exists() or out.read_text() == ""
    assert not [r for r in stdout.splitlines() if r.startswith("small ")]
    assert leftovers(str(scratch)) == [] and list(scratch.iterdir()) == []


@pytest.mark.parametrize("args,message", [
    (["run"], "--fs TYPE is required"),
    (["run", "--fs", "ext5"], "unknown file system 'ext5'"),
    (["run", "--fs", "ext4", "--fill", "120"], "--fill: 120 is out of range"),
    (["run", "--fs", "ext4", "--target", "bogus"], "unknown type 'bogus'"),
    (["run", "--fs", "ext4", "--seed", "-1"], "--seed: '-1'"),
    (["run", "--fs", "ext4", "--time", "fast"],
     "--time: 'fast' is not virtual, real or scale:F"),
    (["run", "--fs", "ext4", "--time", "scale:0"], "--time scale"),
    (["run", "--fs", "ext4", "--campaign", "x"],
     "--campaign and --run-id go together"),
    (["run", "--fs", "ext4", "--rep", "x"], "--rep"),
    (["run", "--fs", "ext4", "--repair-cut", "0"],
     "--repair-cut: 0 is out of range"),
    (["run", "--fs", "ext4", "--repair-cut", "sweep:0"],
     "--repair-cut sweep: 0 is out of range"),
    (["run", "--fs", "ext4", "--repair-cut", "soon"], "--repair-cut: 'soon'"),
    (["run", "--fs", "ext4", "--repair-cut", "sweep:3", "--keep"],
     "--keep keeps none"),
    (["run", "--fs", "ext4", "--crash-points", "0"],
     "--crash-points: 0 is out of range"),
    (["run", "--fs", "ext4", "--crash-points", "all", "--target", "data"],
     "--crash-points goes with neither"),
    (["run", "--fs", "ext4", "--crash-points", "3", "--meta-only", "10"],
     "--crash-points needs written files"),
])
def test_bad_arguments(run, args, message):
    p = run(*args, check=2)
    assert message in p.stderr


def test_help(run):
    assert "--target" in run("run", "--help", check=0).stdout


# The same known cases on every adapter, 512 MiB (mkfs.xfs wants 300).
# What a flipped data bit becomes is the file system's fingerprint:
# ext4 and xfs return it silently, btrfs's data checksums turn it into EIO.
@pytest.mark.parametrize("fs,rot_class", [("ext4", "corrupted"),
                                          ("xfs", "corrupted"),
                                          ("btrfs", "unreadable")])
def test_known_damage_per_file_system(run, tmp_path, fs, rot_class):
    common = ["--fs", fs, "--size", "512M", "--fill", "15", "--seed", "4",
              "--faults", "erc=50ms"]
    for target, cls in (("data:1", "unreadable"), ("data:1:rot", rot_class)):
        out = tmp_path / f"{fs}.jsonl"
        d = tmp_path / f"{fs}-{target.replace(':', '_')}"
        p = run("run", *common, "--target", target, "--dir", str(d),
                "--json=" + str(out))
        assert p.returncode == 0, (p.stdout, p.stderr)
        rec = json.loads(out.read_text().splitlines()[-1])
        path = rec["targets_hit"].split(" ")[2]
        # Every loss is matched to the logged fault on its blocks (btrfs's
        # FIEMAP addresses are its own: its adapter maps them).
        cause = (target.split(":")[2:] or ["ure"])[0]
        assert rec["damaged"] == [{"class": cls, "path": path,
                                   "cause": cause}], rec["damaged"]
        assert phase(rec, "recheck")["outcome"] == "CLEAN"
        assert rec["write_probe"] is True
        assert leftovers(str(d)) == []


def test_chunkfs_losses_carry_their_cause(run, tmp_path):
    """chunkfs has no FIEMAP (FUSE): its adapter finds a damaged file's
    blocks with libchunkfs (file_ranges), so its loss is matched to the
    fault on them like ext4's.  A flipped data bit: one file, silently
    corrupted (no data checksums), cause rot.  An unreadable data block:
    its file carries ure, and it alone is lost: chunkfs reads the loop
    device O_DIRECT (through the device's page cache, the folio read
    around the bad sector failed with it, and neighbouring files with
    no fault on their blocks were unreadable too)."""
    common = ["--fs", "chunkfs", "--size", "512M", "--fill", "15", "--seed",
              "4", "--faults", "erc=50ms"]
    for target in ("data:1:rot", "data:1"):
        out = tmp_path / "c.jsonl"
        d = tmp_path / target.replace(":", "_")
        p = run("run", *common, "--target", target, "--dir", str(d),
                "--json=" + str(out))
        assert p.returncode == 0, (p.stdout, p.stderr)
        rec = json.loads(out.read_text().splitlines()[-1])
        kind, _, path, _ = rec["targets_hit"].split(" ")
        causes = {x["path"]: (x["class"], x["cause"]) for x in rec["damaged"]}
        if kind == "rot":
            assert causes == {path: ("corrupted", "rot")}, rec["damaged"]
        else:
            assert causes == {path: ("unreadable", "ure")}, rec["damaged"]
        assert phase(rec, "recheck")["outcome"] == "CLEAN"
        assert leftovers(str(d)) == []


def test_too_small_for_xfs(run):
    p = run("run", "--fs", "xfs", "--size", "64M", check=2)
    assert "xfs needs a disk of at least 300 MiB" in p.stderr


@pytest.mark.parametrize("fs,pass_line", [
    ("ext4", r"; Pass [1-5]: Checking [a-z ,]+ \(\d+ % done\)$"),
    ("xfs", r"; Phase [1-7] - "),
])
def test_check_progress_lines(run, fs, pass_line):
    """--progress 0: a line at each update of a running checker, with the
    virtual time so far, the pass and (e2fsck's -C3) the share done."""
    import re
    p = run("run", "--fs", fs, "--size", "512M", "--fill", "5", "--think",
            "zero", "--progress", "0", check=0)
    lines = [l for l in p.stderr.splitlines()
             if l.startswith("futuredisk: check: ")]
    assert lines, p.stderr
    head = r"^futuredisk: check: \d+\.\d (s|min) virtual so far \(\d+ s wall\)"
    assert all(re.match(head, l) for l in lines), lines
    assert any(re.search(pass_line, l) for l in lines), lines
    # The disk's clock, read as the checker goes: it moves, never back.
    secs = [float(m.group(1)) * (60 if m.group(2) == "min" else 1)
            for m in (re.match(r"^futuredisk: check: (\d+\.\d) (s|min)", l)
                      for l in lines)]
    assert secs == sorted(secs) and secs[-1] > 0, lines
    assert run("run", "--fs", fs, "--progress", "-1",
               check=2).stderr.count("--progress") == 1


def test_predict_meta_only(run, tmp_path):
    """predict: whole (small) disks filled with metadata only; the table
    has a row per profile, and the plugin stored only metadata."""
    profs = []
    for name, cap in (("small-a", "2GB"), ("small-b", "8GB")):
        f = tmp_path / f"{name}.profile"
        f.write_text(f"base = roadmap-2006\nname = {name}\ncapacity = {cap}\n")
        profs += ["--profile", str(f)]
    out = tmp_path / "p.jsonl"
    # Its scratch directories here, apart from predicts of other tests
    # running beside it.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    p = run("predict", "--fs", "ext4", "--fill", "50%", "--files", "3000",
            *profs, "--json=" + str(out), check=0,
            env={"TMPDIR": str(scratch)})
    rows = [line.split() for line in p.stdout.splitlines()
            if line.startswith("small-")]
    assert [r[0] for r in rows] == ["small-a", "small-b"], p.stdout
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    for rec in recs:
        check = phase(rec, "check")
        assert check["outcome"] == "CLEAN" and check["virtual_s"] > 0
        assert [ph["name"] for ph in rec["phases"]] == [
            "populate", "unmount", "inject", "check"]
        size = int(rec["size"])
        assert rec["bytes"] > 0.4 * size  # half the disk allocated ...
        assert rec["disk"]["stored_bytes"] < 0.05 * size  # ... not stored
    # The default think mode as it came out here (root: the cgroup's CPU).
    assert "metadata only, think=cpu; took" in p.stdout
    assert all(rec["think"] == "cpu" for rec in recs)
    assert leftovers(str(scratch)) == [] and list(scratch.iterdir()) == []
    # fsck or restore: the check's time beside a restore of the used bytes
    # written back through the drive model, no faster than its outer zone.
    for rec, row in zip(recs, rows):
        r = rec["restore"]
        assert r["bytes"] == rec["bytes"] and r["rate"] == 0
        assert r["fsck_s"] == phase(rec, "check")["virtual_s"]
        assert r["restore_s"] > r["bytes"] / 200e6, r  # roadmap-2006's outer
        assert r["quicker"] == ("fsck" if r["fsck_s"] <= r["restore_s"]
                                else "restore")
        assert row[-1] == r["quicker"]


def test_restore_rate_decides_fsck_or_restore(run, tmp_path):
    """--restore-rate: bytes in use / rate; a slow network restore loses
    to the repair, a fast one wins, and the record and summary say so."""
    for rate, quicker in (("1MB", "fsck"), ("1000TB/s", "restore")):
        rec = trial(run, tmp_path, "--seed", "2", "--restore-rate", rate,
                    name=f"r{quicker}")
        r = rec["restore"]
        per_s = 1e6 if rate == "1MB" else 1e15
        assert r["rate"] == per_s
        assert abs(r["restore_s"] - rec["bytes"] / per_s) < 1e-6
        fsck = sum(p["virtual_s"] for p in rec["phases"]
                   if p["name"] in ("check", "repair"))
        assert abs(r["fsck_s"] - fsck) < 1e-5
        assert r["quicker"] == quicker
    p = run(*BASE, "--restore-rate", "0", check=2)
    assert "--restore-rate: '0' is not more than 0" in p.stderr
    p = run("predict", "--fs", "ext4", "--restore-rate", "fast", check=2)
    assert "--restore-rate: 'fast' is not a size" in p.stderr


def test_predict_bad_arguments(run):
    assert "--fs TYPE is required" in run("predict", check=2).stderr
    p = run("predict", "--fs", "ext4", "--profile", "floppy", check=2)
    assert "unknown profile 'floppy'" in p.stderr
    p = run("predict", "--fs", "ext4", "--fill", "95%", check=2)
    assert "--fill: 95 is out of range" in p.stderr


def test_db_records_match_json(run, tmp_path):
    import sqlite3
    db = str(tmp_path / "trials.db")
    rec = trial(run, tmp_path, "--seed", "2", "--target", "data:1",
                "--faults", "erc=10ms", "--db", db)
    # A drive one request deep is a scenario of its own.
    trial(run, tmp_path, "--seed", "3", "--db", db, "--campaign", "night",
          "--run-id", "R1", "--rep", "4", "--attach", "serial", name="u")
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone() == (7,)
    assert con.execute("SELECT campaign, run_id, rep, scenario FROM trials "
                       "ORDER BY id").fetchall() == [
        ("", "", 0, "fs=ext4 profile=roadmap-2006 size=256M fill=20 meta=0 "
         "crash=0 faults=erc=10ms target=data:1 think=cpu"),
        ("night", "R1", 4, "fs=ext4 profile=roadmap-2006 size=256M fill=20 "
         "meta=0 crash=0 faults= target= think=cpu attach=serial")]
    rows = con.execute("SELECT id, fs, seed, files, bytes, write_probe, "
                       "record FROM trials ORDER BY id").fetchall()
    assert [r[2] for r in rows] == [2, 3]
    assert json.loads(rows[0][6]) == rec
    assert rows[0][3:6] == (rec["files"], rec["bytes"], 1)
    phases = con.execute("SELECT name, outcome, read_errors FROM phases "
                         "WHERE trial_id = 1 ORDER BY seq").fetchall()
    assert phases == [(p["name"], p.get("outcome"), p["read_errors"])
                      for p in rec["phases"]]
    assert con.execute("SELECT class, path, cause FROM damaged "
                       "WHERE trial_id = 1").fetchall() == [
        (d["class"], d["path"], d["cause"]) for d in rec["damaged"]]
    audit = dict(con.execute("SELECT class, files FROM audit "
                             "WHERE trial_id = 1").fetchall())
    assert audit == {k: v for k, v in rec["audit"].items()
                     if not k.endswith("_blocks")}
    durability = dict(con.execute("SELECT class, files FROM durability "
                                  "WHERE trial_id = 1").fetchall())
    assert durability == {k: v for k, v in rec["durability"].items()
                          if k != "violations"}
    assert durability["durable_broken"] == 1  # the unreadable file
    # A version 1 database is upgraded: its rows get their scenario.
    for table, col in [("trials", "campaign"), ("trials", "run_id"),
                       ("trials", "rep"), ("trials", "crash"),
                       ("trials", "meta_only"), ("trials", "time_mode"),
                       ("trials", "think"),
                       ("trials", "scenario"), ("trials", "repair_cut"),
                       ("trials", "crash_points"), ("trials", "tree"),
                       ("trials", "mount"), ("trials", "mount_reason"),
                       ("trials", "env_id"), ("trials", "escalate"),
                       ("trials", "host"), ("trials", "evidence_missing"),
                       ("trials", "model_version"),
                       ("phases", "read_errors")]:
        if col == "campaign":
            con.execute("DROP INDEX trials_night")
        con.execute(f"ALTER TABLE {table} DROP COLUMN {col}")
    con.execute("DROP TABLE durability")
    con.execute("DROP TABLE evidence")
    con.execute("DROP TABLE environments")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    trial(run, tmp_path, "--seed", "4", "--db", db, name="w")
    assert con.execute("PRAGMA user_version").fetchone() == (7,)
    # Trials older than the drive model's version count as model 1.
    assert con.execute("SELECT model_version FROM trials ORDER BY id"
                       ).fetchall() == [(1,), (1,), (rec["model_version"],)]
    # Trials older than the promises have no durability rows.
    assert con.execute("SELECT DISTINCT trial_id FROM durability").fetchall() \
        == [(3,)]
    assert [r[0].split(" ")[-2:] for r in con.execute(
        "SELECT scenario FROM trials ORDER BY id")] == [
        ["faults=erc=10ms", "target=data:1"], ["faults=", "target="],
        ["target=", "think=cpu"]]
    # A database of a newer schema version is refused, not altered.
    con.execute("PRAGMA user_version = 8")
    con.commit()
    p = run(*BASE, "--dir", str(tmp_path / "v"), "--db", db)
    assert p.returncode == 1
    assert "schema version 8, this futuredisk knows up to 7" in p.stderr
    assert leftovers(str(tmp_path / "v")) == []


def test_crash_trial_replays_the_journal(run, tmp_path):
    """--crash: populate syncs half way, then the power goes with the rest
    in flight and the kernel never reaches the disk again.  The repair
    replays the journal; what was synced survives, the rest is counted."""
    d = tmp_path / "crash"
    out = tmp_path / "crash.jsonl"
    p = run(*BASE, "--crash", "--seed", "3", "--dir", str(d), "--keep",
            "--json=" + str(out))
    assert p.returncode == 0, p.stderr
    rec = json.loads(out.read_text())
    assert rec["crash"] is True
    assert [ph["name"] for ph in rec["phases"]][:2] == ["populate", "crash"]
    assert "recovering journal" in (d / "repair.out").read_text()
    assert phase(rec, "repair")["outcome"] in ("FIXED", "CLEAN")
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    a = rec["audit"]
    assert a["intact"] > 0 and a["missing"] + a["partial"] + a["corrupted"] > 0
    # ext4 keeps every promise the crash workload was given; what was in
    # flight is partly lost (allowed), partly there.
    dur = rec["durability"]
    assert dur["durable_broken"] == 0 and dur["violations"] == [], dur
    assert dur["inflight_lost"] > 0 and dur["inflight_survived"] > 0, dur
    assert dur["durable_intact"] > a["intact"] // 2, dur
    files = sum(dur[k] for k in ("durable_intact", "durable_broken",
                                 "inflight_lost", "inflight_survived"))
    manifest = [line.split("\t") for line in
                (d / "manifest.tsv").read_text().splitlines()[1:]]
    assert files == sum(1 for m in manifest if m[1] != "dir")
    hows = {m[7] for m in manifest}
    assert {"sync", "fsync", "dirsync", "replace", "replace-nosync",
            "append", "link", "unlink", "chain", "write"} <= hows, hows
    cut = [json.loads(line) for line in
           (d / "faults-populate.jsonl").read_text().splitlines()]
    assert cut and cut[0]["kind"] == "powercut"
    assert leftovers(str(d)) == []


# The block-type maps: each kind of metadata block, made unreadable, is
# read by the read-only check (the IRON fingerprint's first column).  ext4
# and xfs report it; btrfs keeps two copies of its metadata on one disk
# (DUP) and reads the other, except for the superblock, whose mirrors its
# check does not try.
METADATA = (
    [("ext4", t, "noticed") for t in
     ["superblock", "gdt", "block-bitmap", "inode-bitmap", "dir",
      "journal"]] +
    [("xfs", t, "noticed") for t in
     ["superblock", "agf", "agi", "agfl", "bnobt", "cntbt", "refcountbt",
      "inobt", "finobt", "log", "dir", "inode"]] +
    [("btrfs", t, "survived") for t in
     ["root-tree", "chunk-tree", "extent-tree", "dev-tree", "fs-tree",
      "csum-tree", "free-space-tree", "dir", "inode"]] +
    [("btrfs", "superblock", "noticed")] +
    [("chunkfs", t, "noticed") for t in
     ["superblock", "dirty-map", "header", "block-bitmap", "inode-bitmap",
      "inode", "dir", "backrefs"]])


@pytest.mark.parametrize("fs,btype,expect", METADATA)
def test_metadata_targets_are_read_by_the_check(run, tmp_path, fs, btype,
                                                expect):
    out = tmp_path / "m.jsonl"
    d = tmp_path / btype
    size = "256M" if fs == "ext4" else "512M"
    p = run("run", "--fs", fs, "--size", size, "--fill", "10", "--seed", "2",
            "--target", btype, "--faults", "erc=10ms", "--dir", str(d),
            "--json=" + str(out))
    rec = json.loads(out.read_text())
    assert rec["targets_hit"].split(" ")[1:2] == [btype], \
        (rec.get("error"), p.stderr[-2000:])
    check = phase(rec, "check")
    # (What was hit and what the check did, should it not notice.)
    assert check["read_errors"] >= 1, (rec["targets_hit"], check,
                                       rec["disk"]["faults"], p.stdout[-3000:])
    assert (check["outcome"] == "CLEAN") == (expect == "survived")
    assert p.returncode == 0 or rec["error"], p.stderr
    assert leftovers(str(d)) == []


def test_hung_checker_is_killed_at_the_timeout(run, tmp_path):
    """An unreadable superblock whose every read takes 5 s of real time
    (time=real, error recovery 5 s): a checker still running after 2 s is
    killed and recorded as TIMEOUT, and the trial leaves nothing behind."""
    out = tmp_path / "h.jsonl"
    d = tmp_path / "h"
    run("run", "--fs", "ext4", "--profile", "ideal", "--time", "real",
        "--size", "256M", "--fill", "5", "--target", "superblock",
        "--faults", "erc=5s", "--timeout", "2", "--dir", str(d),
        "--json=" + str(out))
    rec = json.loads(out.read_text())
    assert rec["time"] == "real"
    timed_out = [p for p in rec["phases"] if p.get("outcome") == "TIMEOUT"]
    assert timed_out and all(p["wall_s"] >= 2 for p in timed_out)
    assert leftovers(str(d)) == []


def stand_in(tmp_path, name, script):
    """A shell script named `name` first on PATH: the environment to run
    futuredisk with."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / name).write_text("#!/bin/sh\n" + script)
    (fake / name).chmod(0o755)
    return {"PATH": f"{fake}:{os.environ['PATH']}"}


def test_looping_checker_is_stopped(run, tmp_path):
    """btrfs check --repair's known endless loop (one line over and over,
    kdave/btrfs-progs#850), played by a stand-in for btrfs on PATH: the
    repair is stopped after 100 repeats, long before the timeout,
    recorded as LOOPING, and the trial goes on to recheck and audit."""
    env = stand_in(
        tmp_path, "btrfs",
        "case \"$*\" in *--repair*) ;; *) exec /usr/bin/btrfs \"$@\";; esac\n"
        "echo '[1/7] checking root items'\n"
        "while :; do echo 'super bytes used 3 mismatches actual used 2'; "
        "done\n")
    out = tmp_path / "l.jsonl"
    d = tmp_path / "l"
    p = run("run", "--fs", "btrfs", "--size", "256M", "--fill", "5",
            "--timeout", "250", "--dir", str(d), "--json=" + str(out),
            env=env)
    assert p.returncode == 0, p.stderr
    rec = json.loads(out.read_text())
    repair = phase(rec, "repair")
    assert repair["outcome"] == "LOOPING", repair
    assert repair["wall_s"] < 250
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    assert rec["audit"]["intact"] > 0
    assert 'printed "super bytes used 3 mismatches actual used 2" 100 ' \
        'times in a row' in p.stderr, p.stderr
    assert leftovers(str(d)) == []


def test_server_dying_before_the_mount_fails_the_trial(run, tmp_path):
    """nbdfuse killed after the repair (by a stand-in e2fsck on PATH): the
    disk cannot mount, and that is the rig's failure, said as such, not
    an unmountable file system recorded as a finding.  (nbdkit's death
    is caught sooner: each phase ends by asking it for its counters.)"""
    d = tmp_path / "k"
    env = stand_in(
        tmp_path, "e2fsck",
        "/sbin/e2fsck \"$@\"; rc=$?\n"
        f"case \"$*\" in *-fy*) kill -9 $(cat {d}/nbdfuse.pid);; esac\n"
        "exit $rc\n")
    out = tmp_path / "k.jsonl"
    p = run(*BASE, "--attach", "loop", "--dir", str(d), "--json=" + str(out),
            env=env)
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "nbdfuse (pid " in p.stdout and "died under the disk" in p.stdout, \
        (p.stdout, p.stderr)
    assert leftovers(str(d)) == []


def test_server_dying_during_the_check_is_named_and_its_output_kept(
        futuredisk, run, tmp_path):
    """nbdkit killed while the check runs (by a stand-in e2fsck on PATH,
    once the real one has printed its verdict): the trial's error names
    nbdkit's death during the check, not its control socket's silence
    ("Connection refused"); the check is cut short (its wall time, but
    no virtual time, outcome or fsck-or-restore verdict from a disk that
    is gone), and its output up to then is kept as evidence."""
    d = tmp_path / "k"
    env = stand_in(
        tmp_path, "e2fsck",
        "case \"$*\" in *-fn*) ;; *) exec /sbin/e2fsck \"$@\";; esac\n"
        "/sbin/e2fsck \"$@\"; rc=$?\n"
        f"pid=$(cat {d}/nbdkit.pid)\n"
        "echo \"stand-in: killing nbdkit (pid $pid)\"\n"
        "kill -9 $pid\n"
        "exit $rc\n")
    out, db = tmp_path / "k.jsonl", tmp_path / "k.db"
    p = run(*BASE, "--dir", str(d), "--json=" + str(out), "--db", str(db),
            env=env)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Connection refused" not in p.stdout, p.stdout
    rec = json.loads(out.read_text())
    check = phase(rec, "check")
    assert rec["error"].startswith("nbdkit (pid ") and \
        ") died during check; " in rec["error"], rec["error"]
    pid = rec["error"][len("nbdkit (pid "):].split(")")[0]
    assert "outcome" not in check and check["wall_s"] > 0, check
    assert rec["restore"] is None
    assert [n["name"] for n in rec["phases"]][-1] == "check"
    assert "check                   ? virtual s" in p.stdout and \
        "cut short" in p.stdout and "fsck or restore" not in p.stdout, p.stdout
    # The checker's output as far as it went, kept with the record.
    kept = subprocess.run([futuredisk, "show", str(db), "1", "check.out"],
                          capture_output=True, text=True, timeout=60)
    assert kept.returncode == 0, kept.stderr
    assert "Pass 5: Checking group summary information" in kept.stdout
    assert f"stand-in: killing nbdkit (pid {pid})" in kept.stdout, kept.stdout
    assert leftovers(str(d)) == []


def test_unknown_target_for_xfs(run):
    p = run("run", "--fs", "xfs", "--target", "journal", check=2)
    assert "unknown type 'journal' for xfs (data inode dir log" in p.stderr


def test_xfs_crash_replays_the_log_by_mounting(run, tmp_path):
    """xfs_repair refuses a dirty log (exit 2): the ladder mounts and
    unmounts to replay it, then repairs again; the recheck is clean."""
    out = tmp_path / "x.jsonl"
    p = run("run", "--fs", "xfs", "--size", "512M", "--fill", "10",
            "--crash", "--dir", str(tmp_path / "x"), "--json=" + str(out))
    assert p.returncode == 0, p.stderr
    rec = json.loads(out.read_text())
    names = [ph["name"] for ph in rec["phases"]]
    assert names[names.index("check"):] == [
        "check", "repair", "replay-mount", "repair", "recheck", "audit"]
    assert rec["phases"][names.index("check") + 1]["exit"] == 2
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    assert rec["audit"]["intact"] > 0
    assert rec["durability"]["durable_broken"] == 0, rec["durability"]
    assert leftovers(str(tmp_path / "x")) == []


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_chunkfs_power_cut_then_check_and_audit(run, tmp_path, seed):
    """chunkfs populated, cut by a power cut through the plugin half-way
    after a sync: the check repairs what the cut left, a second check is
    clean, the files made durable before the cut are intact and nothing
    is silently corrupted."""
    out = tmp_path / "c.jsonl"
    d = tmp_path / "c"
    p = run("run", "--fs", "chunkfs", "--size", "512M", "--fill", "15",
            "--seed", str(seed), "--crash", "--dir", str(d),
            "--json=" + str(out))
    assert p.returncode == 0, (p.stdout, p.stderr)
    rec = json.loads(out.read_text())
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    assert rec["write_probe"] is True
    audit = rec["audit"]
    assert audit["intact"] >= rec["files"] // 4, audit
    assert audit["corrupted"] == 0 and audit["garbled_blocks"] == 0, audit
    assert rec["durability"]["durable_broken"] == 0, rec["durability"]
    assert leftovers(str(d)) == []
