"""Shared fixtures for the harness's end-to-end tests."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def futuredisk():
    """Path of the built `futuredisk` binary (CTest passes it in)."""
    path = os.environ.get("FUTUREDISK")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("FUTUREDISK must name the built futuredisk binary")
    return path


@pytest.fixture
def run(futuredisk):
    """run(*args) -> CompletedProcess with text stdout/stderr."""
    def _run(*args, check=None, env=None):
        p = subprocess.run([futuredisk, *args], capture_output=True,
                           text=True, timeout=300,
                           env=None if env is None else {**os.environ, **env})
        if check is not None:
            assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
        return p
    return _run


def leftovers(tag):
    """What of an attached disk whose paths contain `tag` is still there:
    mounts (FUSE or file system), loop devices, nbdkit and nbdfuse
    processes, attach's state directories."""
    found = []
    with open("/proc/mounts") as f:
        found += [line.split()[1] for line in f if tag in line]
    loops = subprocess.run(["losetup", "-a"], capture_output=True,
                           text=True).stdout
    # A loop device whose FUSE file is gone shows its backing file as
    # "(/disk)": always a leak, whoever left it.
    found += [line for line in loops.splitlines()
              if tag in line or line.endswith("(/disk)")]
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if tag in cmd and ("nbdkit" in cmd or "nbdfuse" in cmd):
            found.append(f"pid {pid}: {cmd}")
    # `futuredisk attach` keeps its state in a directory named after the
    # mount point; detach (or a failed attach) removes it.
    state = "/run/futuredisk/attach"
    if os.path.isdir(state):
        found += [f"{state}/{d}" for d in os.listdir(state)
                  if tag.replace("/", "_") in d]
    return found
