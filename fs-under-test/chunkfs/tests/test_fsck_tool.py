"""fsck.chunkfs as a command: options and their errors, e2fsck's exit-code
bits, pass timing (-t), progress lines (-C), preen (-p) stopping at what
it may not fix, and a damaged inode found, fixed and then clean."""
import os
import struct
import subprocess

import pytest

from daemons import wait_gone

MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")
BLOCK = 4096


def fsck(*args, stdin=subprocess.DEVNULL):
    return subprocess.run([FSCK, *args], capture_output=True, text=True,
                          timeout=120, stdin=stdin)


@pytest.fixture
def image(tmp_path):
    """A 512 MiB chunkfs with a few files, made through the mount."""
    img = tmp_path / "img"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(512 << 20)
    subprocess.run([MKFS, "-q", str(img)], check=True)
    subprocess.run([MOUNT, str(img), str(mnt)], check=True)
    for i in range(20):
        (mnt / f"file{i}").write_bytes(os.urandom(3000 * i))
    (mnt / "dir").mkdir()
    (mnt / "dir" / "inner").write_text("x")
    subprocess.run(["fusermount3", "-u", str(mnt)], check=True)
    wait_gone(img)  # the daemon syncs as it exits
    return img


def inode_slot(img, ino):
    """Byte offset of inode `ino` of chunk 0 (FORMAT.md's geometry)."""
    with open(img, "rb") as f:
        sb = f.read(BLOCK)
    chunk_blocks, _, inodes = struct.unpack_from("<III", sb, 32)
    bits = (BLOCK - 24 - 4) * 8
    table = 1 + -(-chunk_blocks // bits) + -(-inodes // bits)
    return (16 + table) * BLOCK + ino * 256


def test_help_and_usage_errors(tmp_path):
    p = fsck("--help")
    assert p.returncode == 0 and "-C FD" in p.stdout
    for args, msg in [((), "no device given"),
                      (("a", "b"), "one device at a time"),
                      (("-n", "-y", "x"), "exclude each other"),
                      (("-C", "x", "d"), "-C x: not a file descriptor"),
                      (("-Z", "d"), "invalid option")]:
        p = fsck(*args)
        assert p.returncode == 16, (args, p.stderr)
        assert msg in p.stderr, (args, p.stderr)
    # No terminal to ask on, and no -n, -y or -p.
    p = fsck(str(tmp_path / "img"))
    assert p.returncode == 16 and "need a terminal" in p.stderr


def test_operational_errors(tmp_path):
    p = fsck("-n", str(tmp_path / "missing"))
    assert p.returncode == 8 and "missing" in p.stderr
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(1 << 20))
    p = fsck("-n", str(junk))
    assert p.returncode == 8 and "no chunkfs superblock" in p.stdout


def test_clean_then_damage_found_fixed_clean(image):
    p = fsck("-fn", "-t", str(image))
    assert p.returncode == 0, p.stdout
    assert [ln.split(":")[0] for ln in p.stdout.splitlines()
            if ln.startswith("Pass ")] == [f"Pass {i}" for i in range(6)]
    assert "Total: time" in p.stdout
    # Incremental: a clean unmount left nothing to check.
    p = fsck("-n", str(image))
    assert p.returncode == 0 and "0 of" in p.stdout
    with open(image, "r+b") as f:  # one bit of file0's inode (inode 3)
        f.seek(inode_slot(image, 3) + 20)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x10]))
    p = fsck("-fn", str(image))
    assert p.returncode == 4 and "[010002] Inode (0, 3) is corrupt" in p.stdout
    # Preen may not clear an inode: it stops and says so.
    p = fsck("-fp", str(image))
    assert p.returncode & 4 and "UNEXPECTED INCONSISTENCY" in p.stdout
    p = fsck("-fy", str(image))
    assert p.returncode == 1 and "FILE SYSTEM WAS MODIFIED" in p.stdout
    p = fsck("-fn", str(image))
    assert p.returncode == 0, p.stdout


def test_progress_lines(image):
    r, w = os.pipe()
    p = subprocess.run([FSCK, "-fn", "-C", str(w), str(image)],
                       capture_output=True, text=True, pass_fds=(w,))
    os.close(w)
    lines = os.read(r, 1 << 16).decode().splitlines()
    os.close(r)
    assert p.returncode == 0
    assert lines, "no progress"
    for i, ln in enumerate(lines):
        pass_, done, total, dev = ln.split(" ", 3)
        assert pass_ == "5" and int(done) == i + 1 and int(total) >= 1
        assert dev == str(image)
