#!/usr/bin/python3
"""fio (nbd engine) against the plugin with profile=ideal time=virtual and
against nbdkit's memory plugin, in the same run, same machine, same
settings: 1 MiB sequential write, 1 MiB sequential read, 4 KiB random read
at iodepth 16.  Prints each server's figure and the ratio plugin/memory
(>= 1.0 means the plugin is at least as fast).

Usage: bench_fio.py PLUGIN.so [SECONDS] [ROUNDS]"""
import json
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


def serve(args, seconds):
    with nbdkit(args) as (_, sock):
        return {name: fio(sock, rw, bs, seconds)[0 if unit == "bw" else 1]
                for name, rw, bs, unit in JOBS}


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
          f"{'ratio':>6}")
    for name, rw, bs, unit in JOBS:
        a, b = statistics.median(ours[name]), statistics.median(base[name])
        u = "MiB/s" if unit == "bw" else "IOPS"
        print(f"{name:<18} {a:>12.0f} {u:<5} {b:>9.0f} {u:<5} {a / b:>6.2f}")


if __name__ == "__main__":
    main()
