"""The one way tests and benchmarks start nbdkit: on a private unix socket
in a directory of their own, ready (listening) when the constructor
returns, stopped with SIGTERM so that plugins run their cleanup (the
futuredisk plugin writes its stats file then).

Tests find this module on PYTHONPATH (fd_pytest in the top-level
CMakeLists.txt sets it); benchmarks, run by hand, put this directory on
sys.path themselves."""
import os
import shutil
import signal
import subprocess
import tempfile
import time


def nbdkit_env():
    """The environment for nbdkit.  A plugin built with ASan in an nbdkit
    that is not needs the sanitizer runtime preloaded (CMake names it in
    FD_NBDKIT_PRELOAD), into nbdkit only."""
    env = dict(os.environ)
    preload = os.environ.get("FD_NBDKIT_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


class Nbdkit:
    """`nbdkit -f -U SOCK [EXTRA...] ARGS...`, serving until stop() (or
    the end of a with block).

    workdir: where the socket, the pid file and whatever else the caller
    puts there live; without one, a fresh directory that stop() removes.
    output: where nbdkit's stdout and stderr go, a path (the log is then
    in log_text()) or a file object; by default, the caller's.
    """

    def __init__(self, args, workdir=None, extra=(), output=None,
                 timeout=30):
        self.owns_dir = workdir is None
        self.dir = tempfile.mkdtemp(prefix="nbdkit.") if workdir is None \
            else workdir
        self.sock = os.path.join(self.dir, "nbd.sock")
        self.uri = f"nbd+unix:///?socket={self.sock}"
        self.log = output if isinstance(output, str) else None
        # nbdkit writes its pid file once it accepts connections; the
        # socket file exists a moment earlier, between bind and listen.
        pidfile = os.path.join(self.dir, "nbdkit.pid")
        for stale in (self.sock, pidfile):  # an earlier server's
            if os.path.exists(stale):
                os.unlink(stale)
        self.logf = open(self.log, "w") if self.log else None
        out = self.logf if self.log else output
        self.proc = subprocess.Popen(
            ["nbdkit", "-f", "-P", pidfile, "-U", self.sock, *extra, *args],
            stdout=out, stderr=out, env=nbdkit_env())
        deadline = time.monotonic() + timeout
        while not os.path.exists(pidfile):
            if self.proc.poll() is not None:
                why = "nbdkit exited: " + self.log_text()
                self._cleanup()
                raise RuntimeError(why)
            if time.monotonic() > deadline:
                why = "nbdkit did not start: " + self.log_text()
                self.stop()
                raise RuntimeError(why)
            time.sleep(0.02)

    @property
    def pid(self):
        return self.proc.pid

    def log_text(self):
        """What nbdkit wrote so far, if it writes to a log file."""
        if self.log is None:
            return "(see its stderr)"
        if self.logf and not self.logf.closed:
            self.logf.flush()
        with open(self.log) as f:
            return f.read()

    def stop(self, timeout=60):
        """SIGTERM, wait for the exit; nbdkit's exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=timeout)
        self._cleanup()
        return self.proc.returncode

    def _cleanup(self):
        if self.logf:
            self.logf.close()
        if self.owns_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run_nbdkit(args, timeout=60):
    """Run nbdkit with ARGS to completion (`--run true`: start, serve no
    one, exit), for parameters that must be refused."""
    return subprocess.run(["nbdkit", "-f", "-U", "-", *args,
                           "--run", "true"],
                          capture_output=True, text=True, timeout=timeout,
                          env=nbdkit_env())
