#!/usr/bin/python3
"""Memory follows data written, not capacity: write 1 GiB to an 8 TB
roadmap-2013 disk in the RAM store and report nbdkit's resident memory,
against nbdkit's memory plugin (sparse allocator) given the same writes.

Usage: bench_memory.py PLUGIN.so [PATTERN...]
PATTERN: seq (1 MiB sequential), scatter64k, scatter4k (default: all)."""
import random
import sys

import nbd

from serve import nbdkit

GiB = 1 << 30
DISK = 8000 * 10**9


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def run(server_args, pattern):
    with nbdkit(server_args) as (p, sock):
        h = nbd.NBD()
        h.connect_unix(sock)
        rng = random.Random(1)
        base = rss_mib(p.pid)
        if pattern == "seq":
            buf = b"\x5a" * (1 << 20)
            for off in range(0, GiB, 1 << 20):
                h.pwrite(buf, off)
        else:
            size = 65536 if pattern == "scatter64k" else 4096
            buf = b"\x5a" * size
            slots = DISK // size
            for _ in range(GiB // size):
                h.pwrite(buf, rng.randrange(slots) * size)
        h.flush()
        rss = rss_mib(p.pid)
        h.shutdown()
        return base, rss


def main():
    plugin = sys.argv[1]
    patterns = sys.argv[2:] or ["seq", "scatter64k", "scatter4k"]
    print(f"{'pattern':<12} {'server':<34} {'RSS before':>11} "
          f"{'RSS after':>10} {'per GiB':>8}")
    for pat in patterns:
        for name, args in [
                ("futuredisk roadmap-2013 (8 TB)", [plugin, "roadmap-2013"]),
                ("memory 8TB (baseline)", ["memory", str(DISK)])]:
            base, rss = run(args, pat)
            print(f"{pat:<12} {name:<34} {base:>8.0f} MiB {rss:>6.0f} MiB "
                  f"{rss / 1024:>6.2f}x", flush=True)


if __name__ == "__main__":
    main()
