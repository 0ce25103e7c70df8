"""A real file system on the emulated disk: mkfs.ext4, mount, write,
unmount and e2fsck -fn, through nbdfuse and a loop device with direct I/O
(no nbd kernel module here).  Needs root, /dev/fuse and loop devices, as
CI has."""
import hashlib
import os
import random
import shutil
import subprocess
import time

import pytest

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/fuse")
    or shutil.which("nbdfuse") is None or shutil.which("losetup") is None,
    reason="needs root, /dev/fuse, nbdfuse and losetup")


def run(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check,
                          timeout=300)


class Attached:
    """nbdkit socket -> nbdfuse file -> loop device, torn down in reverse
    order whatever happened."""

    def __init__(self, sock, workdir):
        self.fusedir = os.path.join(workdir, "fuse")
        self.mnt = os.path.join(workdir, "mnt")
        os.makedirs(self.fusedir)
        os.makedirs(self.mnt)
        pidfile = os.path.join(workdir, "nbdfuse.pid")
        self.fuse = subprocess.Popen(
            ["nbdfuse", "-P", pidfile, os.path.join(self.fusedir, "disk"),
             "--unix", sock],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(pidfile):
            assert self.fuse.poll() is None, self.fuse.stderr.read()
            assert time.monotonic() < deadline, "nbdfuse did not start"
            time.sleep(0.05)
        self.dev = run("losetup", "--direct-io=on", "-f", "--show",
                       os.path.join(self.fusedir, "disk")).stdout.strip()
        self.mounted = False

    def mount(self):
        run("mount", self.dev, self.mnt)
        self.mounted = True

    def umount(self):
        run("umount", self.mnt)
        self.mounted = False

    def close(self):
        if self.mounted:
            run("umount", self.mnt, check=False)
        if self.dev:
            run("losetup", "-d", self.dev, check=False)
        run("fusermount3", "-u", self.fusedir, check=False)
        try:
            self.fuse.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.fuse.kill()


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
