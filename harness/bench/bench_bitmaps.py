#!/usr/bin/python3
"""Which bitmaps e2fsck -fn reads, and when: for each disk kept by
`futuredisk run --base-out DIR`, the plugin serves DIR/disk.store
read-only (nbdkit -r), nbdfuse and a read-only loop device attach it,
and e2fsck -fn runs under strace (pread64, fadvise64, and its "Pass N"
headings on stdout).  Per disk: the block groups, how many have no
bitmap on disk yet (dumpe2fs's BLOCK_UNINIT, INODE_UNINIT), and how many
have one but no block in use (the readahead skips those); the
readahead e2fsck asks for as pass 4 begins, before it prints the "Pass
4" heading (posix_fadvise WILLNEED calls, 4 KiB blocks); its reads
after the "Pass 5" heading (e2fsck_read_bitmaps) and how many of those
blocks the readahead had asked for.

Usage: bench_bitmaps.py PLUGIN.so PROFILE DIR [DIR ...]   (as root)
  e.g. futuredisk run --fs ext4 --profile roadmap-2009 --size full \\
         --meta-only 97000 --fill 50 --tree aged --base-out out/b/aged
       bench_bitmaps.py build/nbdplugin/nbdkit-futuredisk-plugin.so \\
         roadmap-2009 out/b/aged out/b/mixed"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common", "tests"))
from loop_attach import Attached  # noqa: E402
from nbdkit_server import Nbdkit  # noqa: E402

BLOCK = 4096
FADVISE = re.compile(r"fadvise64\(\d+, (\d+), (\d+), POSIX_FADV_WILLNEED")
# A whole call, or the second half of one strace split between threads.
PREAD = re.compile(r"pread64(?:\(| resumed>).*, (\d+), (\d+)\) = \d+$")


def trace(plugin, profile, store, work):
    """(strace lines, dumpe2fs text) of e2fsck -fn on store."""
    log = os.path.join(work, "strace.log")
    with Nbdkit([plugin, f"profile={profile}", f"store={store}"],
                workdir=work, extra=("-r",)) as srv, \
            Attached(srv.sock, work, readonly=True) as disk:
        subprocess.run(["strace", "-f", "-o", log, "-e",
                        "trace=pread64,fadvise64,write", "stdbuf", "-oL",
                        "e2fsck", "-fn", disk.dev],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        groups = subprocess.run(["dumpe2fs", disk.dev], capture_output=True,
                                text=True).stdout
    with open(log) as f:
        return f.read().splitlines(), groups


def heading(lines, n):
    for i, line in enumerate(lines):
        if f'write(1, "Pass {n}: ' in line:
            return i
    raise RuntimeError(f"e2fsck printed no 'Pass {n}' heading")


def report(name, lines, groups):
    p3, p4, p5 = heading(lines, 3), heading(lines, 4), heading(lines, 5)
    ahead, calls = set(), 0
    for line in lines[p3:p4]:
        m = FADVISE.search(line)
        if m:
            off, n = int(m[1]), int(m[2])
            ahead.update(range(off // BLOCK, (off + n + BLOCK - 1) // BLOCK))
            calls += 1
    reads = [int(m[2]) // BLOCK for m in map(PREAD.search, lines[p5:]) if m]
    per = re.split(r"\n(?=Group \d+:)", groups)[1:]
    per_group = int(re.search(r"^Blocks per group:\s+(\d+)", groups, re.M)[1])
    free = [re.search(r"\n\s+(\d+) free blocks,", g) for g in per]
    empty = sum(1 for g, m in zip(per, free) if "BLOCK_UNINIT" not in g and m
                and int(m[1]) == per_group)
    print(f"{name}: {len(per)} groups, {groups.count('BLOCK_UNINIT')} "
          f"BLOCK_UNINIT, {groups.count('INODE_UNINIT')} INODE_UNINIT, "
          f"{empty} with a block bitmap and no block in use; "
          f"readahead before 'Pass 4': {calls} calls, {len(ahead)} "
          f"blocks; pass 5: {len(reads)} reads of 4 KiB, "
          f"{len(set(reads) & ahead)} of them read ahead")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.split("Usage: ", 1)[1])
    plugin, profile = os.path.abspath(sys.argv[1]), sys.argv[2]
    for d in sys.argv[3:]:
        store = os.path.abspath(os.path.join(d, "disk.store"))
        if not os.path.isfile(store):
            sys.exit(f"bench_bitmaps.py: {store}: no such disk "
                     "(futuredisk run --base-out DIR keeps one)")
        with tempfile.TemporaryDirectory(prefix="bitmaps.") as work:
            lines, groups = trace(plugin, profile, store, work)
        report(d, lines, groups)


if __name__ == "__main__":
    main()
