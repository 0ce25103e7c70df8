#!/usr/bin/python3
"""The same trial attached both ways: /dev/nbdN (the kernel's nbd client)
and nbdfuse + a loop device, in a QEMU guest whose kernel has both
(harness/tests/vm.py; the host's containers have no nbd).  Prints each
trial's checker and audit times in virtual seconds, so the two block
paths can be compared against the spread between identical runs.

Usage: bench_attach.py BUILD_DIR [ROUNDS]   (as root)"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests"))
import vm  # noqa: E402

PHASES = ["check", "repair", "recheck", "audit"]


def main():
    build = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs = " ".join(["nbd loop"] * rounds)
    script = f"""set -e
modprobe ext4; modprobe fuse; modprobe loop
export FUTUREDISK_PLUGIN={build}/nbdplugin/nbdkit-futuredisk-plugin.so
for a in {runs}; do
  {build}/harness/futuredisk run --fs ext4 --profile roadmap-2006 \\
    --size 1G --seed 4 --think zero --attach $a \\
    --json={vm.GUEST_OUT}/trials.jsonl >/dev/null 2>&1
done
cat {vm.GUEST_OUT}/trials.jsonl
"""
    with tempfile.TemporaryDirectory() as d:
        rc, out = vm.run(script, d)
    if rc != 0:
        sys.exit(f"the guest's trials failed:\n{out}")
    print(f"{'attach':<7}" + "".join(f"{p:>10}" for p in PHASES)
          + "   (virtual s)")
    for line in out.splitlines():
        rec = json.loads(line)
        t = {p["name"]: p["virtual_s"] for p in rec["phases"]}
        print(f"{rec['attach']:<7}"
              + "".join(f"{t[p]:>10.3f}" for p in PHASES))


if __name__ == "__main__":
    main()
