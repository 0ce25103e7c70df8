"""POSIX behaviour of the chunkfs FUSE mount against an in-memory model.

Long seeded random sequences of create, write, read, truncate, rename,
unlink, link, symlink, mkdir, rmdir and readdir (and fallocate: allocate,
punch a hole, zero a range; lseek SEEK_DATA/SEEK_HOLE) run on the mount and on
the model; every call's outcome (result or errno) must agree, and the
whole tree is compared after the run, after a remount, and the chunk
headers must all be clean after the unmount.  Small chunks (16 MiB) and a
small inode ratio make files continue across chunks and directories
name inodes in other chunks, which is where chunkfs is fragile.
"""
import ctypes
import errno
import os
import random
import struct
import subprocess

import pytest

from daemons import chunkfs_daemons, wait_gone

MKFS = os.environ.get("MKFS_CHUNKFS", "mkfs.chunkfs")
MOUNT = os.environ.get("CHUNKFS", "chunkfs")
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
                else:
                    out[p] = ("file", bytes(node["data"]))
        walk(self.root, ())
        return out


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
    subprocess.run(["fusermount3", "-u", str(mnt)], check=True, timeout=120)
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
        if r.randrange(10) == 0 and self.paths("file"):
            return self.extent_step()
        op = r.choices(
            ["create", "write", "read", "truncate", "rename", "unlink",
             "link", "symlink", "mkdir", "rmdir", "readdir", "bad"],
            [12, 14, 8, 5, 8, 6, 4, 3, 5, 3, 3, 2])[0]
        files = self.paths("file")
        m = self.m
        if op == "create" or (not files and op in ("write", "read",
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
