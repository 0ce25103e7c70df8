"""Which chunkfs daemons are running (the tests' and the benchmark's way to
wait for one to exit after an unmount, or to kill one as a crash would)."""
import os


def chunkfs_daemons(source):
    """Pids of `chunkfs` processes serving `source` (a path or a URI)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if os.path.basename(argv[0]) == b"chunkfs" and \
                str(source).encode() in argv:
            found.append(int(pid))
    return found
