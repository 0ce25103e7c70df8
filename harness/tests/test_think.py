"""think=cpu and --host: the checker's cgroup CPU time on the virtual
clock, scaled by the host's speed, and the host's RAM as a memory limit
whose OOM kills are a finding.  Root and a cgroup v2 mount, as in CI."""
import json
import os
import subprocess
import sys

import pytest

import cgroup_client
import nbdkit_server

PLUGIN = os.environ.get("FUTUREDISK_PLUGIN", "")
SPEED_2006 = 0.35  # common/host.c, server-2006

def cgroup2_root():
    root = cgroup_client.cgroup2_root()
    if root is None:
        pytest.fail("no cgroup v2 mount")
    return root


def usage_usec(cg):
    with open(f"{cg}/cpu.stat") as f:
        return next(int(x.split()[1]) for x in f
                    if x.startswith("usage_usec "))


def our_cgroups():
    root = cgroup2_root()
    return [d for d in os.listdir(root) if d.startswith("futuredisk-")]


def ctl(futuredisk, sock, *words):
    p = subprocess.run([futuredisk, "ctl", "--json", sock, *words],
                       capture_output=True, text=True, timeout=60,
                       check=True)
    return json.loads(p.stdout)


def client_run(futuredisk, tmp_path, loops):
    """The client once in a fresh cgroup, against a fresh disk: the
    virtual seconds from before it started to after it left, and the
    cgroup's CPU seconds."""
    cg = f"{cgroup2_root()}/fd-test-think-{os.getpid()}"
    os.mkdir(cg)
    try:
        ctlsock = str(tmp_path / "ctl.sock")
        with nbdkit_server.Nbdkit(
                [PLUGIN, "roadmap-2006", "size=256M", "think=cpu",
                 f"cgroup={cg}", "host=server-2006",
                 f"control={ctlsock}"]) as s:
            v0 = ctl(futuredisk, ctlsock, "mark", "a")["virtual_ns"]
            c0 = usage_usec(cg)
            cgroup_client.run_client(sys.executable, s.sock, loops, cg)
            cpu = (usage_usec(cg) - c0) / 1e6
            v1 = ctl(futuredisk, ctlsock, "mark", "b")["virtual_ns"]
        return (v1 - v0) / 1e9, cpu
    finally:
        os.rmdir(cg)


def test_plugin_charges_the_cgroups_cpu(futuredisk, tmp_path):
    """Virtual time = the client's CPU over the host's speed plus the two
    reads' service, whatever the wall clock did (the service varies with
    where the platter is when a read arrives: within a seek and a
    revolution each), whatever the wall clock did."""
    light, cpu_l = client_run(futuredisk, tmp_path, 1000)
    heavy, cpu_h = client_run(futuredisk, tmp_path, 3000000)
    again, cpu_a = client_run(futuredisk, tmp_path, 3000000)
    assert cpu_h > cpu_l + 0.1
    for v, c in ((light, cpu_l), (heavy, cpu_h), (again, cpu_a)):
        # roadmap-2006: a full stroke under 25 ms, a turn 8.3 ms.
        assert 0 < v - c / SPEED_2006 < 2 * (0.025 + 0.0084), (v, c)
    # Two runs differ in virtual time by what their CPU differed (on a
    # busy machine the same loop's CPU time moves by 10-20 %), and no
    # more than the reads' positions.
    assert abs((heavy - again) - (cpu_h - cpu_a) / SPEED_2006) < \
        2 * (0.025 + 0.0084), (heavy, again, cpu_h, cpu_a)


def phase(rec, name):
    return next(p for p in rec["phases"] if p["name"] == name)


def trial(futuredisk, tmp_path, name, *args):
    """A 256 MiB ext4 trial: its record, and whether the cgroup named
    after its pid is gone at the end."""
    out = tmp_path / f"{name}.jsonl"
    p = subprocess.Popen([futuredisk, "run", "--fs", "ext4", "--size", "256M",
                          "--fill", "20", "--dir", str(tmp_path / name),
                          f"--json={out}", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 0, (stdout, stderr)
    left = [d for d in our_cgroups() if d.startswith(f"futuredisk-{p.pid}-")]
    return json.loads(out.read_text().splitlines()[-1]), left


def test_run_charges_e2fsck(futuredisk, tmp_path):
    """A trial with think=cpu: each checker phase charged its CPU over
    the host's speed, and the cgroup is gone afterwards."""
    rec, left = trial(futuredisk, tmp_path, "t", "--think", "cpu", "--host",
                      "server-2006")
    assert (rec["think"], rec["host"]) == ("cpu", "server-2006")
    for name in ("check", "repair", "recheck"):
        p = phase(rec, name)
        assert p["outcome"] == "CLEAN"
        # e2fsck's own CPU (the harness's rusage of the phase holds it
        # and a little of the harness's) slowed to the 2006 host.
        # (Not all of it reaches the clock: CPU spent while a request was
        # still in the drive overlapped it; test_plugin_... checks that.)
        assert p["charged_s"] > 0 and p["virtual_s"] > 0, p
        assert p["charged_s"] <= (p["cpu_s"] + 0.05) / SPEED_2006, p
    assert left == []


def test_memory_limit_is_a_finding(futuredisk, tmp_path):
    """A checker that does not fit in the host's RAM is killed there: the
    outcome OOM, not an error of the rig; the trial goes on."""
    rec, left = trial(futuredisk, tmp_path, "oom", "--host", "nas-2010",
                      "--host-ram", "300K")
    assert left == []
    assert phase(rec, "check")["outcome"] == "OOM"
    assert rec["error"] in (None, "")
    assert "charged_s" in phase(rec, "check")  # in the cgroup


@pytest.mark.parametrize("args,message", [
    (["--think", "cpu", "--host", "cray-1"],
     "--host: unknown host 'cray-1' (known: native, server-2024, "
     "server-2006, nas-2010)"),
    (["--think", "warm"], "--think: 'warm' is not auto, real, zero or cpu"),
    (["--host-ram", "0"], "--host-ram: '0' is not a positive size"),
])
def test_bad_host_options(run, args, message):
    p = run("run", "--fs", "ext4", *args)
    assert p.returncode != 0
    assert message in p.stderr, p.stderr


def test_no_cgroup_no_start(futuredisk, tmp_path):
    """Without root there is no cgroup: an error naming --think that
    points at --think real, and nothing started (no trial directory)."""
    d = tmp_path / "never"
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", futuredisk, "run", "--fs", "ext4",
                        "--think", "cpu", "--dir", str(d)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "--think: a checker's cgroup needs root; --think real" in \
        p.stderr, p.stderr
    assert not d.exists()


def test_default_think_is_cpu_where_a_cgroup_can_be_made(futuredisk,
                                                         tmp_path):
    """Without --think: the checker's CPU where there is a cgroup (the
    record says cpu), else wall time, said once, and the command goes
    on (here to fail later: an unprivileged user attaches nothing)."""
    rec, left = trial(futuredisk, tmp_path, "auto")
    assert rec["think"] == "cpu" and left == []
    assert phase(rec, "check")["charged_s"] > 0
    for cmd in (["run", "--fs", "ext4", "--dir", str(tmp_path / "never")],
                ["predict", "--fs", "ext4", "--profile", "roadmap-2006"]):
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                            "--clear-groups", futuredisk, *cmd],
                           capture_output=True, text=True, timeout=120)
        assert p.stderr.count(
            f"futuredisk {cmd[0]}: no cgroup for the checkers (--think: a "
            "checker's cgroup needs root): the wall time between requests "
            "goes on the clock (think=real)") == 1, p.stderr


def test_profile_host_key(futuredisk, run, tmp_path):
    """A profile file's host key is the default --host; an unknown one
    is refused when the profile loads, before anything starts."""
    good = tmp_path / "old.profile"
    good.write_text("base = roadmap-2006\nname = old-box\nhost = server-2006\n")
    bad = tmp_path / "bad.profile"
    bad.write_text("base = roadmap-2006\nname = bad-box\nhost = cray-1\n")
    p = run("run", "--fs", "ext4", "--profile", str(bad), "--dir",
            str(tmp_path / "never"))
    assert p.returncode != 0
    assert f"profile file {bad}: host: unknown host 'cray-1'" in p.stderr
    assert not (tmp_path / "never").exists()
    rec, left = trial(futuredisk, tmp_path, "old", "--profile", str(good),
                      "--think", "cpu")
    assert rec["host"] == "server-2006" and left == []
    assert phase(rec, "check")["charged_s"] > 0
