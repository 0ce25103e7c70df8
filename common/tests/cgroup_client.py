"""A client of the futuredisk plugin in a cgroup of its own: one read,
CPU burnt, another read.  What think=cpu charges is that cgroup's CPU;
harness/tests/test_think.py tests it and harness/bench/bench_think.py
measures it with this one client."""
import subprocess

# argv: SOCKET LOOPS
CLIENT = r"""
import sys, nbd
h = nbd.NBD()
h.connect_unix(sys.argv[1])
h.pread(4096, 1 << 20)
x = 0
for i in range(int(sys.argv[2])):
    x += i * i
h.pread(4096, 100 << 20)
h.shutdown()
"""


def cgroup2_root():
    """Where cgroup v2 is mounted, or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ")
            if post.split()[0] == "cgroup2":
                return pre.split()[4]
    return None


def run_client(python, sock, loops, cgroup):
    """The client with `loops` rounds of CPU, joined to the cgroup
    directory before it starts."""
    def join():
        with open(f"{cgroup}/cgroup.procs", "w") as f:
            f.write("0")
    subprocess.run([python, "-c", CLIENT, sock, str(loops)], check=True,
                   preexec_fn=join)
