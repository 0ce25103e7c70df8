#!/usr/bin/python3
"""fio (nbd engine) against the plugin with a drive profile (default
ideal) in time=virtual think=zero, optionally with a fault set, and
against nbdkit's memory plugin, in the same run, same machine, same
settings: 1 MiB sequential write, 1 MiB sequential read, 4 KiB random read
at iodepth 16.  The profile is rescaled to the 4 GiB disk (size=4G).

The two servers run at the same time, each with its own fio: on a small
shared machine throughput swings several-fold within seconds (its
neighbours' memory bandwidth, scheduling), and servers measured one after
the other land in different weather, while side by side both see the same.
Each round starts both servers afresh and runs, on both at once: the timed
write; an untimed write of the whole disk, so that both reads find every
block written whatever either server's write speed was; the timed reads.
Which server starts first, and whose fio, alternates from round to round,
so that neither always has the first move.  A round's ratio is plugin /
memory; the summary is the median of the rounds' ratios, their range and
a 90% bootstrap interval of the median (>= 1.0: the plugin is at least as
fast).  Also each server's CPU time per GiB moved (user + system of the
nbdkit process) over the same seconds, ratio memory / plugin so that
>= 1.0 again means "no worse".

With --aa the memory plugin runs against itself: what the method reports
for two identical servers, its noise floor.

Usage: bench_fio.py [--aa | --profile P [--faults SPEC]] PLUGIN.so [SECONDS]
       [ROUNDS]     (defaults: ideal, no faults, 10 s, 3 rounds)"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402

SIZE = "4G"
JOBS = [
    ("seq write 1 MiB", "write", "1M", "bw"),
    ("seq read 1 MiB", "read", "1M", "bw"),
    ("rand read 4 KiB", "randread", "4k", "iops"),
]


def fio_start(sock, rw, bs, seconds=None, size=SIZE, iodepth=16):
    """A running fio at `iodepth` over the first `size` bytes (None: the
    whole disk); time-based for `seconds`, else one pass."""
    timing = ["--time_based", f"--runtime={seconds}"] if seconds else []
    span = [f"--size={size}"] if size else []
    return subprocess.Popen(
        ["fio", "--name=bench", "--ioengine=nbd",
         f"--uri=nbd+unix:///?socket={sock}", f"--rw={rw}", f"--bs={bs}",
         f"--iodepth={iodepth}", *span, *timing,
         "--output-format=json"],
        stdout=subprocess.PIPE, text=True)


def fio_result(p, rw):
    """(MiB/s, IOPS) of a finished fio."""
    out, _ = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"fio exited {p.returncode}")
    job = json.loads(out[out.index("{"):])["jobs"][0]  # after its banner
    side = job["write"] if rw == "write" else job["read"]
    return side["bw"] / 1024, side["iops"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def side_by_side(servers, rw, bs, seconds=None):
    """Run fio on every server (Nbdkit) at once: [(MiB/s, IOPS, CPU
    seconds of that server)]."""
    c0 = [cpu_seconds(s.pid) for s in servers]
    runs = [fio_start(s.sock, rw, bs, seconds) for s in servers]
    figures = [fio_result(f, rw) for f in runs]
    return [(mib_s, iops, cpu_seconds(s.pid) - c)
            for (mib_s, iops), s, c in zip(figures, servers, c0)]


def one_round(ours, base, seconds, swap):
    """{workload: [(figure, CPU s/GiB) for ours, for base]}; with swap,
    base is started first and its fio too."""
    out = {}
    first, second = (base, ours) if swap else (ours, base)
    with Nbdkit(first) as x, Nbdkit(second) as y:
        for name, rw, bs, unit in JOBS:
            if rw != "write" and not out.get("filled"):
                side_by_side([x, y], "write", "1M")  # every block, untimed
                out["filled"] = True
            res = side_by_side([x, y], rw, bs, seconds)  # in start order
            if swap:
                res.reverse()
            out[name] = [
                (mib_s if unit == "bw" else iops, cpu / (mib_s * seconds / 1024))
                for mib_s, iops, cpu in res]
    del out["filled"]
    return out


def median_interval(values, level=0.90, resamples=2000):
    """Bootstrap interval of the median (fixed seed: same data, same
    interval)."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(values, k=len(values)))
                  for _ in range(resamples))
    tail = (1 - level) / 2
    return meds[int(tail * resamples)], meds[int((1 - tail) * resamples) - 1]


def plugin_args(a):
    """The plugin's command line: the profile on a SIZE disk in virtual
    time without the client's think time (the throughput the request path
    can carry, whatever the modelled disk would take), and the fault set
    if one is asked for."""
    args = [a.plugin, f"profile={a.profile}", f"size={SIZE}", "time=virtual",
            "think=zero"]
    return args + ([f"faults={a.faults}"] if a.faults else [])


def parse_args():
    p = argparse.ArgumentParser(
        usage=__doc__.rsplit("Usage: ", 1)[1].split("(")[0].rstrip())
    p.add_argument("--aa", action="store_true",
                   help="the memory plugin against itself (noise floor)")
    p.add_argument("--profile",
                   help="the plugin's drive profile (default ideal)")
    p.add_argument("--faults", help="the plugin's faults= (e.g. consumer)")
    p.add_argument("plugin", help="nbdkit-futuredisk-plugin.so")
    p.add_argument("seconds", nargs="?", type=int, default=10,
                   help="each timed fio run (default 10)")
    p.add_argument("rounds", nargs="?", type=int, default=3,
                   help="rounds (default 3)")
    a = p.parse_args()
    if a.aa and (a.profile or a.faults):
        p.error("--aa runs no plugin: it takes no --profile or --faults")
    a.profile = a.profile or "ideal"
    return a


def main():
    a = parse_args()
    aa, seconds, rounds = a.aa, a.seconds, a.rounds
    base = ["memory", SIZE]
    ours = base if aa else plugin_args(a)
    label = "memory (A/A)" if aa else f"{a.profile}" + (
        f" faults={a.faults}" if a.faults else "")
    runs = []
    for r in range(rounds):
        runs.append(one_round(ours, base, seconds, swap=r % 2 == 1))
        line = "  ".join(f"{n} {runs[-1][n][0][0] / runs[-1][n][1][0]:.2f}"
                         for n, *_ in JOBS)
        print(f"round {r + 1}/{rounds}: {line}", file=sys.stderr, flush=True)
    print(f"{'workload':<18} {label:>18}"
          f" {'memory plugin':>15} {'ratio':>6} {'range':>11} "
          f"{'90% interval':>12}   {'CPU s/GiB ours':>14} {'memory':>7} "
          f"{'ratio':>6}")
    for name, rw, bs, unit in JOBS:
        ours = [run[name][0] for run in runs]
        base = [run[name][1] for run in runs]
        ratios = [a / b for (a, _), (b, _) in zip(ours, base)]
        cpu_ratios = [cb / ca for (_, ca), (_, cb) in zip(ours, base)]
        u = "MiB/s" if unit == "bw" else "IOPS"
        print(f"{name:<18} {statistics.median(a for a, _ in ours):>12.0f} "
              f"{u:<5} {statistics.median(b for b, _ in base):>9.0f} {u:<5} "
              f"{statistics.median(ratios):>6.2f} "
              f"{min(ratios):>5.2f}-{max(ratios):<5.2f} "
              f"{'%.2f-%.2f' % median_interval(ratios):>12}   "
              f"{statistics.median(c for _, c in ours):>14.3f} "
              f"{statistics.median(c for _, c in base):>7.3f} "
              f"{statistics.median(cpu_ratios):>6.2f}")


if __name__ == "__main__":
    main()
