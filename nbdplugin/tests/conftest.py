"""Fixtures for the plugin's end-to-end tests: start nbdkit with the
plugin on a private unix socket, talk to it with python3-libnbd, and stop
it cleanly (so cleanup writes the stats file) whatever the test did."""
import json
import os
import signal
import subprocess
import tempfile
import time

import nbd
import pytest

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN", "")
FUTUREDISK = os.environ.get("FUTUREDISK", "")


def nbdkit_env():
    """The plugin may be built with ASan; nbdkit is not, so the sanitizer
    runtime must be preloaded into nbdkit (and only nbdkit)."""
    env = dict(os.environ)
    preload = os.environ.get("FD_NBDKIT_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


class Server:
    """One nbdkit process serving the plugin."""

    def __init__(self, workdir, args, extra=()):
        self.dir = workdir
        self.sock = os.path.join(workdir, "nbd.sock")
        self.ctl = os.path.join(workdir, "ctl.sock")
        self.stats = os.path.join(workdir, "stats.json")
        self.log = os.path.join(workdir, "nbdkit.log")
        # nbdkit writes its pid file once it accepts connections; the
        # socket file exists a moment earlier, between bind and listen.
        pidfile = os.path.join(workdir, "nbdkit.pid")
        cmd = ["nbdkit", "-f", "-P", pidfile, "-U", self.sock, *extra, PLUGIN,
               f"control={self.ctl}", f"stats={self.stats}", *args]
        for stale in (self.sock, self.ctl, pidfile):  # an earlier server's
            if os.path.exists(stale):
                os.unlink(stale)
        self.logf = open(self.log, "w")
        self.proc = subprocess.Popen(cmd, stderr=self.logf,
                                     stdout=self.logf, env=nbdkit_env())
        deadline = time.monotonic() + 30
        while not os.path.exists(pidfile):
            if self.proc.poll() is not None:
                raise RuntimeError("nbdkit exited: " + self.log_text())
            if time.monotonic() > deadline:
                raise RuntimeError("nbdkit did not start: " + self.log_text())
            time.sleep(0.02)
        self.handles = []

    def log_text(self):
        if not self.logf.closed:
            self.logf.flush()
        with open(self.log) as f:
            return f.read()

    def connect(self):
        h = nbd.NBD()
        h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
        h.connect_unix(self.sock)
        self.handles.append(h)
        return h

    def ctl_cmd(self, *words):
        p = subprocess.run([FUTUREDISK, "ctl", self.ctl, *words],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, json.loads(p.stdout) if p.stdout else None

    def mark(self, name):
        rc, reply = self.ctl_cmd("mark", name)
        assert rc == 0, reply
        return reply["virtual_ns"]

    def stop(self):
        for h in self.handles:
            try:
                h.shutdown()
            except nbd.Error:
                pass
        self.handles = []
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self.logf.close()
        return self.proc.returncode


@pytest.fixture
def workdir():
    with tempfile.TemporaryDirectory(prefix="fd-plugin-") as d:
        yield d


@pytest.fixture
def server(workdir):
    """server(*args) starts nbdkit with the plugin; all are stopped at the
    end of the test."""
    started = []

    def start(*args, extra=()):
        s = Server(workdir, args, extra)
        started.append(s)
        return s
    yield start
    for s in started:
        s.stop()


def run_nbdkit(*args, timeout=60):
    """Run nbdkit with the plugin to completion (for refused parameters)."""
    return subprocess.run(["nbdkit", "-f", "-U", "-", PLUGIN, *args,
                           "--run", "true"],
                          capture_output=True, text=True, timeout=timeout,
                          env=nbdkit_env())
