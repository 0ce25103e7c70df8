"""POSIX behaviour of the chunkfs FUSE mount against an in-memory model.

Long seeded random sequences of create, write, rewrite (an open with
O_TRUNC or O_APPEND), read, truncate, rename, unlink, link, symlink,
mkdir, rmdir and readdir (and fallocate: allocate, punch a hole, zero a
range; lseek SEEK_DATA/SEEK_HOLE) run on the mount and on the model;
every call's outcome (result or errno) must agree, and the whole tree is
compared after the run, after a remount, and the chunk headers must all
be clean after the unmount.  Small chunks (16 MiB) and a small inode
ratio make files continue across chunks and directories name inodes in
other chunks, which is where chunkfs is fragile.
"""
import ctypes
import errno
import os
import random
import stat
import struct
import subprocess
import time

import pytest

from daemons import chunkfs_daemons, wait_gone

MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")
FSCK = os.environ.get("FSCK_CHUNKFS", "fsck.chunkfs")
BLOCK = 4096
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 1, 2, 0x10
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                           ctypes.c_int64]


def fallocate(fd, mode, off, length):
    if LIBC.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Model:
    """Files are shared objects so hard links alias; paths are tuples."""

    def __init__(self):
        self.root = {}  # name -> node
        self.root_xattrs = {}  # the root directory's extended attributes

    @staticmethod
    def new_file(data=b""):
        return {"type": "file", "data": bytearray(data)}

    def lookup(self, path):
        node = {"type": "dir", "entries": self.root}
        for part in path:
            if node["type"] != "dir":
                raise OSError(errno.ENOTDIR, "")
            if part not in node["entries"]:
                raise OSError(errno.ENOENT, "")
            node = node["entries"][part]
        return node

    def parent(self, path):
        d = self.lookup(path[:-1])
        if d["type"] != "dir":
            raise OSError(errno.ENOTDIR, "")
        return d["entries"]

    def snapshot(self):
        out = {}

        def walk(entries, prefix):
            for name, node in entries.items():
                p = prefix + (name,)
                if node["type"] == "dir":
                    out[p] = ("dir",)
                    walk(node["entries"], p)
                elif node["type"] == "link":
                    out[p] = ("link", node["target"])
                elif node["type"] == "special":
                    out[p] = ("special", node["kind"], node["rdev"])
                else:
                    out[p] = ("file", bytes(node["data"]))
        walk(self.root, ())
        return out


SPECIAL_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFCHR: "chr",
                 stat.S_IFBLK: "blk", stat.S_IFSOCK: "sock"}


def special_kind(path):
    """"fifo", "chr", "blk", "sock", or None for anything else."""
    return SPECIAL_KINDS.get(stat.S_IFMT(os.lstat(path).st_mode))


def real_snapshot(top):
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        rel = tuple(os.path.relpath(dirpath, top).split(os.sep))
        rel = () if rel == (".",) else rel
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            key = rel + (name,)
            if key == ("lost+found",):
                continue
            if os.path.islink(p):
                out[key] = ("link", os.readlink(p))
            elif special_kind(p):
                out[key] = ("special", special_kind(p), os.lstat(p).st_rdev)
            elif os.path.isdir(p):
                out[key] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[key] = ("file", f.read())
    return out


def mount(img, mnt, *opts):
    args = [MOUNT, str(img), str(mnt)]
    for o in opts:
        args[1:1] = ["-o", o]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def umount(mnt, img=None):
    img = img or mnt.parent / "img"
    # A file just closed can hold the mount for a moment (the kernel's
    # last reference goes after close returns): "busy" is tried again, a
    # bounded number of times, anything else fails at once.
    for _ in range(40):
        p = subprocess.run(["fusermount3", "-u", str(mnt)],
                           capture_output=True, text=True, timeout=120)
        if p.returncode == 0 or "busy" not in p.stderr:
            break
        time.sleep(0.25)
    assert p.returncode == 0, p.stderr
    # fusermount3 returns once the kernel let go; the daemon syncs as it
    # exits: wait for it.
    wait_gone(img)


def chunk_states(img):
    """Every chunk's state from its header (FORMAT.md)."""
    with open(img, "rb") as f:
        sb = f.read(BLOCK)
        assert sb[:4] == b"CHKS"
        chunk_blocks, chunks = struct.unpack_from("<II", sb, 8 + 24)
        assert chunks > 0
        states = []
        for c in range(chunks):
            f.seek((16 + c * chunk_blocks) * BLOCK)
            h = f.read(16)
            states.append(0 if h[:4] != b"CHKH" else
                          struct.unpack_from("<I", h, 12)[0])
    return states


POSIX_SHARE = 0.15  # of the steps: the posix_step operations
AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def renameat2(old, new, flags):
    _check(_libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD,
                           os.fsencode(new), ctypes.c_uint(flags)))


def utimensat(path, atime, mtime):
    """Nanoseconds, UTIME_NOW or UTIME_OMIT each (not following a
    symlink)."""
    ts = (ctypes.c_long * 4)(*[x for v in (atime, mtime) for x in (
        (0, v) if v in (UTIME_NOW, UTIME_OMIT) else divmod(v, 10**9))])
    _check(_libc.utimensat(AT_FDCWD, os.fsencode(path), ts, 0x100))


def assert_fsck_clean(img):
    """`fsck.chunkfs -fn` (every chunk) finds nothing."""
    p = subprocess.run([FSCK, "-fn", str(img)], capture_output=True,
                       text=True)
    assert p.returncode == 0 and " 0 problems" in p.stdout, \
        p.stdout + p.stderr


@pytest.fixture
def fs(tmp_path):
    img = tmp_path / "img"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    with open(img, "wb") as f:
        f.truncate(1 << 30)
    p = subprocess.run([MKFS, "-q", "-c", "16M", "-i", "16384", str(img)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    mount(img, mnt)
    yield img, mnt
    if os.path.ismount(mnt):
        umount(mnt)


def outcome(fn):
    try:
        r = fn()
        return ("ok", r)
    except OSError as e:
        return ("err", errno.errorcode.get(e.errno, e.errno))


class Runner:
    def __init__(self, mnt, seed):
        self.mnt = str(mnt)
        self.m = Model()
        self.rng = random.Random(seed)
        self.log = []

    def real(self, path):
        return os.path.join(self.mnt, *path)

    def paths(self, kind=None):
        out = []

        def walk(entries, prefix):
            for name, node in entries.items():
                if kind is None or node["type"] == kind:
                    out.append(prefix + (name,))
                if node["type"] == "dir":
                    walk(node["entries"], prefix + (name,))
        walk(self.m.root, ())
        return out

    def some_dir(self):
        return self.rng.choice([()] + self.paths("dir"))

    def new_name(self):
        return "n%d" % self.rng.randrange(100000)

    # Each op: (model function, real function), compared.
    def step(self):
        r = self.rng
        if r.random() < POSIX_SHARE:
            return self.posix_step()
        if r.random() < self.xattr_share:
            return self.xattr_step()
        if r.randrange(10) == 0 and self.paths("file"):
            return self.extent_step()
        op = r.choices(
            ["create", "write", "rewrite", "read", "truncate", "rename",
             "unlink", "link", "symlink", "mkdir", "rmdir", "readdir", "bad"],
            [12, 14, 5, 8, 5, 8, 6, 4, 3, 5, 3, 3, 2])[0]
        files = self.paths("file")
        m = self.m
        if op == "create" or (not files and op in ("write", "rewrite", "read",
                                                    "truncate", "link")):
            p = self.some_dir() + (self.new_name(),)
            size = r.choice([0, 1, 100, 4096, 5000, 70000,
                             r.randrange(1 << 21)])
            data = r.randbytes(size)

            def mf():
                ents = m.parent(p)
                if p[-1] in ents:
                    raise OSError(errno.EEXIST, "")
                ents[p[-1]] = m.new_file(data)

            def rf():
                fd = os.open(self.real(p), os.O_CREAT | os.O_EXCL |
                             os.O_WRONLY, 0o644)
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
            return op, p, mf, rf
        if op == "write":
            p = r.choice(files)
            off = r.choice([0, r.randrange(1 << 22), r.randrange(1 << 24)])
            data = r.randbytes(r.choice([1, 4096, 9000, r.randrange(1 << 18)]))

            def mf():
                d = m.lookup(p)["data"]
                if len(d) < off:
                    d.extend(bytes(off - len(d)))
                d[off:off + len(data)] = data

            def rf():
                fd = os.open(self.real(p), os.O_WRONLY)
                try:
                    os.pwrite(fd, data, off)
                finally:
                    os.close(fd)
            return op, p, mf, rf
        if op == "rewrite":
            # An existing file opened with O_TRUNC (each way) and written
            # anew, or with O_APPEND and added to: its size after.
            p = r.choice(files)
            data = r.randbytes(r.choice([0, 1, 4096, 9000,
                                         r.randrange(1 << 20)]))
            flags = r.choice([os.O_WRONLY | os.O_TRUNC, os.O_RDWR | os.O_TRUNC,
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                              os.O_WRONLY | os.O_APPEND])

            def mf():
                d = m.lookup(p)["data"]
                if flags & os.O_TRUNC:
                    del d[:]
                d.extend(data)
                return len(d)

            def rf():
                fd = os.open(self.real(p), flags, 0o644)
                try:
                    os.write(fd, data)
                    return os.fstat(fd).st_size
                finally:
                    os.close(fd)
            return op, (p, flags), mf, rf
        if op == "read":
            p = r.choice(files)
            off = r.randrange(1 << 20)
            n = r.randrange(1 << 17)

            def mf():
                return bytes(m.lookup(p)["data"][off:off + n])

            def rf():
                fd = os.open(self.real(p), os.O_RDONLY)
                try:
                    return os.pread(fd, n, off)
                finally:
                    os.close(fd)
            return op, p, mf, rf
        if op == "truncate":
            p = r.choice(files)
            size = r.choice([0, 1, 4095, 4097, r.randrange(1 << 22),
                             r.randrange(1 << 24)])

            def mf():
                d = m.lookup(p)["data"]
                if len(d) > size:
                    del d[size:]
                else:
                    d.extend(bytes(size - len(d)))

            def rf():
                os.truncate(self.real(p), size)
            return op, p, mf, rf
        if op == "rename":
            src = r.choice(self.paths() or [("none",)])
            dst = self.some_dir() + (r.choice([self.new_name()] + [
                p[-1] for p in self.paths()][:5]),)
            if src[:len(dst)] == dst:
                # A target that is an ancestor of the source: the kernel's
                # answer depends on its locking order, not the file system.
                dst = dst[:-1] + (self.new_name(),)

            def mf():
                s = m.lookup(src)
                sents, dents = m.parent(src), m.parent(dst)
                if src == dst:
                    return
                if s["type"] == "dir" and dst[:len(src)] == src:
                    raise OSError(errno.EINVAL, "")
                if dst[-1] in dents:
                    d = dents[dst[-1]]
                    if d is s:
                        return
                    if s["type"] == "dir" and d["type"] != "dir":
                        raise OSError(errno.ENOTDIR, "")
                    if s["type"] != "dir" and d["type"] == "dir":
                        raise OSError(errno.EISDIR, "")
                    if d["type"] == "dir" and d["entries"]:
                        raise OSError(errno.ENOTEMPTY, "")
                dents[dst[-1]] = s
                del sents[src[-1]]

            def rf():
                os.rename(self.real(src), self.real(dst))
            return op, (src, dst), mf, rf
        if op == "unlink":
            p = r.choice(self.paths() or [("none",)])

            def mf():
                n = m.lookup(p)
                if n["type"] == "dir":
                    raise OSError(errno.EISDIR, "")
                del m.parent(p)[p[-1]]

            def rf():
                os.unlink(self.real(p))
            return op, p, mf, rf
        if op == "link":
            src = r.choice(files)
            dst = self.some_dir() + (self.new_name(),)

            def mf():
                ents = m.parent(dst)
                if dst[-1] in ents:
                    raise OSError(errno.EEXIST, "")
                ents[dst[-1]] = m.lookup(src)

            def rf():
                os.link(self.real(src), self.real(dst))
            return op, (src, dst), mf, rf
        if op == "symlink":
            dst = self.some_dir() + (self.new_name(),)
            target = r.choice(["x", "../" * r.randrange(1, 4) + "y",
                               "t" * r.choice([50, 107, 108, 300, 4000])])

            def mf():
                ents = m.parent(dst)
                if dst[-1] in ents:
                    raise OSError(errno.EEXIST, "")
                ents[dst[-1]] = {"type": "link", "target": target}

            def rf():
                os.symlink(target, self.real(dst))
            return op, dst, mf, rf
        if op == "mkdir":
            p = self.some_dir() + (self.new_name(),)

            def mf():
                ents = m.parent(p)
                if p[-1] in ents:
                    raise OSError(errno.EEXIST, "")
                ents[p[-1]] = {"type": "dir", "entries": {}}

            def rf():
                os.mkdir(self.real(p))
            return op, p, mf, rf
        if op == "rmdir":
            p = r.choice(self.paths("dir") or [("none",)])

            def mf():
                n = m.lookup(p)
                if n["type"] != "dir":
                    raise OSError(errno.ENOTDIR, "")
                if n["entries"]:
                    raise OSError(errno.ENOTEMPTY, "")
                del m.parent(p)[p[-1]]

            def rf():
                os.rmdir(self.real(p))
            return op, p, mf, rf
        if op == "readdir":
            p = self.some_dir()

            def mf():
                return sorted(m.lookup(p)["entries"])

            def rf():
                names = os.listdir(self.real(p))
                return sorted(n for n in names
                              if not (p == () and n == "lost+found"))
            return op, p, mf, rf
        # bad: calls that must fail the same way
        p = self.some_dir()
        if r.randrange(2):
            def mf():
                raise OSError(errno.ENAMETOOLONG, "")

            def rf():
                os.mkdir(self.real(p + ("z" * 256,)))
        else:
            def mf():
                raise OSError(errno.ENOENT, "")

            def rf():
                os.stat(self.real(p + ("missing-name",)))
        return "bad", p, mf, rf

    # ---- special files, RENAME_EXCHANGE, rename over a directory,
    # ---- utimensat, chmod/chown with set-id bits (test_posix_edge.py
    # ---- checks these against tmpfs; here they mix with the rest)

    def posix_step(self):
        op = self.rng.choices(["mknod", "exchange", "rename_dir", "utimens",
                               "chmod_chown"], [4, 4, 3, 3, 3])[0]
        return getattr(self, "op_" + op)()

    def op_mknod(self):
        r, m = self.rng, self.m
        p = self.some_dir() + (self.new_name(),)
        kind = r.choice(["fifo", "chr", "blk", "sock"])
        rdev = os.makedev(r.randrange(1, 512), r.randrange(1 << 20)) \
            if kind in ("chr", "blk") else 0
        ifmt = {v: k for k, v in SPECIAL_KINDS.items()}[kind]

        def mf():
            ents = m.parent(p)
            if p[-1] in ents:
                raise OSError(errno.EEXIST, "")
            ents[p[-1]] = {"type": "special", "kind": kind, "rdev": rdev}

        def rf():
            os.mknod(self.real(p), ifmt | 0o640, rdev)
        return "mknod", (p, kind), mf, rf

    def op_exchange(self):
        m = self.m
        names = self.paths() or [("none",)]
        src, dst = self.rng.choice(names), self.rng.choice(names)

        def mf():
            a, b = m.lookup(src), m.lookup(dst)
            if a is b:
                return
            # Neither may end up inside itself.
            if dst[:len(src)] == src or src[:len(dst)] == dst:
                raise OSError(errno.EINVAL, "")
            sents, dents = m.parent(src), m.parent(dst)
            sents[src[-1]], dents[dst[-1]] = b, a

        def rf():
            renameat2(self.real(src), self.real(dst), RENAME_EXCHANGE)
        return "exchange", (src, dst), mf, rf

    def op_rename_dir(self):
        """A directory onto another, empty or not (replaced if empty)."""
        m = self.m
        dirs = self.paths("dir") or [("none",)]
        src, dst = self.rng.choice(dirs), self.rng.choice(dirs)
        if src[:len(dst)] == dst:
            dst = dst[:-1] + (self.new_name(),)  # as in "rename"
        noreplace = self.rng.randrange(4) == 0

        def mf():
            s = m.lookup(src)
            sents, dents = m.parent(src), m.parent(dst)
            d = dents.get(dst[-1])
            if noreplace and d is not None:
                raise OSError(errno.EEXIST, "")
            if d is s:
                return
            if dst[:len(src)] == src:
                raise OSError(errno.EINVAL, "")
            if d is not None and d["entries"]:
                raise OSError(errno.ENOTEMPTY, "")
            dents[dst[-1]] = s
            del sents[src[-1]]

        def rf():
            renameat2(self.real(src), self.real(dst),
                      RENAME_NOREPLACE if noreplace else 0)
        return "rename_dir", (src, dst, noreplace), mf, rf

    def op_utimens(self):
        """Each of atime, mtime: a time to the nanosecond, UTIME_NOW or
        UTIME_OMIT; what stat says afterwards."""
        r = self.rng
        p = r.choice([q for q in self.paths() if self.m.lookup(q)["type"]
                      != "link"] or [("none",)])
        want = [r.choice([r.randrange(1 << 62), UTIME_NOW, UTIME_OMIT])
                for _ in range(2)]

        def expect(v):
            return {UTIME_NOW: "now", UTIME_OMIT: "kept"}.get(v, v)

        def mf():
            self.m.lookup(p)
            return [expect(v) for v in want]

        def rf():
            before = os.lstat(self.real(p))
            utimensat(self.real(p), *want)
            after = os.lstat(self.real(p))
            got = []
            for v, b, a in zip(want, (before.st_atime_ns, before.st_mtime_ns),
                               (after.st_atime_ns, after.st_mtime_ns)):
                if v == UTIME_NOW and abs(a - time.time_ns()) < 60 * 10**9:
                    a = "now"
                elif v == UTIME_OMIT and a == b:
                    a = "kept"
                got.append(a)
            if after.st_ctime_ns == before.st_ctime_ns and want != [
                    UTIME_OMIT] * 2:
                got.append("ctime kept")
            return got
        return "utimens", (p, want), mf, rf

    def op_chmod_chown(self):
        """chmod with set-id bits, then (as root) maybe chown, which
        clears set-user-ID and, with group execute, set-group-ID (not on
        a directory)."""
        r, m = self.rng, self.m
        p = r.choice([q for q in self.paths() if self.m.lookup(q)["type"]
                      != "link"] or [("none",)])
        mode = r.randrange(0o10000)
        owner = (r.choice([0, 1000, 1001]), r.choice([0, 50, 1000])) \
            if r.randrange(2) else None

        def mf():
            n = m.lookup(p)
            want = mode
            if owner and n["type"] != "dir":
                want &= ~stat.S_ISUID
                if want & stat.S_IXGRP:
                    want &= ~stat.S_ISGID
            acl = n.get("xattrs", {}).get(self.ACL)
            if acl is not None:  # chmod rewrites the ACL's mode entries
                n["xattrs"][self.ACL] = acl_chmod(acl, mode)
            return want, owner

        def rf():
            os.chmod(self.real(p), mode)
            if owner:
                os.chown(self.real(p), *owner)
            st = os.lstat(self.real(p))
            return stat.S_IMODE(st.st_mode), \
                (st.st_uid, st.st_gid) if owner else None
        return "chmod_chown", (p, oct(mode), owner), mf, rf
    # Extended attributes: set (with the flags), get, list and remove on
    # files and directories, the model keeping each inode's attributes
    # and the room one xattr block gives them (FORMAT.md).
    xattr_share = 0.08
    XATTR_NAMES = ["user.a", "user.b", "trusted.t",
                   "user." + "long" * 40, "trusted.x" * 3]
    XATTR_ROOM = 4060  # bytes of entries an xattr block holds

    ACL = "system.posix_acl_access"

    @staticmethod
    def xattr_entry_size(name, value):
        prefix = "user." if name.startswith("user.") else \
            "trusted." if name.startswith("trusted.") else name
        return 4 + len(name) - len(prefix) + len(value)

    def random_acl(self):
        """An access ACL in the kernel's xattr form, and the permission
        bits it gives the mode."""
        r = self.rng
        perm = [r.randrange(8) for _ in range(5)]
        users = sorted(r.sample(range(1000, 1010), r.randrange(3)))
        groups = sorted(r.sample(range(2000, 2010), r.randrange(2)))
        none = 0xFFFFFFFF  # the id the kernel gives unnamed entries
        ents = [(0x01, perm[0], none)]
        ents += [(0x02, r.randrange(8), u) for u in users]
        ents += [(0x04, perm[1], none)]
        ents += [(0x08, r.randrange(8), g) for g in groups]
        mask = bool(users or groups) or r.randrange(2)
        if mask:
            ents.append((0x10, perm[2], none))
        ents.append((0x20, perm[3], none))
        value = struct.pack("<I", 2) + b"".join(
            struct.pack("<HHI", *e) for e in ents)
        mode = perm[0] << 6 | (perm[2] if mask else perm[1]) << 3 | perm[3]
        return value, mode, len(ents) > 3

    def setacl_step(self, p):
        """An access ACL set: the mode follows it, and only an ACL the
        mode cannot say is kept."""
        value, mode, kept = self.random_acl()
        m = self.m

        def mf():
            a = m.root_xattrs if not p else \
                m.lookup(p).setdefault("xattrs", {})
            room = sum(self.xattr_entry_size(k, v)
                       for k, v in a.items() if k != self.ACL)
            if kept and room + self.xattr_entry_size(self.ACL, value) > \
                    self.XATTR_ROOM:
                raise OSError(errno.ENOSPC, "")
            if kept:
                a[self.ACL] = value
            else:
                a.pop(self.ACL, None)
            return oct(mode)

        def rf():
            os.setxattr(self.real(p), self.ACL, value)
            return oct(os.stat(self.real(p)).st_mode & 0o777)
        return "setacl", (p, value.hex()), mf, rf

    def xattr_step(self):
        r = self.rng
        p = r.choice([()] + self.paths("file") + self.paths("dir"))
        name = r.choice(self.XATTR_NAMES)
        m = self.m

        def attrs():
            if not p:
                return m.root_xattrs
            return m.lookup(p).setdefault("xattrs", {})
        op = r.choices(["setxattr", "getxattr", "listxattr", "removexattr",
                        "setacl"], [5, 3, 2, 2, 2])[0]
        if op == "setacl":
            return self.setacl_step(p)
        if op == "setxattr":
            value = r.randbytes(r.choice([0, 1, 40, 90, 300, 1500, 3000,
                                          5000]))
            flags = r.choice([0, 0, os.XATTR_CREATE, os.XATTR_REPLACE])

            def mf():
                a = attrs()
                if len(value) > self.XATTR_ROOM:
                    raise OSError(errno.ENOSPC, "")
                if flags == os.XATTR_CREATE and name in a:
                    raise OSError(errno.EEXIST, "")
                if flags == os.XATTR_REPLACE and name not in a:
                    raise OSError(errno.ENODATA, "")
                room = sum(self.xattr_entry_size(k, v)
                           for k, v in a.items() if k != name)
                if room + self.xattr_entry_size(name, value) > \
                        self.XATTR_ROOM:
                    raise OSError(errno.ENOSPC, "")
                a[name] = value

            def rf():
                os.setxattr(self.real(p), name, value, flags)
            return op, (p, name, len(value), flags), mf, rf
        if op == "getxattr":
            def mf():
                a = attrs()
                if name not in a:
                    raise OSError(errno.ENODATA, "")
                return a[name]

            def rf():
                return os.getxattr(self.real(p), name)
            return op, (p, name), mf, rf
        if op == "listxattr":
            def mf():
                return sorted(attrs())

            def rf():
                return sorted(os.listxattr(self.real(p)))
            return op, p, mf, rf

        def mf():
            a = attrs()
            if name not in a:
                raise OSError(errno.ENODATA, "")
            del a[name]

        def rf():
            os.removexattr(self.real(p), name)
        return op, (p, name), mf, rf

    def xattr_snapshot(self):
        """Every path's attributes in the model (root's under ())."""
        out = {(): dict(self.m.root_xattrs)} if self.m.root_xattrs else {}
        for p in self.paths("file") + self.paths("dir"):
            a = self.m.lookup(p).get("xattrs")
            if a:
                out[p] = dict(a)
        return out

    def real_xattr_snapshot(self):
        out = {}
        for p in [()] + self.paths("file") + self.paths("dir"):
            names = os.listxattr(self.real(p))
            if names:
                out[p] = {n: os.getxattr(self.real(p), n) for n in names}
        return out
    # fallocate (allocate, punch a hole, zero a range) and lseek's
    # SEEK_DATA/SEEK_HOLE, on a file; the model keeps bytes only, so a
    # seek is judged by what it may answer: SEEK_DATA skips only zeros,
    # SEEK_HOLE lands on zeros or the end.
    def extent_step(self):
        r = self.rng
        m = self.m
        p = r.choice(self.paths("file"))
        size = len(m.lookup(p)["data"])
        off = r.choice([0, r.randrange(size + 1), r.randrange(size + 3 * BLOCK),
                        r.randrange(size + 1) // BLOCK * BLOCK])
        length = r.choice([1, BLOCK, 3 * BLOCK + 17, r.randrange(1, 1 << 20)])
        op = r.choice(["prealloc", "punch", "zero", "seek-data", "seek-hole"])
        keep = r.randrange(2) == 0
        if op == "prealloc":
            # Past the end: a hole inside a full chunk cannot be allocated
            # (ENOSPC, as for a write into it), which the model cannot
            # know.
            off = -(-size // BLOCK) * BLOCK + r.choice([0, BLOCK, 5 * BLOCK])

        def with_fd(fn, flags=os.O_WRONLY):
            fd = os.open(self.real(p), flags)
            try:
                return fn(fd)
            finally:
                os.close(fd)

        if op in ("prealloc", "punch", "zero"):
            mode = {"prealloc": 0, "punch": FALLOC_FL_PUNCH_HOLE,
                    "zero": FALLOC_FL_ZERO_RANGE}[op]
            if op == "punch" or keep:
                mode |= FALLOC_FL_KEEP_SIZE

            def mf():
                d = m.lookup(p)["data"]
                if op != "prealloc":
                    end = min(off + length, len(d))
                    if end > off:
                        d[off:end] = bytes(end - off)
                if not mode & FALLOC_FL_KEEP_SIZE and off + length > len(d):
                    d.extend(bytes(off + length - len(d)))

            def rf():
                with_fd(lambda fd: fallocate(fd, mode, off, length))
            return op, (p, off, length, mode), mf, rf
        whence = os.SEEK_DATA if op == "seek-data" else os.SEEK_HOLE

        def mf():
            if off >= size:
                raise OSError(errno.ENXIO, "")
            return True

        def rf():
            d = bytes(m.lookup(p)["data"])
            try:
                at = with_fd(lambda fd: os.lseek(fd, off, whence), os.O_RDONLY)
            except OSError as e:
                if e.errno != errno.ENXIO or off >= size:
                    raise
                return whence == os.SEEK_DATA and not any(d[off:])
            if whence == os.SEEK_DATA:
                return off <= at < size and not any(d[off:at])
            return off <= at <= size and (at == size or not any(
                d[at:(at // BLOCK + 1) * BLOCK]))
        return op, (p, off), mf, rf

    def run(self, n):
        for i in range(n):
            op, arg, mf, rf = self.step()
            want, got = outcome(mf), outcome(rf)
            self.log.append((i, op, arg, want[0], got[0]))
            assert want == got, (i, op, arg, want if want[0] == "err"
                                 else "ok", got if got[0] == "err" else "ok",
                                 self.log[-5:])


def acl_chmod(value, mode):
    """An access ACL (the kernel's xattr form) after chmod(mode), as
    POSIX.1e says: the owner, other and mask entries (the owning group's
    when there is no mask) take the mode's bits; named entries stay."""
    tags = [struct.unpack_from("<H", value, 4 + 8 * k)[0]
            for k in range((len(value) - 4) // 8)]
    group_tag = 0x10 if 0x10 in tags else 0x04
    bits = {0x01: mode >> 6 & 7, group_tag: mode >> 3 & 7, 0x20: mode & 7}
    out = bytearray(value)
    for k, tag in enumerate(tags):
        if tag in bits:
            struct.pack_into("<H", out, 4 + 8 * k + 2, bits[tag])
    return bytes(out)

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_match_the_model(fs, seed):
    img, mnt = fs
    run = Runner(mnt, seed)
    run.run(700)
    assert real_snapshot(mnt) == run.m.snapshot()
    # Durable and clean: remount and compare again.
    umount(mnt)
    assert set(chunk_states(img)) <= {0, 1}, "a chunk not clean after umount"
    mount(img, mnt)
    assert real_snapshot(mnt) == run.m.snapshot()
    run.run(300)
    assert real_snapshot(mnt) == run.m.snapshot()
    umount(mnt)
    assert set(chunk_states(img)) <= {0, 1}
    assert_fsck_clean(img)


@pytest.mark.parametrize("seed", [4, 5])
def test_random_xattr_operations_match_the_model(fs, seed):
    """Mostly extended attributes (lists moving between inodes and
    blocks, files with them unlinked, renamed and linked), compared call
    by call and whole after a remount and a full fsck."""
    img, mnt = fs
    run = Runner(mnt, seed)
    run.xattr_share = 0.5
    run.run(600)
    assert run.real_xattr_snapshot() == run.xattr_snapshot()
    umount(mnt)
    p = subprocess.run([FSCK, "-fn", str(img)], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    mount(img, mnt)
    assert run.real_xattr_snapshot() == run.xattr_snapshot()
    assert real_snapshot(mnt) == run.m.snapshot()


def test_many_files_in_one_directory(fs):
    img, mnt = fs
    names = ["file-%05d-%s" % (i, "x" * (i % 200)) for i in range(3000)]
    for n in names:
        with open(mnt / n, "w") as f:
            f.write(n)
    assert sorted(os.listdir(mnt)) == sorted(names + ["lost+found"])
    for n in names[::3]:
        os.unlink(mnt / n)
    left = [n for i, n in enumerate(names) if i % 3]
    umount(mnt)
    mount(img, mnt)
    assert sorted(os.listdir(mnt)) == sorted(left + ["lost+found"])
    for n in left[::97]:
        assert (mnt / n).read_text() == n


def test_sparse_files_fsync_statfs_and_hardlink_counts(fs):
    img, mnt = fs
    p = mnt / "sparse"
    with open(p, "wb") as f:
        f.seek(300 << 20)  # beyond a 16 MiB chunk many times over
        f.write(b"end")
        f.flush()
        os.fsync(f.fileno())
    st = os.stat(p)
    assert st.st_size == (300 << 20) + 3
    assert st.st_blocks * 512 < 1 << 20  # a hole, not 300 MiB
    with open(p, "rb") as f:
        assert f.read(4096) == bytes(4096)
        f.seek(300 << 20)
        assert f.read() == b"end"
    # fsync made every chunk clean while mounted.
    assert set(chunk_states(img)) <= {0, 1}
    os.link(p, mnt / "second")
    assert os.stat(p).st_nlink == 2
    os.unlink(p)
    assert os.stat(mnt / "second").st_nlink == 1
    before = os.statvfs(mnt)
    with open(mnt / "fill", "wb") as f:
        f.write(os.urandom(40 << 20))  # more than two chunks
    after = os.statvfs(mnt)
    assert before.f_bfree - after.f_bfree >= (40 << 20) // 4096
    os.unlink(mnt / "fill")
    os.sync()
    d = os.statvfs(mnt)
    assert abs(d.f_bfree - before.f_bfree) <= 8  # freed again (back-refs)


def test_unlinked_open_file_lives_until_closed(fs):
    img, mnt = fs
    with open(mnt / "f", "wb+") as f:
        f.write(b"still here" * 1000)
        f.flush()
        os.unlink(mnt / "f")
        f.seek(0)
        assert f.read(10) == b"still here"
    assert not (mnt / "f").exists()


def test_dirty_file_system_is_refused(fs, tmp_path):
    img, mnt = fs
    with open(mnt / "x", "wb") as f:
        f.write(b"1")
        f.flush()
        os.fsync(f.fileno())  # durable, every chunk clean
    (mnt / "y").write_bytes(b"2")
    # Kill the daemon without unmounting: the chunk it dirtied stays so
    # (and what was not synced may be lost: there is no journal).
    pids = chunkfs_daemons(img)
    assert pids
    for p in pids:
        os.kill(p, 9)
    subprocess.run(["fusermount3", "-u", "-z", str(mnt)])
    wait_gone(img)  # not a fixed pause: a loaded machine may take longer
    assert 2 in chunk_states(img)
    p = subprocess.run([MOUNT, str(img), str(mnt)], capture_output=True,
                       text=True)
    assert p.returncode != 0
    assert "dirty or damaged: check the file system first" in p.stderr
    mount(img, mnt, "force")
    assert (mnt / "x").read_bytes() == b"1"


def test_usage_errors(tmp_path):
    p = subprocess.run([MOUNT, "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "DEVICE|URI MOUNTPOINT" in p.stdout
    p = subprocess.run([MOUNT, str(tmp_path / "nope"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "nope" in p.stderr
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(1 << 20))
    p = subprocess.run([MOUNT, str(junk), str(tmp_path)], capture_output=True,
                       text=True)
    assert p.returncode != 0 and "superblock" in p.stderr
