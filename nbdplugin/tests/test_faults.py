"""Injected faults end to end: bad=FILE, control inject, fail-at, and the
ground-truth fault log that explains every EIO the disk returned."""
import json
import os
import random
import re
import subprocess
import time

import nbd
import pytest

from conftest import run_nbdkit


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_bad_file_and_log_explain_every_eio(server, workdir):
    bad = os.path.join(workdir, "bad.txt")
    log = os.path.join(workdir, "faults.jsonl")
    with open(bad, "w") as f:
        f.write("# offset length kind (dm-dust style)\n"
                "1M 4096 ure\n"
                "\n"
                "40M 1 ure   # rounds up to one whole sector\n")
    s = server("roadmap-2006", "size=64M", f"bad={bad}", f"faultlog={log}",
               "erc=50ms", "think=zero")
    h = s.connect()
    rng = random.Random(2)
    eios = []
    for _ in range(400):
        n = rng.choice([512, 4096, 65536])
        off = rng.randrange(0, (64 << 20) - n)
        if rng.random() < 0.05:
            off = rng.choice([1 << 20, 40 << 20]) - rng.randrange(0, n)
        try:
            h.pread(n, off)
        except nbd.Error as e:
            assert e.errno == "EIO"
            eios.append((off, n))
    assert eios, "the test never hit a bad sector"
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["faults"]["ure"] == len(eios)
    assert st["stats"]["faults"]["faulty_sectors"] == 8 + 1

    events = read_log(log)
    injects = [e for e in events if e["event"] == "inject"]
    triggers = [e for e in events if e["event"] == "trigger"]
    assert [(e["offset"], e["length"], e["detail"]) for e in injects] == [
        (1 << 20, 4096, f"bad={bad}:2"), (40 << 20, 512, f"bad={bad}:4")]
    # Every EIO has its trigger line, in order, inside the failed request.
    assert len(triggers) == len(eios)
    for (off, n), t in zip(eios, triggers):
        assert t["kind"] == "ure"
        assert off <= t["offset"] + t["length"] and t["offset"] < off + n
        assert "erc_ns=50000000" in t["detail"]
    # Each failing read cost the drive its error recovery.
    assert st["stats"]["busy_ns"] >= len(eios) * 50_000_000


def test_inject_and_rewrite(server, workdir):
    log = os.path.join(workdir, "faults.jsonl")
    s = server("roadmap-2013", "size=64M", f"faultlog={log}", "erc=10ms")
    h = s.connect()
    h.pwrite(b"x" * 8192, 8 << 20)
    rc, reply = s.ctl_cmd("inject", "ure", str(8 << 20), "4096")
    assert rc == 0 and reply["inject"] == "ure"
    with pytest.raises(nbd.Error) as e:
        h.pread(8192, 8 << 20)
    assert e.value.errno == "EIO"
    assert h.pread(4096, (8 << 20) + 4096) == b"x" * 4096
    h.pwrite(b"y" * 4096, 8 << 20)  # rewriting clears it
    assert h.pread(8192, 8 << 20) == b"y" * 4096 + b"x" * 4096
    rc, reply = s.ctl_cmd("inject", "ure", "1G", "1")
    assert rc == 1 and "outside the" in reply["error"]
    kinds = [(e["event"], e["kind"]) for e in read_log(log)]
    assert kinds == [("inject", "ure"), ("trigger", "ure")]


def test_disk_failure(server, workdir):
    log = os.path.join(workdir, "faults.jsonl")
    s = server("roadmap-2006", "size=64M", f"faultlog={log}", "fail-at=2h",
               "think=zero")
    h = s.connect()
    h.pwrite(b"ok" * 256, 0)
    rc, reply = s.ctl_cmd("inject", "disk-failure", "0", "0")
    assert rc == 0
    for op in (lambda: h.pread(512, 0), lambda: h.pwrite(b"z" * 512, 0),
               lambda: h.flush()):
        with pytest.raises(nbd.Error) as e:
            op()
        assert e.value.errno == "EIO"
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["faults"]["disk-failure"] == 3
    events = read_log(log)
    assert [e["event"] for e in events] == ["inject", "trigger"]
    assert events[1]["kind"] == "disk-failure"


def test_fail_at_virtual_time(server):
    """fail-at counts virtual time: with think=real an idle second of the
    client's is a second of the disk's life."""
    s = server("roadmap-2006", "size=64M", "fail-at=3s")
    h = s.connect()
    h.pread(512, 0)  # (a loaded machine may take a while to get here)
    time.sleep(3.2)
    with pytest.raises(nbd.Error) as e:
        h.pread(512, 0)
    assert e.value.errno == "EIO"


@pytest.mark.parametrize("args,message", [
    (["bad=/nonexistent/bad.txt"], "bad: /nonexistent/bad.txt: No such file"),
    (["faultlog=/nonexistent/dir/log"], "faultlog: /nonexistent/dir/log"),
    (["erc=fast"], "erc: 'fast' is not a duration"),
    (["erc=5"], "erc: '5' is not a duration: give a unit"),
    (["fail-at=-1s"], "fail-at: '-1s' is not a duration"),
    (["faults=nasty"], "faults: unknown preset 'nasty'"),
    (["age=3"], "age: '3' is not a duration: give a unit"),
    (["lse=2"], "lse: 2 is out of range [0, 1]"),
    (["lse-alpha=0"], "lse-alpha: 0 is out of range"),
    (["lse-burst=0.5"], "lse-burst: 0.5 is out of range"),
    (["lse-rate=often"], "lse-rate: 'often'"),
    (["lse-min=10", "lse-max=5"], "lse-min 10 exceeds lse-max 5"),
    (["rot-rate=-1"], "rot-rate: -1 is out of range"),
    (["stuck-bits=1e-3"], "stuck-bits: 1e-3 is out of range"),
    (["corrupt=yes"], "corrupt: 'yes'"),
    (["lse-spread=far"], "lse-spread: 'far'"),
    (["fail-at=soon"], "fail-at: 'soon' is not a duration"),
])
def test_bad_fault_parameter(args, message):
    p = run_nbdkit("roadmap-2006", "size=64M", *args)
    assert p.returncode != 0
    assert message in p.stderr, p.stderr


@pytest.mark.parametrize("content,message", [
    ("1M 4096\n", ":1: expected 'OFFSET LENGTH KIND'"),
    ("1M 4096 ure extra\n", ":1: expected 'OFFSET LENGTH KIND'"),
    ("# fine\n1M 4096 gremlin\n", ":2: unknown fault kind 'gremlin'"),
    ("lots 4096 ure\n", ":1: offset: 'lots' is not a size"),
    ("1M -1 ure\n", ":1: length: '-1' is not a size"),
    ("1G 1 ure\n", ":1: inject ure: 1073741824+1 is outside the"),
])
def test_bad_bad_file(workdir, content, message):
    bad = os.path.join(workdir, "bad.txt")
    with open(bad, "w") as f:
        f.write(content)
    p = run_nbdkit("roadmap-2006", "size=64M", f"bad={bad}")
    assert p.returncode != 0
    assert f"bad: {bad}{message}" in p.stderr, p.stderr


def test_ber_marginal_sectors_are_logged(server, workdir):
    """ber=: the fresh disk's marginal sectors are in the log from the
    start, and a full read fails exactly on them."""
    log = os.path.join(workdir, "faults.jsonl")
    size = 64 << 20
    s = server("roadmap-2006", "size=64M", "ber=1e-7", "erc=0s",
               f"faultlog={log}", "think=zero", "seed=3")
    h = s.connect()
    injected = {e["offset"] for e in read_log(log) if e["event"] == "inject"}
    rc, st = s.ctl_cmd("stats")
    assert len(injected) == st["stats"]["faults"]["faulty_sectors"] > 10
    failed = set()
    for off in range(0, size, 1 << 20):
        try:
            h.pread(1 << 20, off)
        except nbd.Error:
            for sec in range(off, off + (1 << 20), 512):
                try:
                    h.pread(512, sec)
                except nbd.Error:
                    failed.add(sec)
    assert failed == injected


@pytest.mark.parametrize("value,message", [
    ("2", "ber: 2 is out of range [0, 0.001]"),
    ("often", "ber: 'often' is not a number"),
])
def test_bad_ber(value, message):
    p = run_nbdkit("roadmap-2006", "size=64M", f"ber={value}")
    assert p.returncode != 0 and message in p.stderr, p.stderr


def test_powercut_loses_exactly_the_unflushed(server, workdir):
    log = os.path.join(workdir, "faults.jsonl")
    s = server("roadmap-2006", "size=64M", f"faultlog={log}", "torn=0.5",
               "seed=9", "think=zero")  # (no idle destaging: see below)
    h = s.connect()
    rng = random.Random(9)
    durable = bytearray(64 << 20)
    acked = bytearray(64 << 20)
    for i in range(120):
        n = 512 * rng.randrange(1, 64)
        off = 512 * rng.randrange(0, ((64 << 20) - n) // 512)
        data = bytes([i % 250 + 1]) * n
        fua = rng.random() < 0.2
        h.pwrite(data, off, nbd.CMD_FLAG_FUA if fua else 0)
        acked[off:off + n] = data
        if fua:
            durable[off:off + n] = data
        if i == 80:
            h.flush()
            durable[:] = acked
    rc, reply = s.ctl_cmd("powercut")
    assert rc == 0 and reply["powercut"] is True
    lost = bytearray(64 << 20)
    events = [e for e in read_log(log) if e["kind"] == "powercut"]
    assert events[0]["length"] == 0 and "dirty bytes" in events[0]["detail"]
    for e in events[1:]:
        lost[e["offset"]:e["offset"] + e["length"]] = b"\x01" * e["length"]
    assert any(lost)
    disk = h.pread(64 << 20, 0)
    for i in range(0, 64 << 20, 512):
        want = durable if lost[i] else acked
        assert disk[i:i + 512] == want[i:i + 512], i
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["faults"]["powercut"] == len(events)
    assert st["stats"]["faults"]["torn-write"] == sum(
        1 for e in read_log(log) if e["kind"] == "torn-write")
    # The disk comes back at once and keeps working.
    h.pwrite(b"after" * 100, 0)
    h.flush()
    assert h.pread(500, 0) == b"after" * 100


def test_powercut_after(server, workdir):
    log = os.path.join(workdir, "faults.jsonl")
    # think=zero: on a loaded machine the client's pauses would give the
    # drive idle time to destage the cached write before the cut.
    s = server("roadmap-2006", "size=64M", f"faultlog={log}",
               "powercut-after=3", "think=zero")
    h = s.connect()
    h.pwrite(b"1" * 4096, 0)
    h.flush()
    h.pwrite(b"2" * 4096, 0)
    h.pwrite(b"3" * 4096, 1 << 20)  # the third write: then power goes
    assert h.pread(4096, 0) == b"1" * 4096
    assert h.pread(4096, 1 << 20) == bytes(4096)
    kinds = [e["kind"] for e in read_log(log)]
    assert kinds[0] == "powercut" and "powercut-after" in \
        read_log(log)[0]["detail"]


def test_poweroff_after_n_writes_stays_off_until_poweron(server, workdir):
    """poweroff N: the Nth write from then on is acknowledged, then the
    power goes and stays off - nothing written after it reaches the disk,
    every request fails - until poweron brings back what was durable."""
    log = os.path.join(workdir, "faults.jsonl")
    s = server("roadmap-2006", "size=64M", f"faultlog={log}", "think=zero")
    h = s.connect()
    h.pwrite(b"1" * 4096, 0)
    h.flush()
    rc, reply = s.ctl_cmd("poweroff", "2")
    assert rc == 0 and reply["poweroff"] == 2
    h.pwrite(b"2" * 4096, 0)        # cached, never flushed
    h.pwrite(b"3" * 4096, 1 << 20)  # the second: acknowledged, then off
    for op in (lambda: h.pwrite(b"4" * 4096, 2 << 20),
               lambda: h.pread(4096, 0), h.flush):
        with pytest.raises(nbd.Error) as e:
            op()
        assert e.value.errno == "EIO"
    rc, st = s.ctl_cmd("stats")
    assert st["stats"]["power"] == "off" and st["stats"]["refused"] == 3
    rc, reply = s.ctl_cmd("poweroff")
    assert rc != 0 and "off already" in reply["error"]
    rc, reply = s.ctl_cmd("poweron")
    assert rc == 0 and reply["was_off"] is True
    assert h.pread(4096, 0) == b"1" * 4096
    assert h.pread(4096, 1 << 20) == bytes(4096)
    assert h.pread(4096, 2 << 20) == bytes(4096)
    kinds = [e["kind"] for e in read_log(log)]
    assert kinds[0] == "powercut" and "poweroff" in read_log(log)[0]["detail"]
    rc, reply = s.ctl_cmd("poweron")
    assert reply["was_off"] is False
    # Off now, with a bad count refused.
    rc, reply = s.ctl_cmd("poweroff", "soon")
    assert rc != 0 and "poweroff: 'soon' is not" in reply["error"]
    rc, reply = s.ctl_cmd("poweroff", "0")
    assert rc == 0
    with pytest.raises(nbd.Error):
        h.pread(512, 0)


def read_writelog(path):
    """The records of a writelog= file: (kind, flags, offset, length,
    data)."""
    import struct
    out = []
    with open(path, "rb") as f:
        while True:
            h = f.read(32)
            if not h:
                return out
            kind, flags, off, length, seq = struct.unpack("<IIQQQ", h)
            data = f.read(length) if kind in (1, 4) else b""
            out.append((kind, flags, off, length, data))


def test_writelog_replays_to_the_disk(server, workdir):
    """Every write (with its data and FUA), flush, zero and mark goes to
    the write log in the order served; replaying the writes up to the
    end gives back exactly what the disk holds."""
    log = os.path.join(workdir, "w.log")
    s = server("roadmap-2006", "size=16M", f"writelog={log}", "think=zero")
    h = s.connect()
    h.pwrite(b"a" * 8192, 4096)
    h.flush()
    assert s.ctl_cmd("mark", "p1")[0] == 0
    h.pwrite(b"b" * 512, 5120, nbd.CMD_FLAG_FUA)
    h.zero(4096, 12288)
    h.pwrite(b"c" * 4096, 1 << 20)
    h.flush()
    want = h.pread(16 << 20, 0)
    s.stop()
    recs = read_writelog(log)
    assert recs[0][0] == 0x474f4c57 and recs[0][2] == 16 << 20
    assert [(r[0], r[1]) for r in recs[1:]] == [
        (1, 0), (2, 0), (4, 0), (1, 1), (3, 0), (1, 0), (2, 0)]
    assert recs[3][4] == b"p1"
    disk = bytearray(16 << 20)
    for kind, flags, off, length, data in recs[1:]:
        if kind == 1:
            disk[off:off + length] = data
        elif kind == 3:
            disk[off:off + length] = bytes(length)
    assert bytes(disk) == want


@pytest.mark.parametrize("args,message", [
    (["torn=2"], "torn: 2 is out of range [0, 1]"),
    (["ure-recover=-0.1"], "ure-recover: -0.1 is out of range [0, 1]"),
    (["lost-write=x"], "lost-write: 'x' is not a number"),
    (["misdirected-write=1.5"], "misdirected-write: 1.5 is out of range"),
    (["flip-rate=1e-3"], "flip-rate: 1e-3 is out of range [0, 1e-06]"),
    (["realloc=2"], "realloc: 2 is out of range [0, 1]"),
    (["spares=-1"], "spares: '-1' is not a non-negative integer"),
    (["powercut-after=0"], "powercut-after: 0 is out of range"),
    (["powercut-after=soon"], "powercut-after: 'soon' is not a"),
])
def test_bad_powercut_parameter(args, message):
    p = run_nbdkit("roadmap-2006", "size=64M", *args)
    assert p.returncode != 0 and message in p.stderr, p.stderr


def test_flips_are_silent_and_logged(server, workdir):
    log = os.path.join(workdir, "faults.jsonl")
    s = server("roadmap-2006", "size=64M", "flip-rate=1e-7",
               f"faultlog={log}", "seed=5")
    h = s.connect()
    data = h.pread(64 << 20, 0)  # all zeros on the media; no error
    flipped = {}
    for e in read_log(log):
        assert e["kind"] == "flip" and e["length"] == 1
        bit = int(e["detail"].split()[1])
        flipped[e["offset"]] = flipped.get(e["offset"], 0) ^ (1 << bit)
    changed = {o: m for o, m in flipped.items() if m}
    assert all(data[o] == m for o, m in changed.items())
    assert data.count(0) == len(data) - len(changed)  # and nothing else
    assert len(changed) > 10


def test_fio_verify_reports_exactly_the_logged_corruption(server, workdir):
    """fio writes every 4 KiB block of the disk once with a checksummed
    header, then reads it all back: the blocks fio finds wrong are exactly
    those the fault log explains (lost writes leave zeros, misdirected
    writes leave the target stale and overwrite a victim, read-path flips
    corrupt a read)."""
    log = os.path.join(workdir, "faults.jsonl")
    size, bs = 16 << 20, 4096
    s = server("ideal", f"size={size}", "seed=3", f"faultlog={log}",
               "flip-rate=1e-7", "lost-write=0.01", "misdirected-write=0.005")
    uri = f"nbd+unix:///?socket={s.sock}"
    p = subprocess.run(
        ["fio", "--name=verify", "--ioengine=nbd", f"--uri={uri}",
         "--rw=write", f"--bs={bs}", f"--size={size}", "--iodepth=1",
         "--verify=crc32c", "--do_verify=1", "--continue_on_error=verify"],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    reported = {int(m) // bs for m in
                re.findall(r"at file \S+ offset (\d+), length", p.stderr)}

    # Replay the writes (block i written i-th) through the log.
    owner = [None] * (size // bs)
    fate = {}
    flips = {}
    for e in read_log(log):
        if e["kind"] == "lost-write":
            fate[e["offset"] // bs] = None
        elif e["kind"] == "misdirected-write":
            landed = int(e["detail"].rsplit(" ", 1)[1])
            fate[e["offset"] // bs] = landed // bs
        elif e["kind"] == "flip":
            bit = int(e["detail"].split()[1])
            key = (e["offset"], bit)
            flips[key] = flips.get(key, 0) ^ 1
    for i in range(size // bs):
        to = fate.get(i, i)
        if to is not None:
            owner[to] = i
    expected = {b for b in range(size // bs) if owner[b] != b}
    expected |= {off // bs for (off, _), odd in flips.items() if odd}
    lost = sum(1 for v in fate.values() if v is None)
    assert lost > 10 and len(fate) > lost and flips, "too few faults drawn"
    assert reported == expected, (sorted(reported ^ expected), p.stderr[-2000:])


def test_fault_profile_file_with_preset(server, workdir):
    """A profile file carries its disk's faults (a preset, then keys);
    the plugin's own fault parameters override the file's, in any order."""
    prof = os.path.join(workdir, "worn.profile")
    log = os.path.join(workdir, "faults.jsonl")
    with open(prof, "w") as f:
        f.write("base = roadmap-2006\nname = worn\n"
                "faults = harsh   # aged 3 years, certainly LSE-prone\n"
                "rot-rate = 0\nstuck-bits = 0\nflip-rate = 0\n")
    s = server(f"profile={prof}", "size=64M", f"faultlog={log}",
               "lse-max=20", "lse-min=20", "think=zero")
    h = s.connect()
    failed = []
    for off in range(0, 64 << 20, 1 << 20):
        try:
            h.pread(1 << 20, off)
        except nbd.Error as e:
            assert e.errno == "EIO"
            failed.append(off)
    rc, st = s.ctl_cmd("stats")
    faults = st["stats"]["faults"]
    assert faults["lse_prone"] and faults["lse_latent"] > 0
    assert faults["lse_latent"] <= 20
    bad = {e["offset"] >> 20 for e in read_log(log)
           if e["event"] == "inject" and e["kind"] in ("lse", "ure")}
    assert {off >> 20 for off in failed} == bad
    # harsh's error recovery is 100 ms per failing read.
    assert st["stats"]["busy_ns"] >= len(failed) * 100_000_000
    s.stop()

    s = server(f"profile={prof}", "size=64M", "faults=none")
    rc, st = s.ctl_cmd("stats")
    assert not st["stats"]["faults"]["lse_prone"]
