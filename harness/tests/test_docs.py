"""The documentation's commands, run as they are written: README.md's
by-hand quick start (pasted into bash), the campaigns README's example,
the known issue's ways around nbdkit 1.32's abort, `ctl mark`'s elapsed
virtual time, and the one --json[=FILE|-] of every command that writes
JSON."""
import json
import os
import re
import subprocess
import time

import pytest

from conftest import leftovers
from nbdkit_server import Nbdkit, nbdkit_env

SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
README = os.path.join(SRC, "README.md")
CAMPAIGNS = os.path.join(SRC, "harness", "campaigns", "README.md")


def block_after(path, heading, lang):
    """The first ```LANG block after the line `heading` of a markdown
    file, as it stands there."""
    with open(path) as f:
        text = f.read()
    at = text.index(heading + "\n")
    m = re.compile(r"^```" + lang + r"\n(.*?)^```$", re.S | re.M).search(
        text, at)
    assert m, f"no ```{lang} block after {heading!r} in {path}"
    return m.group(1)


def can_attach():
    """Root, FUSE, loop devices and nbdfuse: what the quick start needs
    (CI has them)."""
    return (os.geteuid() == 0 and os.path.exists("/dev/fuse")
            and os.path.exists("/dev/loop-control")
            and subprocess.run(["which", "nbdfuse"],
                               capture_output=True).returncode == 0)


def quick_start_script():
    """README's block with its first two lines pointing at this build
    (the README's are ./build's); an ASan build's plugin gets its runtime
    preloaded into nbdkit, as every test does."""
    script = block_after(README, "## By hand: a disk, a file system, a check",
                         "sh")
    script, n = re.subn(r"^F=.*$", "F=" + os.environ["FUTUREDISK"], script,
                        count=1, flags=re.M)
    assert n == 1, "the quick start no longer starts with F=..."
    script, n = re.subn(r"^P=.*$", "P=" + os.environ["FUTUREDISK_PLUGIN"],
                        script, count=1, flags=re.M)
    assert n == 1, "the quick start no longer sets P=..."
    preload = os.environ.get("FD_NBDKIT_PRELOAD")
    if preload:
        script = re.sub(r"^nbdkit ", f"env LD_PRELOAD={preload} "
                        "ASAN_OPTIONS=detect_leaks=0 nbdkit ", script,
                        flags=re.M)
    return script


def test_readme_quick_start_works_when_pasted():
    if not can_attach():
        pytest.skip("needs root, /dev/fuse, loop devices and nbdfuse")
    p = subprocess.run(["bash", "-e", "-x", "-c", quick_start_script()],
                       cwd=SRC, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = p.stdout.splitlines()
    assert re.match(r"start: \d+\.\d{3} virtual m?s since the disk started$",
                    out[0]), out
    assert re.match(r"end: \d+\.\d{3} virtual m?s since start$", out[-1]), out
    assert any("Pass 5: Checking group summary" in line for line in out)
    # Taken down whole: D (from bash's trace) gone, with its mounts, loop
    # device and servers (nbdkit exits a moment after its SIGTERM).
    d = re.search(r"^\+ D=(/tmp/fd\.\w+)$", p.stderr, re.M).group(1)
    assert not os.path.exists(d)
    deadline = time.monotonic() + 20
    while leftovers(d) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers(d) == []


def test_campaigns_readme_example_loads(run, tmp_path):
    path = tmp_path / "example.ini"
    path.write_text(block_after(CAMPAIGNS, "## Format", "ini"))
    p = run("campaign", str(path), "--list", check=0)
    assert len(p.stdout.splitlines()) == 16, p.stdout  # as the README says
    assert "[bad-block] ext4 roadmap-2006 512M" in p.stdout


# --- the known issue: nbdkit 1.32 and a client that hangs up after EIO


def faulty_disk(ctl_path, extra=()):
    """A served disk with 16 MiB written and one unreadable sector in it:
    reading it all fails, with other reads in flight."""
    import nbd
    s = Nbdkit([os.environ["FUTUREDISK_PLUGIN"], "roadmap-2006", "size=64M",
                f"control={ctl_path}"], extra=extra,
               output=ctl_path + ".log")
    h = nbd.NBD()
    h.connect_unix(s.sock)
    for off in range(0, 16 << 20, 1 << 20):
        h.pwrite(b"\xa5" * (1 << 20), off)
    h.flush()
    h.shutdown()
    subprocess.run([os.environ["FUTUREDISK"], "ctl", ctl_path, "inject",
                    "ure", "8M", "4096"], check=True, capture_output=True)
    return s


def nbdcopy_runs(s, args, n):
    """n runs of nbdcopy to null: (runs made, server still alive)."""
    for i in range(n):
        p = subprocess.run(["nbdcopy", *args, s.uri, "null:"],
                           capture_output=True, text=True, timeout=120)
        # EIO, or a reply the race garbled (nbdcopy then says EINVAL)
        assert p.returncode != 0 and "failed" in p.stderr, p.stderr
        time.sleep(0.3)  # the abort comes a moment after nbdcopy exits
        if s.proc.poll() is not None:
            return i + 1, False
    return n, True


@pytest.mark.parametrize("how", ["threads=1", "requests=1"])
def test_known_issue_avoidances_keep_nbdkit_alive(tmp_path, how):
    """The README's two ways around nbdkit 1.32's abort, each over ten
    runs of a client that hangs up at the first EIO."""
    extra, args = (("--threads=1",), ()) if how == "threads=1" \
        else ((), ("--requests=1",))
    s = faulty_disk(str(tmp_path / "ctl"), extra)
    try:
        runs, alive = nbdcopy_runs(s, args, 10)
        assert alive, f"nbdkit died after {runs} runs: {s.log_text()}"
    finally:
        # With the ASan runtime preloaded, nbdkit's own strerror (its
        # "write data: ... Broken pipe") leaves it deadlocked on glibc's
        # locale lock at exit (common/errmsg.h): it lived, which is what
        # is tested; it need not exit cleanly.
        if os.environ.get("FD_NBDKIT_PRELOAD"):
            s.proc.kill()
        s.stop()


def test_known_issue_still_reproduces(tmp_path):
    """The note is true of the nbdkit installed: 1.32.4 and 1.32.5
    abort.  (Not under ASan: its slower plugin may change the race.)"""
    v = subprocess.run(["nbdkit", "--version"], capture_output=True,
                       text=True, env=nbdkit_env()).stdout.split()
    if v[-1] not in ("1.32.4", "1.32.5") or \
            os.environ.get("FD_NBDKIT_PRELOAD"):
        pytest.skip(f"nbdkit {v[-1]}: the note is about 1.32.4 and 1.32.5")
    s = faulty_disk(str(tmp_path / "ctl"))
    try:
        runs, alive = nbdcopy_runs(s, (), 5)
        assert not alive
        assert "Assertion `sock >= 0' failed" in s.log_text()
    finally:
        s.stop()


# --- ctl mark and --json


def test_ctl_marks_print_elapsed_virtual_time(run, tmp_path):
    ctl = str(tmp_path / "ctl")
    with Nbdkit([os.environ["FUTUREDISK_PLUGIN"], "roadmap-2006",
                 "size=64M", f"control={ctl}"]):
        p = run("ctl", ctl, "mark", "start", check=0)
        assert re.fullmatch(r"start: \d+\.\d{3} virtual m?s since the disk "
                            r"started\n", p.stdout), p.stdout
        time.sleep(0.01)  # think=real: the clock moves with the wall's
        p = run("ctl", ctl, "mark", "end", check=0)
        assert re.fullmatch(r"end: \d+\.\d{3} virtual ms since start\n",
                            p.stdout), p.stdout
        p = run("ctl", "--json", ctl, "mark", "again", "--since", "start",
                check=0)
        r = json.loads(p.stdout)
        assert r["mark"] == "again" and r["since"] == "start"
        assert 0 < r["elapsed_ns"] <= r["virtual_ns"]
        p = run("ctl", "--json=-", ctl, "mark", "lap", "--since=end",
                check=0)
        assert json.loads(p.stdout)["since"] == "end"
        log = tmp_path / "replies.jsonl"
        p = run("ctl", f"--json={log}", ctl, "mark", "last", check=0)
        assert p.stdout.startswith("last: ") and "since lap" in p.stdout
        run("ctl", f"--json={log}", ctl, "stats", check=0)
        replies = [json.loads(x) for x in log.read_text().splitlines()]
        assert [r.get("mark") for r in replies] == ["last", None]
        p = run("ctl", ctl, "mark", "x", "--since", "nope", check=1)
        assert p.stdout == "" and "no mark named 'nope'" in p.stderr
        p = run("ctl", ctl, "mark", "x", "--since", check=2)
        assert "mark NAME --since OTHER" in p.stderr


def test_json_option_is_one_convention(run, tmp_path):
    args = ("model", "-p", "ideal", "--samples", "10")
    for form in ("--json", "--json=-", "-j"):
        p = run(*args, form, check=0)
        assert json.loads(p.stdout)[0]["name"] == "ideal", form
    out = tmp_path / "model.json"
    p = run(*args, f"--json={out}", check=0)
    assert p.stdout.startswith("profile ")  # the table, as without --json
    assert json.loads(out.read_text())[0]["name"] == "ideal"
    for cmd in (args, ("run", "--fs", "ext4"), ("predict", "--fs", "ext4")):
        p = run(*cmd, "--json", str(out), check=2)
        assert "(a file for JSON is --json=FILE)" in p.stderr, p.stderr
        p = run(*cmd, "--json=", check=2)
        assert "--json=: no file named" in p.stderr


def test_run_json_on_stdout_is_the_record_alone(run, tmp_path):
    """With --json on stdout the summary moves to stderr."""
    if not can_attach():
        pytest.skip("needs root, /dev/fuse, loop devices and nbdfuse")
    p = run("run", "--fs", "ext4", "--size", "256M", "--fill", "5",
            "--think", "zero", "--dir", str(tmp_path / "t"), "--json",
            check=0)
    lines = p.stdout.splitlines()
    assert len(lines) == 1, p.stdout
    assert json.loads(lines[0])["fs"] == "ext4"
    assert "trial: ext4 on roadmap-2006" in p.stderr
