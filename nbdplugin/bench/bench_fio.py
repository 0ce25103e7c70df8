#!/usr/bin/python3
"""fio (nbd engine) against the plugin with profile=ideal time=virtual and
against nbdkit's memory plugin, in the same run, same machine, same
settings: 1 MiB sequential write, 1 MiB sequential read, 4 KiB random read
at iodepth 16.  Prints each server's figure and the ratio plugin/memory
(>= 1.0 means the plugin is at least as fast), and the server's CPU time
per GiB moved (user + system of the nbdkit process): on a small, noisy
machine throughput swings with the neighbours, CPU per GiB much less.

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


def fio(sock, rw, bs, seconds):
    out = subprocess.run(
        ["fio", "--name=bench", "--ioengine=nbd",
         f"--uri=nbd+unix:///?socket={sock}", f"--rw={rw}", f"--bs={bs}",
         "--iodepth=16", f"--size={SIZE}", "--time_based",
         f"--runtime={seconds}", "--output-format=json"],
        capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]  # after its banner
    side = job["write"] if rw == "write" else job["read"]
    return side["bw"] / 1024, side["iops"]  # MiB/s, IOPS


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve(args, seconds):
    """{workload: (figure, CPU seconds per GiB)} for one server."""
    out = {}
    with nbdkit(args) as (p, sock):
        for name, rw, bs, unit in JOBS:
            c0 = cpu_seconds(p.pid)
            mib_s, iops = fio(sock, rw, bs, seconds)
            gib = mib_s * seconds / 1024
            out[name] = (mib_s if unit == "bw" else iops,
                         (cpu_seconds(p.pid) - c0) / gib)
    return out


def main():
    plugin = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    ours, base = {n: [] for n, *_ in JOBS}, {n: [] for n, *_ in JOBS}
    for r in range(rounds):  # interleaved, so drift hits both alike
        for name, v in serve([plugin, "ideal", f"size={SIZE}",
                              "time=virtual"], seconds).items():
            ours[name].append(v)
        for name, v in serve(["memory", SIZE], seconds).items():
            base[name].append(v)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    print(f"{'workload':<18} {'futuredisk ideal':>18} {'memory plugin':>15} "
          f"{'ratio':>6}   {'CPU s/GiB ours':>14} {'memory':>7} {'ratio':>6}")
    for name, rw, bs, unit in JOBS:
        a = statistics.median(x for x, _ in ours[name])
        b = statistics.median(x for x, _ in base[name])
        ca = statistics.median(c for _, c in ours[name])
        cb = statistics.median(c for _, c in base[name])
        u = "MiB/s" if unit == "bw" else "IOPS"
        # CPU ratio as memory/ours, so >= 1.0 again means "no worse".
        print(f"{name:<18} {a:>12.0f} {u:<5} {b:>9.0f} {u:<5} {a / b:>6.2f}"
              f"   {ca:>14.3f} {cb:>7.3f} {cb / ca:>6.2f}")


if __name__ == "__main__":
    main()
