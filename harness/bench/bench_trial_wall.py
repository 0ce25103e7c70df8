#!/usr/bin/python3
"""Where a trial's wall time goes (issue 19, item 4): one `futuredisk run`
under `strace -f` that records only process starts and ends (execve and
exit, filtered in the kernel with --seccomp-bpf, so the trial runs at
nearly full speed), then the wall time of every tool the harness waits
for, by name, beside the trial's own phases from its JSON record.

Daemons (nbdkit, nbdfuse, a FUSE file system's daemon) live across
phases; their startup is what the harness waits for: nbdkit's is the
parent process that forks the server (which runs no execve of its own)
and exits once it listens, so its life is counted; for nbdfuse and the
FUSE daemons only the count is.

Usage: bench_trial_wall.py FUTUREDISK [RUN-ARGS...]   (as root)
  e.g. bench_trial_wall.py build/harness/futuredisk --fs ext4 --size 512M \\
           --fill 10 --seed 1 --think zero
Prints a table and, last, one line of JSON."""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

EXEC = re.compile(r'^(\d+) +([\d.]+) execve\("([^"]+)"')
EXIT = re.compile(r"^(\d+) +([\d.]+) \+\+\+ (exited|killed)")
DAEMONS = {"nbdfuse", "chunkfs"}


def trace(futuredisk, args, work):
    log = os.path.join(work, "strace.log")
    rec = os.path.join(work, "trial.json")
    cmd = ["strace", "-f", "-ttt", "--seccomp-bpf", "-e", "trace=execve",
           "-e", "signal=none", "-q", "-o", log, futuredisk, "run", *args,
           "--dir", os.path.join(work, "t"), "--json=" + rec]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"trial failed ({p.returncode}): {p.stderr[-2000:]}")
    with open(rec) as f:
        record = json.load(f)
    with open(log) as f:
        lines = f.read().splitlines()
    return wall, record, lines


def lifetimes(lines):
    """Each process's (name, start, end): its last execve, its exit."""
    name, start, end, forked = {}, {}, {}, set()
    for line in lines:
        m = EXEC.match(line)
        if m and "= -1" not in line:
            pid, t, path = int(m.group(1)), float(m.group(2)), m.group(3)
            name[pid] = os.path.basename(path)
            start[pid] = t
            continue
        m = EXIT.match(line)
        if m:
            end[int(m.group(1))] = float(m.group(2))
    # nbdkit's server is its forked child, which never calls execve: a
    # process that exits without an execve of its own is not counted.
    return [(name[p], start[p], end.get(p)) for p in name]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    futuredisk, args = os.path.abspath(sys.argv[1]), sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="bench-trial-") as work:
        wall, record, lines = trace(futuredisk, args, work)
    procs = lifetimes(lines)
    first = min(s for _, s, _ in procs)
    by = collections.defaultdict(lambda: [0, 0.0])
    for n, s, e in procs:
        if n == "futuredisk" and s == first:
            continue  # the trial itself
        by[n][0] += 1
        if e is not None and n not in DAEMONS:
            by[n][1] += e - s
    phases = {p["name"]: p["wall_s"] for p in record["phases"]}
    print(f"trial wall {wall:.2f} s (under strace), "
          f"phases {sum(phases.values()):.2f} s")
    for n, w in phases.items():
        print(f"  phase {n:<14} {w:7.2f} s")
    for n, (count, secs) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"  tool  {n:<14} {secs:7.2f} s  ({count} runs)")
    print(json.dumps({"wall_s": wall, "phases": phases,
                      "tools": {n: {"runs": c, "wall_s": s}
                                for n, (c, s) in by.items()}}))


if __name__ == "__main__":
    main()
