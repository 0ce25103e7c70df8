#!/usr/bin/python3
"""What keeping evidence costs: its size in a campaign database, and the
time `futuredisk show` takes on it against reading the same trial's
record with the sqlite3 command-line tool (the baseline, measured in the
same run: a process start and one row read from the same file).

usage: bench_show.py FUTUREDISK DB [--rounds N] [--report PAGE]
                     [--nights N [--sample K]]

Prints the database's size, the evidence's bytes (whole, kept, stored),
and per trial the median and worst wall time of `futuredisk show DB ID`
over N rounds (every trial of the database, each round), beside the
baseline's.  With --report, also the size of that page and of its
evidence blocks (the <details> of each trial).  With --nights N, a copy
of DB under /var/tmp holding its trials N times over, as N nights (a
nightly database a month on), is measured instead, on K trials drawn
with a fixed seed (default 200).
"""
import argparse
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time

CHILDREN = ("phases", "passes", "audit", "durability", "damaged", "evidence")


def nights_of(db, n):
    """A copy of db with each trial n times, the copies as nights of
    their own (run_id suffixed /K), children and evidence included."""
    fd, path = tempfile.mkstemp(suffix=".db", dir="/var/tmp")
    os.close(fd)
    shutil.copy(db, path)
    with sqlite3.connect(path) as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(trials)")
                if r[1] != "id"]
        ids = [i for (i,) in c.execute("SELECT id FROM trials ORDER BY id")]
        for k in range(1, n):
            for old in ids:
                sel = ", ".join("run_id || '/" + str(k) + "'"
                                if col == "run_id" else col for col in cols)
                cur = c.execute(f"INSERT INTO trials ({', '.join(cols)}) "
                                f"SELECT {sel} FROM trials WHERE id = ?",
                                (old,))
                new = cur.lastrowid
                for child in CHILDREN:
                    ccols = [r[1] for r in c.execute(
                        f"PRAGMA table_info({child})") if r[1] != "trial_id"]
                    cl = ", ".join(ccols)
                    c.execute(f"INSERT INTO {child} (trial_id, {cl}) SELECT "
                              f"?, {cl} FROM {child} WHERE trial_id = ?",
                              (new, old))
    return path


def timed(argv):
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("futuredisk")
    ap.add_argument("db")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--report")
    ap.add_argument("--nights", type=int, default=1)
    ap.add_argument("--sample", type=int, default=200)
    a = ap.parse_args()
    if a.nights > 1:
        a.db = nights_of(a.db, a.nights)
    with sqlite3.connect(a.db) as c:
        ids = [i for (i,) in c.execute("SELECT id FROM trials ORDER BY id")]
        whole, kept, stored, items = c.execute(
            "SELECT sum(bytes), sum(kept), sum(length(data)), count(*) "
            "FROM evidence").fetchone()
        out = c.execute("SELECT count(*) FROM evidence WHERE bytes > kept"
                        ).fetchone()[0]
    print(f"database: {os.path.getsize(a.db):,} bytes, {len(ids)} trials; "
          f"evidence: {items} items, {whole:,} bytes whole, {kept:,} kept, "
          f"{stored:,} stored ({stored / max(kept, 1):.2f} of kept); "
          f"{out} items cut at the cap")
    if a.nights > 1:
        ids = sorted(random.Random(1).sample(ids, min(a.sample, len(ids))))
    show, base = [], []
    for _ in range(a.rounds):
        for i in ids:
            show.append(timed([a.futuredisk, "show", a.db, str(i)]))
            base.append(timed(["sqlite3", a.db,
                               f"SELECT record FROM trials WHERE id = {i}"]))
    ms = 1000
    print(f"show: median {statistics.median(show) * ms:.1f} ms, worst "
          f"{max(show) * ms:.1f} ms over {len(show)} calls; sqlite3 one "
          f"record: median {statistics.median(base) * ms:.1f} ms, worst "
          f"{max(base) * ms:.1f} ms; ratio of medians "
          f"{statistics.median(show) / statistics.median(base):.2f}")
    if a.nights > 1:
        os.unlink(a.db)
    if a.report:
        page = open(a.report, encoding="utf-8").read()
        details = sum(len(m) for m in re.findall(
            r"<details.*?</details>", page, re.S))
        print(f"report: {len(page.encode()):,} bytes, of which "
              f"{details:,} in evidence blocks")


if __name__ == "__main__":
    main()
