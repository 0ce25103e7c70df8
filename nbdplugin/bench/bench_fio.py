#!/usr/bin/python3
"""fio (nbd engine) against the plugin with profile=ideal time=virtual and
against nbdkit's memory plugin, in the same run, same machine, same
settings: 1 MiB sequential write, 1 MiB sequential read, 4 KiB random read
at iodepth 16.

Each round starts both servers afresh, one after the other (the order
alternates from round to round, so drift on a shared machine hits both
alike), and runs on each: the timed write; a write of the whole disk, so
that both reads find every block written whatever either server's write
speed was; the timed reads.  A round's ratio is plugin / memory for the
same round; the summary is the median of the rounds' ratios with their
range (>= 1.0 means the plugin is at least as fast).  Also the server's
CPU time per GiB moved (user + system of the nbdkit process), ratio
memory / plugin so that >= 1.0 again means "no worse".

Usage: bench_fio.py PLUGIN.so [SECONDS] [ROUNDS]"""
import json
import os
import statistics
import subprocess
import sys

from serve import nbdkit

SIZE = "4G"
JOBS = [
    ("seq write 1 MiB", "write", "1M", "bw"),
    ("seq read 1 MiB", "read", "1M", "bw"),
    ("rand read 4 KiB", "randread", "4k", "iops"),
]


def fio(sock, rw, bs, seconds=None):
    """(MiB/s, IOPS); time-based for `seconds`, else one pass over SIZE."""
    timing = ["--time_based", f"--runtime={seconds}"] if seconds else []
    out = subprocess.run(
        ["fio", "--name=bench", "--ioengine=nbd",
         f"--uri=nbd+unix:///?socket={sock}", f"--rw={rw}", f"--bs={bs}",
         "--iodepth=16", f"--size={SIZE}", *timing, "--output-format=json"],
        capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]  # after its banner
    side = job["write"] if rw == "write" else job["read"]
    return side["bw"] / 1024, side["iops"]  # MiB/s, IOPS


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve(args, seconds):
    """{workload: (figure, CPU seconds per GiB)} for one fresh server."""
    out = {}
    with nbdkit(args) as (p, sock):
        for name, rw, bs, unit in JOBS:
            if rw != "write" and "filled" not in out:
                fio(sock, "write", "1M")  # every block written, untimed
                out["filled"] = True
            c0 = cpu_seconds(p.pid)
            mib_s, iops = fio(sock, rw, bs, seconds)
            gib = mib_s * seconds / 1024
            out[name] = (mib_s if unit == "bw" else iops,
                         (cpu_seconds(p.pid) - c0) / gib)
    del out["filled"]
    return out


def main():
    plugin = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    servers = {"ours": [plugin, "ideal", f"size={SIZE}", "time=virtual"],
               "memory": ["memory", SIZE]}
    runs = []  # per round: {server: serve() result}
    for r in range(rounds):
        order = ["ours", "memory"] if r % 2 == 0 else ["memory", "ours"]
        runs.append({s: serve(servers[s], seconds) for s in order})
        line = "  ".join(
            f"{n} {runs[-1]['ours'][n][0] / runs[-1]['memory'][n][0]:.2f}"
            for n, *_ in JOBS)
        print(f"round {r + 1}/{rounds}: {line}", file=sys.stderr, flush=True)
    print(f"{'workload':<18} {'futuredisk ideal':>18} {'memory plugin':>15} "
          f"{'ratio':>6} {'range':>11}   {'CPU s/GiB ours':>14} "
          f"{'memory':>7} {'ratio':>6}")
    for name, rw, bs, unit in JOBS:
        ours = [run["ours"][name] for run in runs]
        base = [run["memory"][name] for run in runs]
        ratios = [a / b for (a, _), (b, _) in zip(ours, base)]
        cpu_ratios = [cb / ca for (_, ca), (_, cb) in zip(ours, base)]
        u = "MiB/s" if unit == "bw" else "IOPS"
        print(f"{name:<18} {statistics.median(a for a, _ in ours):>12.0f} "
              f"{u:<5} {statistics.median(b for b, _ in base):>9.0f} {u:<5} "
              f"{statistics.median(ratios):>6.2f} "
              f"{min(ratios):>5.2f}-{max(ratios):<5.2f}   "
              f"{statistics.median(c for _, c in ours):>14.3f} "
              f"{statistics.median(c for _, c in base):>7.3f} "
              f"{statistics.median(cpu_ratios):>6.2f}")


if __name__ == "__main__":
    main()
