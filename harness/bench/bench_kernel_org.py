#!/usr/bin/python3
"""The kernel.org case (issue 18, item 3): an ext3 file system as 2007
made it, on a 2007 RAID 5 (harness/campaigns/raid5-2007.profile, one
disk of the array's size and speed), holding a mirror's hard-link tree
(rsnapshot-style, --tree hardlink-farm), hit by RAID-level corruption
that copies inode-table stripes over their neighbours
(--target inode:N:stripe-copy=64K) and, if asked, leaves other
inode-table stripes unreadable as a degraded array whose surviving
member cannot read them does (+inode:M:stripe-ure=64K: each read of
them fails only after the member's error recovery, the profile's erc,
2 minutes on desktop drives), then e2fsck -fy.  One trial per
size; for each, the repair's virtual time split by pass, the restore
from backup the record computes beside it, and the wall time.

In 2007 kernel.org's ext3 array, corrupted at the RAID level, took over
a week to fsck (the figure is the project brief's; the one public trace
found is a weblog of October 2007, http://www.cgkreality.com/2007/10/).
The files are allocated, not written (--meta-only: made sparse through
the kernel, then given their blocks on the unmounted disk), so the
whole 2 TB array costs minutes.  The repair clones every block the
copied inodes share: written, those blocks take room in the disk's
store file (zeros are stored as data), so STRIPES stays small.

Usage: bench_kernel_org.py FUTUREDISK OUTDIR [SIZE...]   (as root)
  e.g. bench_kernel_org.py build/harness/futuredisk out/kernel-org full
SIZE: the disk (default full: the array's 2 TB).  Options by
environment: FILES (files in the first snapshot, default 100000), FILL
(default 60), STRIPES (inode-table stripes copied, default 8; one of
it and UNREADABLE may be 0),
UNREADABLE (inode-table stripes unreadable, default 0), ERC (the
member's error recovery, e.g. 7s; default the profile's), SEED
(default 1).  Prints a table per size and, last, one line of JSON."""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = os.path.join(HERE, "..", "campaigns", "raid5-2007.profile")


def one(futuredisk, outdir, size, files, fill, stripes, unreadable, erc,
        seed):
    rec_path = os.path.join(outdir, f"kernel-org-{size}.jsonl")
    if os.path.exists(rec_path):
        os.unlink(rec_path)
    target = "+".join(
        ([f"inode:{stripes}:stripe-copy=64K"] if stripes else []) +
        ([f"inode:{unreadable}:stripe-ure=64K"] if unreadable else []))
    cmd = [futuredisk, "run", "--fs", "ext3", "--profile", PROFILE,
           "--size", size, "--tree", "hardlink-farm", "--fill", str(fill),
           "--meta-only", str(files),
           "--seed", str(seed), "--target", target, "--think", "zero",
           "--time", "virtual", "--timeout", "7200", "--json=" + rec_path,
           "--progress", "60"] + (["--faults", f"erc={erc}"] if erc else [])
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"bench_kernel_org: {' '.join(cmd)}: exit {p.returncode}")
    with open(rec_path) as f:
        rec = json.loads(f.read().splitlines()[-1])
    phases = {ph["name"]: ph for ph in rec["phases"]}
    repair = phases["repair"]
    print(f"\n{size} ext3, fill {fill} %, {files} files in the first "
          f"snapshot, {rec['files']} entries, "
          f"{rec['bytes'] / 1e9:.1f} GB in files; {stripes} inode-table "
          f"stripes copied, {unreadable} unreadable")
    print(f"  repair {repair['outcome']}: {repair['virtual_s']:.1f} virtual s"
          f" ({repair['virtual_s'] / 3600:.2f} h) in {repair['wall_s']:.1f}"
          f" s wall (ratio {repair['virtual_s'] / repair['wall_s']:.1f}); "
          f"e2fsck's own CPU {repair['cpu_s']:.1f} s; "
          f"{repair['read_errors']} reads failed")
    for name, s in repair["virtual_passes"]:
        print(f"    {name:10s} {s:12.1f} s  {100 * s / repair['virtual_s']:5.1f} %")
    r = rec["restore"]
    print(f"  restore of {r['bytes'] / 1e9:.1f} GB: {r['restore_s']:.1f} s; "
          f"check + repair {r['fsck_s']:.1f} s: {r['quicker']} is quicker")
    print(f"  the trial: {wall:.0f} s wall")
    return {"size": size, "files": rec["files"], "bytes": rec["bytes"],
            "repair_virtual_s": repair["virtual_s"],
            "repair_wall_s": repair["wall_s"],
            "repair_cpu_s": repair["cpu_s"],
            "repair_read_errors": repair["read_errors"],
            "passes": repair["virtual_passes"],
            "restore_s": r["restore_s"], "trial_wall_s": wall,
            "audit": rec["audit"]}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    futuredisk, outdir = sys.argv[1], sys.argv[2]
    sizes = sys.argv[3:] or ["full"]
    os.makedirs(outdir, exist_ok=True)
    files = int(os.environ.get("FILES", "100000"))
    fill = int(os.environ.get("FILL", "60"))
    stripes = int(os.environ.get("STRIPES", "8"))
    unreadable = int(os.environ.get("UNREADABLE", "0"))
    erc = os.environ.get("ERC", "")
    seed = int(os.environ.get("SEED", "1"))
    rows = [one(futuredisk, outdir, s, files, fill, stripes, unreadable, erc,
                seed) for s in sizes]
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
