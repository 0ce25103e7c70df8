#!/usr/bin/python3
"""chunkfs throughput benchmark (issue 17): chunkfs's FUSE mount against
ext4 on the same emulated disk.

The disk is the futuredisk plugin's `ideal` profile with think=zero, in
virtual time: the disk costs no wall time, so what is measured is the
software between the application and the plugin -- chunkfs's FUSE daemon
over libnbd on one side, ext4 over nbdfuse + a loop device (as the
harness attaches a kernel file system) on the other.

  * write: a file written in 1 MiB writes, then fsync'd; MB/s.
  * cold read: the file system unmounted and mounted again (no page cache
    left), then the file read in 1 MiB reads; MB/s.
  * creates: FILES files of 4 KiB in a tree of directories (100 per
    directory), then one sync; files/s.

Each measurement is repeated REPS times on a fresh disk, chunkfs and ext4
alternating so a loaded machine slows both alike; the medians and their
ratios are printed as JSON.  Wall time on a shared machine is noisy: the
ratios of one run are the figure, not the absolute MB/s.

usage: bench_throughput.py BUILD-DIR [--quick] [--reps N]   (run as root)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_chunkfs import TOOLS, Disk, mount_chunkfs, umount_chunkfs  # noqa
from daemons import chunkfs_daemons  # noqa: E402

QUICK = "--quick" in sys.argv
REPS = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv \
    else (3 if QUICK else 5)
MIB = 128 if QUICK else 512
FILES = 2000 if QUICK else 10000
PER_DIR = 100


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Mounted:
    """A fresh `ideal` disk with fs made and mounted on a directory of
    its own; remount() drops every cached page of it."""

    def __init__(self, fs):
        self.fs = fs
        self.disk = Disk("ideal", "4G")
        self.mnt = tempfile.mkdtemp(prefix="bench-mnt.")
        try:
            if fs == "chunkfs":
                subprocess.run([f"{TOOLS}/mkfs.chunkfs", "-q", self.disk.uri],
                               check=True)
            else:
                self.dev = self.disk.block_device()
                subprocess.run(["mkfs.ext4", "-q", "-F", self.dev],
                               check=True)
            self.mount()
        except BaseException:
            self.close()
            raise

    def mount(self):
        if self.fs == "chunkfs":
            mount_chunkfs(self.disk, self.mnt)
        else:
            subprocess.run(["mount", self.dev, self.mnt], check=True)
        self.mounted = True

    def umount(self):
        if self.fs == "chunkfs":
            umount_chunkfs(self.disk, self.mnt)
        else:
            subprocess.run(["umount", self.mnt], check=True)
        self.mounted = False

    def remount(self):
        self.umount()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        self.mount()

    def sync(self):
        """Everything on the disk: chunkfs's fsync makes the whole file
        system durable; for ext4, syncfs through the mount point."""
        fd = os.open(self.mnt, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if self.fs == "chunkfs":
                os.fsync(fd)
            else:
                subprocess.run(["sync", "-f", self.mnt], check=True)
        finally:
            os.close(fd)

    def close(self):
        if getattr(self, "mounted", False):
            if self.fs == "chunkfs" and chunkfs_daemons(self.disk.uri):
                umount_chunkfs(self.disk, self.mnt)
            elif self.fs != "chunkfs":
                subprocess.run(["umount", self.mnt], capture_output=True)
        self.disk.close()
        os.rmdir(self.mnt)


def sequential(m):
    """(write MB/s with the fsync, cold read MB/s) of one MIB-MiB file."""
    buf = os.urandom(1 << 20)
    path = os.path.join(m.mnt, "f")
    t = time.monotonic()
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    for _ in range(MIB):
        os.write(fd, buf)
    os.fsync(fd)
    os.close(fd)
    w = MIB * 1.048576 / (time.monotonic() - t)
    m.remount()
    t = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    n = 0
    while True:
        got = len(os.read(fd, 1 << 20))
        if not got:
            break
        n += got
    os.close(fd)
    assert n == MIB << 20, n
    return w, MIB * 1.048576 / (time.monotonic() - t)


def creates(m):
    """Files of 4 KiB created per second, the final sync included."""
    data = b"c" * 4096
    t = time.monotonic()
    for i in range(FILES):
        d = os.path.join(m.mnt, f"d{i // PER_DIR:03d}")
        if i % PER_DIR == 0:
            os.mkdir(d)
        fd = os.open(os.path.join(d, f"f{i:05d}"),
                     os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
    m.sync()
    return FILES / (time.monotonic() - t)


def one(fs, what):
    m = Mounted(fs)
    try:
        return what(m)
    finally:
        m.close()


def main():
    runs = {fs: {"write_MBps": [], "read_MBps": [], "creates_per_s": []}
            for fs in ("chunkfs", "ext4")}
    t0 = time.monotonic()
    for rep in range(REPS):
        for fs in ("chunkfs", "ext4"):
            w, r = one(fs, sequential)
            c = one(fs, creates)
            log(f"rep {rep} {fs}: write {w:.0f} MB/s, read {r:.0f} MB/s, "
                f"{c:.0f} creates/s")
            runs[fs]["write_MBps"].append(w)
            runs[fs]["read_MBps"].append(r)
            runs[fs]["creates_per_s"].append(c)
    out = {"file_MiB": MIB, "files": FILES, "reps": REPS, "runs": runs,
           "median": {fs: {k: statistics.median(v) for k, v in r.items()}
                      for fs, r in runs.items()}}
    out["ratio_chunkfs_ext4"] = {
        k: out["median"]["chunkfs"][k] / out["median"]["ext4"][k]
        for k in runs["chunkfs"]}
    out["wall_s"] = time.monotonic() - t0
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
