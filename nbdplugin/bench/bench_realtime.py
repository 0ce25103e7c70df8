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
import subprocess
import sys
import tempfile
import time

import nbd

SIZE = 1 << 30


def start(d, args, log):
    sock = os.path.join(d, "sock")
    p = subprocess.Popen(["nbdkit", "-f", "-U", sock, *args],
                         stderr=open(log, "w"))
    while not os.path.exists(sock):
        time.sleep(0.02)
    h = nbd.NBD()
    h.connect_unix(sock)
    return p, h


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
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        p, h = start(d, ["-v", "-D", "futuredisk.trace=1", plugin,
                         "roadmap-2006", "size=1G", "time=real"], log)
        observed = run_reads(h, n)
        h.shutdown()
        p.terminate()
        p.wait()
        modelled = [int(m.group(1)) for m in re.finditer(
            r"trace: pread .* service_ns=(\d+)", open(log).read())]
        os.unlink(os.path.join(d, "sock"))
        p, h = start(d, ["memory", "1G"], log)
        base = run_reads(h, n)
        h.shutdown()
        p.terminate()
        p.wait()
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
