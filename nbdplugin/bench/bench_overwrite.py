#!/usr/bin/python3
"""Overwrites against fresh writes: fio (nbd engine) on the plugin and on
nbdkit's memory plugin side by side (bench_fio.py's method: both servers
at once, each with its own fio, start order alternating per round).

Each round starts both servers afresh and runs, on both at once, a fresh
write pass over the first 1 GiB (1 MiB writes, iodepth 16), then an
overwrite pass of the same 1 GiB with the same writes: the store's pages
exist and the drive's cache is warm.  Per round: each server's MiB/s per
pass and the ratio plugin / memory; then the median ratio per pass, its
range and a 90% bootstrap interval (>= 1.0: the plugin is at least as
fast).  The plugin runs the profile (default roadmap-2013) on an 8 GiB
disk in time=virtual think=zero with the fault set (default consumer;
"none" for no faults).

Usage: bench_overwrite.py [--profile P] [--faults SPEC] PLUGIN.so
       [ROUNDS]     (defaults: roadmap-2013, consumer, 5 rounds)"""
import argparse
import statistics
import sys

from bench_fio import fio_result, fio_start, median_interval

from bench_fio import Nbdkit  # common/tests/nbdkit_server.py, via bench_fio

SIZE = "8G"
REGION = "1G"
PASSES = ("fresh", "overwrite")


def both_write(servers):
    """One 1 MiB write pass over REGION on every server at once: MiB/s."""
    runs = [fio_start(s.sock, "write", "1M", size=REGION) for s in servers]
    return [fio_result(f, "write")[0] for f in runs]


def one_round(ours, base, swap):
    """{pass: (plugin MiB/s, memory MiB/s)}; with swap, memory is started
    first and its fio too."""
    first, second = (base, ours) if swap else (ours, base)
    out = {}
    with Nbdkit(first) as x, Nbdkit(second) as y:
        for name in PASSES:
            res = both_write([x, y])
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
    p.add_argument("plugin", help="nbdkit-futuredisk-plugin.so")
    p.add_argument("rounds", nargs="?", type=int, default=5,
                   help="rounds (default 5)")
    a = p.parse_args()
    if a.rounds < 1:
        p.error(f"rounds must be at least 1, not {a.rounds}")
    return a


def main():
    a = parse_args()
    ours = [a.plugin, f"profile={a.profile}", f"size={SIZE}",
            "time=virtual", "think=zero"]
    if a.faults != "none":
        ours.append(f"faults={a.faults}")
    base = ["memory", SIZE]
    runs = []
    for r in range(a.rounds):
        runs.append(one_round(ours, base, swap=r % 2 == 1))
        print(f"round {r + 1}/{a.rounds}: " + "  ".join(
            f"{n} {runs[-1][n][0]:.0f}/{runs[-1][n][1]:.0f} MiB/s "
            f"= {runs[-1][n][0] / runs[-1][n][1]:.2f}" for n in PASSES),
            flush=True)
    print(f"{'pass':<10} {'plugin MiB/s':>12} {'memory MiB/s':>12} "
          f"{'ratio':>6} {'range':>11} {'90% interval':>12}")
    for n in PASSES:
        ratios = [run[n][0] / run[n][1] for run in runs]
        print(f"{n:<10} {statistics.median(run[n][0] for run in runs):>12.0f}"
              f" {statistics.median(run[n][1] for run in runs):>12.0f} "
              f"{statistics.median(ratios):>6.2f} "
              f"{min(ratios):>5.2f}-{max(ratios):<5.2f} "
              f"{'%.2f-%.2f' % median_interval(ratios):>12}")


if __name__ == "__main__":
    sys.exit(main())
