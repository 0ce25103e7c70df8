"""What the chunkfs tests and benchmark share: which chunkfs daemons are
running (to wait for one to exit after an unmount, or to kill one as a
crash would), and one command to the futuredisk plugin's control socket."""
import json
import os
import socket
import time


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


def wait_gone(source, timeout=120):
    """Wait until no chunkfs daemon serves `source`: after an unmount one
    syncs as it exits, and a killed one takes a moment to go, as long as a
    loaded machine makes it.  AssertionError if one is still there after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while chunkfs_daemons(source):
        assert time.monotonic() < deadline, f"chunkfs on {source} never exited"
        time.sleep(0.02)


def control(sock, command):
    """Send one command line to a plugin control socket; its JSON reply."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(command.encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        data = s.recv(65536)
        if not data:
            break
        reply += data
    s.close()
    return json.loads(reply)
