#!/usr/bin/python3
"""The model against every published drive and fsck figure we could find.

Each row is one published figure (datasheet, vendor paper, a published
e2fsck run), the model's figure for the same thing beside it, their
distance (model / published) and the command that gives the model's
figure.  Drive figures come from `futuredisk model --json`; fsck figures
are replays: `futuredisk predict` on a profile matching the published
disk (harness/bench/validation/*.profile) with a tree of the published
file count and fill.

    /usr/bin/python3 harness/bench/bench_validation.py \
        [--futuredisk PATH] [--out DIR] [--only NAME]... [--scale N]
        [--reuse] [--list]

fsck replays run at the published size by default (about 15 minutes
of wall time on 2 processors for all three).  --scale N runs them at 1/N
of the published capacity and file count, for a quick look: the disk is
the published profile with only its capacity divided by N (rotation,
media rate and the seek curve over the stroke kept), the file system's
groups, inode tables, bitmaps, directories and used inodes shrink by N,
and the model's time is multiplied by N.  It is not exact: a jump of a
few MiB between neighbouring metadata blocks is N times a larger share
of the smaller stroke, so short seeks cost more, and the drive's cache
does not shrink.  Ratios between two replays at the same scale need no
multiplication.

Prints progress on stderr and the markdown table on stdout, and writes
the table (table.md), every raw record and every command's output under
--out.  Exit status 1 if any figure could not be computed (its row says
why), 2 on bad usage.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROFILES = os.path.join(HERE, "validation")

# Sources, by key: one URL each.
SRC = {
    "ublk": "https://github.com/lumir-sliva/ublk-disksim (docs/VALIDATION.md)",
    "x24": "https://www.seagate.com/content/dam/seagate/en/content-fragments/"
    "products/datasheets/exos-x24/exos-x24-DS2080-2307US-en_US.pdf",
    "x24bf": "https://blocksandfiles.com/2023/10/18/"
    "seagate-pips-toshiba-and-wd-with-24tb-drive/",
    "hc580": "https://documents.westerndigital.com/content/dam/doc-library/"
    "en_us/assets/public/western-digital/product/data-center-drives/"
    "ultrastar-dc-hc500-series/data-sheet-ultrastar-dc-hc580.pdf",
    "exosm": "https://www.storagereview.com/fr/review/"
    "seagate-exos-m-30tb-review-hamr-ing-storage-density",
    "2x18": "https://www.tomshardware.com/news/"
    "seagate-launches-2nd-gen-dual-actuator-hdds-18-tb",
    "15k7": "https://manualsdump.com/en/manuals/seagate-100516226model-"
    "st3300457ss-st3300657ss-st3300557ss-st336754lw-st3450857ss-st336607lw-"
    "st3450757ss-st3450657ss/136875/14",
    "lwn": "https://lwn.net/Articles/190222/",
    "tso": "https://thunk.org/tytso/blog/2008/08/08/fast-ext4-fsck-times/",
    "e2fs49": "https://github.com/tytso/e2fsprogs/issues/49",
}

# Drive figures: (name, profile, what, published, unit, source, model
# field or a function of the profile's record).
DRIVE = [
    ("7k8-qd1", "cmr-8t-2015",
     "8 TB 7200 rpm (HGST 7K8), random 4 KiB read QD1, ms",
     12.27, "random_4k_ms", "ublk"),
    ("7k8-qd32", "cmr-8t-2015",
     "8 TB 7200 rpm (HGST 7K8), random 4 KiB read QD32, IOPS",
     195, "random_4k_iops_qd32", "ublk"),
    ("7k8-seq", "cmr-8t-2015",
     "8 TB 7200 rpm (HGST 7K8), sequential read (outer), MB/s",
     196, "bw_outer_mbps", "ublk"),
    ("x24-qd16", "cmr-20t-2024",
     "Exos X24, random 4 KiB read QD16 (write cache off), IOPS",
     168, "random_4k_iops_qd16", "x24"),
    ("x24-seq", "cmr-20t-2024",
     "Exos X20/X24, sustained transfer (outer), MB/s",
     285, "bw_outer_mbps", "x24bf"),
    ("hc580-qd32", "cmr-20t-2024",
     "Ultrastar DC HC580, random 4 KiB read QD32, IOPS",
     212, "random_4k_iops_qd32", "hc580"),
    ("exosm-qd16", "hamr-30t-2024",
     "Exos M 30 TB, random 4 KiB read QD16, IOPS",
     170, "random_4k_iops_qd16", "exosm"),
    ("exosm-seq", "hamr-30t-2024",
     "Exos M 30 TB, sustained transfer (outer), MB/s",
     275, "bw_outer_mbps", "exosm"),
    ("2x18-qd16", "dual-18t-2022",
     "Exos 2X18 (dual actuator), random 4 KiB read QD16, IOPS",
     304, "random_4k_iops_qd16", "2x18"),
    ("consumer-qd32x", "laptop-5400",
     "consumer drive (ST2000DM006), QD32 / QD1 random read IOPS",
     93.6 / 57.6, lambda r: r["random_4k_iops_qd32"] / r["random_4k_iops_qd1"],
     "ublk"),
    ("15k7-outer", "ent-15k",
     "Cheetah 15K.7, sustained transfer outer, MB/s",
     204, "bw_outer_mbps", "15k7"),
    ("15k7-inner", "ent-15k",
     "Cheetah 15K.7, sustained transfer inner, MB/s",
     122, "bw_inner_mbps", "15k7"),
    ("roadmap-2006-read", "roadmap-2006",
     "2006 roadmap disk (500 GB), full sequential read, s",
     4000, "full_read_s", "lwn"),
    ("roadmap-2013-read", "roadmap-2013",
     "2013 roadmap disk (8 TB), full sequential read, s",
     12800, "full_read_s", "lwn"),
]

# fsck replays: one predict each.  files/fill: the published tree's.
REPLAYS = {
    "tso-ext4": dict(fs="ext4", profile="laptop-2008.profile",
                     files=673584, fill=67.67),
    "tso-ext3": dict(fs="ext3", profile="laptop-2008.profile",
                     files=673584, fill=67.67),
    "e2fs49": dict(fs="ext4", profile="volume-60t.profile",
                   files=492805, fill=10),
}

# fsck figures: (name, replay(s), what, published, source, how the model's
# figure comes from the replays' records, scaled?).  Scaled figures are
# seconds, multiplied by --scale.
FSCK = [
    ("tso-ext4-total", ("tso-ext4",),
     "Ts'o 2008: e2fsck 1.41.0, ext4, 128 GiB laptop, 779,726 inodes "
     "(673,584 files, 58,903 dirs), 67.67 % used: whole check, s",
     62.71, "tso", lambda r: check(r[0])["virtual_s"], True),
    ("tso-ext4-pass1", ("tso-ext4",), "the same: pass 1, s",
     17.82, "tso", lambda r: vpass(r[0], "1"), True),
    ("tso-ext4-pass2", ("tso-ext4",), "the same: pass 2, s",
     41.47, "tso", lambda r: vpass(r[0], "2"), True),
    ("tso-ext4-pass345", ("tso-ext4",),
     "the same: passes 3-5 (together: e2fsck 1.47 reads pass 5's bitmaps "
     "before it prints pass 4), s",
     3.42, "tso", lambda r: vpass(r[0], "345"), True),
    ("tso-ext4-read", ("tso-ext4",), "the same: MB read by the check",
     513, "tso", lambda r: check(r[0])["bytes_read"] / 1e6, True),
    ("tso-ext3-ratio", ("tso-ext3", "tso-ext4"),
     "Ts'o 2008: the same tree copied to ext3: e2fsck time ext3 / ext4 "
     "(\"almost seven times faster\")",
     7.0, "tso",
     lambda r: check(r[0])["virtual_s"] / check(r[1])["virtual_s"], False),
    ("e2fs49-total", ("e2fs49",),
     "e2fsprogs #49 (2020): e2fsck 1.43.9, ext4, 60 TiB volume, ~554,000 "
     "inodes used: whole check, s (CPU 254 s of it, on ARM)",
     620.30, "e2fs49", lambda r: check(r[0])["virtual_s"], True),
    ("e2fs49-pass1", ("e2fs49",),
     "the same: pass 1 (1,085 MB; 152 s of it CPU), s",
     165.37, "e2fs49", lambda r: vpass(r[0], "1"), True),
    ("e2fs49-pass2", ("e2fs49",), "the same: pass 2 (125 MB), s",
     6.40, "e2fs49", lambda r: vpass(r[0], "2"), True),
    ("e2fs49-pass345", ("e2fs49",),
     "the same: passes 3-5 (pass 5 read 1,922 MB of bitmaps with 21 s "
     "CPU; pass 4 58 s CPU), s",
     402.69, "e2fs49", lambda r: vpass(r[0], "345"), True),
    ("e2fs49-read", ("e2fs49",), "the same: MB read by the check",
     3161, "e2fs49", lambda r: check(r[0])["bytes_read"] / 1e6, True),
]


def check(rec):
    """The record's read-only check phase."""
    for p in rec["phases"]:
        if p["name"] == "check":
            return p
    raise KeyError("no check phase in the record")


def vpass(rec, passes):
    """Virtual seconds of e2fsck's passes, digits in a string ("345");
    1B-1D count to pass 1."""
    total, found = 0.0, False
    for name, secs in check(rec)["virtual_passes"]:
        m = re.match(r"pass (\d)", name.lower())
        if m and m.group(1) in passes:
            total += secs
            found = True
    if not found:
        raise KeyError("no pass %s in virtual_passes" % passes)
    return total


def log(msg):
    print("bench_validation: %s" % msg, file=sys.stderr, flush=True)


def run_logged(cmd, logfile):
    """Run cmd, its stdout and stderr to logfile; progress lines echoed."""
    log("$ " + " ".join(shlex.quote(c) for c in cmd))
    t0 = time.time()
    with open(logfile, "w") as f:
        f.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
        f.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        last = 0.0
        for line in proc.stdout:
            f.write(line)
            now = time.time()
            if now - last >= 30:
                log("  [%4.0f s] %s" % (now - t0, line.rstrip()[:150]))
                last = now
        rc = proc.wait()
    log("  exit %d after %.0f s wall (log %s)" % (rc, time.time() - t0,
                                                   logfile))
    return rc


def scaled_profile(src, scale, outdir):
    """The profile file with its capacity (and name) divided by scale."""
    path = os.path.join(PROFILES, src)
    if scale == 1:
        return path
    with open(path) as f:
        text = f.read()
    m = re.search(r"^capacity\s*=\s*(\d+)(GiB|TiB)\s*$", text, re.M)
    if not m:
        raise ValueError("%s: no 'capacity = N GiB|TiB' line to scale" % path)
    n = int(m.group(1)) * (1024 if m.group(2) == "TiB" else 1)
    if (n * 1024) % scale:
        raise ValueError("%s: %d GiB is not a multiple of 1/%d MiB"
                         % (path, n, scale))
    text = text[:m.start()] + "capacity = %dMiB" % (n * 1024 // scale) \
        + text[m.end():]
    text = re.sub(r"^name\s*=\s*(\S+)", r"name = \1-s%d" % scale, text,
                  flags=re.M)
    out = os.path.join(outdir, "%s-s%d.profile"
                       % (os.path.splitext(src)[0], scale))
    with open(out, "w") as f:
        f.write("# %s at 1/%d of its capacity (bench_validation.py --scale)\n"
                % (src, scale) + text)
    return out


def predict_cmd(fd, spec, profile, scale, jsonfile):
    files = max(1, round(spec["files"] / scale))
    # Wall time between requests, as the published runs' clocks had it
    # (and as the recorded table was measured); think=cpu would charge
    # this machine's CPU, not the published machines'.
    return [fd, "predict", "--think", "real", "--fs", spec["fs"],
            "--profile", profile, "--files", str(files), "--fill",
            "%g" % spec["fill"], "--json=" + jsonfile]


def shown_cmd(cmd):
    """A command as the table shows it: repository-relative paths."""
    out = []
    for c in cmd:
        for pre in (ROOT + "/",):
            c = c.replace(pre, "")
        out.append(c)
    return " ".join(shlex.quote(c) for c in out)


def run_replay(name, a):
    spec = REPLAYS[name]
    prof = scaled_profile(spec["profile"], a.scale, a.out)
    # A scaled replay's record is named for its scale, so --reuse never
    # takes one scale's record for another's.
    stem = name if a.scale == 1 else "%s-s%d" % (name, a.scale)
    jsonfile = os.path.join(a.out, "%s.jsonl" % stem)
    cmd = predict_cmd(a.futuredisk, spec, prof, a.scale, jsonfile)
    shown = shown_cmd(predict_cmd("futuredisk", spec,
                                  os.path.join(a.out if a.scale > 1
                                               else PROFILES,
                                               os.path.basename(prof)),
                                  a.scale, "%s.jsonl" % stem))
    if a.reuse and os.path.exists(jsonfile):
        log("%s: reusing %s" % (name, jsonfile))
        rc = 0
    else:
        if os.path.exists(jsonfile):
            os.unlink(jsonfile)
        rc = run_logged(cmd, os.path.join(a.out, "%s.log" % stem))
    try:
        with open(jsonfile) as f:
            rec = json.loads(f.readline())
    except (OSError, ValueError) as e:
        return None, shown, "predict exit %d, no record (%s)" % (rc, e)
    if rec.get("error"):
        return None, shown, "predict: %s" % rec["error"]
    return rec, shown, None


def drive_rows(a, wanted):
    rows = []
    todo = [d for d in DRIVE if wanted(d[0])]
    if not todo:
        return rows
    profiles = sorted({d[1] for d in todo})
    jsonfile = os.path.join(a.out, "model.json")
    cmd = [a.futuredisk, "model"]
    for p in profiles:
        cmd += ["--profile", p]
    cmd += ["--json=" + jsonfile]
    rc = run_logged(cmd, os.path.join(a.out, "model.log"))
    recs, err = {}, None
    try:
        with open(jsonfile) as f:
            recs = {r["name"]: r for r in json.load(f)}
    except (OSError, ValueError) as e:
        err = "model exit %d, no JSON (%s)" % (rc, e)
    for name, prof, what, pub, field, src in todo:
        shown = "futuredisk model --profile %s --json" % prof
        try:
            if err:
                raise RuntimeError(err)
            r = recs[prof]
            model = field(r) if callable(field) else r[field]
            rows.append((name, what, pub, SRC[src], model, None, shown))
        except (KeyError, TypeError, ZeroDivisionError, RuntimeError) as e:
            rows.append((name, what, pub, SRC[src], None, str(e), shown))
    return rows


def fsck_rows(a, wanted):
    todo = [f for f in FSCK if wanted(f[0])]
    needed = []
    for f in todo:
        for r in f[1]:
            if r not in needed:
                needed.append(r)
    results = {}
    for i, r in enumerate(needed):
        log("replay %d/%d: %s" % (i + 1, len(needed), r))
        results[r] = run_replay(r, a)
    rows = []
    for name, reps, what, pub, src, fn, scaled in todo:
        shown = " ; ".join(results[r][1] for r in reps)
        errs = [results[r][2] for r in reps if results[r][2]]
        if errs:
            rows.append((name, what, pub, SRC[src], None, errs[0], shown))
            continue
        try:
            model = fn([results[r][0] for r in reps])
            if scaled:
                model *= a.scale
            rows.append((name, what, pub, SRC[src], model, None, shown))
        except (KeyError, TypeError, ZeroDivisionError) as e:
            rows.append((name, what, pub, SRC[src], None, str(e), shown))
    return rows


def fmt(x):
    if x is None:
        return "—"
    if abs(x) >= 100:
        return "{:,.0f}".format(x)
    if abs(x) >= 10:
        return "%.1f" % x
    return "%.2f" % x


def table(rows, a):
    lines = ["| figure | published | model | model / published | source "
             "| command |", "|---|---:|---:|---:|---|---|"]
    for name, what, pub, src, model, err, shown in rows:
        if model is None:
            ratio = "error: %s" % err
        else:
            ratio = "**%.2f**" % (model / pub)
        lines.append("| `%s`: %s | %s | %s | %s | %s | `%s` |"
                     % (name, what, fmt(pub), fmt(model), ratio, src, shown))
    host = platform.node()
    try:
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
    except OSError:
        load = "?"
    lines.append("")
    scale = ("fsck replays at the published size" if a.scale == 1 else
             "fsck replays at 1/%d scale, model times and bytes multiplied "
             "by %d" % (a.scale, a.scale))
    lines.append("(%s, %s, %d processors, load %s at the end; %s; "
                 "`/usr/bin/python3 harness/bench/bench_validation.py%s`)"
                 % (datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d %H:%M UTC"), host, os.cpu_count(),
                    load, scale,
                    "" if a.scale == 1 else " --scale %d" % a.scale))
    return "\n".join(lines) + "\n"


def parse_args():
    names = [d[0] for d in DRIVE] + [f[0] for f in FSCK]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--futuredisk",
                   default=os.path.join(ROOT, "build/harness/futuredisk"),
                   help="the futuredisk command (default: build/harness/)")
    p.add_argument("--out", default=None,
                   help="output directory (default out/validation-DATE)")
    p.add_argument("--only", action="append", default=[],
                   help="only this figure, or figures starting with it "
                   "(repeatable; comma-separated; 'drive' or 'fsck' for a "
                   "whole group)")
    p.add_argument("--scale", type=int, default=1,
                   help="fsck replays at 1/N size (default 1: as published)")
    p.add_argument("--reuse", action="store_true",
                   help="take an fsck replay's record from --out when one "
                   "is there (NAME.jsonl) instead of running it again")
    p.add_argument("--list", action="store_true",
                   help="list the figures and exit")
    a = p.parse_args()
    if a.list:
        for n in names:
            print(n)
        sys.exit(0)
    if a.scale < 1 or a.scale > 1024:
        p.error("--scale %d: must be 1 to 1024" % a.scale)
    only = [o for arg in a.only for o in arg.split(",") if o]
    for o in only:
        if o not in ("drive", "fsck") and not any(n.startswith(o)
                                                  for n in names):
            p.error("--only %s: no such figure (--list lists them)" % o)
    a.only = only
    a.futuredisk = os.path.abspath(a.futuredisk)
    if not os.access(a.futuredisk, os.X_OK):
        p.error("--futuredisk %s: not an executable (build first: cmake "
                "--build build)" % a.futuredisk)
    if a.out is None:
        a.out = os.path.join(ROOT, "out", "validation-"
                             + time.strftime("%Y%m%d-%H%M%S"))
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    return a


def main():
    a = parse_args()

    def wanted_in(group):
        def wanted(name):
            if not a.only:
                return True
            return any(o == group or name.startswith(o) for o in a.only)
        return wanted

    log("output in %s" % a.out)
    rows = drive_rows(a, wanted_in("drive")) + fsck_rows(a, wanted_in("fsck"))
    text = table(rows, a)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    bad = [r[0] for r in rows if r[4] is None]
    if bad:
        log("%d figure(s) failed: %s" % (len(bad), ", ".join(bad)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
