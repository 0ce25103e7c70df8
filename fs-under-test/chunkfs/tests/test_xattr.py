"""Extended attributes and POSIX ACLs on a chunkfs FUSE mount over the
futuredisk plugin, through the standard tools: setfattr/getfattr,
setfacl/getfacl, cp -a; the kernel enforcing ACLs (a command run as
another user is refused or let in as the ACL says); a default ACL
inherited by new files and directories; and attributes surviving an
unmount, a full fsck.chunkfs and a remount.

Runs as root (FUSE mount, trusted.*, setpriv).  The mount point lives in
a directory other users can traverse, and the mount allows other users
(allow_other), so that the user the ACLs name can reach it at all.
"""
import errno
import os
import shutil
import subprocess
import tempfile

import pytest
from nbdkit_server import Nbdkit

from daemons import chunkfs_daemons, wait_gone

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN")
MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")
USER = 1000  # the other user the ACLs name
STRANGER = 1001  # a user they do not

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def run(*args, uid=None, umask=None, check=True):
    """A command, as `uid` (setpriv, no groups) if given; its result."""
    argv = [str(a) for a in args]
    if uid is not None:
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}",
                "--clear-groups"] + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       preexec_fn=(lambda: os.umask(umask))
                       if umask is not None else None)
    if check:
        assert p.returncode == 0, f"{argv}: {p.stderr}"
    return p


class Disk:
    """The plugin serving a 1 GiB disk with a chunkfs on it, mountable."""

    def __init__(self, tmp_path):
        self.server = Nbdkit([PLUGIN, "profile=roadmap-2013", "size=1G"],
                             workdir=str(tmp_path))
        self.uri = self.server.uri
        self.top = tempfile.mkdtemp(prefix="chunkfs-xattr.")
        os.chmod(self.top, 0o755)
        self.mnt = os.path.join(self.top, "mnt")
        os.mkdir(self.mnt)
        run(MKFS, "-q", "-c", "16M", "-i", "16384", self.uri)

    def mount(self):
        run(MOUNT, "-o", "allow_other", "-o", "commit=0", self.uri, self.mnt)

    def umount(self):
        run("fusermount3", "-u", self.mnt)
        wait_gone(self.uri)

    def path(self, *names):
        return os.path.join(self.mnt, *names)

    def close(self):
        if chunkfs_daemons(self.uri):
            subprocess.run(["fusermount3", "-u", "-z", self.mnt])
            wait_gone(self.uri)
        self.server.stop()
        shutil.rmtree(self.top, ignore_errors=True)


@pytest.fixture
def disk(tmp_path):
    if not PLUGIN:
        pytest.fail("FUTUREDISK_PLUGIN must name the built plugin")
    d = Disk(tmp_path)
    d.mount()
    os.chmod(d.mnt, 0o755)
    yield d
    d.close()


def dump(path):
    """getfattr -d -m - of path: every attribute (ACLs included)."""
    return run("getfattr", "--absolute-names", "-d", "-m", "-", "-e", "hex",
               path).stdout.split("\n", 1)[1]


def acl(path):
    """getfacl of path, numeric, without the header lines."""
    return run("getfacl", "-n", "--absolute-names", "-p", "-c",
               path).stdout


def test_setfattr_getfattr(disk):
    f = disk.path("f")
    open(f, "w").close()
    run("setfattr", "-n", "user.colour", "-v", "blue", f)
    run("setfattr", "-n", "trusted.tag", "-v", "0x0102ff", f)
    assert run("getfattr", "--only-values", "-n", "user.colour",
               f).stdout == "blue"
    out = run("getfattr", "-d", "-m", "-", "-e", "hex", f).stdout
    assert "trusted.tag=0x0102ff" in out
    assert "user.colour=0x626c7565" in out
    assert sorted(os.listxattr(f)) == ["trusted.tag", "user.colour"]
    # Others see no trusted.* (as on ext4 without CAP_SYS_ADMIN).
    assert run("getfattr", "-d", "-m", "-", f, uid=USER).stdout.split(
        "\n")[1:3] == ['user.colour="blue"', ""]
    # A list outgrowing the inode moves to a block, which stat counts.
    before = os.stat(f).st_blocks
    run("setfattr", "-n", "user.big", "-v", "x" * 2000, f)
    assert os.stat(f).st_blocks == before + 8
    assert os.getxattr(f, "user.big") == b"x" * 2000
    # Size probing (the kernel asks for the size first) and its errors.
    with pytest.raises(OSError) as e:
        os.getxattr(f, "user.absent")
    assert e.value.errno == errno.ENODATA
    with pytest.raises(OSError) as e:
        os.setxattr(f, "user.colour", b"red", os.XATTR_CREATE)
    assert e.value.errno == errno.EEXIST
    with pytest.raises(OSError) as e:
        os.setxattr(f, "user.new", b"red", os.XATTR_REPLACE)
    assert e.value.errno == errno.ENODATA
    with pytest.raises(OSError) as e:
        os.setxattr(f, "user.huge", b"y" * 5000)
    assert e.value.errno == errno.ENOSPC
    run("setfattr", "-x", "user.big", f)
    assert os.stat(f).st_blocks == before
    assert sorted(os.listxattr(f)) == ["trusted.tag", "user.colour"]
    # Directories and symlinks have them too.
    os.mkdir(disk.path("d"))
    os.setxattr(disk.path("d"), "user.d", b"1")
    os.symlink("f", disk.path("s"))
    os.setxattr(disk.path("s"), "trusted.s", b"2", follow_symlinks=False)
    assert os.getxattr(disk.path("s"), "trusted.s",
                       follow_symlinks=False) == b"2"
    assert os.readlink(disk.path("s")) == "f"


def test_acl_enforced_by_the_kernel(disk):
    f = disk.path("secret")
    with open(f, "w") as fp:
        fp.write("data\n")
    os.chmod(f, 0o600)
    assert run("cat", f, uid=USER, check=False).returncode != 0
    run("setfacl", "-m", f"u:{USER}:r", f)
    assert acl(f) == (f"user::rw-\nuser:{USER}:r--\ngroup::---\n"
                      "mask::r--\nother::---\n\n")
    assert os.stat(f).st_mode & 0o777 == 0o640  # the mask shows as group
    assert run("cat", f, uid=USER).stdout == "data\n"
    assert run("cat", f, uid=STRANGER, check=False).returncode != 0
    w = run("sh", "-c", f"echo more >> {f}", uid=USER, check=False)
    assert w.returncode != 0 and "Permission denied" in w.stderr
    run("setfacl", "-m", f"u:{USER}:rw", f)
    run("sh", "-c", f"echo more >> {f}", uid=USER)
    # chmod rewrites the mask: the named user loses what the mask takes.
    os.chmod(f, 0o600)
    assert f"user:{USER}:rw-\t#effective:---" in \
        run("getfacl", "-n", f).stdout
    assert run("cat", f, uid=USER, check=False).returncode != 0
    os.chmod(f, 0o660)
    assert run("cat", f, uid=USER).stdout == "data\nmore\n"
    # Gone: back to the mode alone.
    run("setfacl", "-b", f)
    assert os.listxattr(f) == []
    assert run("cat", f, uid=USER, check=False).returncode != 0
    # A directory: search granted by ACL only.
    d = disk.path("private")
    os.mkdir(d, 0o700)
    with open(os.path.join(d, "in"), "w") as fp:
        fp.write("x")
    assert run("cat", os.path.join(d, "in"), uid=USER,
               check=False).returncode != 0
    run("setfacl", "-m", f"u:{USER}:x", d)
    os.chmod(os.path.join(d, "in"), 0o644)
    assert run("cat", os.path.join(d, "in"), uid=USER).stdout == "x"
    assert run("ls", d, uid=USER, check=False).returncode != 0


def test_default_acl_inherited(disk):
    d = disk.path("shared")
    os.mkdir(d, 0o755)
    run("setfacl", "-d", "-m", f"u:{USER}:rwx,g::r-x,o::---", d)
    # A default ACL replaces the umask: mode 0666 under umask 077 still
    # gives the named user rw (the mask follows the mode's group bits).
    run("touch", os.path.join(d, "f"), umask=0o077)
    assert acl(os.path.join(d, "f")) == (
        f"user::rw-\nuser:{USER}:rwx\t#effective:rw-\ngroup::r-x\t"
        "#effective:r--\nmask::rw-\nother::---\n\n")
    run("sh", "-c", f"echo hi > {d}/f", uid=USER)
    # A subdirectory inherits the default as its own default too.
    run("mkdir", os.path.join(d, "sub"), umask=0o077)
    out = acl(os.path.join(d, "sub"))
    assert f"user:{USER}:rwx\n" in out
    assert f"default:user:{USER}:rwx\n" in out
    run("touch", os.path.join(d, "sub", "g"), uid=USER)
    # Without a default ACL the umask applies as before.
    run("touch", disk.path("plain"), umask=0o077)
    assert os.stat(disk.path("plain")).st_mode & 0o777 == 0o600
    assert os.listxattr(disk.path("plain")) == []


def test_cp_a_keeps_xattrs_and_acls(disk):
    src = disk.path("src")
    os.mkdir(src)
    f = os.path.join(src, "f")
    with open(f, "w") as fp:
        fp.write("content")
    run("setfattr", "-n", "user.a", "-v", "1", f)
    run("setfattr", "-n", "trusted.b", "-v", "x" * 500, f)
    run("setfacl", "-m", f"u:{USER}:r,g:{USER}:rw", f)
    run("setfacl", "-d", "-m", f"u:{USER}:rx", src)
    run("cp", "-a", src, disk.path("dst"))
    g = disk.path("dst", "f")
    assert dump(g) == dump(f)
    assert acl(g) == acl(f)
    assert acl(disk.path("dst")) == acl(src)
    with open(g) as fp:
        assert fp.read() == "content"
    # And out to another file system (where the mount point is) and back.
    out = os.path.join(disk.top, "out")
    os.mkdir(out)
    run("cp", "-a", f, out)
    run("cp", "-a", os.path.join(out, "f"), disk.path("back"))
    assert os.getxattr(disk.path("back"), "user.a") == b"1"
    assert acl(disk.path("back")) == acl(f)


def test_survive_unmount_fsck_remount(disk):
    want = {}
    for i in range(12):
        p = disk.path(f"f{i}")
        with open(p, "w") as fp:
            fp.write(str(i))
        os.setxattr(p, "user.i", str(i).encode())
        if i % 3 == 0:
            os.setxattr(p, "trusted.big", bytes([i]) * (300 * i + 200))
        if i % 4 == 0:
            run("setfacl", "-m", f"u:{USER}:rw", p)
        want[p] = (dump(p), acl(p))
    os.unlink(disk.path("f3"))  # its xattr block freed
    del want[disk.path("f3")]
    disk.umount()
    p = run(FSCK, "-fn", disk.uri, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    disk.mount()
    for path, (attrs, acls) in want.items():
        assert dump(path) == attrs
        assert acl(path) == acls
