"""`futuredisk compare` on nights of made-up trials (synth-trials, which
records them through the real record and database code): the same build's
noise is no regression, a real slowdown, a repair that now has to fix, more
files lost are; nights merged out of order are ordered by time; a changed
environment or drive model is named as the likely cause; bad input gets a
clear message and its documented exit status."""
import json
import os
import sqlite3
import subprocess

import pytest

# Two scenarios of two seeds each: a plain check (~10 s) and one with a
# bad data block (~2 s, one file unreadable).
PLAIN = "check_s={t:.4f} seed={seed}"
BLOCK = "target=data:1 unreadable=1 repair=FIXED check=UNFIXED " \
        "check_s={t:.4f} seed={seed}"


@pytest.fixture(scope="module")
def synth():
    path = os.environ.get("SYNTH_TRIALS")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("SYNTH_TRIALS must name the built synth-trials")
    return path


def add(synth, db, run, lines, day=None):
    """Record the trials `lines` (synth-trials' words) as night `run`,
    recorded on `day` (1-28 of December 2026) if given."""
    text = "".join(f"run={run} {line}\n" for line in lines)
    subprocess.run([synth, str(db)], input=text, text=True, check=True,
                   capture_output=True)
    if day is not None:
        with sqlite3.connect(db) as con:
            con.execute("UPDATE trials SET recorded = ? WHERE run_id = ?",
                        (f"2026-12-{day:02d}T02:00:00Z", run))


def night(factor=1.0, block=None, plain=None, extra=""):
    """A night's trials: every check time times factor (trials of one
    night move together: they share the machine and often a populated
    disk); block and plain replace a scenario's words."""
    lines = []
    for seed, base in ((1, 10.0), (2, 12.0)):
        lines.append((plain or PLAIN).format(t=base * factor, seed=seed))
    for seed, base in ((1, 2.0), (2, 2.2)):
        lines.append((block or BLOCK).format(t=base * factor, seed=seed))
    return [line + " " + extra for line in lines]


def compare(futuredisk, db, *args, check=None):
    p = subprocess.run([futuredisk, "compare", str(db), *args],
                       capture_output=True, text=True, timeout=120)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def regressions(p):
    """{scenario's target: its regression text} of compare's output."""
    out, lines = {}, p.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("REGRESSION  "):
            target = line.split("target=")[1].split(" ")[0]
            out[target] = lines[i + 1].strip()
    return out


def test_same_build_noise_is_no_regression(futuredisk, synth, tmp_path):
    """Nights of one build differ by a few per cent, all trials of a night
    together.  A night within the spread the nights have shown is no
    regression, though 7 % above the baseline's median; nor, after one
    night, a 6 % difference (ext4's roadmap-2009 disk, 8.63 against 8.14
    s), where the spread is not known and compare says so."""
    db = tmp_path / "noise.db"
    for day, factor in enumerate((1.0, 1.06, 0.97, 1.03, 0.95, 1.02), 1):
        add(synth, db, f"n{day}", night(factor), day)
    add(synth, db, "new", night(1.07), 7)
    p = compare(futuredisk, db, check=0)
    assert "t night new against 6 nights before it: 2 scenarios, " \
           "0 regressions" in p.stdout, p.stdout
    assert "spread is not measured" not in p.stdout
    one = tmp_path / "one.db"
    add(synth, one, "n1", night(1.0), 1)
    add(synth, one, "n2", night(1.06), 2)
    p = compare(futuredisk, one, check=0)
    assert "0 regressions" in p.stdout, p.stdout
    assert "fsck time of 2 scenarios: the spread is not measured (fewer " \
           "than 4 baseline nights" in p.stdout
    assert "compared against a minimum effect of 25% and 0.25 s only" \
        in p.stdout


def test_slower_beyond_the_spread_is_a_regression(futuredisk, synth,
                                                  tmp_path):
    """10 % slower (seeks, say) where the nights moved by under 1 %."""
    db = tmp_path / "slow.db"
    for day, factor in enumerate((1.0, 1.004, 0.997, 1.006), 1):
        add(synth, db, f"n{day}", night(factor), day)
    add(synth, db, "new", night(1.10), 5)
    junit = tmp_path / "slow.xml"
    p = compare(futuredisk, db, "--junit", str(junit), check=1)
    found = regressions(p)
    assert set(found) == {"", "data:1"}, p.stdout
    assert found[""].startswith("fsck time 12.1 s, 10% above the baseline's "
                                "11 s (margin 0.55")
    assert "4 nights" in found[""]
    xml = junit.read_text()
    assert 'tests="2" failures="2"' in xml and xml.count("<failure") == 2


def test_repair_that_now_fixes_is_a_regression(futuredisk, synth, tmp_path):
    """A repair that found nothing to do (CLEAN) now has to fix (FIXED):
    a new outcome, said with what it was before; the other way round is
    a note."""
    db = tmp_path / "repair.db"
    add(synth, db, "n1", night(), 1)
    add(synth, db, "n2", night(plain=PLAIN + " repair=FIXED"), 2)
    p = compare(futuredisk, db, check=1)
    assert regressions(p) == {
        "": "new outcome repair:FIXED (seed 1, seed 2; before: "
            "repair:CLEAN)"}, p.stdout
    add(synth, db, "n3", night(), 3)
    p = compare(futuredisk, db, "--baseline", "1", check=0)
    assert "better outcome repair:CLEAN (seed 1, seed 2; before: " \
           "repair:FIXED)" in p.stdout


def test_more_files_lost_is_a_regression(futuredisk, synth, tmp_path):
    """5 more files lost in a class the baseline already had files in
    (so no new outcome class): a regression.  Files random faults strike
    are a count of chance hits, which spreads about its square root: 12
    against 13, 34 against 37 are none; many fewer lost is a note."""
    db = tmp_path / "lost.db"
    lost = BLOCK + " missing={missing}"
    add(synth, db, "n1", night(block=lost.replace("{missing}", "2")), 1)
    add(synth, db, "n2", night(block=lost.replace("{missing}", "2")), 2)
    worse = night(block=lost.replace("{missing}", "2"))
    worse[2] = worse[2].replace("missing=2", "missing=7")
    add(synth, db, "n3", worse, 3)
    p = compare(futuredisk, db, check=1)
    assert regressions(p) == {
        "data:1": "files lost missing 2 -> 7 (seed 1)"}, p.stdout
    db = tmp_path / "chance.db"
    add(synth, db, "n1", night(block=lost.replace("{missing}", "12")), 1)
    add(synth, db, "n2", night(block=lost.replace("{missing}", "13")), 2)
    add(synth, db, "n3", night(block=lost.replace("{missing}", "1")), 3)
    p = compare(futuredisk, db, "--run-id", "n2", check=0)
    assert "files lost" not in p.stdout, p.stdout
    p = compare(futuredisk, db, "--baseline", "1", check=0)
    assert "files lost missing 13 -> 1 (seed 1, seed 2)" in p.stdout


def test_crash_loss_in_flight_is_a_note_a_broken_promise_a_regression(
        futuredisk, synth, tmp_path):
    db = tmp_path / "crash.db"
    crash = "crash=1 check_s=1 seed={seed} durable_intact=10 " \
            "inflight_lost={lost} durable_broken={broken} missing={lost}"
    add(synth, db, "n1", [crash.format(seed=s, lost=2, broken=0)
                          for s in (1, 2)], 1)
    add(synth, db, "n2", [crash.format(seed=s, lost=40, broken=0)
                          for s in (1, 2)], 2)
    p = compare(futuredisk, db, check=0)
    assert "durability inflight_lost 2 -> 40 (seed 1, seed 2)" in p.stdout
    add(synth, db, "n3", [crash.format(seed=1, lost=40, broken=0),
                          crash.format(seed=2, lost=40, broken=3)], 3)
    p = compare(futuredisk, db, "--baseline", "1", check=1)
    assert "new outcome violation (seed 2)" in p.stdout, p.stdout


def test_nights_merged_out_of_order_are_ordered_by_time(futuredisk, synth,
                                                       tmp_path):
    """Shards merged Tuesday first, then Monday: Tuesday is still the
    newest night, compared with Monday, not the other way round."""
    mon, tue, wed, dest = (tmp_path / f"{n}.db"
                           for n in ("mon", "tue", "wed", "all"))
    add(synth, mon, "monday", night(1.0), 1)
    add(synth, tue, "tuesday", night(1.5), 2)
    subprocess.run([futuredisk, "merge", str(dest), str(tue), str(mon)],
                   check=True, capture_output=True)
    p = compare(futuredisk, dest, check=1)
    assert p.stdout.startswith("t night tuesday against 1 night before it")
    assert "baseline: monday\n" in p.stdout
    assert "fsck time 16.5 s, 50% above the baseline's 11 s" in p.stdout
    # A night asked for by name has the nights before it in time.
    add(synth, wed, "wednesday", night(1.0), 3)
    subprocess.run([futuredisk, "merge", str(dest), str(wed)], check=True,
                   capture_output=True)
    p = compare(futuredisk, dest, "--run-id", "tuesday", check=1)
    assert "baseline: monday\n" in p.stdout
    p = compare(futuredisk, dest, check=0)
    assert "t night wednesday against 2 nights before it" in p.stdout
    assert "baseline: monday; tuesday\n" in p.stdout
    # The report's night is the newest by time too.
    html = tmp_path / "r.html"
    subprocess.run([futuredisk, "report", str(dest), "-o", str(html)],
                   check=True, capture_output=True)
    assert "Night <b>wednesday</b>" in html.read_text()


def downgrade(db):
    """Make db what a futuredisk before the drive model's version wrote:
    schema version 6, no model_version in the records."""
    with sqlite3.connect(db) as con:
        con.execute("ALTER TABLE trials DROP COLUMN model_version")
        con.execute("ALTER TABLE trials DROP COLUMN evidence_missing")
        con.execute("UPDATE trials SET record = json_remove(record, "
                    "'$.model_version')")
        con.execute("PRAGMA user_version = 6")


def test_another_drive_model_is_an_environment_change(futuredisk, synth,
                                                     tmp_path):
    """Nights recorded before the model had a version (model 1 or
    unknown), merged with one of model 2 that is 40 % slower: the times
    are not compared, and the model's change is named as the likely
    cause."""
    old, dest = tmp_path / "old.db", tmp_path / "all.db"
    add(synth, old, "n1", night(1.0), 1)
    downgrade(old)
    subprocess.run([futuredisk, "merge", str(dest), str(old)], check=True,
                   capture_output=True)
    with sqlite3.connect(old) as con:
        assert con.execute("PRAGMA user_version").fetchone() == (7,)
        assert con.execute("SELECT DISTINCT model_version FROM trials"
                           ).fetchall() == [(1,)]
    add(synth, dest, "n2", night(1.4), 2)
    with sqlite3.connect(dest) as con:
        record = con.execute("SELECT record FROM trials WHERE run_id = 'n2'"
                             ).fetchone()[0]
    version = json.loads(record)["model_version"]
    assert version >= 2
    p = compare(futuredisk, dest, check=0)
    assert "0 regressions" in p.stdout, p.stdout
    assert (f"environment changed since the baseline, the likely cause of "
            f"what differs: drive model 1 -> {version}") in p.stdout
    assert (f"fsck time not compared: drive model version {version} in this "
            f"night, 1 (or unknown) in the baseline") in p.stdout
    # `futuredisk --version` names it.
    v = subprocess.run([futuredisk, "--version"], capture_output=True,
                       text=True, check=True).stdout
    assert f"(drive model {version})" in v


def set_kernel(db, run, kernel):
    """Make night run's trials have run on a machine with kernel."""
    with sqlite3.connect(db) as con:
        con.execute("INSERT OR IGNORE INTO environments (host, kernel, "
                    "futuredisk, nbdkit, e2fsprogs, xfsprogs, btrfs_progs) "
                    "SELECT host, ?, futuredisk, nbdkit, e2fsprogs, xfsprogs, "
                    "btrfs_progs FROM environments WHERE id = 1", (kernel,))
        con.execute("UPDATE trials SET env_id = (SELECT id FROM environments "
                    "WHERE kernel = ?) WHERE run_id = ?", (kernel, run))


def test_a_new_kernel_is_named_as_the_likely_cause(futuredisk, synth,
                                                  tmp_path):
    """The kernel changed: a slower check is a change it likely explains,
    not a regression; a repair that now loses files is still one, with
    the kernel named.  The night after, the nights with the new kernel
    are the baseline."""
    db = tmp_path / "env.db"
    add(synth, db, "n1", night(1.0), 1)
    set_kernel(db, "n1", "6.1.0-old")
    add(synth, db, "n2", night(1.4, block=BLOCK + " missing=3"), 2)
    set_kernel(db, "n2", "6.1.0-new")
    junit = tmp_path / "env.xml"
    p = compare(futuredisk, db, "--junit", str(junit), check=1)
    assert "environment changed since the baseline, the likely cause of " \
           "what differs: kernel 6.1.0-old -> 6.1.0-new" in p.stdout
    assert "1 regressions, 2 fsck times changed with the environment" \
           in p.stdout, p.stdout
    assert regressions(p) == {
        "data:1": "new outcome audit:missing (seed 1, seed 2); likely "
                  "cause: the environment's change (kernel 6.1.0-old -> "
                  "6.1.0-new)"}
    assert "changed     fs=ext4" in p.stdout
    xml = junit.read_text()
    assert 'tests="2" failures="1"' in xml
    assert "<system-out>fsck time 15.4 s, 40% above" in xml
    add(synth, db, "n3", night(1.4, block=BLOCK + " missing=3"), 3)
    set_kernel(db, "n3", "6.1.0-new")
    p = compare(futuredisk, db, check=0)
    assert "baseline: n2\n" in p.stdout
    assert "left out of the baseline, run with another environment: n1 " \
           "(kernel 6.1.0-old -> 6.1.0-new)" in p.stdout


def test_repetitions_on_their_own_disks_measure_the_spread(
        futuredisk, synth, tmp_path):
    """One baseline night: repetitions of a seed on disks populated for
    each measure the spread, so a 10 % slowdown is found; repetitions on
    clones of one disk leave out the populate's part and measure
    nothing."""
    def reps(factor, cloned):
        return [f"check_s={10 * factor * (1 + 0.002 * r):.4f} seed={s} "
                f"rep={r} cloned={cloned if r else 0}"
                for s in (1, 2) for r in range(3)]
    db = tmp_path / "own.db"
    add(synth, db, "n1", reps(1.0, 0), 1)
    add(synth, db, "n2", reps(1.1, 0), 2)
    p = compare(futuredisk, db, check=1)
    assert "fsck time 11 s, 10% above" in p.stdout, p.stdout
    assert "(1 night, 8 degrees of freedom of repetitions)" in p.stdout
    db = tmp_path / "clones.db"
    add(synth, db, "n1", reps(1.0, 1), 1)
    add(synth, db, "n2", reps(1.1, 1), 2)
    p = compare(futuredisk, db, check=0)
    assert "fsck time of 1 scenarios: the spread is not measured" in p.stdout


def test_bad_input(futuredisk, synth, tmp_path):
    p = compare(futuredisk, tmp_path / "none.db", check=2)
    assert "none.db" in p.stderr
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    p = compare(futuredisk, empty, check=2)
    assert "no trials" in p.stderr
    text = tmp_path / "text.db"
    text.write_text("not a database\n" * 100)
    p = compare(futuredisk, text, check=2)
    assert "text.db: not a futuredisk database" in p.stderr
    one = tmp_path / "one.db"
    add(synth, one, "only", night(), 1)
    junit = tmp_path / "one.xml"
    p = compare(futuredisk, one, "--junit", str(junit), check=3)
    assert "night only is the first of campaign t: no earlier night to " \
           "compare it with" in p.stderr
    assert 'tests="2" failures="0"' in junit.read_text()
    p = compare(futuredisk, one, "--run-id", "other", check=2)
    assert "no trials of campaign" not in p.stderr and \
        "no trials in night other" in p.stderr
    p = compare(futuredisk, one, "--campaign", "nope", check=2)
    assert "no trials of campaign nope" in p.stderr
