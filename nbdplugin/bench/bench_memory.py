#!/usr/bin/python3
"""Memory follows data written, not capacity: write 1 GiB to a disk in the
RAM store and report nbdkit's resident memory and its page tables, against
nbdkit's memory plugin (sparse allocator) given the same writes.  Three
disks: an 8 TB roadmap-2013 (the hashed layout), the same profile cut to
64 GiB (hashed too: its drive caches writes) and that disk with its write
cache off, the largest disk of the flat layout, whose index is the
process's page tables (so they are counted: VmPTE).

Usage: bench_memory.py PLUGIN.so [PATTERN...]
PATTERN: seq (1 MiB sequential), scatter64k, scatter4k (default: all)."""
import os
import random
import sys

import nbd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402

GiB = 1 << 30
DISKS = [("8 TB", 8000 * 10**9, ()), ("64 GiB", 64 * GiB, ()),
         ("64 GiB, cache off", 64 * GiB, ("write-cache=off",))]


def status_mib(pid, key):
    """A line of /proc/PID/status (VmRSS, VmPTE) in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key}")


def run(server_args, disk, pattern):
    """(RSS before, RSS after, page tables after) in MiB."""
    with Nbdkit(server_args) as server:
        h = nbd.NBD()
        h.connect_unix(server.sock)
        rng = random.Random(1)
        base = status_mib(server.pid, "VmRSS")
        if pattern == "seq":
            buf = b"\x5a" * (1 << 20)
            for off in range(0, GiB, 1 << 20):
                h.pwrite(buf, off)
        else:
            size = 65536 if pattern == "scatter64k" else 4096
            buf = b"\x5a" * size
            slots = disk // size
            for _ in range(GiB // size):
                h.pwrite(buf, rng.randrange(slots) * size)
        h.flush()
        rss, pte = status_mib(server.pid, "VmRSS"), status_mib(server.pid, "VmPTE")
        h.shutdown()
        return base, rss, pte


def main():
    plugin = sys.argv[1]
    patterns = sys.argv[2:] or ["seq", "scatter64k", "scatter4k"]
    print(f"{'pattern':<12} {'server':<44} {'RSS before':>11} "
          f"{'RSS after':>10} {'page tables':>12} {'per GiB':>8}")
    for label, disk, extra in DISKS:
        for pat in patterns:
            for name, args in [
                    (f"futuredisk roadmap-2013 ({label})",
                     [plugin, "roadmap-2013", f"size={disk}", *extra]),
                    (f"memory {label} (baseline)", ["memory", str(disk)])]:
                base, rss, pte = run(args, disk, pat)
                print(f"{pat:<12} {name:<44} {base:>8.0f} MiB {rss:>6.0f} MiB "
                      f"{pte:>8.0f} MiB {(rss + pte) / 1024:>7.2f}x",
                      flush=True)


if __name__ == "__main__":
    main()
