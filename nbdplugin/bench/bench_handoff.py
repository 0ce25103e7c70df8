#!/usr/bin/python3
"""The drive queue's hand-off in virtual time: what it costs a client
that keeps 16 random 4 KiB reads in flight (or another depth, --iodepth),
and what the model makes of them.  Each server runs alone (nbdkit with the plugin: `profile=P
size=4G time=virtual think=zero write-cache=off control=SOCK`; nbdkit's
memory plugin as the baseline), 1 GiB is written, then fio (nbd engine)
reads it at random for SECONDS.  For each server and round:

  wall IOPS      fio's rate;
  virtual IOPS   reads / virtual seconds over the same reads, from the
                 plugin's control-socket `stats` before and after (what
                 the modelled drive would do: the fidelity figure);
  switches/req   the server's context switches per request, from
                 `perf stat -e context-switches` over the middle of the
                 run (none without perf).

Several depths (--iodepth 1,16) show the client's round trip: at depth
1 every server waits for the client between requests, and a drive that
must see the reply's follow-up before its next decision can decide no
faster than that.

Give several plugin builds to compare them in the same minutes (e.g. a
build of main against a build with a change); rounds alternate the
order.  Servers run one after another, so wall IOPS carry the
machine's weather; the switches per request and the virtual IOPS do
not.

Usage: bench_handoff.py [--profile P] [--seconds S] [--rounds R]
       [--iodepth N[,N...]] PLUGIN.so [PLUGIN.so ...]
       (defaults: cmr-20t-2024, 7 s, 2 rounds, depth 16)"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from nbdkit_server import Nbdkit  # noqa: E402
from bench_fio import fio_result, fio_start  # noqa: E402

SIZE = "4G"
DATA = "1G"


def stats(ctl):
    """(virtual ns, reads) from the plugin's control socket."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(ctl)
        s.sendall(b"stats\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("control socket closed before its reply")
            buf += chunk
    st = json.loads(buf)["stats"]
    return st["virtual_ns"], st["reads"]


def switches(pid, seconds):
    """A running `perf stat` of pid's context switches for seconds, or
    None without perf."""
    if shutil.which("perf") is None:
        return None
    return subprocess.Popen(
        ["perf", "stat", "-x,", "-e", "context-switches", "-p", str(pid),
         "--", "sleep", str(seconds)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def one(args, seconds, iodepth):
    """(wall IOPS, virtual IOPS or None, switches per request or None)."""
    plugin = args[0] != "memory"
    with tempfile.TemporaryDirectory(prefix="handoff.") as d:
        ctl = os.path.join(d, "ctl")
        with Nbdkit(args + ([f"control={ctl}"] if plugin else []),
                    workdir=d) as srv:
            fio_result(fio_start(srv.sock, "write", "1M", size=DATA), "write")
            v0 = stats(ctl) if plugin else None
            reads = fio_start(srv.sock, "randread", "4k", seconds, size=DATA,
                              iodepth=iodepth)
            time.sleep(1.5)  # fio connected and running
            span = seconds - 3
            perf = switches(srv.pid, span)
            _, iops = fio_result(reads, "randread")
            per_req = None
            if perf is not None:
                _, err = perf.communicate()
                count = err.strip().splitlines()[-1].split(",")[0]
                if count.isdigit():
                    per_req = int(count) / (iops * span)
            virt = None
            if plugin:
                v1 = stats(ctl)
                virt = (v1[1] - v0[1]) / ((v1[0] - v0[0]) / 1e9)
            return iops, virt, per_req


def main():
    p = argparse.ArgumentParser(
        usage=__doc__.rsplit("Usage: ", 1)[1].split("(")[0].rstrip())
    p.add_argument("--profile", default="cmr-20t-2024",
                   help="the drive profile (default cmr-20t-2024)")
    p.add_argument("--seconds", type=int, default=7,
                   help="each timed fio run, at least 4 (default 7)")
    p.add_argument("--rounds", type=int, default=2,
                   help="rounds (default 2)")
    p.add_argument("--iodepth", default="16", metavar="N[,N...]",
                   help="fio's depths, each run in turn (default 16)")
    p.add_argument("plugins", nargs="+", metavar="PLUGIN.so")
    a = p.parse_args()
    depths = []
    for d in a.iodepth.split(","):
        if not d.isdigit() or not 1 <= int(d) <= 256:
            p.error(f"--iodepth {a.iodepth}: {d!r} is not a depth of 1 to 256")
        depths.append(int(d))
    if a.seconds < 4:
        p.error(f"--seconds {a.seconds}: at least 4 (perf counts the middle)")
    if a.rounds < 1:
        p.error(f"--rounds {a.rounds}: at least 1")
    for so in a.plugins:
        if not os.path.isfile(so):
            p.error(f"{so}: no such plugin file")
    servers = [(so, [os.path.abspath(so), f"profile={a.profile}",
                     f"size={SIZE}", "time=virtual", "think=zero",
                     "write-cache=off"]) for so in a.plugins]
    servers.append(("memory plugin", ["memory", SIZE]))
    print(f"{'round':>5}  {'server':<48} {'QD':>3} {'wall IOPS':>10} "
          f"{'virtual IOPS':>12} {'switches/req':>12}")
    for r in range(a.rounds):
        order = servers if r % 2 == 0 else servers[::-1]
        for name, args in order:
            for qd in depths:
                iops, virt, per_req = one(args, a.seconds, qd)
                print(f"{r + 1:>5}  {name[-48:]:<48} {qd:>3} {iops:>10.0f} "
                      f"{'-' if virt is None else '%.1f' % virt:>12} "
                      f"{'-' if per_req is None else '%.2f' % per_req:>12}",
                      flush=True)


if __name__ == "__main__":
    main()
