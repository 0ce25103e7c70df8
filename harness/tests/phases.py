"""Following a running trial through its phases (host and guest tests)."""
import os
import time

import pytest


def wait_for_phase(p, d, phase):
    """Return once the trial p (stderr piped, text), whose --dir is d, has
    entered phase, with the stderr lines read so far.  "attach": once the
    harness is up (its signal handlers too) and the server is starting;
    any other phase: when the trial says it begins."""
    seen = []
    if phase == "attach":
        while not os.path.exists(os.path.join(d, "nbdkit.log")):
            assert p.poll() is None, p.communicate()
            time.sleep(0.01)
        return seen
    for line in p.stderr:
        seen.append(line)
        if line.startswith(f"futuredisk: {phase} "):
            return seen
    pytest.fail(f"the trial never reached {phase}: {seen}")
