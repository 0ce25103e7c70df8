"""The FUSE mount's write-behind over the plugin (libnbd): a write
returns once queued to the I/O thread, so these check what must still
hold -- data written through a queue longer than its bound reads back
after a cold mount, and a write the device fails is never lost: fsync
reports it (EIO), as every later fsync does, and the daemon unmounts
without hanging on its queue.
"""
import errno
import os
import random
import subprocess

import pytest
from nbdkit_server import Nbdkit

from daemons import chunkfs_daemons, control, wait_gone

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN")
MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")
MIB = 1 << 20


@pytest.fixture
def disk(tmp_path):
    """A made 1 GiB ideal disk on the plugin: its URI, its control socket
    and a mount point."""
    if not PLUGIN:
        pytest.fail("FUTUREDISK_PLUGIN must name the built plugin")
    ctlsock = str(tmp_path / "ctl")
    server = Nbdkit([PLUGIN, "profile=ideal", "size=1G", "think=zero",
                     f"control={ctlsock}"], workdir=str(tmp_path))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run([MKFS, "-q", server.uri], check=True)
    yield server.uri, ctlsock, mnt
    if chunkfs_daemons(server.uri):
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)])
        wait_gone(server.uri)
    server.stop()


def mount(uri, mnt):
    subprocess.run([MOUNT, "-o", "commit=0", uri, str(mnt)], check=True)


def umount(uri, mnt):
    subprocess.run(["fusermount3", "-u", str(mnt)], check=True)
    wait_gone(uri)


def test_queued_writes_read_back(disk):
    """48 MiB in 1 MiB writes (three times the queue's bound), each
    different, with rewrites of earlier MiBs among them: after fsync and
    a cold mount every byte is the last one written."""
    uri, _, mnt = disk
    rng = random.Random(17)
    want = bytearray(48 * MIB)
    mount(uri, mnt)
    fd = os.open(mnt / "f", os.O_CREAT | os.O_WRONLY, 0o644)
    for i in range(64):
        at = i if i < 48 else rng.randrange(48)
        data = rng.randbytes(MIB)
        assert os.pwrite(fd, data, at * MIB) == MIB
        want[at * MIB:(at + 1) * MIB] = data
    os.fsync(fd)
    os.close(fd)
    umount(uri, mnt)
    mount(uri, mnt)
    try:
        with open(mnt / "f", "rb") as f:
            got = f.read()
    finally:
        umount(uri, mnt)
    assert len(got) == len(want)
    assert got == want, "first wrong MiB: %d" % next(
        i for i in range(48) if got[i * MIB:(i + 1) * MIB]
        != want[i * MIB:(i + 1) * MIB])


def test_failed_write_reaches_fsync(disk):
    """The disk fails while writes are queued: some write or, at the
    latest, the fsync says EIO, every later fsync too, and the mount
    still goes away."""
    uri, ctlsock, mnt = disk
    mount(uri, mnt)
    fd = os.open(mnt / "f", os.O_CREAT | os.O_WRONLY, 0o644)
    data = os.urandom(MIB)
    for _ in range(4):
        os.write(fd, data)
    os.fsync(fd)
    assert control(ctlsock, "inject disk-failure 0 0")["ok"]
    for _ in range(8):
        try:
            os.write(fd, data)
        except OSError as e:
            assert e.errno == errno.EIO, e
    for _ in range(2):
        with pytest.raises(OSError) as e:
            os.fsync(fd)
        assert e.value.errno == errno.EIO
    os.close(fd)
    subprocess.run(["fusermount3", "-u", "-z", str(mnt)], check=True)
    wait_gone(uri)
