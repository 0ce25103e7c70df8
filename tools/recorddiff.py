#!/usr/bin/env python3
"""Two campaign databases' trials, compared on everything the code decides.

A refactor that changes no behaviour must leave a campaign's records as
they were.  Trials are matched by what defines them (campaign, file
system, profile, size, seed, fill, faults, target, crash, tree, host,
...); for each pair every fact the code decides is compared, one at a
time:

  - the trial's columns: files, bytes, the targets hit, the write probe,
    the error, the mount outcome and its reason;
  - each phase's I/O counts, read errors, exit status, signal, outcome;
  - the audit's classes (intact, partial, corrupted, missing, ...), the
    durability classes, each damaged file (by path) with its class and
    cause, the checkers' pass names, the evidence kept (by name);
  - what only the JSON record holds: how the disk was attached, whether
    it was a clone, the audit's block kinds, the broken promises, each
    crash point, the checker's detection and recovery of a target, the
    repair cut's outcome, the plugin's request and fault counts.

Times follow the machine, so they are left out: wall and CPU seconds
always; virtual seconds, and what the drive's clock decides (seeks,
read-buffer hits, the write cache, which of fsck and restore is
quicker), unless the trial ran on the virtual clock with think=zero.
Record ids, nights (run ids), the version and the environment (host,
kernel, tool versions) are not compared.

Text that only names the machine is normalised before it is compared:
loop and nbd device numbers and their major:minor (loop0 and loop1 are
both loopN), futuredisk's temporary directories (mkdtemp's random
suffix, and where TMPDIR put them), process ids, dates and times of
day, the host names of either database's environments, and UUIDs
(btrfs's and xfs's are mkfs's random ones).  Nothing else is hidden:
two runs of the same code may still differ (the kernel's writeback
places a populate's blocks a little differently from run to run, so
I/O counts, the block a target hits and the files a fault takes can
move); such a difference is reported like any other, and the summary
at the end counts the differences by field, so that one whose only
differences are I/O counts is told at a glance from one whose outcomes
moved.

    python3 tools/recorddiff.py BEFORE.db AFTER.db [--campaign NAME] [--all]

Each database's newest night (run id, by time) is compared unless --all is
given.

Prints each difference (as compared, i.e. normalised), a count per
field and a total; exit 0 when there is none, 1 when there are, 2 on
bad usage.
"""
import argparse
import collections
import json
import re
import sqlite3
import sys

KEY = ("campaign", "fs", "profile", "size", "seed", "fill_pct", "faults",
       "target", "crash", "meta_only", "tree", "scenario", "repair_cut",
       "crash_points", "escalate", "host", "rep", "time_mode", "think")
# Columns of trials that depend on when and where the trial ran, and the
# JSON record (compared by its facts, below).
CLOCKED = {"id", "recorded", "record", "run_id", "version", "env_id"}
PHASE_COLS = ("reads", "writes", "bytes_read", "bytes_written", "exit",
              "signal", "outcome", "read_errors")
# Parts of the record held by a column or table, or its own name for
# one: compared there (time is time_mode; mount is mount and
# mount_reason; damaged is capped at 200 files in the record).
RECORD_AS_COLUMNS = {"time", "mount", "damaged", "run_id", "version"}
# This machine's own time: never compared (passes: the checker's
# reported seconds per pass, whose names are the passes table).
HOST_TIME = {"wall_s", "cpu_s", "passes", "per_minute"}
# What the disk's virtual clock decides: with think=real (or cpu, or a
# clock other than virtual) it runs on this machine's time too, and
# with it what the drive does in its idle time (read-ahead into its
# buffer, destaging its write cache), and how its picks were taken
# (watched, or ahead of a client whose clock ran on, or after a grace of
# wall time).  Besides these, any key ending _s or _ns.
CLOCKED_KEYS = {"quicker", "seeks", "cache_hits", "cached_writes",
                "dirty_bytes", "smr_cache_bytes", "smr_bands_cleaned",
                "watched", "ahead", "unwatched", "impatient"}

# Text that names the machine, not a decision: (pattern, replacement),
# applied in order to every string compared.
MACHINE = [
    # Block devices: "EXT4-fs (loop1)", "/dev/nbd3p1", "dev loop0,", and
    # btrfs's "/dev/loop1 (7:1)".
    (re.compile(r"\b(loop|nbd)\d+(p\d+)?( \(\d+:\d+\))?"),
     lambda m: m.group(1) + "N" + ("pN" if m.group(2) else "")
     + (" (MAJ:MIN)" if m.group(3) else "")),
    # Scratch directories: $TMPDIR/futuredisk-campaign.Xy12Zq/t000004,
    # /tmp/futuredisk-sock.AbCdEf (mkdtemp's suffix, TMPDIR's place).
    (re.compile(r"(?:[^\s:;'\"()]*/)?(futuredisk-[a-z]+(?:-[a-z]+)*)"
                r"\.[A-Za-z0-9]{6}(?![A-Za-z0-9])"), r"TMP/\1.XXXXXX"),
    # The checkers' cgroups: futuredisk-PID-SERIAL.
    (re.compile(r"\bfuturedisk-\d+-\d+\b"), "futuredisk-PID-N"),
    # Process ids: "nbdkit (pid 4242)", "scanned by mount (26638)".
    (re.compile(r"\bpid \d+"), "pid PID"),
    (re.compile(r"(\bby [\w.:/-]+) \(\d+\)"), r"\1 (PID)"),
    # Dates and times of day.
    (re.compile(r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?"
                r"(?:Z|[+-]\d\d:?\d\d)?)?"), "DATE"),
    (re.compile(r"\b\d\d:\d\d:\d\d(?:\.\d+)?\b"), "HH:MM:SS"),
    # UUIDs: mkfs.btrfs and mkfs.xfs draw a random one.  ext4's comes
    # from the seed; a message naming it is normalised all the same.
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "UUID"),
]


class Normaliser:
    """Replaces what names the machine in a value (strings, recursively)."""

    def __init__(self, hosts):
        self.hosts = None
        names = sorted({h for h in hosts if h}, key=len, reverse=True)
        if names:
            self.hosts = re.compile(r"(?<![\w.-])(%s)(?![\w-])"
                                    % "|".join(map(re.escape, names)))

    def __call__(self, v):
        if isinstance(v, str):
            for pattern, repl in MACHINE:
                v = pattern.sub(repl, v)
            return self.hosts.sub("HOST", v) if self.hosts else v
        if isinstance(v, (list, tuple)):
            return [self(x) for x in v]
        return v


def tables(db):
    return {r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}


def hosts(db):
    if "environments" not in tables(db):
        return []
    return [r[0] for r in db.execute("SELECT host FROM environments")]


def trials(db, campaign, every_night):
    cols = [r[1] for r in db.execute("PRAGMA table_info(trials)")]
    where, args = [], []
    if campaign:
        where.append("campaign = ?")
        args.append(campaign)
    if not every_night:
        # The newest by time, as compare and report take it (harness/
        # records/db.h): a merge may add an older night last.
        where.append("run_id = (SELECT run_id FROM trials%s GROUP BY "
                     "campaign, run_id ORDER BY min(recorded) DESC, min(id) "
                     "DESC LIMIT 1)"
                     % (" WHERE campaign = ?" if campaign else ""))
        args += [campaign] if campaign else []
    sql = "SELECT * FROM trials"
    if where:
        sql += " WHERE " + " AND ".join(where)
    out = {}
    for r in db.execute(sql + " ORDER BY id", args):
        t = dict(zip(cols, r))
        key = tuple(t.get(k) for k in KEY)
        out.setdefault(key, []).append(t)
    return cols, out


def deterministic_clock(t):
    return t.get("think") == "zero" and t.get("time_mode") == "virtual"


def clocked(key):
    return key in CLOCKED_KEYS or key.endswith("_s") or key.endswith("_ns")


def phase_name(seq, name):
    return "phases[%d:%s]" % (seq, name)


def table_facts(db, t, have, norm):
    """The trial's columns and the rows of its tables, as {name: value}."""
    tid, det = t["id"], deterministic_clock(t)
    f = {c: norm(v) for c, v in t.items() if c not in CLOCKED and c not in KEY}
    cols = PHASE_COLS + (("virtual_s",) if det else ())
    for r in db.execute("SELECT seq, name, %s FROM phases WHERE trial_id = ? "
                        "ORDER BY seq" % ", ".join(cols), (tid,)):
        for c, v in zip(cols, r[2:]):
            f["%s.%s" % (phase_name(r[0], r[1]), c)] = norm(v)
    for table in ("audit", "durability"):
        if table in have:
            for cls, files in db.execute("SELECT class, files FROM %s WHERE "
                                         "trial_id = ?" % table, (tid,)):
                f["%s.%s" % (table, cls)] = files
    for cls, path, cause in db.execute("SELECT class, path, cause FROM damaged"
                                       " WHERE trial_id = ?", (tid,)):
        name = "damaged[%s]" % norm(path)
        f[name] = sorted(f.get(name, []) + [norm("%s (%s)" % (cls, cause))])
    for phase, name in db.execute("SELECT phase, pass FROM passes WHERE "
                                  "trial_id = ? ORDER BY rowid", (tid,)):
        f.setdefault("passes[%s]" % phase, []).append(norm(name))
    if "evidence" in have:
        f["evidence"] = sorted(r[0] for r in db.execute(
            "SELECT name FROM evidence WHERE trial_id = ?", (tid,)))
    return f


def record_phase(p, seq, det, norm, out):
    """A phase of the record: its virtual passes' names (and seconds on a
    deterministic clock); the rest, as the phases table has it."""
    name = phase_name(seq, p.get("name"))
    vp = p.get("virtual_passes")
    for k, v in p.items():
        if k == "virtual_passes" and isinstance(vp, list):
            out[name + ".virtual_passes"] = norm([x[0] for x in vp])
            if det:
                out[name + ".virtual_passes.seconds"] = [x[1] for x in vp]
        elif k not in HOST_TIME and (det or not clocked(k)):
            walk(v, "%s.%s" % (name, k), det, norm, out)


def walk(v, name, det, norm, out):
    """v's leaves into out as name.key...: a list of objects (crash
    points, broken promises) one object at a time, any other list as one
    fact."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k not in HOST_TIME and (det or not clocked(k)):
                walk(x, "%s.%s" % (name, k), det, norm, out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        for i, x in enumerate(v):
            walk(x, "%s[%d]" % (name, i), det, norm, out)
    else:
        out[name] = norm(v)


def record_facts(t, cols, det, norm):
    """What the JSON record holds besides the columns, as {name: value}."""
    try:
        rec = json.loads(t["record"])
    except (TypeError, ValueError):
        return {"record": norm(t["record"])}
    out = {}
    for k, v in rec.items():
        if k in cols or k in RECORD_AS_COLUMNS or k in HOST_TIME:
            continue
        if k == "phases" and isinstance(v, list):
            for seq, p in enumerate(v):
                if isinstance(p, dict):
                    record_phase(p, seq, det, norm, out)
        elif det or not clocked(k):
            walk(v, k, det, norm, out)
    return out


def facts(db, t, cols, have, norm):
    """Everything of trial t the comparison covers, as {name: value}; a
    fact both a table and the record hold is taken from the table."""
    f = record_facts(t, cols, deterministic_clock(t), norm)
    f.update(table_facts(db, t, have, norm))
    return f


def field(name):
    """The field a fact belongs to, for the summary: phases[3:check].reads
    is phases[check].reads, damaged[d1/f2] damaged[], points[7] points[]."""
    name = re.sub(r"^damaged\[.*\]$", "damaged[]", name)
    name = re.sub(r"\[\d+:", "[", name)
    return re.sub(r"\[\d+\]", "[]", name)


def describe(key):
    """The trial: its campaign, scenario (which says all but the seed and
    repetition) and seed, or with no scenario every part of its key."""
    k = dict(zip(KEY, key))
    if not k["scenario"]:
        return " ".join("%s=%s" % (n, v) for n, v in k.items()
                        if v not in ("", 0, None))
    return "%s%s seed=%s%s" % ("[%s] " % k["campaign"] if k["campaign"] else
                               "", k["scenario"], k["seed"],
                               " rep=%s" % k["rep"] if k["rep"] else "")


def compare(a, b, campaign, every_night):
    norm = Normaliser(hosts(a) + hosts(b))
    cols_a, ta = trials(a, campaign, every_night)
    cols_b, tb = trials(b, campaign, every_night)
    have_a, have_b = tables(a), tables(b)
    diffs, fields = 0, collections.defaultdict(set)
    for key in sorted(set(ta) | set(tb), key=repr):
        la, lb = ta.get(key, []), tb.get(key, [])
        if len(la) != len(lb):
            print("%s: %d trial(s) before, %d after" % (describe(key),
                                                        len(la), len(lb)))
            diffs += 1
            fields["trials"].add((key, -1))
            continue
        for i, (x, y) in enumerate(zip(la, lb)):
            fx = facts(a, x, cols_a, have_a, norm)
            fy = facts(b, y, cols_b, have_b, norm)
            for name in sorted(set(fx) | set(fy)):
                if fx.get(name) != fy.get(name):
                    print("%s: %s\n  before: %r\n  after:  %r" % (
                        describe(key), name, fx.get(name), fy.get(name)))
                    diffs += 1
                    fields[field(name)].add((key, i))
    counts = collections.Counter()
    for name, where in fields.items():
        counts[name] = len(where)
    if diffs:
        print("differences by field (trials):")
        for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])):
            print("  %4d  %s" % (n, name))
    n = sum(len(v) for v in ta.values())
    print("%d trials before, %d after, %d difference(s) in %d trial(s)"
          % (n, sum(len(v) for v in tb.values()), diffs,
             len(set.union(set(), *fields.values()))))
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--campaign", help="only this campaign's trials")
    ap.add_argument("--all", action="store_true",
                    help="every night, not only the newest")
    o = ap.parse_args()
    dbs = []
    for path in (o.before, o.after):
        try:
            dbs.append(sqlite3.connect("file:%s?mode=ro" % path, uri=True))
            dbs[-1].execute("SELECT 1 FROM trials LIMIT 1")
        except sqlite3.Error as e:
            print("recorddiff: %s: %s" % (path, e), file=sys.stderr)
            return 2
    return 1 if compare(dbs[0], dbs[1], o.campaign, o.all) else 0


if __name__ == "__main__":
    sys.exit(main())
