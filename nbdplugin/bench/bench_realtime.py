#!/usr/bin/python3
"""time=real accuracy: QD1 random 4 KiB reads on roadmap-2006; each
request's latency as the client sees it against the latency the model gave
it (from -D futuredisk.trace=1).  The same requests against nbdkit's memory
plugin give the baseline: what the client, libnbd and nbdkit themselves
cost per request, included in what the client observes.

Usage: bench_realtime.py PLUGIN.so [REQUESTS]"""
import os
import random
import re
import statistics
import sys
import tempfile
import time

import nbd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402

SIZE = 1 << 30


def reads_against(args, n, stderr=None):
    with Nbdkit(args, output=stderr) as server:
        h = nbd.NBD()
        h.connect_unix(server.sock)
        lat = run_reads(h, n)
        h.shutdown()
        return lat


def run_reads(h, n):
    rng = random.Random(42)
    lat = []
    for _ in range(n):
        off = rng.randrange(SIZE // 4096) * 4096
        t0 = time.perf_counter_ns()
        h.pread(4096, off)
        lat.append(time.perf_counter_ns() - t0)
    return lat


def main():
    plugin = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    with tempfile.TemporaryFile("w+") as log:
        observed = reads_against(["-v", "-D", "futuredisk.trace=1", plugin,
                                  "roadmap-2006", "size=1G", "time=real"],
                                 n, log)
        log.seek(0)
        modelled = [int(m.group(1)) for m in re.finditer(
            r"trace: pread .* service_ns=(\d+)", log.read())]
    base = reads_against(["memory", "1G"], n)
    assert len(modelled) == n, (len(modelled), n)
    rel = [abs(o - m) / m for o, m in zip(observed, modelled)]
    print(f"requests                         {n}")
    print(f"median modelled latency          "
          f"{statistics.median(modelled) / 1e6:.3f} ms")
    print(f"median observed latency          "
          f"{statistics.median(observed) / 1e6:.3f} ms")
    print(f"median relative error            {statistics.median(rel):.2%}")
    print(f"95th percentile relative error   "
          f"{sorted(rel)[int(0.95 * n)]:.2%}")
    print(f"baseline: memory plugin median   "
          f"{statistics.median(base) / 1e6:.3f} ms per request")


if __name__ == "__main__":
    main()
