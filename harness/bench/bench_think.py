#!/usr/bin/python3
"""How steady `futuredisk predict` is under load, per think mode.

Runs `predict --fs ext4` on one disk ROUNDS times with the machine as it
is and ROUNDS times beside two CPU hogs (`yes >/dev/null` x2), for
--think zero, cpu and real, and prints per mode and load the fsck times
and their spread, (max - min) / median.  think=zero charges no host time
at all: its spread is the floor, what the kernel's request stream alone
varies (how it splits, merges and orders the checker's reads, and so
where the platter is when each arrives).  think=cpu puts the checker's
cgroup CPU time on the clock, so load should barely move it; think=real
puts wall time on it, so load shows.

Then one `futuredisk run --fs ext4 --think cpu --keep` to set e2fsck's
own CPU figure (-tt's last "time: real/ user/ sys" line, in check.out)
beside the CPU seconds think=cpu charged the check (charged_s).

With --e2fsck instead: where the charged CPU's spread comes from.  One
`futuredisk run --fs ext4 --think cpu --keep` trial of one seed, ROUNDS
times idle, beside two hogs, and beside two hogs at SCHED_IDLE (which
run only when nothing else in the machine wants a CPU); per run
e2fsck's own user and system seconds (-tt), the CPU think=cpu charged,
the check's virtual seconds and its reads; per load each one's median
and spread.

With --client instead: the mechanism alone, without the kernel's block
layer and page cache in the way: a client that reads, burns CPU and
reads again (through libnbd, in a cgroup of its own), ROUNDS times idle
and beside the hogs, per think mode; its virtual seconds and their
spread.

With --gaps instead: where think=cpu's spread comes from once the I/O
path repeats.  ROUNDS kept `run --think cpu --attach serial` trials of
one seed with the plugin's request trace on (nbdkit -D
futuredisk.trace=1); per pair of runs whose check asked for the same
requests, how much the CPU charged between the same two requests
differs; then one run's check replayed through the drive model alone
(build/faultmodels/replay-trace) with its own think times, and with
each think time scaled by 1 + F u (u uniform in [-1, 1], 10 seeds per
F): the spread the model gives to that much noise per gap and no other.
Last, one `--think zero` trial's check replayed with one think time for
every request (0-100 us): where the drive's read-ahead starts to pay.

With --consensus instead: what a check's time would repeat to if each
request's think time were the median of GROUP runs' charges.  ROUNDS
traced think=cpu serial trials idle and ROUNDS beside two hogs; each
run's check replayed alone (to its last reply), and each GROUP of runs
in a row replayed as one with the per-request median: the spread of
either.

With --floor instead: how far the CPU time of the very same work moves
on this machine, outside the harness.  One kept think=zero trial's disk
on a read-only loop device (the store's 4 KiB header skipped), `e2fsck
-fn` on it ROUNDS times with its cache warm (after one run to warm it),
then a fixed loop of Python arithmetic ROUNDS times; each run's user +
system seconds (wait4) and their spread, idle and beside two hogs.
think=cpu can repeat no better than these.

With --host instead: whether the machine itself speeds up and slows
down.  build/harness/bench-cpu-steady runs one register-only loop (no
memory traffic, no system calls) in BLOCKS blocks of about 0.1 s CPU,
on each of the first two CPUs at once, with nothing else started; per
CPU the median block and the blocks' spread, and how closely the two
CPUs' blocks move together (Pearson's r).  A spread here is the
processor's or the hypervisor's; a high r says it is the whole
machine's, which no measure of one process's CPU time can take out.

With --attach HOW first, every predict attaches its disk that way
(`serial`: the requests reach the drive one at a time, in the kernel's
order).

Usage: bench_think.py [--attach HOW] BUILD_DIR [ROUNDS] [PROFILE] [FILES]
                                                            (as root)
       bench_think.py --e2fsck BUILD_DIR [ROUNDS] [PROFILE] [FILES]
       bench_think.py --client BUILD_DIR [ROUNDS]
       bench_think.py --gaps BUILD_DIR [ROUNDS] [PROFILE] [FILES]
       bench_think.py --consensus BUILD_DIR [ROUNDS] [GROUP] [PROFILE] [FILES]
       bench_think.py --floor BUILD_DIR [ROUNDS] [PROFILE] [FILES]
       bench_think.py --host BUILD_DIR [BLOCKS]"""
import difflib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


ATTACH = []  # ["--attach", HOW], or none: the harness's default


def drops():
    """Page-cache drops machine-wide so far (vm.drop_caches by anything
    on the machine: a checker whose cache is dropped while it runs reads
    again what it had read; futuredisk's own checkers drop only their
    device's, BLKFLSBUF)."""
    with open("/proc/vmstat") as f:
        return next(int(x.split()[1]) for x in f
                    if x.startswith("drop_pagecache "))


def predict(fd, think, profile, files, out):
    d0 = drops()
    cmd = [fd, "predict", "--fs", "ext4", "--profile", profile,
           "--files", str(files), "--think", think, f"--json={out}",
           *ATTACH]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    return ck["virtual_s"], ck.get("charged_s"), ck["reads"], \
        ck["bytes_read"], drops() - d0


def futuredisk_of(build):
    """BUILD_DIR's futuredisk command, its trials served by the plugin of
    the same build, whatever the binary was built with."""
    os.environ.setdefault("FUTUREDISK_PLUGIN",
                          f"{build}/nbdplugin/nbdkit-futuredisk-plugin.so")
    return f"{build}/harness/futuredisk"


def hogs(n, prefix=()):
    return [subprocess.Popen([*prefix, "sh", "-c", "exec yes >/dev/null"])
            for _ in range(n)]


def spread(xs):
    return (max(xs) - min(xs)) / statistics.median(xs)


def e2fsck_run(fd, profile, files, d):
    """One kept think=cpu trial: (e2fsck's user s, its system s, charged
    CPU s, check virtual s, check reads)."""
    subprocess.run(["rm", "-rf", f"{d}/run"], check=True)
    cmd = [fd, "run", "--fs", "ext4", "--profile", profile, "--size",
           "full", "--meta-only", str(files), "--think", "cpu", "--keep",
           "--seed", "1", "--dir", f"{d}/run", f"--json={d}/run.json"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(f"{d}/run.json") as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    with open(f"{d}/run/check.out") as f:
        # The last timing line is e2fsck's whole run.
        times = re.findall(r"time:\s*([\d.]+)/\s*([\d.]+)/\s*([\d.]+)",
                           f.read())
    real, user, sys_ = map(float, times[-1])
    return user, sys_, ck["charged_s"], ck["virtual_s"], ck["reads"]


def e2fsck_vs_charged(fd, profile, files, d):
    user, sys_, charged, virt, _ = e2fsck_run(fd, profile, files, d)
    return user + sys_, charged, virt


def e2fsck_main(build, rounds, profile, files):
    fd = futuredisk_of(build)
    names = ("e2fsck user", "e2fsck sys", "charged", "virtual")
    with tempfile.TemporaryDirectory() as d:
        for load in ("idle", "hogs", "idle-hogs"):
            hs = hogs(2 if load != "idle" else 0,
                      ["chrt", "-i", "0"] if load == "idle-hogs" else [])
            try:
                got = [e2fsck_run(fd, profile, files, d)
                       for _ in range(rounds)]
            finally:
                for h in hs:
                    h.kill()
                    h.wait()
            for g in got:
                print(f"{load:<9} " + "  ".join(
                    f"{n} {x:.3f}" for n, x in zip(names, g))
                    + f"  reads {g[4]}", flush=True)
            print(f"{load:<9} median / spread: " + "  ".join(
                f"{n} {statistics.median([g[k] for g in got]):.3f} / "
                f"{100 * spread([g[k] for g in got]):.1f} %"
                for k, n in enumerate(names)), flush=True)


def client_once(build, think, d):
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "..", "common", "tests"))
    import cgroup_client
    import nbdkit_server
    root = cgroup_client.cgroup2_root()
    if root is None:
        sys.exit("no cgroup v2 mount")
    cg = f"{root}/fd-bench-think-{os.getpid()}"
    os.mkdir(cg)
    fd = f"{build}/harness/futuredisk"
    ctl = f"{d}/ctl.sock"

    def mark(name):
        p = subprocess.run([fd, "ctl", "--json", ctl, "mark", name],
                           capture_output=True, text=True, check=True)
        return json.loads(p.stdout)["virtual_ns"]
    try:
        with nbdkit_server.Nbdkit(
                [f"{build}/nbdplugin/nbdkit-futuredisk-plugin.so",
                 "roadmap-2006", "size=256M", f"think={think}",
                 f"cgroup={cg}", f"control={ctl}"]) as s:
            v0 = mark("a")
            cgroup_client.run_client("/usr/bin/python3", s.sock, 3000000,
                                     cg)
            return (mark("b") - v0) / 1e9
    finally:
        os.rmdir(cg)


def client_main(build, rounds):
    with tempfile.TemporaryDirectory() as d:
        for think in ("cpu", "real"):
            for load in (0, 2):
                hs = hogs(load)
                try:
                    v = [client_once(build, think, d) for _ in range(rounds)]
                finally:
                    for h in hs:
                        h.kill()
                        h.wait()
                print(f"client think={think:<4} hogs={load}: "
                      + " ".join(f"{x:.3f}" for x in v)
                      + f" virtual s; median {statistics.median(v):.3f}, "
                      f"spread {100 * spread(v):.2f} %", flush=True)


def traced_run(fd, profile, files, d, i, think="cpu"):
    """One kept serial trial with the request trace: the check's
    trace lines (the last nbdkit's first requests, up to the check's
    reads), its virtual s and its charged CPU s."""
    run = f"{d}/gaps-{i}"
    subprocess.run(["rm", "-rf", run], check=True)
    cmd = [fd, "run", "--fs", "ext4", "--profile", profile, "--size",
           "full", "--meta-only", str(files), "--think", think, "--attach",
           "serial", "--keep", "--seed", "1", "--dir", run,
           f"--json={run}.json"]
    env = dict(os.environ, PATH=f"{d}/bin:" + os.environ["PATH"])
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(f"{run}.json") as f:
        rec = json.loads(f.readlines()[-1])
    ck = next(p for p in rec["phases"] if p["name"] == "check")
    with open(f"{run}/nbdkit.log") as f:
        log = f.read()
    # The check is the first phase of the last server (after the unmount).
    last = log.split("config key=control")[-1]
    lines, reads = [], 0
    for line in last.splitlines():
        if "trace: " not in line:
            continue
        if reads == ck["reads"]:
            break
        lines.append(line[line.index("trace: "):])
        reads += "trace: pread " in line
    subprocess.run(["rm", "-rf", run], check=True)
    return lines, ck["virtual_s"], ck.get("charged_s")


def think_of(lines):
    """(op offset count) and the think time before each request."""
    reqs, thinks, prev = [], [], 0
    for line in lines:
        w = dict(x.split("=") for x in line.split()[2:] if "=" in x)
        reqs.append((line.split()[1], w["offset"], w["count"]))
        thinks.append(int(w["arrival_ns"]) - prev)
        prev = int(w["done_ns"])
    return reqs, thinks


def aligned(ra, rb):
    """(i, j) for each request ra[i] == rb[j] that both runs asked for
    after the same request: the kernel's read-ahead adds or drops one now
    and then, so the runs agree in stretches, and a stretch's first
    request follows different ones (its think time is not comparable)."""
    m = difflib.SequenceMatcher(None, ra, rb, autojunk=False)
    return [(b.a + k, b.b + k) for b in m.get_matching_blocks()
            for k in range(1 if b.a == 0 else 0, b.size)]


def replay(build, profile, trace, jitter, runs, think=None):
    """Per run: (virtual s to the last reply, buffer hits)."""
    p = subprocess.run([f"{build}/faultmodels/replay-trace", "--profile",
                        profile, "--jitter", str(jitter), "--runs",
                        str(runs), *(["--think", str(think)] if think
                                     is not None else []), trace],
                       capture_output=True, text=True, check=True)
    return [(float(x.split()[1]), int(x.split()[3]))
            for x in p.stdout.splitlines()]


def tracing_nbdkit(d):
    """d/bin/nbdkit: nbdkit with the plugin's request trace on (the
    trials' PATH puts d/bin first)."""
    nbdkit = subprocess.run(["sh", "-c", "command -v nbdkit"],
                            capture_output=True, text=True,
                            check=True).stdout.strip()
    os.mkdir(f"{d}/bin")
    with open(f"{d}/bin/nbdkit", "w") as f:
        f.write(f"#!/bin/sh\nexec {nbdkit} -v -D futuredisk.trace=1 "
                '"$@"\n')
    os.chmod(f"{d}/bin/nbdkit", 0o755)


def consensus_trace(parsed, path):
    """The first run's requests, each after the median of the think times
    the runs that asked for it too (aligned as in --gaps) charged before
    it, written as trace lines replay-trace reads (no service time: the
    replay gives its own)."""
    reqs, base = parsed[0]
    got = [[t] for t in base]
    for other, thinks in parsed[1:]:
        for i, j in aligned(reqs, other):
            got[i].append(thinks[j])
    now = 0
    with open(path, "w") as f:
        for (op, off, count), ts in zip(reqs, got):
            now += int(statistics.median(ts))
            f.write(f"trace: {op} offset={off} count={count} "
                    f"arrival_ns={now} done_ns={now}\n")


def consensus_main(build, rounds, group, profile, files):
    fd = futuredisk_of(build)
    with tempfile.TemporaryDirectory() as d:
        tracing_nbdkit(d)
        for load in (0, 2):
            hs = hogs(load)
            try:
                runs = [think_of(traced_run(fd, profile, files, d, i)[0])
                        for i in range(rounds)]
            finally:
                for h in hs:
                    h.kill()
                    h.wait()
            single, agreed = [], []
            for i, r in enumerate(runs):
                consensus_trace([r], f"{d}/one.trace")
                single.append(replay(build, profile, f"{d}/one.trace", 0,
                                     1)[0][0])
                if i % group == group - 1:
                    consensus_trace(runs[i - group + 1:i + 1],
                                    f"{d}/median.trace")
                    agreed.append(replay(build, profile,
                                         f"{d}/median.trace", 0, 1)[0][0])
            for name, v in (("one run", single),
                            (f"median of {group}", agreed)):
                print(f"hogs={load} {name}: " + " ".join(
                    f"{x:.3f}" for x in v) + f" virtual s; median "
                    f"{statistics.median(v):.3f}, spread "
                    f"{100 * spread(v):.2f} %", flush=True)


def gaps_main(build, rounds, profile, files):
    fd = futuredisk_of(build)
    with tempfile.TemporaryDirectory() as d:
        tracing_nbdkit(d)
        runs = [traced_run(fd, profile, files, d, i) for i in range(rounds)]
        parsed = [think_of(r[0]) for r in runs]
        for i, (lines, virt, charged) in enumerate(runs):
            thinks = parsed[i][1]
            print(f"run {i}: check {virt:.3f} virtual s, charged "
                  f"{charged:.3f} CPU s, {len(lines)} requests, think "
                  f"between them {sum(thinks) / 1e9:.3f} s", flush=True)
        # The think before each request both runs asked for.
        for i in range(rounds):
            for j in range(i + 1, rounds):
                (ra, a), (rb, b) = parsed[i], parsed[j]
                pairs = [(a[x], b[y]) for x, y in aligned(ra, rb)]
                rel = sorted(abs(x - y) / ((x + y) / 2) for x, y in pairs
                             if min(x, y) >= 10000)
                print(f"runs {i} and {j}: {len(pairs)} requests alike, "
                      f"{len(rel)} with 10 us or more of think in both; "
                      f"there the charges differ by median "
                      f"{100 * statistics.median(rel):.1f} %, 90th "
                      f"percentile {100 * rel[len(rel) * 9 // 10]:.1f} %",
                      flush=True)
        trace = f"{d}/check.trace"
        with open(trace, "w") as f:
            f.write("\n".join(runs[0][0]) + "\n")
        base = replay(build, profile, trace, 0, 1)[0][0]
        done = int(runs[0][0][-1].split("done_ns=")[1].split()[0]) / 1e9
        print(f"run 0 replayed: {base:.6f} virtual s to the last reply, "
              f"the plugin's {done:.6f}", flush=True)
        for jitter in (0.01, 0.02, 0.05, 0.1, 0.2):
            v = [x[0] for x in replay(build, profile, trace, jitter, 10)]
            print(f"jitter {jitter:.2f}: median {statistics.median(v):.3f} "
                  f"virtual s, {min(v):.3f}-{max(v):.3f}, spread "
                  f"{100 * spread(v):.2f} %", flush=True)
        # The same check with no host time at all, replayed behind hosts
        # that take a fixed time per request: where the drive's read-ahead
        # starts to pay.
        lines = traced_run(fd, profile, files, d, "zero", "zero")[0]
        with open(trace, "w") as f:
            f.write("\n".join(lines) + "\n")
        for us in (0, 10, 20, 25, 50, 100):
            v, hits = replay(build, profile, trace, 0, 1, us * 1000)[0]
            print(f"think=zero check, {us} us per request: {v:.3f} virtual "
                  f"s, {hits} buffer hits", flush=True)


def cpu_of(cmd):
    """User + system seconds of one command (its whole process tree)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 4):  # 4: e2fsck -n
        sys.exit(f"{cmd[0]}: exit status {status}")
    return ru.ru_utime + ru.ru_stime


# The same arithmetic every run: an LCG over a list, about a CPU second.
SPIN = ("x = [0] * 4096\ns = 1\nfor i in range(1500000):\n"
        "    s = (s * 6364136223846793005 + 1442695040888963407) % 2**64\n"
        "    x[s % 4096] += 1\n")


def floor_main(build, rounds, profile, files):
    fd = futuredisk_of(build)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([fd, "run", "--fs", "ext4", "--profile", profile,
                        "--size", "full", "--meta-only", str(files),
                        "--think", "zero", "--keep", "--seed", "1", "--dir",
                        f"{d}/run"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        dev = subprocess.run(["losetup", "-r", "-f", "--show", "-o", "4096",
                              f"{d}/run/disk.store"], capture_output=True,
                             text=True, check=True).stdout.strip()
        try:
            cpu_of(["e2fsck", "-fn", dev])
            for load in (0, 2):
                hs = hogs(load)
                try:
                    for name, cmd in (("e2fsck -fn", ["e2fsck", "-fn", dev]),
                                      ("python loop",
                                       [sys.executable, "-c", SPIN])):
                        v = [cpu_of(cmd) for _ in range(rounds)]
                        print(f"hogs={load} {name}: " + " ".join(
                            f"{x:.3f}" for x in v) + " CPU s; median "
                            f"{statistics.median(v):.3f}, spread "
                            f"{100 * spread(v):.2f} %", flush=True)
                finally:
                    for h in hs:
                        h.kill()
                        h.wait()
        finally:
            subprocess.run(["losetup", "-d", dev], check=True)


def host_main(build, blocks):
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        sys.exit("bench_think.py --host: needs two CPUs")
    procs = [subprocess.Popen([f"{build}/harness/bench-cpu-steady", str(c),
                               str(blocks)], stdout=subprocess.PIPE,
                              text=True) for c in cpus]
    ns = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            sys.exit(f"bench-cpu-steady: exit {p.returncode}")
        ns.append([int(x) / 1e9 for x in out.split()])
    for c, v in zip(cpus, ns):
        print(f"cpu {c}: {blocks} blocks, median {statistics.median(v):.4f}"
              f" CPU s, spread {100 * spread(v):.1f} %")
    print(f"the two CPUs together: r = "
          f"{statistics.correlation(ns[0], ns[1]):.2f}")


# The modes after BUILD_DIR: each one's function and its optional
# arguments, (type, default) in order.
MODES = {
    "--e2fsck": (e2fsck_main, [(int, 5), (str, "roadmap-2006"),
                               (int, 50000)]),
    "--gaps": (gaps_main, [(int, 5), (str, "roadmap-2006"), (int, 50000)]),
    "--consensus": (consensus_main, [(int, 15), (int, 3),
                                     (str, "roadmap-2006"), (int, 50000)]),
    "--floor": (floor_main, [(int, 10), (str, "roadmap-2006"),
                             (int, 50000)]),
    "--client": (client_main, [(int, 5)]),
    "--host": (host_main, [(int, 40)]),
}


def positional(args, spec):
    """args converted by spec's types, spec's defaults where args end."""
    return [kind(args[i]) if i < len(args) else default
            for i, (kind, default) in enumerate(spec)]


def main():
    if sys.argv[1] == "--attach":
        ATTACH.extend(sys.argv[1:3])
        del sys.argv[1:3]
    if sys.argv[1] in MODES:
        fn, spec = MODES[sys.argv[1]]
        fn(os.path.abspath(sys.argv[2]), *positional(sys.argv[3:], spec))
        return
    build = os.path.abspath(sys.argv[1])
    rounds, profile, files = positional(
        sys.argv[2:], [(int, 5), (str, "roadmap-2006"), (int, 200000)])
    fd = futuredisk_of(build)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for think in ("zero", "cpu", "real"):
            for load in (0, 2):
                hs = hogs(load)
                try:
                    got = [predict(fd, think, profile, files,
                                   f"{d}/{think}-{load}-{i}.json")
                           for i in range(rounds)]
                finally:
                    for h in hs:
                        h.kill()
                        h.wait()
                v = [g[0] for g in got]
                rows.append((think, load, v, got))
                print(f"think={think:<4} hogs={load}: fsck "
                      + " ".join(f"{x:.3f}" for x in v)
                      + f" s; median {statistics.median(v):.3f} s, spread "
                      f"{100 * spread(v):.2f} %", flush=True)
                # What the checker asked of the disk: the kernel's block
                # layer and page cache shape it, in either mode.
                r = [g[2] for g in got]
                mib = [g[3] / 2**20 for g in got]
                print("    reads " + " ".join(str(x) for x in r)
                      + f" (spread {100 * spread(r):.2f} %); MiB "
                      + " ".join(f"{x:.0f}" for x in mib)
                      + "; cache drops " + " ".join(str(g[4]) for g in got)
                      + (f"; charged CPU s " + " ".join(
                          f"{g[1]:.3f}" for g in got)
                         + f" (spread {100 * spread([g[1] for g in got]):.2f}"
                         " %)" if think == "cpu" else ""), flush=True)
        for think in ("zero", "cpu", "real"):
            idle = [r[2] for r in rows if r[0] == think and r[1] == 0][0]
            busy = [r[2] for r in rows if r[0] == think and r[1] == 2][0]
            print(f"think={think}: median under load / idle "
                  f"{statistics.median(busy) / statistics.median(idle):.3f}")
        own, charged, virt = e2fsck_vs_charged(fd, profile, files, d)
        print(f"e2fsck -tt user+sys {own:.3f} s; think=cpu charged "
              f"{charged:.3f} s (ratio {charged / own:.3f}); check "
              f"{virt:.3f} virtual s")


if __name__ == "__main__":
    main()
