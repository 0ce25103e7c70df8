"""store=FILE base=BASE end to end, through python3-libnbd: a clone reads
its base where it has not written, keeps every write, zero and trim to
itself, reports the union's extents, survives a restart, and never
changes a byte of the base."""
import hashlib
import os
import random

import nbd

from conftest import run_nbdkit
from test_plugin import extents

SIZE = 32 << 20
HOLE = nbd.STATE_HOLE | nbd.STATE_ZERO


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def make_base(server, base):
    """A base store: 1 MiB of 'b' at 1 MiB, 'c' at 8 MiB; the rest holes."""
    s = server("roadmap-2006", "size=32M", f"store={base}")
    h = s.connect()
    h.pwrite(b"b" * (1 << 20), 1 << 20)
    h.pwrite(b"c" * (1 << 20), 8 << 20)
    h.flush()
    assert s.stop() == 0


def test_clone_reads_base_writes_overlay(server, workdir):
    base = os.path.join(workdir, "base.store")
    over = os.path.join(workdir, "clone.store")
    make_base(server, base)
    before = digest(base)
    mtime = os.stat(base).st_mtime_ns

    s = server("roadmap-2006", "size=32M", f"store={over}", f"base={base}",
               "write-cache=off")
    h = s.connect()
    assert h.pread(1 << 20, 1 << 20) == b"b" * (1 << 20)
    assert h.pread(4096, 0) == bytes(4096)
    h.pwrite(b"new", (1 << 20) + 10)          # part of a base page
    h.trim(1 << 20, 8 << 20)                  # all of the 'c' MiB
    h.zero(4096, (1 << 20) + 8192, nbd.CMD_FLAG_NO_HOLE)
    h.pwrite(b"d" * 4096, 20 << 20)           # a hole in both
    assert h.pread(16, (1 << 20) + 8) == b"bbnewbbbbbbbbbbb"
    assert h.pread(4096, (1 << 20) + 8192) == bytes(4096)
    assert h.pread(4096, (1 << 20) + 12288) == b"b" * 4096
    assert h.pread(1 << 20, 8 << 20) == bytes(1 << 20)
    assert h.pread(4096, 20 << 20) == b"d" * 4096
    # The union: the base's first MiB (one page zeroed without a hole
    # stays allocated), its second trimmed away, the clone's page.
    assert extents(h, SIZE) == [
        (0, 1 << 20, HOLE),
        (1 << 20, 1 << 20, 0),
        (2 << 20, 18 << 20, HOLE),
        (20 << 20, 4096, 0),
        ((20 << 20) + 4096, SIZE - (20 << 20) - 4096, HOLE),
    ]
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["stored_bytes"] == (1 << 20) + 4096
    assert s.stop() == 0

    # A restart serves the same clone.
    s = server("roadmap-2006", "size=32M", f"store={over}", f"base={base}")
    h = s.connect()
    assert h.pread(16, (1 << 20) + 8) == b"bbnewbbbbbbbbbbb"
    assert h.pread(1 << 20, 8 << 20) == bytes(1 << 20)
    assert s.stop() == 0

    assert digest(base) == before
    assert os.stat(base).st_mtime_ns == mtime


def test_many_clones_of_one_base(server, workdir):
    """Two clones at once diverge; neither sees the other's writes."""
    base = os.path.join(workdir, "base.store")
    make_base(server, base)
    before = digest(base)
    rng = random.Random(7)
    clones = []
    for k in range(2):
        d = os.path.join(workdir, f"c{k}")
        os.mkdir(d)
        s = server("roadmap-2006", "size=32M",
                   f"store={os.path.join(d, 'disk.store')}", f"base={base}",
                   "write-cache=off")
        clones.append((s, s.connect()))
    for k, (s, h) in enumerate(clones):
        for _ in range(50):
            off = rng.randrange(0, SIZE - 100)
            h.pwrite(bytes([65 + k]) * 100, off)
        h.pwrite(bytes([65 + k]) * 10, 5000)
    for k, (s, h) in enumerate(clones):
        assert h.pread(10, 5000) == bytes([65 + k]) * 10
        assert s.stop() == 0
    assert digest(base) == before


def test_base_refused(server, workdir):
    base = os.path.join(workdir, "base.store")
    over = os.path.join(workdir, "clone.store")
    p = run_nbdkit("roadmap-2006", "size=32M", f"base={base}")
    assert p.returncode != 0
    assert "needs store=FILE" in p.stderr
    p = run_nbdkit("roadmap-2006", "size=32M", f"store={over}",
                   f"base={base}")
    assert p.returncode != 0
    assert "No such file or directory" in p.stderr
    make_base(server, base)
    p = run_nbdkit("roadmap-2006", "size=64M", f"store={over}",
                   f"base={base}")
    assert p.returncode != 0
    assert "holds a 33554432-byte disk" in p.stderr
    # The base written after the clone was made: the clone is refused.
    s = server("roadmap-2006", "size=32M", f"store={over}", f"base={base}")
    assert s.stop() == 0
    s = server("roadmap-2006", "size=32M", f"store={base}")
    s.connect().pwrite(b"x", 0)
    assert s.stop() == 0
    p = run_nbdkit("roadmap-2006", "size=32M", f"store={over}",
                   f"base={base}")
    assert p.returncode != 0
    assert "changed" in p.stderr
