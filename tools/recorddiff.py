#!/usr/bin/env python3
"""Two campaign databases' trials, compared on what the code decides.

A refactor that changes no behaviour must leave a campaign's records as
they were.  Trials are matched by what defines them (campaign, file
system, profile, size, seed, fill, faults, target, crash, tree, ...);
for each pair, every column and row that does not depend on the
machine's clock or identity is compared: outcomes, the audit, the
durability classes, the damaged files, each phase's I/O counts and exit
status, the checker's pass names.  Times (virtual with think=real, wall,
CPU), record ids, dates, versions and the environment are left out, as
is the JSON record (it holds the times); a trial of think=zero and
time=virtual is compared on its virtual seconds too.

    python3 tools/recorddiff.py BEFORE.db AFTER.db [--campaign NAME] [--all]
                                                   [--outcomes]

Each database's newest night (run id, by time) is compared unless --all is
given.

Prints each difference and a count; exit 0 when there is none, 1 when
there are, 2 on bad usage.
"""
import argparse
import sqlite3
import sys

KEY = ("campaign", "fs", "profile", "size", "seed", "fill_pct", "faults",
       "target", "crash", "meta_only", "tree", "scenario", "repair_cut",
       "crash_points", "escalate", "rep", "time_mode", "think")
# Columns of trials that depend on when and where the trial ran.
CLOCKED = {"id", "recorded", "record", "run_id", "version", "env_id"}
PHASE_COLS = ("seq", "name", "reads", "writes", "bytes_read",
              "bytes_written", "exit", "signal", "outcome", "read_errors")
# With --outcomes: what a trial concluded, not the I/O behind it.  The
# kernel's writeback and btrfs's allocator place a populate's blocks a
# little differently from run to run, so the I/O counts, the block a
# target hit and the files a fault took differ between two runs of the
# same code; the phases' outcomes, the mount and errors do not.
OUTCOME_TRIAL_COLS = {"files", "error", "mount", "write_probe"}
OUTCOME_PHASE_COLS = ("seq", "name", "exit", "signal", "outcome")


def rows(db, sql, *args):
    return [tuple(r) for r in db.execute(sql, args)]


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


def facts(db, t, outcomes):
    """Everything of trial t the comparison covers, as (name, value)."""
    tid = t["id"]
    if outcomes:
        f = [(c, v) for c, v in sorted(t.items()) if c in OUTCOME_TRIAL_COLS]
        f.append(("phases", rows(db, "SELECT %s FROM phases WHERE trial_id = "
                                 "? ORDER BY seq"
                                 % ", ".join(OUTCOME_PHASE_COLS), tid)))
        return f
    f = [(c, v) for c, v in sorted(t.items()) if c not in CLOCKED]
    cols = ", ".join(PHASE_COLS)
    if deterministic_clock(t):
        cols += ", virtual_s"
    f.append(("phases", rows(db, "SELECT %s FROM phases WHERE trial_id = ? "
                             "ORDER BY seq" % cols, tid)))
    for table in ("audit", "durability"):
        f.append((table, rows(db, "SELECT class, files FROM %s WHERE "
                              "trial_id = ? ORDER BY class" % table, tid)))
    f.append(("damaged", rows(db, "SELECT class, path, cause FROM damaged "
                              "WHERE trial_id = ? ORDER BY 1, 2, 3", tid)))
    f.append(("passes", rows(db, "SELECT phase, pass FROM passes WHERE "
                             "trial_id = ? ORDER BY rowid", tid)))
    return f


def describe(key):
    return " ".join("%s=%s" % (k, v) for k, v in zip(KEY, key)
                    if v not in ("", 0, None))


def compare(a, b, campaign, every_night, outcomes):
    _, ta = trials(a, campaign, every_night)
    _, tb = trials(b, campaign, every_night)
    diffs = 0
    for key in sorted(set(ta) | set(tb), key=repr):
        la, lb = ta.get(key, []), tb.get(key, [])
        if len(la) != len(lb):
            print("%s: %d trial(s) before, %d after" % (describe(key),
                                                        len(la), len(lb)))
            diffs += 1
            continue
        for x, y in zip(la, lb):
            fx = dict(facts(a, x, outcomes))
            fy = dict(facts(b, y, outcomes))
            for name in sorted(set(fx) | set(fy)):
                if fx.get(name) != fy.get(name):
                    print("%s: %s\n  before: %r\n  after:  %r" % (
                        describe(key), name, fx.get(name), fy.get(name)))
                    diffs += 1
    n = sum(len(v) for v in ta.values())
    print("%d trials before, %d after, %d difference(s)"
          % (n, sum(len(v) for v in tb.values()), diffs))
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--campaign", help="only this campaign's trials")
    ap.add_argument("--all", action="store_true",
                    help="every night, not only the newest")
    ap.add_argument("--outcomes", action="store_true",
                    help="only what each trial concluded (see OUTCOME_*)")
    o = ap.parse_args()
    dbs = []
    for path in (o.before, o.after):
        try:
            dbs.append(sqlite3.connect("file:%s?mode=ro" % path, uri=True))
            dbs[-1].execute("SELECT 1 FROM trials LIMIT 1")
        except sqlite3.Error as e:
            print("recorddiff: %s: %s" % (path, e), file=sys.stderr)
            return 2
    return 1 if compare(dbs[0], dbs[1], o.campaign, o.all, o.outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
