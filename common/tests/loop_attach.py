"""The one way tests and benchmarks attach an nbdkit server as a block
device without the nbd kernel module: nbdkit socket -> nbdfuse file ->
loop device with direct I/O (so the page cache does not hide the disk).
Needs root, /dev/fuse and loop devices.

Tests find this module on PYTHONPATH (as nbdkit_server.py); benchmarks,
run by hand, put this directory on sys.path themselves."""
import os
import subprocess
import time


def run(*cmd, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, check=check,
                          timeout=300)


class Attached:
    """nbdkit socket -> nbdfuse file -> loop device (read-only all the way
    with readonly), torn down in reverse order whatever happened."""

    def __init__(self, sock, workdir, readonly=False):
        ro = ["-r"] if readonly else []
        self.fusedir = os.path.join(workdir, "fuse")
        self.mnt = os.path.join(workdir, "mnt")
        os.makedirs(self.fusedir)
        os.makedirs(self.mnt)
        pidfile = os.path.join(workdir, "nbdfuse.pid")
        self.fuse = subprocess.Popen(
            ["nbdfuse", *ro, "-P", pidfile,
             os.path.join(self.fusedir, "disk"), "--unix", sock],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(pidfile):
            assert self.fuse.poll() is None, self.fuse.stderr.read()
            assert time.monotonic() < deadline, "nbdfuse did not start"
            time.sleep(0.05)
        self.dev = run("losetup", "--direct-io=on", *ro, "-f", "--show",
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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
