#!/usr/bin/python3
"""How steady `futuredisk predict` is under load, per think mode.

Runs `predict --fs ext4` on one disk ROUNDS times with the machine as it
is and ROUNDS times beside two CPU hogs (`yes >/dev/null` x2), for
--think cpu and --think real, and prints per mode and load the fsck
times and their spread, (max - min) / median.  think=cpu puts the
checker's cgroup CPU time on the clock, so load should barely move it;
think=real puts wall time on it, so load shows.

Then one `futuredisk run --fs ext4 --think cpu --keep` to set e2fsck's
own CPU figure (-tt's last "time: real/ user/ sys" line, in check.out)
beside the CPU seconds think=cpu charged the check (charged_s).

Usage: bench_think.py BUILD_DIR [ROUNDS] [PROFILE] [FILES]   (as root)"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def predict(fd, think, profile, files, out):
    cmd = [fd, "predict", "--fs", "ext4", "--profile", profile,
           "--files", str(files), "--think", think, f"--json={out}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    return ck["virtual_s"], ck.get("charged_s"), ck["cpu_s"]


def hogs(n):
    return [subprocess.Popen(["sh", "-c", "exec yes >/dev/null"])
            for _ in range(n)]


def spread(xs):
    return (max(xs) - min(xs)) / statistics.median(xs)


def e2fsck_vs_charged(fd, profile, files, d):
    cmd = [fd, "run", "--fs", "ext4", "--profile", profile, "--size",
           "full", "--meta-only", str(files), "--think", "cpu", "--keep",
           "--dir", f"{d}/run", f"--json={d}/run.json"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(f"{d}/run.json") as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    with open(f"{d}/run/check.out") as f:
        # The last timing line is e2fsck's whole run.
        times = re.findall(r"time:\s*([\d.]+)/\s*([\d.]+)/\s*([\d.]+)",
                           f.read())
    real, user, sys_ = map(float, times[-1])
    return user + sys_, ck["charged_s"], ck["virtual_s"]


def main():
    build = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    profile = sys.argv[3] if len(sys.argv) > 3 else "roadmap-2006"
    files = int(sys.argv[4]) if len(sys.argv) > 4 else 200000
    fd = f"{build}/harness/futuredisk"
    # The plugin of the same build, whatever the binary was built with.
    os.environ.setdefault("FUTUREDISK_PLUGIN",
                          f"{build}/nbdplugin/nbdkit-futuredisk-plugin.so")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for think in ("cpu", "real"):
            for load in (0, 2):
                hs = hogs(load)
                try:
                    got = [predict(fd, think, profile, files,
                                   f"{d}/{think}-{load}-{i}.json")
                           for i in range(rounds)]
                finally:
                    for h in hs:
                        h.kill()
                        h.wait()
                v = [g[0] for g in got]
                rows.append((think, load, v, got))
                print(f"think={think:<4} hogs={load}: fsck "
                      + " ".join(f"{x:.3f}" for x in v)
                      + f" s; median {statistics.median(v):.3f} s, spread "
                      f"{100 * spread(v):.2f} %", flush=True)
        for think in ("cpu", "real"):
            idle = [r[2] for r in rows if r[0] == think and r[1] == 0][0]
            busy = [r[2] for r in rows if r[0] == think and r[1] == 2][0]
            print(f"think={think}: median under load / idle "
                  f"{statistics.median(busy) / statistics.median(idle):.3f}")
        own, charged, virt = e2fsck_vs_charged(fd, profile, files, d)
        print(f"e2fsck -tt user+sys {own:.3f} s; think=cpu charged "
              f"{charged:.3f} s (ratio {charged / own:.3f}); check "
              f"{virt:.3f} virtual s")


if __name__ == "__main__":
    main()
