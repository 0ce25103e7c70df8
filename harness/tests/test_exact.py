"""Exact decisions in virtual time: the drive waits until its client, in a
cgroup of its own on the attached device, can send nothing more before a
completion (nbdkit-futuredisk-plugin(1), "Exact decisions").  The same
requests then take the same virtual time however busy the machine is, and
the stats say how each pick was taken."""
import json
import os
import subprocess

import pytest

import cgroup_client
from conftest import leftovers

READER = r"""
import mmap, os, random, sys
dev, n = sys.argv[1], int(sys.argv[2])
fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
size = os.lseek(fd, 0, os.SEEK_END)
rnd = random.Random(7)
for _ in range(n):
    os.preadv(fd, [buf], rnd.randrange(size // 4096) * 4096)
"""


@pytest.fixture
def cgroup(tmp_path):
    root = cgroup_client.cgroup2_root()
    if os.geteuid() != 0 or root is None:
        pytest.skip("needs root and a cgroup v2 hierarchy for the client")
    d = os.path.join(root, "futuredisk-test-exact-%d" % os.getpid())
    os.mkdir(d)
    yield d
    os.rmdir(d)


@pytest.fixture
def mountpoint(tmp_path):
    d = tmp_path / "mnt"
    d.mkdir()
    return str(d)


def ctl(futuredisk, sock, *words, check=True):
    p = subprocess.run([futuredisk, "ctl", "--json", sock, *words],
                       capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def reads_in(cgroup, dev, n):
    """n random 4 KiB direct reads of dev, one at a time, from a process
    in the cgroup (None: outside any of ours)."""
    enter = "echo $$ > %s/cgroup.procs; " % cgroup if cgroup else ""
    subprocess.run(["sh", "-c", enter + 'exec python3 -c "$0" "$1" "$2"',
                    READER, dev, str(n)], check=True)


def one_run(run, futuredisk, mountpoint, cgroup, inside=True, hogs=0):
    """Attach a fresh disk watching the cgroup, read through it from a
    process inside the cgroup or not, detach: the virtual time the reads
    took and the plugin's decisions."""
    faults = "think=zero,cgroup=" + cgroup
    p = run("attach", "--mount", mountpoint, "--profile", "cmr-20t-2024",
            "--size", "1G", "--faults", faults, "--attach", "loop", check=0)
    info = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    hog = [subprocess.Popen(["sh", "-c", "exec yes >/dev/null"])
           for _ in range(hogs)]
    try:
        sock = info["control"]
        ctl(futuredisk, sock, "clear")
        t0 = json.loads(ctl(futuredisk, sock, "mark", "a").stdout)
        reads_in(cgroup if inside else None, info["device"], 150)
        t1 = json.loads(ctl(futuredisk, sock, "mark", "b").stdout)
        stats = json.loads(ctl(futuredisk, sock, "stats").stdout)["stats"]
    finally:
        for h in hog:
            h.kill()
            h.wait()
        run("detach", mountpoint, check=0)
    assert leftovers(mountpoint) == []
    return t1["virtual_ns"] - t0["virtual_ns"], stats


def test_watched_reads_take_the_same_virtual_time(run, futuredisk,
                                                  mountpoint, cgroup):
    runs = [one_run(run, futuredisk, mountpoint, cgroup, hogs=hogs)
            for hogs in (0, 0, 2)]
    for _, stats in runs:
        assert stats["device"].startswith("loop")
        d = stats["decisions"]
        assert stats["reads"] == 150
        assert d["picks"] == 150 and d["watched"] == 150, d
        assert d["unwatched"] == 0 and d["impatient"] == 0, d
    assert len({ns for ns, _ in runs}) == 1, [ns for ns, _ in runs]


def test_a_client_outside_the_cgroup_is_not_watched(run, futuredisk,
                                                    mountpoint, cgroup):
    # The same reads from outside the cgroup: nobody to watch, the grace
    # decides, and the stats say so.
    _, stats = one_run(run, futuredisk, mountpoint, cgroup, inside=False)
    d = stats["decisions"]
    assert d["picks"] == 150 and d["watched"] == 0 and d["unwatched"] == 150


def test_bad_watch_settings_are_refused(run, futuredisk, mountpoint):
    p = run("attach", "--mount", mountpoint, "--profile", "roadmap-2006",
            "--size", "64M", "--attach", "loop", check=0)
    sock = dict(line.split(" ", 1) for line in p.stdout.splitlines())["control"]
    try:
        for setting, words in (
                ("device=../sda", "'../sda' is not a block device's name"),
                ("device=nosuch0", "/sys/block/nosuch0/inflight"),
                ("relay=12x", "'12x' is not a process id"),
                ("relay=0", "'0' is not a process id")):
            p = ctl(futuredisk, sock, "set", setting, check=False)
            assert p.returncode == 1, (setting, p.stdout, p.stderr)
            reply = json.loads(p.stdout)
            assert not reply["ok"] and words in reply["error"], reply
        # Refused settings changed nothing: the attach's device stands.
        stats = json.loads(ctl(futuredisk, sock, "stats").stdout)["stats"]
        assert stats["device"].startswith("loop")
    finally:
        run("detach", mountpoint, check=0)
