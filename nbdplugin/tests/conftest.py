"""Fixtures for the plugin's end-to-end tests: start nbdkit with the
plugin on a private unix socket, talk to it with python3-libnbd, and stop
it cleanly (so cleanup writes the stats file) whatever the test did."""
import json
import os
import subprocess
import tempfile

import nbd
import nbdkit_server
import pytest
from nbdkit_server import Nbdkit

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN", "")
FUTUREDISK = os.environ.get("FUTUREDISK", "")


class Server(Nbdkit):
    """One nbdkit process serving the plugin, with its control socket and
    stats file in workdir."""

    def __init__(self, workdir, args, extra=()):
        self.ctl = os.path.join(workdir, "ctl.sock")
        self.stats = os.path.join(workdir, "stats.json")
        if os.path.exists(self.ctl):  # an earlier server's
            os.unlink(self.ctl)
        self.handles = []
        super().__init__([PLUGIN, f"control={self.ctl}",
                          f"stats={self.stats}", *args], workdir=workdir,
                         extra=extra,
                         output=os.path.join(workdir, "nbdkit.log"))

    def connect(self):
        h = nbd.NBD()
        h.add_meta_context(nbd.CONTEXT_BASE_ALLOCATION)
        h.connect_unix(self.sock)
        self.handles.append(h)
        return h

    def ctl_cmd(self, *words):
        p = subprocess.run([FUTUREDISK, "ctl", "--json", self.ctl, *words],
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
        return super().stop()


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
    return nbdkit_server.run_nbdkit([PLUGIN, *args], timeout=timeout)
