#!/usr/bin/python3
"""Command queueing through the plugin: fio random 4 KiB reads (nbd
engine, bench_fio's runner) over the whole disk at several queue depths
against a profile with the write cache off, beside the IOPS the model
gives for the same depths (`futuredisk model --json`, a seeded
closed-loop run of the model alone; it has QD1, QD4, QD16 and QD32).

For each depth: the plugin in time=virtual think=zero (its virtual rate,
reads over virtual_ns from the stats file), then in time=real (fio's
wall-clock rate, which must match the virtual one), and with --before
an older build of the plugin in both modes too, in the same run.  The
same fio job against nbdkit's memory plugin gives the baseline: the rate
the client, libnbd and nbdkit reach with no disk behind them.  nbdkit
runs with --threads at least the depth, so every request in flight
reaches the plugin.

Usage: bench_queue.py [--before OLD.so] [--depths 1,4,16] PLUGIN.so
           FUTUREDISK [PROFILE] [SECONDS]
  e.g. bench_queue.py --depths 8,16,32 \\
           build/nbdplugin/nbdkit-futuredisk-plugin.so \\
           build/harness/futuredisk laptop-5400 20"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_fio import fio_result, fio_start  # noqa: E402
from nbdkit_server import Nbdkit  # noqa: E402


def fio_iops(server, depth, seconds):
    return fio_result(fio_start(server.sock, "randread", "4k", seconds,
                                size=None, iodepth=depth), "read")[1]


def served(plugin, profile, depth, seconds, time):
    """(fio's IOPS, the virtual IOPS from the stats file)."""
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats.json")
        args = [plugin, profile, f"time={time}", "think=zero",
                "write-cache=off", f"stats={stats}"]
        with Nbdkit(args, extra=["--threads", str(max(16, depth))]) as s:
            got = fio_iops(s, depth, seconds)
        with open(stats) as f:
            st = json.load(f)
    return got, st["reads"] * 1e9 / st["virtual_ns"]


def main():
    p = argparse.ArgumentParser(
        usage=__doc__.rsplit("Usage: ", 1)[1].split("  e.g.")[0].strip())
    p.add_argument("--before", help="an older plugin, also in time=real")
    p.add_argument("--depths", default="1,4,16")
    p.add_argument("plugin")
    p.add_argument("futuredisk")
    p.add_argument("profile", nargs="?", default="cmr-20t-2024")
    p.add_argument("seconds", nargs="?", type=int, default=20)
    a = p.parse_args()
    model = json.loads(subprocess.run(
        [a.futuredisk, "model", "--json", "-p", a.profile],
        check=True, capture_output=True, text=True).stdout)[0]
    print(f"{'depth':>5} {'model':>7} {'virtual':>8} {'real':>7}"
          f" {'real/virt':>9}" + (f" {'old virt':>8} {'old real':>8}"
                                  if a.before else "") + f" {'memory':>8}")
    for depth in (int(x) for x in a.depths.split(",")):
        _, virt = served(a.plugin, a.profile, depth, a.seconds, "virtual")
        real, _ = served(a.plugin, a.profile, depth, a.seconds, "real")
        line = (f"{depth:>5} {model.get(f'random_4k_iops_qd{depth}', 0):>7.1f}"
                f" {virt:>8.1f} {real:>7.1f} {real / virt:>9.3f}")
        if a.before:
            _, old_virt = served(a.before, a.profile, depth, a.seconds,
                                 "virtual")
            old, _ = served(a.before, a.profile, depth, a.seconds, "real")
            line += f" {old_virt:>8.1f} {old:>8.1f}"
        with Nbdkit(["memory", "1G"]) as s:
            base = fio_iops(s, depth, min(a.seconds, 5))
        print(line + f" {base:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
