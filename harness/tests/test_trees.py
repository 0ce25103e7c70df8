"""Workload trees (`--tree`) and RAID-level corruption (`--target
TYPE:N:stripe`), end to end on small ext4 disks: the same seed gives the
same tree, each tree has the shape futuredisk(1) documents (link counts
on disk, size bounds, fragmented free space), a campaign records the
tree, bad values are refused by name, and garbled stripes are found by
e2fsck and named as the cause of the files they damaged."""
import collections
import json
import re
import sqlite3
import subprocess

import pytest

from conftest import leftovers

BASE = ["run", "--fs", "ext4", "--size", "256M"]
STORE_OFFSET = 4096  # the plugin's store header (nbdkit-futuredisk-plugin)


def phase(rec, name):
    return next(p for p in rec["phases"] if p["name"] == name)


def trial(run, tmp_path, *args, name="t"):
    """Run a kept trial; its record and directory."""
    d = tmp_path / name
    out = tmp_path / f"{name}.jsonl"
    p = run(*BASE, "--dir", str(d), "--keep", "--json=" + str(out), *args)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert leftovers(str(d)) == []
    return json.loads(out.read_text().splitlines()[-1]), d


def manifest(d):
    """The manifest's rows: path, type, size, mode, hash, id, ..."""
    return [line.split("\t") for line in
            (d / "manifest.tsv").read_text().splitlines()[1:]]


def image(d):
    """The kept disk as e2fsprogs opens it (past the store's header)."""
    return f"{d}/disk.store?offset={STORE_OFFSET}"


def intact(rec):
    a = rec["audit"]
    # No audit: the disk did not mount after the repair; say why.
    assert a is not None, (rec["error"], [(p["name"], p.get("outcome"))
                                          for p in rec["phases"]])
    return all(v == 0 for k, v in a.items()
               if k not in ("intact", "extra") and not k.endswith("_blocks"))


@pytest.mark.parametrize("tree,load", [
    ("hardlink-farm", ["--fill", "10"]),
    ("small-files", ["--fill", "5"]),
    ("large-media", ["--fill", "10"]),
    ("aged", ["--fill", "10", "--meta-only", "200"]),
])
def test_same_seed_same_tree(run, tmp_path, tree, load):
    a, da = trial(run, tmp_path, "--tree", tree, "--seed", "3", *load,
                  name="a")
    b, db = trial(run, tmp_path, "--tree", tree, "--seed", "3", *load,
                  name="b")
    c, dc = trial(run, tmp_path, "--tree", tree, "--seed", "4", *load,
                  name="c")
    assert a["tree"] == tree and intact(a), a["audit"]
    assert manifest(da) == manifest(db)
    assert manifest(da) != manifest(dc)


def test_hardlink_farm_links_on_disk(run, tmp_path):
    """Seven snapshots; an unchanged file is one inode with a name in each
    snapshot since it appeared, and ext4's link count says so."""
    rec, d = trial(run, tmp_path, "--tree", "hardlink-farm", "--fill", "10")
    assert intact(rec), rec["audit"]
    rows = manifest(d)
    tops = {r[0].split("/")[0] for r in rows}
    assert tops == {f"daily.{k}" for k in range(7)}
    names = collections.Counter(r[5] for r in rows if r[1] in
                                ("file", "hardlink"))
    assert max(names.values()) == 7
    linked = [i for i, n in names.items() if n > 1]
    # Most files stay unchanged from one snapshot to the next.
    assert len(linked) > len(names) // 2, names
    # The newest snapshot's names of a few linked files, on disk.
    newest = {r[5]: r[0] for r in rows if r[0].startswith("daily.0/")
              and r[1] in ("file", "hardlink")}
    sample = [i for i in sorted(linked, key=int) if i in newest][:20]
    assert sample
    cmds = "\n".join(f"stat {newest[i]}" for i in sample) + "\n"
    out = subprocess.run(["debugfs", "-f", "-", image(d)], input=cmds,
                         capture_output=True, text=True).stdout
    links = [int(n) for n in re.findall(r"Links: (\d+)", out)]
    assert links == [names[i] for i in sample], out[-2000:]


def test_small_files_sizes_and_fan_out(run, tmp_path):
    rec, d = trial(run, tmp_path, "--tree", "small-files", "--fill", "5")
    assert intact(rec), rec["audit"]
    rows = manifest(d)
    dirs = {r[0] for r in rows if r[1] == "dir"}
    assert dirs == {f"{a:x}" for a in range(16)} | \
        {f"{a:x}/{b:x}" for a in range(16) for b in range(16)}
    sizes = [int(r[2]) for r in rows if r[1] == "file"]
    assert len(sizes) > 1000
    assert min(sizes) >= 1024 and max(sizes) <= 16384
    # Uniform over 1-16 KiB: both ends are used.
    assert min(sizes) < 2048 and max(sizes) > 15360


def test_large_media_few_large_files(run, tmp_path):
    rec, d = trial(run, tmp_path, "--tree", "large-media", "--fill", "20")
    assert intact(rec), rec["audit"]
    sizes = [int(r[2]) for r in manifest(d) if r[1] == "file"]
    # Each between 1/64 and 1/4 of the data (the last one less).
    assert 4 <= len(sizes) <= 64
    assert max(sizes) <= rec["bytes"] // 4 + 4096
    assert sorted(sizes)[1] >= rec["bytes"] // 80


def free_extents(d):
    out = subprocess.run(["e2freefrag", image(d)], capture_output=True,
                         text=True).stdout
    return int(re.search(r"Num\. free extent: (\d+)", out).group(1))


def test_aged_fragments_free_space(run, tmp_path):
    """Rounds of creates and deletes leave the free space in many pieces,
    where the mixed tree of the same fill leaves it in few."""
    aged, da = trial(run, tmp_path, "--tree", "aged", "--fill", "20",
                     "--meta-only", "300", name="aged")
    fresh, df = trial(run, tmp_path, "--fill", "20", "--meta-only", "300",
                      name="fresh")
    assert intact(aged), aged["audit"]
    assert fresh["tree"] == "mixed"
    assert free_extents(da) > 5 * free_extents(df), \
        (free_extents(da), free_extents(df))


CAMPAIGN = """[campaign]
name = trees
size = 256M
fill = 5
think = zero

[matrix m]
fs = ext4
tree = small-files large-media
"""


def test_campaign_records_the_tree(futuredisk, tmp_path):
    ini = tmp_path / "t.ini"
    ini.write_text(CAMPAIGN)
    db = str(tmp_path / "t.db")
    p = subprocess.run([futuredisk, "campaign", str(ini), "--db", db,
                        "--run-id", "R", "--jobs", "2"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.stdout, p.stderr)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT tree, scenario, json_extract(record, "
                       "'$.tree') FROM trials ORDER BY tree").fetchall()
    assert [(r[0], r[2]) for r in rows] == [("large-media", "large-media"),
                                            ("small-files", "small-files")]
    assert [r[1].split(" ")[-1] for r in rows] == ["tree=large-media",
                                                   "tree=small-files"]


@pytest.mark.parametrize("args,message", [
    (["--tree", "forest"], "--tree: 'forest' is not mixed, hardlink-farm"),
    (["--tree", "aged", "--crash"], "--tree aged has no crash workload"),
    (["--target", "dir:1:stripe=5000"],
     "target stripe '5000': a multiple of 4K"),
    (["--target", "dir:1:stripes"], "target kind 'stripes' is not ure"),
    (["--target", "dir:1:stripe-copy=1"],
     "target stripe '1': a multiple of 4K"),
    (["--target", "dir:1:stripe-ure=6K"],
     "target stripe '6K': a multiple of 4K"),
    (["--target", "dir:1:stripe-uree"], "target kind 'stripe-uree' is not"),
    (["--target", "inode:1+"], "--target 'inode:1+': TYPE[:N[:KIND]][+...]"),
    (["--target", "inode:1++data"], "--target 'inode:1++data': TYPE[:N[:KIND]]"),
    (["--target", "inode+data+dir+inode+data"],
     "--target 'inode+data+dir+inode+data': at most 4 parts joined by '+'"),
    (["--target", "inode:1:stripe-copy+agf"], "--target: unknown type 'agf'"),
])
def test_bad_values_are_named(run, args, message):
    p = run(*BASE, *args)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_bad_values_in_campaign_and_predict(run, tmp_path):
    ini = tmp_path / "bad.ini"
    ini.write_text(CAMPAIGN.replace("small-files", "shrub"))
    p = run("campaign", str(ini), "--list")
    assert p.returncode != 0 and "tree: 'shrub' is not mixed" in p.stderr, \
        p.stderr
    ini.write_text(CAMPAIGN + "crash = yes\n")
    p = run("campaign", str(ini), "--list")
    assert p.returncode != 0 and "has no crash workload" in p.stderr, p.stderr
    p = run("predict", "--fs", "ext4", "--tree", "bush")
    assert p.returncode == 2 and "--tree: 'bush'" in p.stderr, p.stderr


def test_garbled_stripes_found_and_attributed(run, tmp_path):
    """Two directories' stripes garbled (RAID-level corruption): the
    read-only check finds damage, the repair fixes the structures, and
    every file the audit found corrupted in place is attributed to the
    stripes in the fault log."""
    # Seed 2: the stripes of seed 1 hold only directory blocks since the
    # kernel was told the disk spins (ext4 allocates otherwise then).
    rec, d = trial(run, tmp_path, "--fill", "20", "--seed", "2",
                   "--target", "dir:2:stripe")
    phases = {p["name"]: p for p in rec["phases"]}
    assert phases["check"]["outcome"] != "CLEAN"
    assert phases["repair"]["outcome"] == "FIXED"
    assert phases["recheck"]["outcome"] == "CLEAN"
    log = [json.loads(line) for line in
           (d / "faults-populate.jsonl").read_text().splitlines()]
    assert [f["kind"] for f in log] == ["stripe", "stripe"]
    for f in log:
        assert f["length"] == 256 << 10 and f["offset"] % (256 << 10) == 0
    hits = rec["targets_hit"].split("; ")
    assert len(hits) == 2 and all(h.startswith("stripe dir ") for h in hits)
    # Each hit block lies in the stripe garbled for it.
    for h, f in zip(hits, log):
        off = int(h.split(" ")[-1])
        assert f["offset"] <= off < f["offset"] + f["length"]
    a = rec["audit"]
    assert a["intact"] < sum(v for k, v in a.items()
                             if not k.endswith("_blocks") and k != "extra")
    corrupted = [x for x in rec["damaged"] if x["class"] == "corrupted"]
    assert corrupted and all(x["cause"] == "stripe" for x in corrupted), \
        rec["damaged"]
    assert a["garbled_blocks"] > 0


def test_unreadable_stripes_beside_copied_ones(run, tmp_path):
    """Two parts joined by '+': inode-table stripes copied (in the
    store) and others unreadable (the disk's, until rewritten).  Each
    read of an unreadable stripe fails only after the drive's error
    recovery, so the repair's virtual time is at least that many erc."""
    erc = 120  # roadmap-2006: desktop drives give up after 2 minutes
    rec, d = trial(run, tmp_path, "--fs", "ext3", "--size", "512M",
                   "--fill", "40", "--tree", "hardlink-farm", "--think",
                   "zero", "--target",
                   "inode:2:stripe-copy=64K+inode:30:stripe-ure=16K")
    copies = [json.loads(line) for line in
              (d / "faults-populate.jsonl").read_text().splitlines()]
    assert len(copies) == 2 and all(f["kind"] == "stripe" for f in copies)
    log = [json.loads(line) for line in
           (d / "faults.jsonl").read_text().splitlines()]
    injected = [f for f in log if f.get("event") == "inject"]
    assert injected and all(f["kind"] == "ure" and f["length"] == 16 << 10
                            and f["offset"] % (16 << 10) == 0
                            for f in injected), injected
    assert rec["target"].count("+") == 1
    # 32 places outgrow the record's list, which says how many it left
    # out (the fault logs have them all).
    listed = rec["targets_hit"].split("; ")
    more = re.fullmatch(r"and (\d+) more", listed.pop())
    assert more and len(listed) + int(more.group(1)) == 32, rec["targets_hit"]
    kinds = [t.split(" ")[0] for t in listed]
    assert kinds == ["stripe-copy=64K"] * 2 + ["stripe-ure=16K"] * (
        len(listed) - 2), kinds
    assert len(injected) == 30
    assert rec["iron"] is None  # a fingerprint is of one type and kind
    check, repair = phase(rec, "check"), phase(rec, "repair")
    assert check["read_errors"] > 0 and check["outcome"] == "CHECKER_ERROR"
    assert repair["read_errors"] > 0 and repair["outcome"] == "FIXED"
    assert repair["virtual_s"] >= repair["read_errors"] * erc
    assert "Error reading block" in (d / "repair.out").read_text()
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    assert phase(rec, "recheck")["read_errors"] == 0  # rewritten


def test_copied_inode_stripes_on_ext3(run, tmp_path):
    """ext3 as 2007 made it, a hard-link farm, and inode-table stripes
    overwritten with the stripe before them: the copied inodes claim
    their originals' blocks, so the repair runs e2fsck's passes 1B-1D,
    and the record splits the repair's virtual time by pass."""
    # Big enough that the files' inodes pass the inode tables' first
    # stripe, before which lie bitmaps and reserved blocks, not inodes.
    rec, d = trial(run, tmp_path, "--fs", "ext3", "--size", "512M",
                   "--fill", "40", "--tree", "hardlink-farm", "--think",
                   "zero", "--target", "inode:8:stripe-copy=64K")
    out = subprocess.run(["dumpe2fs", "-h", image(d)], capture_output=True,
                         text=True)
    features = re.search(r"features:\s+(.*)", out.stdout).group(1).split()
    assert "has_journal" in features and "extent" not in features, features
    assert re.search(r"Inode size:\s+128", out.stdout), out.stdout
    log = [json.loads(line) for line in
           (d / "faults-populate.jsonl").read_text().splitlines()]
    assert log and all(f["kind"] == "stripe" and f["length"] == 64 << 10 and
                       "the stripe before it" in f["detail"] for f in log)
    repair = phase(rec, "repair")
    assert repair["outcome"] == "FIXED"
    assert phase(rec, "recheck")["outcome"] == "CLEAN"
    names = [n for n, _ in repair["virtual_passes"]]
    assert names[:4] == ["pass 1", "pass 1b", "pass 1c", "pass 1d"], names
    assert names[-1] == "pass 5", names
    assert "multiply-claimed" in (d / "repair.out").read_text()
    total = sum(s for _, s in repair["virtual_passes"])
    assert all(s >= 0 for _, s in repair["virtual_passes"])
    assert 0 < total <= repair["virtual_s"] + 1e-3
    assert phase(rec, "check")["virtual_passes"][0][0] == "pass 1"


def test_ext3_meta_only_files_get_their_blocks_unmounted(run, tmp_path):
    """ext3 cannot fallocate: a metadata-only populate makes its files
    sparse, and they get their blocks on the unmounted disk (an
    `allocate` phase), block maps and all: e2fsck finds the file system
    clean, the space is in use, and a file past 4 MiB + 48 KiB has a
    double-indirect block."""
    rec, d = trial(run, tmp_path, "--fs", "ext3", "--size", "1G",
                   "--meta-only", "300", "--fill", "50", "--think", "zero")
    names = [p["name"] for p in rec["phases"]]
    assert names[:3] == ["populate", "unmount", "allocate"], names
    assert phase(rec, "check")["outcome"] == "CLEAN"
    a = rec["audit"]
    assert a["intact"] > 0 and all(
        v == 0 for k, v in a.items() if k != "intact"), a
    out = subprocess.run(["dumpe2fs", "-h", image(d)], capture_output=True,
                         text=True).stdout
    count = int(re.search(r"Block count:\s+(\d+)", out).group(1))
    free = int(re.search(r"Free blocks:\s+(\d+)", out).group(1))
    assert (count - free) * 4096 >= 0.9 * rec["bytes"], (count, free)
    big = max((r for r in manifest(d) if r[1] == "file"),
              key=lambda r: int(r[2]))
    assert int(big[2]) > (1024 + 12) * 4096, big
    st = subprocess.run(["debugfs", "-R", f"stat \"/{big[0]}\"", image(d)],
                        capture_output=True, text=True).stdout
    assert "(DIND)" in st, st
    blocks = int(re.search(r"Blockcount: (\d+)", st).group(1))
    assert blocks * 512 > int(big[2]), st


def test_ext3_meta_only_has_no_crash(run):
    p = run(*BASE[:1], "--fs", "ext3", "--meta-only", "10", "--crash")
    assert p.returncode == 2 and "blocks after a clean unmount" in p.stderr, \
        p.stderr
    p = run(*BASE[:1], "--fs", "ext3", "--size", "256M", "--meta-only", "10",
            "--tree", "aged")
    assert p.returncode != 0 and \
        "--tree aged with --meta-only on a file system that allocates " \
        "afterwards (ext3)" in p.stdout + p.stderr, (p.stdout, p.stderr)


def test_predict_per_tree(run, tmp_path):
    """predict takes --tree: on a small whole disk, large-media defaults
    to one file per 512 MiB of the fill, hardlink-farm's unique data comes
    to the fill, and each record names its tree."""
    prof = tmp_path / "small.profile"
    prof.write_text("base = roadmap-2006\nname = small\ncapacity = 8GB\n")
    out = tmp_path / "p.jsonl"
    for tree in ("large-media", "hardlink-farm"):
        p = run("predict", "--fs", "ext4", "--fill", "50", "--profile",
                str(prof), "--tree", tree, "--json=" + str(out))
        assert p.returncode == 0, p.stderr
        assert f"{tree} tree" in p.stdout
    media, farm = [json.loads(line) for line in
                   out.read_text().splitlines()]
    assert (media["tree"], farm["tree"]) == ("large-media", "hardlink-farm")
    fill = 0.5 * 8e9
    # 8 directories and about fill / 512 MiB files (the files column).
    assert media["files"] == 8 + int(fill / (512 << 20)) + 1
    assert 0.9 * fill < farm["bytes"] <= fill
    assert [ph["name"] for ph in farm["phases"]] == [
        "populate", "unmount", "inject", "check"]


@pytest.mark.parametrize("fs,size,tree", [
    ("xfs", "512M", "hardlink-farm"),
    ("btrfs", "256M", "hardlink-farm"),
    ("chunkfs", "256M", "hardlink-farm"),
    # btrfs is full before 85% of what statvfs calls free: the rounds
    # end there instead of failing.
    ("btrfs", "256M", "aged"),
    ("chunkfs", "256M", "small-files"),
])
def test_trees_on_the_other_file_systems(run, tmp_path, fs, size, tree):
    d = tmp_path / "t"
    out = tmp_path / "t.jsonl"
    p = run("run", "--fs", fs, "--size", size, "--fill", "20", "--tree", tree,
            "--meta-only", "200", "--dir", str(d), "--json=" + str(out))
    assert p.returncode == 0, (p.stdout, p.stderr)
    rec = json.loads(out.read_text())
    assert rec["tree"] == tree and intact(rec), rec["audit"]
    assert rec["audit"]["intact"] >= 200
    assert leftovers(str(d)) == []
