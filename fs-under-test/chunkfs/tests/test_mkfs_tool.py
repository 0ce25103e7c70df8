"""mkfs.chunkfs as a command: options, errors naming the bad value, exit
codes, and an 8 TB file system made in a sparse file."""
import os
import subprocess

import pytest

MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")


def mkfs(*args):
    return subprocess.run([MKFS, *args], capture_output=True, text=True,
                          timeout=60)


def test_help():
    p = mkfs("--help")
    assert p.returncode == 0 and "-c SIZE" in p.stdout


def test_eight_terabytes(tmp_path):
    img = tmp_path / "disk.img"
    with open(img, "wb") as f:
        f.truncate(8 * 10**12)
    p = mkfs("-L", "big", "-U", "00112233-4455-6677-8899-aabbccddeeff",
             str(img))
    assert p.returncode == 0, p.stderr
    # 4 GiB chunks by default on a disk this large (2048 at most).
    assert p.stdout == f"{img}: chunkfs, 1862 chunks of 4096 MiB, " \
                       "65536 inodes each\n"
    # Lazy: a few blocks written, not the disk.
    assert os.stat(img).st_blocks * 512 < 4 << 20
    with open(img, "rb") as f:
        sb = f.read(4096)
    assert sb[:4] == b"CHKS" and sb[8:24] == bytes.fromhex(
        "00112233445566778899aabbccddeeff")
    assert mkfs("-q", "-c", "1G", str(img)).stdout == ""


@pytest.mark.parametrize("args,code,message", [
    ([], 2, "a DEVICE is required"),
    (["-c", "lots", "{img}"], 2, "-c: 'lots' is not a size"),
    (["-c", "3M", "{img}"], 1, "chunk size 3145728: a power of two"),
    (["-i", "12", "{img}"], 1, "inode ratio 12"),
    (["-U", "xyz", "{img}"], 2, "-U: 'xyz' is not a UUID"),
    (["-L", "x" * 40, "{img}"], 1, "31 bytes at most"),
    (["{small}"], 1, "smaller than one chunk of 128 MiB"),
    (["/nonexistent/disk"], 1, "/nonexistent/disk: No such file"),
    (["nbd+unix:///?socket=/nonexistent.sock"], 1, "/nonexistent.sock"),
])
def test_errors(tmp_path, args, code, message):
    img, small = tmp_path / "d.img", tmp_path / "s.img"
    for path, size in ((img, 1 << 30), (small, 10 << 20)):
        with open(path, "wb") as f:
            f.truncate(size)
    p = mkfs(*[a.format(img=img, small=small) for a in args])
    assert p.returncode == code, (p.returncode, p.stderr)
    assert message in p.stderr
