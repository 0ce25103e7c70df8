"""What the benchmark scripts share: an nbdkit on a private unix socket."""
import contextlib
import os
import subprocess
import tempfile
import time


@contextlib.contextmanager
def nbdkit(args, stderr=None):
    """Yield (process, socket path) for `nbdkit -f -U SOCK ARGS...`; the
    server is stopped and its directory removed afterwards."""
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "sock")
        pidfile = os.path.join(d, "pid")  # written once it is listening
        p = subprocess.Popen(["nbdkit", "-f", "-P", pidfile, "-U", sock,
                              *args], stderr=stderr)
        try:
            while not os.path.exists(pidfile):
                if p.poll() is not None:
                    raise RuntimeError(f"nbdkit {' '.join(args)} exited")
                time.sleep(0.02)
            yield p, sock
        finally:
            p.terminate()
            p.wait()
