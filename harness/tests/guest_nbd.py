"""Attaching through the kernel's nbd client (/dev/nbdN): run inside a
guest whose kernel has nbd (test_nbd_vm.py boots it), never on the host.

Everything the loop-device path promises, on the nbd path: a mounted file
system through the plugin, a whole trial whose audit finds exactly the
damage injected, concurrent attaches on different devices, and nothing
left behind (no connected nbd device, mount, process or state) after a
detach, a failure, or a trial killed in any phase."""
import json
import os
import signal
import subprocess

import pytest

from phases import wait_for_phase

from conftest import leftovers

BASE = ["run", "--fs", "ext4", "--profile", "roadmap-2006", "--size", "256M",
        "--attach", "nbd"]


def nbd_connected():
    """The nbd devices with a connection: in this guest every one is ours."""
    return sorted(d for d in os.listdir("/sys/block")
                  if d.startswith("nbd") and
                  os.path.exists(f"/sys/block/{d}/pid"))


def clean(tag):
    return leftovers(tag) + nbd_connected()


@pytest.fixture(autouse=True)
def nothing_before():
    assert nbd_connected() == []


def test_attach_write_detach(run, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    store = str(tmp_path / "disk.store")
    common = ["--mount", str(mnt), "--size", "256M", "--fs", "ext4",
              "--store", store, "--attach", "nbd"]
    p = run("attach", *common, "--mkfs", check=0)
    info = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    assert info["device"] == "/dev/nbd0" and info["attach"] == "nbd"
    assert nbd_connected() == ["nbd0"]
    with open(mnt / "hello", "w") as f:
        f.write("tomorrow's disk\n")
    p = run("detach", str(mnt), check=0)
    assert json.loads(p.stdout)["writes"] > 0
    assert clean(str(mnt)) == []
    # The file went through /dev/nbd0 to the disk: attach it again.
    run("attach", *common, check=0)
    assert (mnt / "hello").read_text() == "tomorrow's disk\n"
    run("detach", str(mnt), check=0)
    assert clean(str(mnt)) == []


def test_auto_prefers_nbd(run, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    p = run("attach", "--mount", str(mnt), "--size", "64M", "--fs", "ext4",
            "--mkfs", check=0)
    assert "attach nbd" in p.stdout
    run("detach", str(mnt), check=0)
    assert clean(str(mnt)) == []


def test_concurrent_attaches_take_different_devices(futuredisk, tmp_path):
    mnts = [tmp_path / f"m{i}" for i in range(3)]
    procs = []
    for m in mnts:
        m.mkdir()
        procs.append(subprocess.Popen(
            [futuredisk, "attach", "--mount", str(m), "--size", "64M",
             "--fs", "ext4", "--mkfs", "--attach", "nbd"],
            stdout=subprocess.PIPE, text=True))
    devices = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0
        devices.append(dict(line.split(" ", 1)
                            for line in out.splitlines())["device"])
    assert sorted(devices) == ["/dev/nbd0", "/dev/nbd1", "/dev/nbd2"]
    for m in mnts:
        subprocess.run([futuredisk, "detach", str(m)], check=True,
                       stdout=subprocess.DEVNULL)
    assert clean(str(tmp_path)) == []


def test_trial_through_nbd(run, tmp_path):
    d = tmp_path / "t"
    out = tmp_path / "t.jsonl"
    run(*BASE, "--target", "data:1", "--dir", str(d), "--json=" + str(out),
        check=0)
    rec = json.loads(out.read_text())
    assert rec["attach"] == "nbd"
    kind, btype, path, _ = rec["targets_hit"].split(" ")
    # The one file whose data block was made unreadable, and only it; the
    # loss explained by the fault log.
    assert rec["damaged"] == [{"class": "unreadable", "path": path,
                               "cause": "ure"}]
    audit = rec["audit"]
    files = sum(v for k, v in audit.items() if not k.endswith("blocks"))
    assert audit["unreadable"] == 1 and audit["intact"] == files - 1
    assert rec["write_probe"] is True
    assert [p["outcome"] for p in rec["phases"] if p["name"] == "recheck"] \
        == ["CLEAN"]
    assert clean(str(d)) == []


@pytest.mark.parametrize("phase", ["attach", "populate", "check", "audit"])
def test_killed_trial_leaves_nothing(futuredisk, tmp_path, phase):
    """SIGTERM as the trial enters each phase ("attach": at once, while
    nbdkit and nbd-client start)."""
    d = str(tmp_path / "k")
    p = subprocess.Popen([futuredisk, *BASE, "--dir", d, "--target",
                          "data:2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    seen = wait_for_phase(p, d, phase)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 130, (p.returncode, out, "".join(seen) + err)
    assert clean(d) == [], err
