#!/usr/bin/python3
"""Overwrites against fresh writes: fio (nbd engine) on the plugin and on
nbdkit's memory plugin side by side (bench_fio.py's method: both servers
at once, each with its own fio, start order alternating per round).

Each round starts both servers afresh and runs, on both at once, a fresh
write pass over the first 1 GiB (1 MiB writes, iodepth 16), then an
overwrite pass of the same 1 GiB with the same writes: the store's pages
exist and the drive's cache is warm.  The fresh pass is one pass (fresh
pages exist once); the overwrite pass is time-based, SECONDS round and
round the same 1 GiB, since one pass lasts about a second here and a
second is weather.  Per round: each server's MiB/s per pass and the
ratio plugin / memory; then the median ratio per pass, its range and a
90% bootstrap interval (>= 1.0: the plugin is at least as fast), and
each server's CPU seconds (user + system of the nbdkit process) per GiB
written.  The plugin runs the profile (default roadmap-2013) on an 8 GiB
disk (--size: a disk over 64 GiB gets the store's hashed layout, not the
flat one) in time=virtual think=zero with the fault set (default consumer;
"none" for no faults).

Usage: bench_overwrite.py [--profile P] [--faults SPEC] [--size SIZE]
       PLUGIN.so [SECONDS] [ROUNDS]     (defaults: roadmap-2013, consumer,
       8G, 5 s, 5 rounds)"""
import argparse
import statistics
import sys

# bench_fio puts common/tests on the path: Nbdkit is nbdkit_server's.
from bench_fio import (Nbdkit, cpu_seconds, fio_result, fio_start,
                       median_interval)

REGION = "1G"
PASSES = ("fresh", "overwrite")


def both_write(servers, seconds):
    """1 MiB writes over REGION on every server at once, one pass (seconds
    None) or time-based, round and round the region: [(MiB/s, CPU seconds
    of that server per GiB)]."""
    c0 = [cpu_seconds(s.pid) for s in servers]
    runs = [fio_start(s.sock, "write", "1M", seconds, size=REGION)
            for s in servers]
    out = []
    for f, s, c in zip(runs, servers, c0):
        mib_s, _ = fio_result(f, "write")
        gib = mib_s * seconds / 1024 if seconds else 1.0
        out.append((mib_s, (cpu_seconds(s.pid) - c) / gib))
    return out


def one_round(ours, base, seconds, swap):
    """{pass: ((MiB/s, CPU s/GiB) of the plugin, of memory)}; with swap,
    memory is started first and its fio too."""
    first, second = (base, ours) if swap else (ours, base)
    out = {}
    with Nbdkit(first) as x, Nbdkit(second) as y:
        for name, secs in zip(PASSES, (None, seconds)):
            res = both_write([x, y], secs)
            out[name] = tuple(reversed(res)) if swap else tuple(res)
    return out


def parse_args():
    p = argparse.ArgumentParser(
        usage=__doc__.rsplit("Usage: ", 1)[1].split("(")[0].rstrip())
    p.add_argument("--profile", default="roadmap-2013",
                   help="the plugin's drive profile (default roadmap-2013)")
    p.add_argument("--faults", default="consumer",
                   help="the plugin's faults= (default consumer; none: no "
                        "fault set)")
    p.add_argument("--size", default="8G",
                   help="both disks' size, nbdkit's notation (default 8G)")
    p.add_argument("plugin", help="nbdkit-futuredisk-plugin.so")
    p.add_argument("seconds", nargs="?", type=int, default=5,
                   help="the overwrite pass, time-based (default 5)")
    p.add_argument("rounds", nargs="?", type=int, default=5,
                   help="rounds (default 5)")
    a = p.parse_args()
    if a.seconds < 1:
        p.error(f"seconds must be at least 1, not {a.seconds}")
    if a.rounds < 1:
        p.error(f"rounds must be at least 1, not {a.rounds}")
    return a


def main():
    a = parse_args()
    ours = [a.plugin, f"profile={a.profile}", f"size={a.size}",
            "time=virtual", "think=zero"]
    if a.faults != "none":
        ours.append(f"faults={a.faults}")
    base = ["memory", a.size]
    runs = []
    for r in range(a.rounds):
        runs.append(one_round(ours, base, a.seconds, swap=r % 2 == 1))
        print(f"round {r + 1}/{a.rounds}: " + "  ".join(
            f"{n} {runs[-1][n][0][0]:.0f}/{runs[-1][n][1][0]:.0f} MiB/s "
            f"= {runs[-1][n][0][0] / runs[-1][n][1][0]:.2f}"
            for n in PASSES), flush=True)
    print(f"{'pass':<10} {'plugin MiB/s':>12} {'memory MiB/s':>12} "
          f"{'ratio':>6} {'range':>11} {'90% interval':>12}   "
          f"{'CPU s/GiB plugin':>16} {'memory':>7}")
    for n in PASSES:
        ours_, base_ = [run[n][0] for run in runs], [run[n][1] for run in runs]
        ratios = [o[0] / b[0] for o, b in zip(ours_, base_)]
        print(f"{n:<10} {statistics.median(o[0] for o in ours_):>12.0f}"
              f" {statistics.median(b[0] for b in base_):>12.0f} "
              f"{statistics.median(ratios):>6.2f} "
              f"{min(ratios):>5.2f}-{max(ratios):<5.2f} "
              f"{'%.2f-%.2f' % median_interval(ratios):>12}   "
              f"{statistics.median(o[1] for o in ours_):>16.3f} "
              f"{statistics.median(b[1] for b in base_):>7.3f}")


if __name__ == "__main__":
    sys.exit(main())
