"""open(2) and its flags on a chunkfs FUSE mount over the futuredisk
plugin, each case checked against the same calls on tmpfs (the
reference), with what POSIX (or Linux, where POSIX leaves it open) fixes
asserted outright too, so that chunkfs and the reference cannot agree on
a wrong answer.  The cases follow pjdfstest's open/ tests.

Covered: O_TRUNC, through O_WRONLY, O_RDWR, O_RDONLY (Linux truncates, as
ext4), O_CREAT and Python's open('w'): the file is emptied and its blocks
freed (those fallocate's KEEP_SIZE left past its end too), its mtime and
ctime marked (an empty file's too) but not its directory's, another
descriptor sees it; O_TRUNC needs write permission and clears the set-ID
bits of an opener without CAP_FSETID.  O_APPEND, O_EXCL on every file
type, O_NOFOLLOW, O_DIRECTORY, directories, sockets and fifos, the
creation mode under the umask (0000 too), the times a create marks,
NAME_MAX, ENOTDIR and ENOENT, ETXTBSY, a file past 2 GiB.  Then, on the
file system mounted again read-only: what was written is there, and
every open that would modify fails with EROFS; `fsck.chunkfs -fn` finds
nothing in between.  Unprivileged calls run as uids 1000-1002
through setpriv.
"""
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
from test_posix_edge import changed
from test_posix_model import FALLOC_FL_KEEP_SIZE, fallocate

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN")
MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")

BLOCK = 4096
OLD = 10**18  # nanoseconds (2001): older than anything a call here sets
DATA = bytes(range(256)) * (3 * BLOCK // 256) + b"0123456789"
GIB = 1 << 30


def try_open(path, flags, mode=0o644):
    """"ok" (the descriptor closed again) or the errno's name."""
    try:
        os.close(os.open(path, flags, mode))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, e.errno)


def user_opens(uid, gid, path, flags):
    """Open path with each of flags as uid:gid (no extra groups), closing
    again: each one's outcome, "ok" or the errno's name."""
    prog = ("import errno, os, sys\n"
            "for f in sys.argv[2:]:\n"
            "    try:\n"
            "        os.close(os.open(sys.argv[1], int(f), 0o644))\n"
            "        print('ok')\n"
            "    except OSError as e:\n"
            "        print(errno.errorcode[e.errno])\n")
    p = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}",
                        "--clear-groups", "/usr/bin/python3", "-c", prog,
                        path, *map(str, flags)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def aged(*paths):
    """Each path's atime and mtime set to OLD; then a pause, so that even
    a coarse clock (tmpfs's ticks in jiffies) has moved past their ctime
    when the next call marks it."""
    for p in paths:
        os.utime(p, ns=(OLD, OLD))
    time.sleep(0.02)


# ---- the scenarios: each takes a fresh directory and returns what it saw,
# ---- asserting what POSIX fixes on the way.

TRUNC_WAYS = {
    "wronly": os.O_WRONLY | os.O_TRUNC,
    "rdwr": os.O_RDWR | os.O_TRUNC,
    "creat": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "rdonly": os.O_RDONLY | os.O_TRUNC,  # POSIX: unspecified; Linux truncates
    "python-w": None,  # open(path, "w")
}


def trunc(d):
    seen = {}
    for name, flags in TRUNC_WAYS.items():
        p = f"{d}/{name}"
        with open(p, "wb") as f:
            f.write(DATA)
        os.chmod(p, 0o644)
        aged(p, d)
        b, bd = os.stat(p), os.stat(d)
        if flags is None:
            with open(p, "w") as f:
                f.write("ab")
        else:
            fd = os.open(p, flags, 0o600)
            if flags & os.O_ACCMODE != os.O_RDONLY:
                os.write(fd, b"ab")
            os.close(fd)
        a, ad = os.stat(p), os.stat(d)
        want = b"" if name == "rdonly" else b"ab"
        seen[name] = (read(p), a.st_size, a.st_blocks, oct(a.st_mode),
                      changed(b, a), changed(bd, ad))
        # One block for the two bytes, or none.
        assert seen[name][:3] == (want, len(want), BLOCK // 512 if want
                                  else 0), (name, seen[name][1:])
        # The file's mtime and ctime, not its directory's; O_CREAT's mode
        # is for a new file only.
        assert a.st_mtime_ns > b.st_mtime_ns, name
        assert a.st_ctime_ns > b.st_ctime_ns, name
        assert changed(bd, ad) == (False, False, False), name
        assert stat.S_IMODE(a.st_mode) == 0o644, name
    # An empty file's mtime and ctime are marked too (ext4, tmpfs).
    p = f"{d}/empty"
    open(p, "w").close()
    aged(p)
    b = os.stat(p)
    os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
    seen["empty"] = changed(b, os.stat(p))
    assert seen["empty"] == (False, True, True)
    # What fallocate's KEEP_SIZE allocated past the end goes too, even
    # from an empty file (ext4, tmpfs).
    p = f"{d}/prealloc"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20)
    os.close(fd)
    b = os.stat(p)
    os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
    seen["prealloc"] = (b.st_size, b.st_blocks, os.stat(p).st_blocks)
    assert seen["prealloc"] == (0, (1 << 20) // 512, 0)
    # Another descriptor, its pages cached, reads the new content.
    p = f"{d}/shared"
    with open(p, "wb") as f:
        f.write(DATA)
    r = os.open(p, os.O_RDONLY)
    assert os.pread(r, 100, 0) == DATA[:100]
    with open(p, "w") as f:
        f.write("ab")
    seen["shared"] = (os.pread(r, 100, 0), os.fstat(r).st_size)
    os.close(r)
    assert seen["shared"] == (b"ab", 2)
    return seen


def trunc_permission(d):
    """O_TRUNC needs write permission, whatever the access mode (pjdfstest
    open/07.t), and an unprivileged opener's truncation clears the set-ID
    bits."""
    seen = {}
    os.chmod(d, 0o777)
    p = f"{d}/f"
    open(p, "w").close()
    os.chown(p, 1000, 1001)
    ways = (os.O_RDONLY | os.O_TRUNC, os.O_WRONLY | os.O_TRUNC,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    # Owner 1000, group 1001 (uid 1001 is in it), other 1002: write
    # permission for one class at a time, or for none.
    for mode in (0o477, 0o747, 0o774, 0o277, 0o727, 0o772, 0o077, 0o707,
                 0o770):
        os.chmod(p, mode)
        for uid, shift in ((1000, 6), (1001, 3), (1002, 0)):
            with open(p, "w") as f:
                f.write("data")
            got = user_opens(uid, uid, p, ways)
            size = os.stat(p).st_size
            seen[f"{mode:o} {uid}"] = (got, size)
            # O_RDONLY needs read permission as well.
            bits = mode >> shift & 7
            want = ["ok" if bits & 6 == 6 else "EACCES"] + \
                ["ok" if bits & 2 else "EACCES"] * 2
            assert got == want, (oct(mode), uid)
            assert size == (0 if "ok" in want else 4), (oct(mode), uid)
    # Set-ID bits: cleared for a user, kept for root (CAP_FSETID).
    for n in ("user", "root"):
        with open(f"{d}/{n}", "w") as f:
            f.write("data")
        os.chmod(f"{d}/{n}", 0o6777)
    seen["setid user"] = user_opens(1000, 1000, f"{d}/user",
                                    [os.O_WRONLY | os.O_TRUNC])
    os.close(os.open(f"{d}/root", os.O_WRONLY | os.O_TRUNC))
    for n in ("user", "root"):
        st = os.stat(f"{d}/{n}")
        seen[n] = (oct(stat.S_IMODE(st.st_mode)), st.st_size)
    assert seen["setid user"] == ["ok"]
    assert seen["user"] == ("0o777", 0)
    assert seen["root"] == ("0o6777", 0)
    return seen


def other_flags(d):
    seen = {}
    # O_APPEND: every write at the end, through either descriptor, even
    # pwrite's (Linux) or after a seek.
    p = f"{d}/append"
    a1 = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    a2 = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(a1, b"one")
    os.write(a2, b"two")
    os.pwrite(a1, b"X", 0)
    os.lseek(a2, 0, os.SEEK_SET)
    os.write(a2, b"3")
    os.close(a1)
    os.close(a2)
    seen["append"] = read(p)
    assert seen["append"] == b"onetwoX3"
    # O_EXCL: EEXIST for whatever the name is (open/22.t), a dangling
    # symlink included; without it, a dangling symlink's target is made.
    os.mkdir(f"{d}/dir")
    os.mkfifo(f"{d}/fifo")
    open(f"{d}/reg", "w").close()
    os.mknod(f"{d}/chr", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    os.symlink("reg", f"{d}/link")
    os.symlink("made", f"{d}/dangling")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(f"{d}/sock")
    for n in ("dir", "fifo", "reg", "chr", "link", "dangling", "sock"):
        seen["excl " + n] = try_open(f"{d}/{n}", os.O_CREAT | os.O_EXCL |
                                     os.O_WRONLY)
        assert seen["excl " + n] == "EEXIST", n
    seen["creat dangling"] = try_open(f"{d}/dangling", os.O_CREAT |
                                      os.O_WRONLY)
    assert seen["creat dangling"] == "ok" and os.path.isfile(f"{d}/made")
    # O_NOFOLLOW (open/16.t), O_DIRECTORY, directories (open/13.t).
    for how, flags in (("nofollow", os.O_RDONLY | os.O_NOFOLLOW),
                       ("nofollow w", os.O_WRONLY | os.O_NOFOLLOW),
                       ("nofollow creat", os.O_RDWR | os.O_CREAT |
                        os.O_NOFOLLOW),
                       ("directory", os.O_RDONLY | os.O_DIRECTORY)):
        seen[how] = try_open(f"{d}/link", flags)
    for how in ("nofollow", "nofollow w", "nofollow creat"):
        assert seen[how] == "ELOOP", how
    assert seen["directory"] == "ENOTDIR"
    for how, flags in (("rdonly", os.O_RDONLY), ("wronly", os.O_WRONLY),
                       ("rdwr", os.O_RDWR), ("creat", os.O_RDONLY |
                                             os.O_CREAT),
                       ("trunc", os.O_RDONLY | os.O_TRUNC),
                       ("directory", os.O_RDONLY | os.O_DIRECTORY)):
        seen["dir " + how] = try_open(f"{d}/dir", flags)
    assert seen["dir rdonly"] == seen["dir directory"] == "ok"
    assert seen["dir wronly"] == seen["dir creat"] == "EISDIR"
    # A socket cannot be opened (open/24.t, Linux: ENXIO); nor a fifo
    # for writing, without blocking, with no reader (open/17.t).
    for how, flags in (("rdonly", os.O_RDONLY), ("rdwr", os.O_RDWR)):
        seen["sock " + how] = try_open(f"{d}/sock", flags)
        assert seen["sock " + how] == "ENXIO"
    s.close()
    seen["fifo nonblock w"] = try_open(f"{d}/fifo",
                                       os.O_WRONLY | os.O_NONBLOCK)
    seen["fifo nonblock r"] = try_open(f"{d}/fifo",
                                       os.O_RDONLY | os.O_NONBLOCK)
    assert (seen["fifo nonblock w"], seen["fifo nonblock r"]) == ("ENXIO",
                                                                  "ok")
    # Names (open/01.t, 02.t, 04.t).
    for how, path, flags in (
            ("255", "n" * 255, os.O_CREAT | os.O_WRONLY),
            ("256", "n" * 256, os.O_CREAT | os.O_WRONLY),
            ("256 lookup", "m" * 256, os.O_RDONLY),
            ("under a file", "reg/x", os.O_CREAT | os.O_WRONLY),
            ("missing", "missing", os.O_RDONLY),
            ("missing dir", "missing/x", os.O_CREAT | os.O_WRONLY)):
        seen["name " + how] = try_open(f"{d}/{path}", flags)
    assert seen["name 255"] == "ok"
    assert seen["name 256"] == seen["name 256 lookup"] == "ENAMETOOLONG"
    assert seen["name under a file"] == "ENOTDIR"
    assert seen["name missing"] == seen["name missing dir"] == "ENOENT"
    return seen


def create_modes(d):
    """The mode of a new file under the umask (open/00.t), 0000 with any
    access mode (open/26.t), and the times a create marks (open/00.t)."""
    seen = {}
    old = os.umask(0)
    try:
        for umask, mode, want in ((0, 0o755, 0o755), (0, 0o151, 0o151),
                                  (0o077, 0o151, 0o100),
                                  (0o070, 0o345, 0o305),
                                  (0o501, 0o345, 0o244),
                                  (0, 0o6755, 0o6755)):
            os.umask(umask)
            n = f"m{umask:o}-{mode:o}"
            got = try_open(f"{d}/{n}", os.O_CREAT | os.O_WRONLY, mode)
            seen[n] = (got, oct(stat.S_IMODE(os.stat(f"{d}/{n}").st_mode)))
            assert seen[n] == ("ok", oct(want)), n
        os.umask(0)
        for how, flags in (("wronly", os.O_WRONLY), ("rdwr", os.O_RDWR),
                           ("rdonly", os.O_RDONLY)):
            p = f"{d}/zero-{how}"
            fd = os.open(p, os.O_CREAT | flags, 0)
            if flags != os.O_RDONLY:
                os.write(fd, b"z")  # the creator may: the file is open
            os.close(fd)
            seen["0000 " + how] = (oct(os.stat(p).st_mode), read(p))
            assert stat.S_IMODE(os.stat(p).st_mode) == 0
    finally:
        os.umask(old)
    # A new file: its times and its directory's mtime and ctime marked;
    # O_CREAT on an existing one marks neither.
    aged(d)
    bd = os.stat(d)
    os.close(os.open(f"{d}/new", os.O_CREAT | os.O_WRONLY, 0o644))
    a, ad = os.stat(f"{d}/new"), os.stat(d)
    seen["new times"] = (a.st_atime_ns > bd.st_ctime_ns,
                         a.st_mtime_ns > bd.st_ctime_ns,
                         a.st_ctime_ns > bd.st_ctime_ns, changed(bd, ad))
    assert seen["new times"] == (True, True, True, (False, True, True))
    aged(d, f"{d}/new")
    b, bd = os.stat(f"{d}/new"), os.stat(d)
    os.close(os.open(f"{d}/new", os.O_CREAT | os.O_RDONLY, 0o644))
    seen["existing"] = (changed(b, os.stat(f"{d}/new")),
                        changed(bd, os.stat(d)))
    assert seen["existing"] == ((False, False, False), (False, False, False))
    return seen


def busy_and_big(d):
    """ETXTBSY for writing a running program (open/20.t), and a file
    written past 2 GiB (open/25.t)."""
    seen = {}
    prog = f"{d}/sleep"
    shutil.copy(shutil.which("sleep"), prog)
    proc = subprocess.Popen([prog, "600"])
    try:
        # Running once its exe link names it: the exec is done.
        deadline = time.monotonic() + 60
        while True:
            try:
                if os.readlink(f"/proc/{proc.pid}/exe") == prog:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the copied sleep never ran"
            time.sleep(0.01)
        for how, flags in (("wronly", os.O_WRONLY), ("rdwr", os.O_RDWR),
                           ("trunc", os.O_RDONLY | os.O_TRUNC)):
            seen["busy " + how] = try_open(prog, flags)
            assert seen["busy " + how] == "ETXTBSY"
    finally:
        proc.kill()
        proc.wait()
    os.unlink(prog)
    p = f"{d}/big"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.pwrite(fd, b"a", 2 * GIB + 1)
    os.close(fd)
    fd = os.open(p, os.O_RDONLY)
    seen["big"] = (os.stat(p).st_size, os.pread(fd, 2, 2 * GIB))
    os.close(fd)
    assert seen["big"] == (2 * GIB + 2, b"\0a")
    return seen


SCENARIOS = [trunc, trunc_permission, other_flags, create_modes,
             busy_and_big]


def chunkfs_mount(uri, mnt, *opts):
    # allow_other: the other users' calls; dev: the device node opens.
    subprocess.run([MOUNT, "-o", ",".join(("allow_other", "dev") + opts),
                    uri, str(mnt)], check=True)


@pytest.fixture(scope="module")
def mounts():
    """chunkfs over the plugin, and tmpfs: (uri, chunkfs root, tmpfs
    root)."""
    if not PLUGIN:
        pytest.fail("FUTUREDISK_PLUGIN must name the built plugin")
    # Not pytest's tmp_path: its parents are private, and the setpriv'd
    # users must reach the mounts.
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="open-flags."))
    os.chmod(tmp, 0o755)
    server = Nbdkit([PLUGIN, "profile=ideal", "size=1G", "think=zero"],
                    workdir=str(tmp))
    uri = server.uri
    cfs, ref = tmp / "chunkfs", tmp / "tmpfs"
    cfs.mkdir()
    ref.mkdir()
    subprocess.run([MKFS, "-q", "-c", "16M", "-i", "16384", uri], check=True)
    chunkfs_mount(uri, cfs)
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


def test_read_only_after_fsck(mounts):
    """Unmounted, checked (nothing found) and mounted read-only: the
    truncated files read as written, and an open that would modify fails
    with EROFS (open/14.t)."""
    uri, cfs, ref = mounts
    subprocess.run(["fusermount3", "-u", str(cfs)], check=True)
    wait_gone(uri)
    p = subprocess.run([FSCK, "-fn", uri], capture_output=True, text=True)
    assert p.returncode == 0 and " 0 problems" in p.stdout, \
        p.stdout + p.stderr
    chunkfs_mount(uri, cfs, "ro")
    subprocess.run(["mount", "-o", "remount,ro", str(ref)], check=True)
    for name in TRUNC_WAYS:
        assert read(cfs / "trunc" / name) == read(ref / "trunc" / name) == \
            (b"" if name == "rdonly" else b"ab"), name
    seen = {}
    for top in (cfs, ref):
        f = top / "trunc" / "wronly"
        seen[top] = [try_open(f, flags) for flags in (
            os.O_RDONLY, os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_TRUNC,
            os.O_WRONLY | os.O_APPEND)]
        seen[top].append(try_open(top / "trunc" / "new", os.O_CREAT |
                                  os.O_RDONLY))
    assert seen[cfs] == seen[ref] == ["ok"] + ["EROFS"] * 5, seen
