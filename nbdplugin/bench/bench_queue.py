#!/usr/bin/python3
"""Command queueing through the plugin: fio random 4 KiB reads (nbd
engine) at several queue depths against a profile with time=real and the
write cache off, beside the IOPS the model gives for the same depths
(`futuredisk model --json`, a seeded closed-loop run of the model alone).
The same fio jobs against nbdkit's memory plugin give the baseline: the
rate the client, libnbd and nbdkit reach with no disk behind them.

Usage: bench_queue.py PLUGIN.so FUTUREDISK [PROFILE] [SECONDS]
  e.g. bench_queue.py build/nbdplugin/nbdkit-futuredisk-plugin.so \\
           build/harness/futuredisk cmr-20t-2024 20"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402

DEPTHS = (1, 4, 16)


def fio_iops(uri, depth, seconds):
    out = subprocess.run(
        ["fio", "--name=q", "--ioengine=nbd", f"--uri={uri}",
         "--rw=randread", "--bs=4k", f"--iodepth={depth}",
         f"--runtime={seconds}", "--time_based", "--randseed=7",
         "--random_generator=tausworthe64", "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    # fio says "connected to NBD server" on stdout before the JSON.
    return json.loads(out[out.index("{"):])["jobs"][0]["read"]["iops"]


def main():
    plugin, futuredisk = sys.argv[1], sys.argv[2]
    profile = sys.argv[3] if len(sys.argv) > 3 else "cmr-20t-2024"
    seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    model = json.loads(subprocess.run(
        [futuredisk, "model", "--json", "-p", profile],
        check=True, capture_output=True, text=True).stdout)[0]
    print(f"{'depth':>5} {'model IOPS':>11} {'fio IOPS':>9} {'fio/model':>9}"
          f" {'memory plugin':>14}")
    for depth in DEPTHS:
        with Nbdkit([plugin, profile, "time=real", "write-cache=off"]) as s:
            got = fio_iops(s.uri, depth, seconds)
        with Nbdkit(["memory", "1G"]) as s:
            base = fio_iops(s.uri, depth, min(seconds, 5))
        want = model["random_4k_iops_qd%d" % depth]
        print(f"{depth:>5} {want:>11.1f} {got:>9.1f} {got / want:>9.3f}"
              f" {base:>14.0f}")


if __name__ == "__main__":
    main()
