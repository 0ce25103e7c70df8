#!/usr/bin/python3
"""chunkfs benchmark (issue 6): does checking time stop growing with
capacity?

For each disk (roadmap-2006, 500 GB, and roadmap-2013, 8 TB, emulated by
the futuredisk plugin with think=zero, so virtual time is the disk's
service time alone), the same data is written twice: to chunkfs (mounted
with FUSE over libnbd) and to ext4 (through nbdfuse + a loop device).
Then:

  * chunkfs: a crash after changes to k top-level directories (each lives
    in its own chunk) leaves k chunks dirty; the incremental
    `fsck.chunkfs -n` is timed, for k = 1, 4 and 16; then `-f`.
  * ext4: `e2fsck -fn`, the full check a crash or an error calls for.

Times are the plugin's virtual seconds between two `stats` replies.
(Throughput against ext4 is bench_throughput.py's.)

usage: bench_chunkfs.py BUILD-DIR [--quick]   (run as root)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests"),
                os.path.join(HERE, "..", "..", "..", "common", "tests")]
from daemons import chunkfs_daemons, control, wait_gone  # noqa: E402
from nbdkit_server import Nbdkit  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
QUICK = "--quick" in sys.argv
PLUGIN = f"{BUILD}/nbdplugin/nbdkit-futuredisk-plugin.so"
TOOLS = f"{BUILD}/fs-under-test/chunkfs"
DIRS = 16
FILES = 8 if QUICK else 40


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def vtime(ctlsock):
    return control(ctlsock, "stats")["stats"]["virtual_ns"] / 1e9


class Disk:
    """An emulated disk: nbdkit with the plugin on a private socket."""

    def __init__(self, profile, size, extra=()):
        self.dir = tempfile.mkdtemp(prefix="bench-chunkfs.")
        self.ctl = f"{self.dir}/ctl.sock"
        self.server = Nbdkit(
            [PLUGIN, f"profile={profile}", *([f"size={size}"] if size else []),
             "think=zero", f"control={self.ctl}", *extra], workdir=self.dir)
        self.sock = self.server.sock
        self.uri = self.server.uri
        self.loop = None
        self.fuse = None

    def block_device(self):
        """nbdfuse + losetup --direct-io=on, as the harness attaches."""
        self.fuse = f"{self.dir}/fuse"
        os.mkdir(self.fuse)
        self.nbdfuse = subprocess.Popen(
            ["nbdfuse", "-P", f"{self.dir}/fuse.pid", f"{self.fuse}/disk",
             "--unix", self.sock])
        while not os.path.exists(f"{self.dir}/fuse.pid"):
            time.sleep(0.02)
        self.loop = subprocess.run(
            ["losetup", "--direct-io=on", "-f", "--show", f"{self.fuse}/disk"],
            check=True, capture_output=True, text=True).stdout.strip()
        return self.loop

    def close(self):
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop])
            for _ in range(50):
                if subprocess.run(["fusermount3", "-u", self.fuse],
                                  capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            self.nbdfuse.wait()
        self.server.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def mount_chunkfs(disk, mnt, *opts):
    args = [f"{TOOLS}/chunkfs"]
    for o in opts:
        args += ["-o", o]
    subprocess.run(args + [disk.uri, mnt], check=True)


def umount_chunkfs(disk, mnt):
    subprocess.run(["fusermount3", "-u", mnt], check=True)
    wait_gone(disk.uri)


def the_data():
    """The same files for every disk and file system: (path, bytes)."""
    rng = random.Random(6)
    for d in range(DIRS):
        for f in range(FILES):
            size = int(min(4 << 20, rng.lognormvariate(11.5, 1.3)))
            yield f"top{d:02d}/f{f:03d}", rng.randbytes(size)


def write_data(mnt):
    total = 0
    for path, data in the_data():
        full = os.path.join(mnt, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        total += len(data)
    return total


def timed(disk, argv):
    t0, w0 = vtime(disk.ctl), time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    return vtime(disk.ctl) - t0, time.monotonic() - w0, p


def bench_chunkfs(profile, size):
    disk = Disk(profile, size)
    mnt = tempfile.mkdtemp(prefix="bench-mnt.")
    res = {"disk": f"{profile} {size or 'full'}"}
    try:
        subprocess.run([f"{TOOLS}/mkfs.chunkfs", "-q", disk.uri], check=True)
        mount_chunkfs(disk, mnt)
        res["bytes"] = write_data(mnt)
        umount_chunkfs(disk, mnt)
        for k in (1, 4, 16):
            # Changes to k top-level directories, then the machine dies:
            # no sync (commit=0), the drive's cache lost, the daemon gone.
            mount_chunkfs(disk, mnt, "commit=0")
            for d in range(k):
                with open(os.path.join(mnt, f"top{d:02d}/f000"), "r+b") as f:
                    f.write(b"changed")
                    f.flush()
                with open(os.path.join(mnt, f"top{d:02d}/new"), "wb") as f:
                    f.write(b"x" * 5000)
            for pid in chunkfs_daemons(disk.uri):
                os.kill(pid, 9)
            subprocess.run(["fusermount3", "-u", "-z", mnt])
            wait_gone(disk.uri)
            control(disk.ctl, "powercut")
            v, w, p = timed(disk, [f"{TOOLS}/fsck.chunkfs", "-n", disk.uri])
            line = [x for x in p.stdout.splitlines() if "chunks to check" in x]
            res[f"k{k}"] = {"virtual_s": v, "wall_s": w,
                            "checked": line[0].split(": ", 1)[1] if line
                            else "?"}
            log(f"chunkfs {profile} {size} k={k}: {v:.3f} virtual s, "
                f"{line[0] if line else p.stdout[-200:]}")
            r = subprocess.run([f"{TOOLS}/fsck.chunkfs", "-y", "-q",
                                disk.uri])
            assert r.returncode in (0, 1), r.returncode
        v, w, p = timed(disk, [f"{TOOLS}/fsck.chunkfs", "-fn", disk.uri])
        assert p.returncode == 0, p.stdout[-500:]
        res["full"] = {"virtual_s": v, "wall_s": w}
        log(f"chunkfs {profile} {size} -f: {v:.3f} virtual s, {w:.1f} wall s")
    finally:
        if chunkfs_daemons(disk.uri):
            subprocess.run(["fusermount3", "-u", "-z", mnt])
        disk.close()
        os.rmdir(mnt)
    return res


def bench_ext4(profile, size):
    disk = Disk(profile, size)
    mnt = tempfile.mkdtemp(prefix="bench-mnt.")
    res = {"disk": f"{profile} {size or 'full'}"}
    try:
        dev = disk.block_device()
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        subprocess.run(["mount", "-o", "noinit_itable", dev, mnt], check=True)
        res["bytes"] = write_data(mnt)
        subprocess.run(["umount", mnt], check=True)
        v, w, p = timed(disk, ["e2fsck", "-fn", dev])
        assert p.returncode == 0, p.stdout[-500:]
        res["full"] = {"virtual_s": v, "wall_s": w}
        log(f"ext4 {profile} {size} e2fsck -fn: {v:.3f} virtual s, "
            f"{w:.1f} wall s")
    finally:
        subprocess.run(["umount", mnt], capture_output=True)
        disk.close()
        os.rmdir(mnt)
    return res


def main():
    # Each roadmap disk at its own capacity: 500 GB and 8 TB.
    disks = [("roadmap-2006", None), ("roadmap-2013", None)]
    out = {"chunkfs": [], "ext4": []}
    t0 = time.monotonic()
    for profile, size in disks:
        out["chunkfs"].append(bench_chunkfs(profile, size))
        out["ext4"].append(bench_ext4(profile, size))
    small, big = out["chunkfs"]
    e_small, e_big = out["ext4"]
    out["ratios"] = {
        "chunkfs_k1": big["k1"]["virtual_s"] / small["k1"]["virtual_s"],
        "chunkfs_full": big["full"]["virtual_s"] / small["full"]["virtual_s"],
        "e2fsck_full": e_big["full"]["virtual_s"] / e_small["full"]["virtual_s"],
    }
    out["wall_s"] = time.monotonic() - t0
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
