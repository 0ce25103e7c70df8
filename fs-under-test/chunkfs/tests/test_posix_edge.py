"""POSIX edge cases on a chunkfs FUSE mount over the futuredisk plugin,
each checked against the same operations on tmpfs (the reference): what
each call returns (its errno) and what stat says afterwards must match,
and the values POSIX fixes are asserted outright too, so that chunkfs and
the reference cannot agree on a wrong answer.

Covered: special files (fifos, sockets, character and block devices:
made, stat'ed with st_rdev, chmod/chown, link, rename, unlink, and
working: a fifo passes data, a socket accepts a connection); ownership of
new files (the caller's uid, a set-group-ID directory's gid and bit);
set-user-ID and set-group-ID bits cleared by an unprivileged write or
truncate and by chown; sticky directories; nanosecond timestamps and the
utimensat rules (UTIME_NOW, UTIME_OMIT, who may set which), and which
calls change atime, mtime and ctime; rename over directories,
RENAME_NOREPLACE and RENAME_EXCHANGE.  Unprivileged calls run as uid 1000
or 1001 through setpriv.  After it all `fsck.chunkfs -fn` finds nothing.
"""
import ctypes
import errno
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest
from nbdkit_server import Nbdkit

from daemons import chunkfs_daemons, wait_gone

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN")
MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")

AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2

libc = ctypes.CDLL(None, use_errno=True)


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def renameat2(old, new, flags):
    if libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD, os.fsencode(new),
                      ctypes.c_uint(flags)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def utimensat(path, atime, mtime):
    """atime, mtime: nanoseconds, UTIME_NOW or UTIME_OMIT."""
    def ts(v):
        if v in (UTIME_NOW, UTIME_OMIT):
            return Timespec(0, v)
        return Timespec(v // 10**9, v % 10**9)
    times = (Timespec * 2)(ts(atime), ts(mtime))
    if libc.utimensat(AT_FDCWD, os.fsencode(path), times, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)


def as_user(uid, code, *args):
    """Run python `code` (with sys.argv[1:] = args) as uid:uid, no extra
    groups; its outcome: "ok" or the errno name it raised."""
    prog = ("import errno, os, sys\n"
            "try:\n" +
            "".join("    " + line + "\n" for line in code.splitlines()) +
            "    print('ok')\n"
            "except OSError as e:\n"
            "    print(errno.errorcode[e.errno])\n")
    p = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}",
                        "--clear-groups", "/usr/bin/python3", "-c", prog,
                        *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def kind(st):
    return stat.S_IFMT(st.st_mode)


def attrs(path):
    st = os.lstat(path)
    return (kind(st), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid,
            st.st_nlink, st.st_size if not stat.S_ISDIR(st.st_mode) else 0,
            st.st_rdev)


# ---- the scenarios: each takes a fresh directory and returns what it saw,
# ---- asserting what POSIX fixes on the way.

def special_files(d):
    seen = {}
    os.mkfifo(f"{d}/fifo", 0o640)
    os.mknod(f"{d}/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.mknod(f"{d}/disk", stat.S_IFBLK | 0o660, os.makedev(259, 65536))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(f"{d}/sock")
    s.listen(1)
    for n in ("fifo", "null", "disk", "sock"):
        seen["made " + n] = attrs(f"{d}/{n}")
    assert stat.S_ISFIFO(os.stat(f"{d}/fifo").st_mode)
    assert os.stat(f"{d}/null").st_rdev == os.makedev(1, 3)
    assert os.stat(f"{d}/disk").st_rdev == os.makedev(259, 65536)
    assert stat.S_ISSOCK(os.stat(f"{d}/sock").st_mode)
    # They work: the kernel does that, given the type and rdev.
    r = os.open(f"{d}/fifo", os.O_RDONLY | os.O_NONBLOCK)
    w = os.open(f"{d}/fifo", os.O_WRONLY)
    os.write(w, b"through the fifo")
    assert os.read(r, 100) == b"through the fifo"
    os.close(w)
    os.close(r)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(f"{d}/sock")
    a, _ = s.accept()
    c.sendall(b"hello")
    assert a.recv(5) == b"hello"
    for x in (a, c, s):
        x.close()
    with open(f"{d}/null", "rb") as f:
        assert f.read() == b""
    # chmod, chown, link, rename, unlink.
    os.chmod(f"{d}/fifo", 0o600)
    os.chown(f"{d}/null", 1000, 1000)
    os.link(f"{d}/disk", f"{d}/disk2")
    os.rename(f"{d}/sock", f"{d}/sock2")
    os.rename(f"{d}/fifo", f"{d}/disk2")  # over the second name
    for n in ("fifo", "null", "disk", "disk2", "sock2"):
        seen["after " + n] = outcome(lambda: os.lstat(f"{d}/{n}"))
        if seen["after " + n] == "ok":
            seen["after " + n] = attrs(f"{d}/{n}")
    assert os.stat(f"{d}/disk").st_nlink == 1
    assert os.stat(f"{d}/null").st_uid == 1000
    for n in ("null", "disk", "disk2", "sock2"):
        os.unlink(f"{d}/{n}")
    seen["left"] = sorted(os.listdir(d))
    assert seen["left"] == []
    seen["mknod dir"] = outcome(lambda: os.mknod(f"{d}/x", stat.S_IFDIR))
    return seen


def ownership(d):
    seen = {}
    os.chmod(d, 0o777)
    seen["user create"] = as_user(1000, "open(sys.argv[1], 'w').close()",
                                  f"{d}/mine")
    seen["mine"] = attrs(f"{d}/mine")
    assert seen["mine"][2:4] == (1000, 1000)
    os.mkdir(f"{d}/shared", 0o777)
    os.chown(f"{d}/shared", 0, 50)
    os.chmod(f"{d}/shared", 0o2777)
    as_user(1000, "open(sys.argv[1], 'w').close()\nos.mkdir(sys.argv[2])\n"
            "os.mkfifo(sys.argv[3])", f"{d}/shared/f", f"{d}/shared/sub",
            f"{d}/shared/p")
    for n in ("f", "sub", "p"):
        seen["setgid " + n] = attrs(f"{d}/shared/{n}")
    assert seen["setgid f"][2:4] == (1000, 50)
    assert seen["setgid sub"][1] & stat.S_ISGID
    assert seen["setgid sub"][3] == 50
    # A user may not give a file away, nor chmod another's.
    seen["user chown"] = as_user(1000, "os.chown(sys.argv[1], 1001, -1)",
                                 f"{d}/mine")
    seen["other chmod"] = as_user(1001, "os.chmod(sys.argv[1], 0o777)",
                                  f"{d}/mine")
    assert seen["user chown"] == seen["other chmod"] == "EPERM"
    return seen


def set_id_bits(d):
    seen = {}
    os.chmod(d, 0o777)
    for n, mode in (("sxg", 0o6777), ("sg", 0o2666), ("root", 0o6777),
                    ("trunc", 0o6777), ("chown", 0o6755),
                    ("chown-g", 0o2644)):
        with open(f"{d}/{n}", "w") as f:
            f.write("data")
        os.chmod(f"{d}/{n}", mode)
    # An unprivileged write clears set-user-ID, and set-group-ID when the
    # group may execute.
    seen["write sxg"] = as_user(
        1000, "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
        "os.write(fd, b'x')\nos.close(fd)", f"{d}/sxg")
    seen["write sg"] = as_user(
        1000, "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
        "os.write(fd, b'x')\nos.close(fd)", f"{d}/sg")
    seen["trunc"] = as_user(1000, "os.truncate(sys.argv[1], 1)",
                            f"{d}/trunc")
    with open(f"{d}/root", "r+") as f:  # root (CAP_FSETID) keeps them
        f.write("y")
    os.chown(f"{d}/chown", 1000, 1000)
    os.chown(f"{d}/chown-g", 1000, 1000)
    for n in ("sxg", "sg", "root", "trunc", "chown", "chown-g"):
        seen[n] = stat.S_IMODE(os.stat(f"{d}/{n}").st_mode)
    assert seen["sxg"] == 0o777, oct(seen["sxg"])
    # Set-group-ID without group execute, written by a user outside the
    # file's group: Linux 6.x clears it on a local file system
    # (setattr_should_drop_sgid), but FUSE's kernel side, which works out
    # the new mode for a file system without handle_killpriv, still
    # looks at group execute only.  A known difference, kept out of the
    # comparison.
    assert seen["sg"] in (0o666, 0o2666)
    seen["sg"] = "FUSE differs"
    assert seen["trunc"] == 0o777
    assert seen["root"] == 0o6777
    assert seen["chown"] == 0o755
    assert seen["chown-g"] == 0o2644
    return seen


def sticky(d):
    seen = {}
    os.chmod(d, 0o1777)
    as_user(1000, "open(sys.argv[1], 'w').close()\n"
            "open(sys.argv[2], 'w').close()", f"{d}/a", f"{d}/b")
    seen["other unlink"] = as_user(1001, "os.unlink(sys.argv[1])", f"{d}/a")
    seen["other rename"] = as_user(1001, "os.rename(sys.argv[1], sys.argv[2])",
                                   f"{d}/a", f"{d}/c")
    seen["other over"] = as_user(
        1001, "open(sys.argv[1], 'w').close()\n"
        "os.rename(sys.argv[1], sys.argv[2])", f"{d}/mine", f"{d}/b")
    seen["owner unlink"] = as_user(1000, "os.unlink(sys.argv[1])", f"{d}/a")
    seen["root unlink"] = outcome(lambda: os.unlink(f"{d}/b"))
    assert seen["other unlink"] == seen["other rename"] == "EPERM"
    assert seen["other over"] == "EPERM"
    assert seen["owner unlink"] == seen["root unlink"] == "ok"
    os.chmod(d, 0o777)  # not sticky: anyone with write permission may
    as_user(1000, "open(sys.argv[1], 'w').close()", f"{d}/e")
    seen["not sticky"] = as_user(1001, "os.unlink(sys.argv[1])", f"{d}/e")
    assert seen["not sticky"] == "ok"
    return seen


def changed(before, after):
    return tuple(getattr(after, t) != getattr(before, t)
                 for t in ("st_atime_ns", "st_mtime_ns", "st_ctime_ns"))


def timestamps(d):
    """Which of (atime, mtime, ctime) each call changes, on the file and on
    its directory; nanoseconds kept; utimensat's rules."""
    seen = {}
    os.chmod(d, 0o777)
    f = f"{d}/f"
    with open(f, "w") as fh:
        fh.write("0123456789")
    os.utime(f, ns=(1234567890123456789, 987654321987654321))
    st = os.stat(f)
    assert (st.st_atime_ns, st.st_mtime_ns) == (1234567890123456789,
                                                 987654321987654321)
    seen["ns"] = (st.st_atime_ns, st.st_mtime_ns)

    def op(name, fn, path=f, on=None):
        on = on or path
        os.utime(on, ns=(10**18, 10**18))  # old: relatime updates atime
        os.utime(d, ns=(10**18, 10**18))
        time.sleep(0.01)
        b, bd = os.stat(on), os.stat(d)
        time.sleep(0.01)
        fn()
        a, ad = os.stat(on), os.stat(d)
        seen[name] = (changed(b, a), changed(bd, ad))

    def read():
        with open(f) as fh:
            fh.read()

    def write():
        with open(f, "r+") as fh:
            fh.write("x")
    op("read", read)
    op("write", write)
    op("truncate", lambda: os.truncate(f, 3))
    op("chmod", lambda: os.chmod(f, 0o640))
    op("chown", lambda: os.chown(f, 0, 0))
    op("link", lambda: os.link(f, f"{d}/g"))
    op("rename", lambda: os.rename(f"{d}/g", f"{d}/h"), on=f)
    op("unlink", lambda: os.unlink(f"{d}/h"), on=f)
    op("create", lambda: open(f"{d}/new", "w").close(), on=d)
    op("readdir", lambda: os.listdir(d), on=d)
    # The atime/mtime part of each is the call's own; ctime changes with
    # every change, but not on a read.
    assert seen["read"][0] == (True, False, False)
    assert seen["write"][0] == (False, True, True)
    assert seen["truncate"][0] == (False, True, True)
    for n in ("chmod", "chown", "link", "rename", "unlink"):
        assert seen[n][0][1:] == (False, True), (n, seen[n])
    for n in ("link", "rename", "unlink", "create"):
        assert seen[n][1][1:] == (True, True), (n, seen[n])
    assert seen["chmod"][1] == (False, False, False)
    # utimensat: OMIT keeps, NOW is now, ctime changes anyway.
    utimensat(f, 5 * 10**17 + 1, UTIME_OMIT)
    st = os.stat(f)
    assert st.st_atime_ns == 5 * 10**17 + 1
    b = st
    t0 = time.time_ns()
    utimensat(f, UTIME_OMIT, UTIME_NOW)
    st = os.stat(f)
    assert st.st_atime_ns == b.st_atime_ns
    assert st.st_mtime_ns >= t0 - 10**9 and st.st_ctime_ns > b.st_ctime_ns
    seen["omit/now"] = (st.st_atime_ns == b.st_atime_ns,
                        st.st_mtime_ns > b.st_mtime_ns)
    b = os.stat(f)
    time.sleep(0.01)
    utimensat(f, UTIME_OMIT, UTIME_OMIT)
    seen["omit both"] = changed(b, os.stat(f))
    # Who may: the owner anything; a writer only "now"; others nothing.
    os.chmod(f, 0o666)
    set_now = ("import ctypes\nT = ctypes.c_long * 4\n"
               "l = ctypes.CDLL(None, use_errno=True)\n"
               "if l.utimensat(-100, sys.argv[1].encode(), "
               "T(*map(int, sys.argv[2:])), 0):\n"
               "    raise OSError(ctypes.get_errno(), '')")
    now = [0, UTIME_NOW, 0, UTIME_NOW]
    seen["writer now"] = as_user(1000, set_now, f, *map(str, now))
    seen["writer set"] = as_user(1000, set_now, f, "1", "0", "1", "0")
    os.chmod(f, 0o644)
    seen["reader now"] = as_user(1000, set_now, f, *map(str, now))
    assert seen["writer now"] == "ok"
    assert seen["writer set"] == "EPERM"
    assert seen["reader now"] == "EACCES"
    return seen


def renames(d):
    seen = {}
    os.makedirs(f"{d}/a/src/deep")
    os.makedirs(f"{d}/b/empty")
    os.makedirs(f"{d}/b/full/x")
    open(f"{d}/b/file", "w").close()
    open(f"{d}/a/f1", "w").close()
    tries = {
        "notempty": lambda: os.rename(f"{d}/a/src", f"{d}/b/full"),
        "dir over file": lambda: os.rename(f"{d}/a/src", f"{d}/b/file"),
        "file over dir": lambda: os.rename(f"{d}/b/file", f"{d}/b/empty"),
        "into itself": lambda: os.rename(f"{d}/a", f"{d}/a/src/deep/a"),
        "noreplace": lambda: renameat2(f"{d}/a/src", f"{d}/b/empty",
                                       RENAME_NOREPLACE),
        "noreplace new": lambda: renameat2(f"{d}/a/f1", f"{d}/a/f2",
                                           RENAME_NOREPLACE),
        "both flags": lambda: renameat2(f"{d}/a/f2", f"{d}/b/file",
                                        RENAME_NOREPLACE | RENAME_EXCHANGE),
        "exchange missing": lambda: renameat2(f"{d}/a/f2", f"{d}/b/nope",
                                              RENAME_EXCHANGE),
        "exchange into itself": lambda: renameat2(
            f"{d}/a", f"{d}/a/src/deep", RENAME_EXCHANGE),
    }
    for name, fn in tries.items():
        seen[name] = outcome(fn)
    assert seen["notempty"] == "ENOTEMPTY"
    assert seen["dir over file"] == "ENOTDIR"
    assert seen["file over dir"] == "EISDIR"
    assert seen["into itself"] == "EINVAL"
    assert seen["noreplace"] == "EEXIST"
    assert seen["noreplace new"] == "ok"
    assert seen["both flags"] == "EINVAL"
    assert seen["exchange missing"] == "ENOENT"
    assert seen["exchange into itself"] == "EINVAL"
    # An empty directory replaced by a directory from another parent.
    ino = os.stat(f"{d}/a/src").st_ino
    os.rename(f"{d}/a/src", f"{d}/b/empty")
    assert os.stat(f"{d}/b/empty").st_ino == ino
    assert os.listdir(f"{d}/b/empty") == ["deep"]
    seen["nlink after replace"] = (os.stat(f"{d}/a").st_nlink,
                                   os.stat(f"{d}/b").st_nlink)
    assert seen["nlink after replace"] == (2, 4)
    # EXCHANGE: a file and a directory in different parents, two
    # directories, two files; link counts and ".." follow.
    with open(f"{d}/a/f2", "w") as f:
        f.write("f2")
    renameat2(f"{d}/a/f2", f"{d}/b/empty", RENAME_EXCHANGE)
    assert open(f"{d}/b/empty").read() == "f2"
    assert os.listdir(f"{d}/a/f2") == ["deep"]
    seen["nlink after exchange"] = (os.stat(f"{d}/a").st_nlink,
                                    os.stat(f"{d}/b").st_nlink)
    assert seen["nlink after exchange"] == (3, 3)
    assert os.stat(f"{d}/a/f2/..").st_ino == os.stat(f"{d}/a").st_ino
    renameat2(f"{d}/a/f2", f"{d}/b/full", RENAME_EXCHANGE)
    assert os.listdir(f"{d}/a/f2") == ["x"]
    assert os.listdir(f"{d}/b/full") == ["deep"]
    assert os.stat(f"{d}/b/full/..").st_ino == os.stat(f"{d}/b").st_ino
    renameat2(f"{d}/b/file", f"{d}/b/empty", RENAME_EXCHANGE)
    assert open(f"{d}/b/file").read() == "f2"
    seen["tree"] = sorted(
        (os.path.relpath(p, d), sorted(ds), sorted(fs))
        for p, ds, fs in os.walk(d))
    return seen


SCENARIOS = [special_files, ownership, set_id_bits, sticky, timestamps,
             renames]


@pytest.fixture(scope="module")
def mounts():
    """chunkfs over the plugin, and tmpfs: (uri, chunkfs root, tmpfs
    root)."""
    if not PLUGIN:
        pytest.fail("FUTUREDISK_PLUGIN must name the built plugin")
    # Not pytest's tmp_path: its parents are private, and the setpriv'd
    # users must reach the mounts.
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="posix-edge."))
    os.chmod(tmp, 0o755)
    server = Nbdkit([PLUGIN, "profile=roadmap-2013", "size=1G"],
                    workdir=str(tmp))
    uri = server.uri
    cfs, ref = tmp / "chunkfs", tmp / "tmpfs"
    cfs.mkdir()
    ref.mkdir()
    subprocess.run([MKFS, "-q", "-c", "16M", "-i", "16384", uri], check=True)
    # allow_other: the other users' calls; dev: device nodes open, as on
    # the tmpfs (libfuse mounts nodev otherwise).
    subprocess.run([MOUNT, "-o", "allow_other,dev", uri, str(cfs)],
                   check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(ref)], check=True)
    yield uri, cfs, ref
    subprocess.run(["umount", str(ref)])
    if chunkfs_daemons(uri):
        subprocess.run(["fusermount3", "-u", "-z", str(cfs)])
        wait_gone(uri)
    server.stop()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_matches_reference(mounts, scenario):
    uri, cfs, ref = mounts
    name = scenario.__name__
    for top in (cfs, ref):
        os.mkdir(top / name)
    want = scenario(str(ref / name))
    got = scenario(str(cfs / name))
    diff = {k: (want.get(k), got.get(k)) for k in set(want) | set(got)
            if want.get(k) != got.get(k)}
    assert not diff, diff


def test_fsck_finds_nothing_after(mounts):
    uri, cfs, ref = mounts
    subprocess.run(["fusermount3", "-u", str(cfs)], check=True)
    wait_gone(uri)
    p = subprocess.run([FSCK, "-fn", uri], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 problems" in p.stdout, p.stdout
