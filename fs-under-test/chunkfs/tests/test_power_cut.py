"""Random operation sequences on chunkfs cut by a power cut through the
futuredisk plugin, then fsck and an audit.

chunkfs is mounted over the plugin (libnbd, no kernel device) with
commit=0, so what is durable is exactly what the last sync made so.  A
seeded run of creates, writes, truncates, renames, unlinks, links,
symlinks, mkdirs and rmdirs is synced (fsync of the root directory),
then carries on; the plugin's `powercut` drops what its volatile cache
held and the daemon is killed.  Then: the incremental fsck.chunkfs -y
repairs, fsck.chunkfs -fn (every chunk) finds nothing, the file system
mounts without force, and every file the run did not touch after the
sync reads back exactly as it was at the sync.
"""
import os
import subprocess

import pytest
from nbdkit_server import Nbdkit

from daemons import chunkfs_daemons, control, wait_gone
from test_posix_model import Runner, real_snapshot

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN")
MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")


@pytest.fixture
def disk(tmp_path):
    """The plugin serving a 1 GiB roadmap-2013 disk, with its socket, its
    control socket and a mount point."""
    if not PLUGIN:
        pytest.fail("FUTUREDISK_PLUGIN must name the built plugin")
    ctlsock = str(tmp_path / "ctl")
    server = Nbdkit([PLUGIN, "profile=roadmap-2013", "size=1G",
                     f"control={ctlsock}"], workdir=str(tmp_path))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    uri = server.uri
    yield uri, ctlsock, mnt
    if chunkfs_daemons(uri):
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)])
    server.stop()


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_power_cut_then_fsck_and_audit(disk, seed):
    uri, ctlsock, mnt = disk
    subprocess.run([MKFS, "-q", "-c", "16M", "-i", "16384", uri], check=True)
    subprocess.run([MOUNT, "-o", "commit=0", uri, str(mnt)], check=True)
    run = Runner(mnt, seed)
    run.run(150)
    fd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)  # everything so far durable, every chunk clean
    os.close(fd)
    durable = run.m.snapshot()
    run.run(120)
    final = run.m.snapshot()
    assert control(ctlsock, "powercut")["ok"]
    for pid in chunkfs_daemons(uri):
        os.kill(pid, 9)
    subprocess.run(["fusermount3", "-u", "-z", str(mnt)])
    wait_gone(uri)

    p = subprocess.run([FSCK, "-y", uri], capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    p = subprocess.run([FSCK, "-fn", uri], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr

    p = subprocess.run([MOUNT, uri, str(mnt)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    try:
        after = real_snapshot(mnt)
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=True)
        wait_gone(uri)
    untouched = {k: v for k, v in durable.items() if final.get(k) == v}
    assert untouched, "the run touched everything"
    lost = {k for k, v in untouched.items() if after.get(k) != v}
    assert not lost, sorted(lost)[:5]
