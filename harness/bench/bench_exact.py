#!/usr/bin/python3
"""How exactly virtual time repeats, idle and beside two CPU hogs
(`yes >/dev/null` x2): the drive's watch on its client (nbdkit-futuredisk-
plugin(1), "Exact decisions").

--trial (default): one `futuredisk run` trial ROUNDS times idle and ROUNDS
times beside the hogs, per think mode (default zero and cpu): ext4 on
roadmap-2006, 512M, fill 20, seed 1, one rotted data block.  Per run the
check's virtual seconds, its reads and how many of the drive's picks
were watched; per mode and load the median and the spread, (max - min) /
median, and the median beside the hogs over the median idle.

--qd: random 4 KiB direct reads at each depth (fio, libaio) from a
process in a cgroup of its own on a freshly attached bare disk (no file
system; --faults think=zero,cgroup=...), per profile, ROUNDS times idle
and ROUNDS beside the hogs: virtual IOPS (reads over the virtual time
between two marks), wall IOPS, and the picks watched.  Every run starts
from a new disk, so the drive's state is the same at the first read.

Usage: bench_exact.py [--trial] BUILD_DIR [ROUNDS] [--think zero,cpu]
       bench_exact.py --qd BUILD_DIR [ROUNDS] [--profiles P,P]
                      [--depths 1,4,16,32] [--ios N]
(defaults: 5 rounds for --trial, 2 for --qd; cmr-20t-2024,laptop-5400;
1,4,16,32; 1000 reads)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
import cgroup_client  # noqa: E402
from bench_think import futuredisk_of, hogs, spread  # noqa: E402


def stop(ps):
    for p in ps:
        p.kill()
        p.wait()


def trial(fd, think, out):
    subprocess.run([fd, "run", "--fs", "ext4", "--profile", "roadmap-2006",
                    "--size", "512M", "--fill", "20", "--think", think,
                    "--seed", "1", "--target", "data:1:rot",
                    f"--json={out}"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    d = ck["decisions"]
    picks = d["watched"] + d["ahead"] + d["unwatched"]
    return ck["virtual_s"], ck["reads"], d["watched"] + d["ahead"], picks


def trial_main(fd, rounds, thinks):
    with tempfile.TemporaryDirectory(prefix="bench-exact.") as tmp:
        for think in thinks:
            med = {}
            for load in ("idle", "hogs"):
                hs = hogs(2) if load == "hogs" else []
                try:
                    runs = [trial(fd, think, f"{tmp}/r.json")
                            for _ in range(rounds)]
                finally:
                    stop(hs)
                vs = [r[0] for r in runs]
                med[load] = statistics.median(vs)
                print(f"think={think:4} {load:4}: check " +
                      " ".join(f"{v:.6f}" for v in vs) +
                      f" s; reads {sorted({r[1] for r in runs})}; watched "
                      + " ".join(f"{r[2]}/{r[3]}" for r in runs) +
                      f"; spread {100 * spread(vs):.2f} %", flush=True)
            print(f"think={think:4} median beside the hogs / idle: "
                  f"{med['hogs'] / med['idle']:.4f}", flush=True)


def ctl(fd, sock, *words):
    p = subprocess.run([fd, "ctl", "--json", sock, *words],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def qd_once(fd, profile, depth, ios, cg, mnt):
    p = subprocess.run([fd, "attach", "--mount", mnt, "--profile", profile,
                        "--size", "4G", "--attach", "loop", "--faults",
                        f"think=zero,cgroup={cg}"],
                       capture_output=True, text=True, check=True)
    info = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    try:
        sock = info["control"]
        a = ctl(fd, sock, "mark", "a")["virtual_ns"]
        fio = subprocess.run(
            ["sh", "-c", f"echo $$ > {cg}/cgroup.procs; exec fio "
             f"--name=r --filename={info['device']} --rw=randread --bs=4k "
             f"--iodepth={depth} --ioengine=libaio --direct=1 "
             f"--number_ios={ios} --size=3G --randrepeat=1 --randseed=7 "
             "--norandommap --output-format=json"],
            capture_output=True, text=True, check=True)
        b = ctl(fd, sock, "mark", "b")["virtual_ns"]
        dec = ctl(fd, sock, "stats")["stats"]["decisions"]
    finally:
        subprocess.run([fd, "detach", mnt], capture_output=True)
    rd = json.loads(fio.stdout)["jobs"][0]["read"]
    return (rd["total_ios"] / ((b - a) / 1e9), rd["iops"],
            dec["watched"] + dec["ahead"], dec["picks"])


def qd_main(fd, rounds, profiles, depths, ios):
    root = cgroup_client.cgroup2_root()
    if root is None:
        sys.exit("bench_exact: no cgroup v2 hierarchy is mounted")
    cg = os.path.join(root, f"bench-exact-{os.getpid()}")
    os.mkdir(cg)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-exact.") as mnt:
            for profile in profiles:
                for depth in depths:
                    row = {}
                    for load in ("idle", "hogs"):
                        hs = hogs(2) if load == "hogs" else []
                        try:
                            row[load] = [qd_once(fd, profile, depth, ios, cg,
                                                 mnt) for _ in range(rounds)]
                        finally:
                            stop(hs)
                    allv = [r[0] for load in row.values() for r in load]
                    print(f"{profile:14} QD{depth:<2}: virtual IOPS " +
                          "  ".join(f"{load} " + " ".join(
                              f"{r[0]:.3f}" for r in rs)
                              for load, rs in row.items()) +
                          f"; {'identical' if len(set(allv)) == 1 else 'DIFFER'}"
                          "; wall IOPS " + " ".join(
                              f"{r[1]:.0f}" for rs in row.values()
                              for r in rs) +
                          "; watched " + " ".join(
                              f"{r[2]}/{r[3]}" for rs in row.values()
                              for r in rs), flush=True)
    finally:
        os.rmdir(cg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trial", action="store_true")
    ap.add_argument("--qd", action="store_true")
    ap.add_argument("build")
    ap.add_argument("rounds", nargs="?", type=int)
    ap.add_argument("--think", default="zero,cpu")
    ap.add_argument("--profiles", default="cmr-20t-2024,laptop-5400")
    ap.add_argument("--depths", default="1,4,16,32")
    ap.add_argument("--ios", type=int, default=1000)
    a = ap.parse_args()
    fd = futuredisk_of(os.path.abspath(a.build))
    if a.qd:
        qd_main(fd, a.rounds or 2, a.profiles.split(","),
                [int(x) for x in a.depths.split(",")], a.ios)
    else:
        trial_main(fd, a.rounds or 5, a.think.split(","))


if __name__ == "__main__":
    main()
