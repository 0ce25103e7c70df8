"""The /dev/nbdN attach path, tested in a guest whose kernel has nbd.

The machines this project runs on (and its CI) are containers without an
nbd module, where `auto` always picks nbdfuse + a loop device; so this
boots Debian's kernel in QEMU over the host's own files (vm.py) and runs
guest_nbd.py there with pytest, against the very binaries under test."""
import os
import shlex

import vm

HERE = os.path.dirname(os.path.abspath(__file__))

# What the guest's tests need from this environment (CTest sets them).
PASS_ENV = ["FUTUREDISK", "FUTUREDISK_PLUGIN", "FD_NBDKIT_PRELOAD",
            "LC_ALL", "TZ"]


def test_nbd_attach_in_guest(tmp_path):
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in PASS_ENV
                   if k in os.environ)
    script = f"""set -e
# Guest set-up, not the harness's business: the file systems mounted.
modprobe ext4
cd {shlex.quote(HERE)}
env {env} /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
  --basetemp=/var/tmp/pytest guest_nbd.py
"""
    rc, out = vm.run(script, str(tmp_path))
    print(out)
    assert rc == 0, out[-6000:]
    assert " passed" in out and "skipped" not in out, out[-2000:]
