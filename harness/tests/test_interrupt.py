"""A trial stopped while a FUSE request hangs: SIGTERM must still take
everything down.  The disk stops answering in the middle of the populate
(the plugin's clock switched to a million times the model's, so a request
is held for hours), which leaves requests of both FUSE connections -- the
chunkfs mount and the nbdfuse file under its loop device, or nbdfuse's
alone under ext4 -- waiting for a reply that does not come.  After the
signal the harness aborts them (/sys/fs/fuse/connections/N/abort), so the
trial exits, and no mount, loop device, daemon or process stuck in the
kernel is left."""
import os
import signal
import subprocess
import time

import pytest

from conftest import leftovers
from phases import wait_for_phase

FUSECTL = "/sys/fs/fuse/connections"


def fuse_conns(tag):
    """{connection id: mount point} of the FUSE mounts whose mount point
    contains tag, from mountinfo (stat would wait for the daemon)."""
    found = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            fstype = fields[fields.index("-") + 1]
            if tag in fields[4] and fstype.startswith("fuse"):
                major, minor = map(int, fields[2].split(":"))
                found[major << 20 | minor] = fields[4]
    return found


def waiting(conn):
    try:
        with open(f"{FUSECTL}/{conn}/waiting") as f:
            return int(f.read())
    except OSError:
        return 0


def stuck_in_kernel(tag):
    """Processes in D state that are the trial's: their command line or
    an open file names the trial directory."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state != "D":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            fds = []
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    fds.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    pass
        except OSError:
            continue
        if tag in cmd or any(tag in x for x in fds):
            found.append(f"pid {pid}: {cmd}")
    return found


@pytest.mark.parametrize("fs,conns", [("chunkfs", 2), ("ext4", 1)])
def test_sigterm_aborts_a_hung_fuse_request(futuredisk, tmp_path, fs, conns):
    d = str(tmp_path / "h")
    p = subprocess.Popen(
        [futuredisk, "run", "--fs", fs, "--size", "256M", "--fill", "40",
         "--attach", "loop", "--dir", d],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = wait_for_phase(p, d, "populate")
        found = fuse_conns(d)
        assert len(found) == conns, found
        ctl = subprocess.run([futuredisk, "ctl", os.path.join(d, "control.sock"),
                              "set", "time=scale:1000000"],
                             capture_output=True, text=True)
        assert ctl.returncode == 0, ctl.stdout + ctl.stderr
        # A request of every connection waits: the disk holds nbdfuse's,
        # and chunkfs's wait on it (ext4's writes wait in its page cache;
        # its journal or the write-out reaches nbdfuse).  The deadline is
        # a hang guard, not a measurement.
        deadline = time.monotonic() + 300
        while not all(waiting(c) for c in found):
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, {c: waiting(c) for c in found}
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = "".join(seen) + err
    assert p.returncode == 130, (p.returncode, out, err)
    assert "aborted" in err, err
    assert fuse_conns(d) == {}, err
    assert leftovers(d) == [], err
    assert stuck_in_kernel(d) == [], err
