#!/usr/bin/python3
"""The drive's write path through the plugin: fio (nbd engine, bench_fio's
runner) against a profile, each figure beside the same one from an older
build of the plugin (--before) in the same run.

1. Sequential 1 MiB writes from LBA 0, 2 GiB, write cache on and off, QD1
   and QD16: in time=virtual think=zero the virtual rate (bytes written
   over virtual_ns from the stats file), in time=real fio's wall-clock
   rate; both against the profile's outer media rate (--media, MB/s).
2. A QD1 random 4 KiB reader beside a QD16 sequential 1 MiB writer, cache
   on, time=real: the reads' mean and max completion latency (fio's clat).
3. Random 4 KiB writes at QD16, cache off, time=virtual think=zero: the
   virtual IOPS per profile, over 40,960 writes.

Usage: bench_write.py [--before OLD.so] [--media MBPS] [--profiles P,Q]
           PLUGIN.so [PROFILE]
  e.g. bench_write.py --before /work/base/nbdkit-futuredisk-plugin.so \\
           build/nbdplugin/nbdkit-futuredisk-plugin.so cmr-20t-2024"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402

GIB = 1 << 30


def fio(sock, jobs):
    """Run fio with one job per dict of options; its parsed JSON jobs."""
    cmd = ["fio", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}",
           "--output-format=json"]
    for j in jobs:
        cmd += [f"--name={j.pop('name')}"] + [f"--{k}={v}" for k, v in
                                               j.items()]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return json.loads(out[out.index("{"):])["jobs"]


def serve(plugin, profile, opts, jobs):
    """(fio's jobs, the stats file) of one server run."""
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats.json")
        args = [plugin, f"profile={profile}", f"stats={stats}", *opts]
        with Nbdkit(args, extra=["--threads", "17"]) as s:
            got = fio(s.sock, jobs)
        with open(stats) as f:
            return got, json.load(f)


def sequential(plugin, profile, cache, depth, time):
    job = {"name": "w", "rw": "write", "bs": "1M", "iodepth": depth,
           "size": "2G"}
    opts = [f"time={time}", f"write-cache={cache}"]
    if time == "virtual":
        opts.append("think=zero")
    jobs, st = serve(plugin, profile, opts, [job])
    if time == "virtual":
        return st["bytes_written"] / st["virtual_ns"] * 1e3
    return jobs[0]["write"]["bw"] * 1024 / 1e6


def reader_behind_writer(plugin, profile, seconds):
    jobs, _ = serve(plugin, profile, ["time=real", "write-cache=on"], [
        {"name": "writer", "rw": "write", "bs": "1M", "iodepth": 16,
         "time_based": 1, "runtime": seconds},
        {"name": "reader", "rw": "randread", "bs": "4k", "iodepth": 1,
         "time_based": 1, "runtime": seconds, "startdelay": 2}])
    clat = jobs[1]["read"]["clat_ns"]
    return clat["mean"] / 1e6, clat["max"] / 1e6, jobs[1]["read"]["total_ios"]


def random_writes(plugin, profile):
    _, st = serve(plugin, profile,
                  ["time=virtual", "think=zero", "write-cache=off"],
                  [{"name": "w", "rw": "randwrite", "bs": "4k",
                    "iodepth": 16, "io_size": "160M"}])
    return st["writes"] * 1e9 / st["virtual_ns"]


def main():
    p = argparse.ArgumentParser(
        usage=__doc__.rsplit("Usage: ", 1)[1].split("  e.g.")[0].strip())
    p.add_argument("--before", help="an older plugin, same figures")
    p.add_argument("--media", type=float, default=285.0,
                   help="the outer-zone media rate, MB/s (datasheet)")
    p.add_argument("--profiles", default="cmr-20t-2024,hamr-30t-2024,"
                   "dual-18t-2022,cmr-8t-2015,ent-15k,laptop-5400")
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("plugin")
    p.add_argument("profile", nargs="?", default="cmr-20t-2024")
    a = p.parse_args()
    builds = [("now", a.plugin)] + ([("before", a.before)] if a.before
                                    else [])
    print(f"sequential 1 MiB writes, 2 GiB from LBA 0, {a.profile}, "
          f"MB/s (x {a.media:g} MB/s)")
    for time in ("virtual", "real"):
        for cache in ("on", "off"):
            for depth in (1, 16):
                row = [f"{name} {r:7.1f} ({r / a.media:.2f})" for name, r in
                       ((n, sequential(so, a.profile, cache, depth, time))
                        for n, so in builds)]
                print(f"  time={time:7} cache {cache:3} QD{depth:<2}  "
                      + "   ".join(row), flush=True)
    print(f"QD1 random 4 KiB reads beside a QD16 sequential writer, "
          f"time=real, {a.seconds} s")
    for name, so in builds:
        mean, mx, n = reader_behind_writer(so, a.profile, a.seconds)
        print(f"  {name:6} mean {mean:8.1f} ms  max {mx:8.1f} ms  "
              f"({n} reads)", flush=True)
    print("random 4 KiB writes, QD16, write cache off, time=virtual: IOPS")
    for prof in a.profiles.split(","):
        row = [f"{name} {random_writes(so, prof):7.0f}" for name, so in
               builds]
        print(f"  {prof:18} " + "   ".join(row), flush=True)


if __name__ == "__main__":
    main()
