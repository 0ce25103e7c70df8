"""A real file system on the emulated disk: mkfs.ext4, mount, write,
unmount and e2fsck -fn, through nbdfuse and a loop device with direct I/O
(no nbd kernel module here).  Needs root, /dev/fuse and loop devices, as
CI has."""
import hashlib
import os
import random
import shutil

import pytest
from loop_attach import Attached, run

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/fuse")
    or shutil.which("nbdfuse") is None or shutil.which("losetup") is None,
    reason="needs root, /dev/fuse, nbdfuse and losetup")


@needs_root
def test_ext4_mkfs_mount_write_fsck(server, workdir):
    s = server("roadmap-2013", "size=1G")
    a = Attached(s.sock, workdir)
    try:
        # The loop device must not hide the disk behind the page cache.
        assert run("losetup", "--list", "--noheadings", "-O", "DIO",
                   a.dev).stdout.strip() == "1"
        run("mkfs.ext4", "-q", "-F", a.dev)
        a.mount()
        rng = random.Random(4)
        digests = {}
        for i in range(40):
            d = os.path.join(a.mnt, f"dir{i % 5}")
            os.makedirs(d, exist_ok=True)
            data = rng.randbytes(rng.randrange(0, 3 << 20))
            path = os.path.join(d, f"file{i}")
            with open(path, "wb") as f:
                f.write(data)
            digests[path] = hashlib.sha256(data).hexdigest()
        os.sync()
        a.umount()
        t0 = s.mark("fsck-start")
        p = run("e2fsck", "-fn", a.dev, check=False)
        fsck_s = (s.mark("fsck-end") - t0) / 1e9
        assert p.returncode == 0, p.stdout + p.stderr
        # e2fsck read metadata from the emulated disk: it took virtual time.
        assert fsck_s > 0.01
        a.mount()
        for path, digest in digests.items():
            with open(path, "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == digest
        a.umount()
    finally:
        a.close()
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["flushes"] > 0 and st["stats"]["seeks"] > 0
