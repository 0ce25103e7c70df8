"""nbdkit-futuredisk-plugin end to end, through python3-libnbd."""
import json
import os
import random
import subprocess
import threading
import time

import nbd
import pytest

from conftest import FUTUREDISK, run_nbdkit

HEADER = 4096  # store= file header


def random_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def test_roundtrip_across_restart(server, workdir):
    """Random data at random, unaligned offsets survives a restart."""
    store = os.path.join(workdir, "disk.img")
    size = 64 << 20
    rng = random.Random(1)
    shadow = bytearray(size)
    s = server("roadmap-2006", "size=64M", f"store={store}")
    h = s.connect()
    for i in range(300):
        n = rng.randrange(1, 70000)
        off = rng.randrange(0, size - n)
        data = random_bytes(rng, n)
        h.pwrite(data, off, nbd.CMD_FLAG_FUA if i % 10 == 0 else 0)
        shadow[off:off + n] = data
        if i % 50 == 0:
            h.flush()
    assert s.stop() == 0

    s = server("roadmap-2006", "size=64M", f"store={store}")
    h = s.connect()
    for off in range(0, size, 4 << 20):
        assert h.pread(4 << 20, off) == shadow[off:off + (4 << 20)]
    # Odd-sized reads at odd offsets agree too.
    for _ in range(100):
        n = rng.randrange(1, 10000)
        off = rng.randrange(0, size - n)
        assert h.pread(n, off) == shadow[off:off + n]
    s.stop()

    # A restart with another size or profile is refused, naming it.
    p = run_nbdkit("roadmap-2006", "size=128M", f"store={store}")
    assert p.returncode != 0
    assert "holds a 67108864-byte disk, but size is 134217728" in p.stderr
    p = run_nbdkit("roadmap-2013", "size=64M", f"store={store}")
    assert p.returncode != 0
    assert "made with profile roadmap-2006, not roadmap-2013" in p.stderr


def peek(path, off, n):
    with open(path, "rb") as f:
        f.seek(HEADER + off)
        return f.read(n)


def test_flush_and_fua(server, workdir):
    """Acknowledged writes sit in the volatile cache until FLUSH or FUA."""
    store = os.path.join(workdir, "disk.img")
    s = server("roadmap-2006", "size=64M", f"store={store}", "think=zero")
    h = s.connect()
    h.pwrite(b"cached" * 100, 4096)
    h.pwrite(b"forced" * 100, 1 << 20, nbd.CMD_FLAG_FUA)
    assert peek(store, 4096, 600) != b"cached" * 100
    assert peek(store, 1 << 20, 600) == b"forced" * 100
    assert h.pread(600, 4096) == b"cached" * 100  # reads see the cache
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["dirty_bytes"] >= 600
    h.flush()
    assert peek(store, 4096, 600) == b"cached" * 100
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["dirty_bytes"] == 0
    assert st["stats"]["flushes"] == 1
    # Without the cache every write is durable at once.
    s.stop()
    os.unlink(store)
    s = server("roadmap-2006", "size=64M", f"store={store}",
               "write-cache=off")
    h = s.connect()
    h.pwrite(b"through" * 10, 8192)
    assert peek(store, 8192, 70) == b"through" * 10


def extents(h, size):
    found = []

    def cb(metacontext, offset, entries, err):
        o = offset
        for i in range(0, len(entries), 2):
            found.append((o, entries[i], entries[i + 1]))
            o += entries[i]
        return 0
    off = 0
    while off < size:
        before = len(found)
        h.block_status(size - off, off, cb)
        assert len(found) > before
        off = found[-1][0] + found[-1][1]
    return found


def test_trim_zero_extents(server):
    size = 16 << 20
    s = server("roadmap-2006", "size=16M")
    h = s.connect()
    assert extents(h, size) == [(0, size, nbd.STATE_HOLE | nbd.STATE_ZERO)]
    h.pwrite(b"\x01" * (4 << 20), 0)
    h.flush()
    h.trim(1 << 20, 1 << 20)
    h.zero(1 << 20, 3 << 20, nbd.CMD_FLAG_NO_HOLE)
    h.zero(4096, 0)  # may trim
    hole = nbd.STATE_HOLE | nbd.STATE_ZERO
    ext = extents(h, size)
    assert ext[0] == (0, 4096, hole)
    assert ext[1] == (4096, (1 << 20) - 4096, 0)
    assert ext[2] == (1 << 20, 1 << 20, hole)
    # Zeroing with NO_HOLE keeps the range allocated (and reading zeros).
    assert ext[3] == (2 << 20, 2 << 20, 0)
    assert ext[-1] == (4 << 20, size - (4 << 20), hole)
    assert h.pread(4096, 0) == bytes(4096)
    assert h.pread(4096, 1 << 20) == bytes(4096)
    assert h.pread(4096, 3 << 20) == bytes(4096)
    assert h.pread(4096, 2 << 20) == b"\x01" * 4096
    # A fast zero that may not trim would cost a media write: refused.
    with pytest.raises(nbd.Error) as e:
        h.zero(4096, 8192, nbd.CMD_FLAG_FAST_ZERO | nbd.CMD_FLAG_NO_HOLE)
    assert e.value.errno == "ENOTSUP"
    h.zero(4096, 8192, nbd.CMD_FLAG_FAST_ZERO)  # may trim: fast
    h.cache(1 << 20, 0)
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["caches"] == 1 and st["stats"]["trims"] == 1


def test_capabilities(server):
    s = server("roadmap-2013", "size=1G")
    h = s.connect()
    assert h.get_size() == 1 << 30
    assert h.is_rotational()
    assert h.can_fua() and h.can_flush() and h.can_trim()
    assert h.can_zero() and h.can_fast_zero() and h.can_multi_conn()
    assert h.can_cache()
    # Any alignment is served (the minimum is 1); the physical sector is
    # what costs no read-modify-write.
    assert h.get_block_size(nbd.SIZE_MINIMUM) == 1
    assert h.get_block_size(nbd.SIZE_PREFERRED) == 4096
    s.stop()
    s = server("ssd-sata", "size=1G")
    assert not s.connect().is_rotational()


def model(*args):
    p = subprocess.run([FUTUREDISK, "model", "--json", *args],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)[0]


def test_sequential_read_virtual_time(server):
    """A full read of a 1 GiB roadmap-2013 disk takes 1 GiB / 625 MB/s."""
    s = server("roadmap-2013", "size=1G", "think=zero")
    h = s.connect()
    t0 = s.mark("start")
    for off in range(0, 1 << 30, 1 << 20):
        h.pread(1 << 20, off)
    elapsed = (s.mark("end") - t0) / 1e9
    assert elapsed == pytest.approx((1 << 30) / 625e6, rel=0.01)


def test_sequential_read_client_thinks(server):
    """With think=real the client's own time between requests counts, but
    the drive reads ahead meanwhile: the virtual time is at least the
    media's and at most the media's plus all the time the client took."""
    s = server("roadmap-2006", "size=256M")
    h = s.connect()
    w0 = time.monotonic()  # the marks' own time counts as thinking too
    t0 = s.mark("start")
    for off in range(0, 256 << 20, 1 << 20):
        h.pread(1 << 20, off)
    elapsed = (s.mark("end") - t0) / 1e9
    wall = time.monotonic() - w0
    media = (256 << 20) / (model("-p", "roadmap-2006", "--size",
                                 "256M")["bw_mean_mbps"] * 1e6)
    assert media * 0.99 < elapsed < media + wall


def test_random_reads_agree_with_model(server):
    s = server("roadmap-2006", "size=1G", "think=zero")
    h = s.connect()
    rng = random.Random(5)
    n = 3000
    t0 = s.mark("start")
    for _ in range(n):
        h.pread(4096, rng.randrange(0, (1 << 30) // 4096) * 4096)
    mean_ms = (s.mark("end") - t0) / n / 1e6
    want = model("-p", "roadmap-2006", "--size", "1G")["random_4k_ms"]
    assert mean_ms == pytest.approx(want, rel=0.05)


@pytest.mark.parametrize("args,message", [
    (["profile=roadmap-2042"], "profile: unknown profile 'roadmap-2042'"),
    (["size=0"], "size: must be positive"),
    (["size=lots"], "size: 'lots' is not a size"),
    (["size=1000"], "size: 1000 bytes is not a multiple"),
    (["seed=-1"], "seed: '-1' is not a non-negative integer"),
    (["time=warp"], "time: 'warp' is not virtual, real or scale:F"),
    (["time=scale:0"], "time: 'scale:0'"),
    (["think=hard"], "think: 'hard' is not real, zero or cpu"),
    (["think=cpu"], "think=cpu needs cgroup=DIR"),
    (["think=cpu", "cgroup=/nonexistent"], "cgroup: /nonexistent/cpu.stat"),
    (["think=cpu", "cgroup=/tmp", "host=cray-1"],
     "host: unknown host 'cray-1' (known: native, server-2024, "),
    (["host=server-2006"], "host=server-2006 applies to think=cpu only"),
    (["read-ahead=maybe"], "read-ahead: 'maybe' is not on or off"),
    (["write-cache=2"], "write-cache: '2' is not on or off"),
    (["gremlins=1"], "unknown parameter 'gremlins'"),
    (["store=/nonexistent/dir/disk"], "store: /nonexistent/dir/disk"),
    (["control=/nonexistent/dir/ctl"], "control: /nonexistent/dir/ctl"),
    (["stats="], "stats: empty path"),
    (["control=/" + "x" * 200], "a socket path must be under"),
])
def test_bad_parameter(args, message):
    p = run_nbdkit("roadmap-2006", "size=64M", *args)
    assert p.returncode != 0
    assert message in p.stderr, p.stderr


def test_bad_profile_file(workdir):
    f = os.path.join(workdir, "bad.profile")
    with open(f, "w") as fp:
        fp.write("base = roadmap-2006\nname = bad\nseek_avg_ms = 1\n")
    p = run_nbdkit(f"profile={f}")
    assert p.returncode != 0
    assert f"{f}:3: seek_avg_ms:" in p.stderr
    good = os.path.join(workdir, "good.profile")
    with open(good, "w") as fp:
        fp.write("base = roadmap-2006\nname = good\n")
    p = run_nbdkit(good, "size=64M")
    assert p.returncode == 0, p.stderr


MALFORMED = [
    b"", b"   ", b"bogus", b"STATS", b"stats now", b"mark", b"mark a b",
    b"set", b"set x", b"set =1", b"set time=never", b"set think=",
    b"\x00\x01\x02", b"\xff" * 100, b"mark " + b"m" * 500, b"x" * 5000,
    b"clear please", b"{\"json\": true}",
]


def test_control_socket_survives_malformed_input(server):
    """Junk on the control socket gets error replies and never disturbs
    the disk or the counters."""
    import socket
    s = server("roadmap-2006", "size=64M")
    h = s.connect()
    h.pwrite(b"precious" * 512, 0)
    rc, before = s.ctl_cmd("stats")
    c = socket.socket(socket.AF_UNIX)
    c.connect(s.ctl)
    f = c.makefile("rb")
    for line in MALFORMED:
        c.sendall(line + b"\n")
        reply = json.loads(f.readline())
        assert reply["ok"] is False and reply["error"], (line, reply)
    c.sendall(b"mark still-here\n")
    assert json.loads(f.readline())["mark"] == "still-here"
    c.close()
    rc, after = s.ctl_cmd("stats")
    assert after["stats"]["writes"] == before["stats"]["writes"]
    assert h.pread(4096, 0) == b"precious" * 512
    assert s.ctl_cmd("bogus")[0] == 1


def test_stats_file_at_exit(server):
    s = server("roadmap-2006", "size=64M", "seed=7")
    h = s.connect()
    h.pwrite(b"a" * 8192, 0)
    h.pread(4096, 32 << 20)
    h.flush()
    assert s.stop() == 0
    with open(s.stats) as f:
        st = json.load(f)
    for key in ["profile", "size", "seed", "virtual_ns", "busy_ns", "reads",
                "writes", "flushes", "trims", "zeroes", "bytes_read",
                "bytes_written", "seeks", "seek_ns", "rotation_ns",
                "transfer_ns", "smr_cache_bytes", "smr_clean_ns",
                "smr_bands_cleaned", "faults"]:
        assert key in st
    assert st["smr_cache_bytes"] == 0 and st["smr_bands_cleaned"] == 0
    assert st["profile"] == "roadmap-2006" and st["seed"] == 7
    assert st["reads"] == 1 and st["writes"] == 1 and st["flushes"] == 1
    assert st["bytes_written"] == 8192 and st["seeks"] >= 1
    assert st["virtual_ns"] >= st["busy_ns"] > 0


def test_smr_stats(server):
    # Small writes on a drive-managed shingled disk land in its media
    # cache when the write cache is flushed; nothing is cleaned until the
    # drive has been idle and another request comes.
    s = server("smr-nas-2020", "size=1G", "seed=7")
    h = s.connect()
    for off in (0, 300 << 20, 700 << 20):
        h.pwrite(b"s" * 4096, off)
    h.flush()
    assert s.stop() == 0
    with open(s.stats) as f:
        st = json.load(f)
    assert st["smr_cache_bytes"] == 3 * 4096
    assert st["smr_bands_cleaned"] == 0 and st["smr_clean_ns"] == 0


def test_trace_flag(server):
    s = server("roadmap-2006", "size=64M", extra=("-v", "-D",
                                                  "futuredisk.trace=1"))
    s.connect().pread(4096, 0)
    s.stop()
    assert "trace: pread offset=0 count=4096" in s.log_text()


def test_store_layout_in_debug(server, workdir):
    """-v names the store holding the bytes: the RAM store's flat layout up
    to 64 GiB without a write cache, its hashed one above or behind a
    write cache (whose destage hands pages over), or the file."""
    for args, name in [(("roadmap-2006", "size=64M", "write-cache=off"),
                        "ram-flat"),
                       (("roadmap-2006", "size=64M"), "ram-hashed"),
                       (("roadmap-2013", "write-cache=off"), "ram-hashed"),
                       (("roadmap-2006", "size=64M",
                         f"store={workdir}/disk.img"), "file")]:
        s = server(*args, extra=("-v",))
        s.stop()
        assert f", store {name}\n" in s.log_text(), args


def test_real_time_waits_for_the_model(server):
    """time=real: no reply comes before its modelled completion (a lower
    bound only: machines are noisy; accuracy is in BENCHMARKS.md)."""
    s = server("roadmap-2006", "size=1G", "time=real")
    h = s.connect()
    rng = random.Random(3)
    t0 = time.monotonic()
    for _ in range(20):
        h.pread(4096, rng.randrange(0, (1 << 30) // 4096) * 4096)
    wall = time.monotonic() - t0
    rc, st = s.ctl_cmd("stats")
    assert wall >= st["stats"]["busy_ns"] / 1e9 * 0.999


def test_multi_conn(server):
    """Four connections (as nbdfuse opens) writing at once; a flush on one
    makes everything durable for all."""
    s = server("roadmap-2006", "size=64M")
    hs = [s.connect() for _ in range(4)]

    def work(i):
        for k in range(50):
            hs[i].pwrite(bytes([i + 1]) * 4096, (i * 100 + k) * 4096)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    hs[0].flush()
    for i in range(4):
        for k in range(0, 50, 7):
            assert hs[(i + 1) % 4].pread(4096, (i * 100 + k) * 4096) == \
                bytes([i + 1]) * 4096
