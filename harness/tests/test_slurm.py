"""A real Slurm run: the installed slurm.sbatch, submitted as a 2-task
array to a Slurm controller and node started on localhost, runs a tiny
campaign as two shards; `futuredisk merge` makes them one night and
`futuredisk report` renders it.

Everything is private to the test: its own munged (socket and key in the
test's directory), its own slurm.conf (free ports, state and spool
directories in the test's directory), and futuredisk installed with
`cmake --install` into a staging directory, as a cluster's nodes would
have it.  Needs root (munged as root, the trials mount) and Debian's
slurm-wlm and munge, which `./futuredisk test` installs.
"""
import glob
import os
import socket
import sqlite3
import subprocess
import time

import pytest

# Two seeds x two targets: four trials, two per shard.
CAMPAIGN = """[campaign]
name = slurm-tiny
size = 256M
fill = 5
seeds = 1-2
think = zero

[matrix m]
fs = ext4
target = none data:1
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def must(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       **kw)
    assert p.returncode == 0, (cmd, p.returncode, p.stdout, p.stderr)
    return p.stdout


def slurm_conf(d, sock):
    host = socket.gethostname().split(".")[0]
    with open("/proc/meminfo") as f:
        kib = int(next(l for l in f if l.startswith("MemTotal")).split()[1])
    return f"""ClusterName=futuredisk-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={kib // 1024 // 2} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def logs(d):
    out = []
    for f in sorted(glob.glob(f"{d}/*.log")):
        with open(f, errors="replace") as fh:
            out.append(f"--- {f}\n" + "".join(fh.readlines()[-20:]))
    return "\n".join(out)


def stop_pid(pidfile):
    try:
        with open(pidfile) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, 9)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """munged, slurmctld and slurmd on localhost; yields the environment
    their clients need (SLURM_CONF) and the directory of their logs."""
    d = str(tmp_path_factory.mktemp("slurm"))
    m = f"{d}/munge"
    os.mkdir(m, 0o700)
    os.chmod(d, 0o711)  # munged checks the socket's directories
    sock = f"{m}/munge.socket"
    must(["mungekey", "--create", f"--keyfile={m}/munge.key"])
    must(["munged", "--force", f"--socket={sock}", f"--key-file={m}/munge.key",
          f"--log-file={d}/munged.log", f"--pid-file={m}/munged.pid",
          f"--seed-file={m}/munged.seed"])
    os.mkdir(f"{d}/state")
    os.mkdir(f"{d}/spool")
    with open(f"{d}/slurm.conf", "w") as f:
        f.write(slurm_conf(d, sock))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
    env["SLURM_CONF"] = f"{d}/slurm.conf"
    try:
        must(["slurmctld", "-f", env["SLURM_CONF"]], env=env)
        must(["slurmd", "-f", env["SLURM_CONF"]], env=env)
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env,
                               capture_output=True, text=True, timeout=30)
            state = p.stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        assert state == "idle", (state, logs(d))
        yield env, d
    finally:
        subprocess.run(["scontrol", "shutdown"], env=env,
                       capture_output=True, timeout=60)
        stop_pid(f"{d}/slurmd.pid")
        stop_pid(f"{d}/slurmctld.pid")
        subprocess.run(["munged", "--stop", f"--socket={sock}"],
                       capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """futuredisk installed with `cmake --install` into a staging
    directory: (bin directory, plugin, campaigns directory)."""
    build = os.environ.get("FD_BUILD_DIR")
    if not build:
        pytest.fail("FD_BUILD_DIR must name the build directory")
    stage = str(tmp_path_factory.mktemp("stage"))
    must(["cmake", "--install", build], env={**os.environ, "DESTDIR": stage})
    exe = glob.glob(f"{stage}/**/bin/futuredisk", recursive=True)
    so = glob.glob(f"{stage}/**/nbdkit-futuredisk-plugin.so", recursive=True)
    share = glob.glob(f"{stage}/**/share/futuredisk/campaigns", recursive=True)
    assert len(exe) == len(so) == len(share) == 1, (exe, so, share)
    return os.path.dirname(exe[0]), so[0], share[0]


def wait_job(env, job, d, timeout=900):
    """Until no task of the job is pending or running; their states."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], env=env,
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 0 and not p.stdout.strip():
            break
        time.sleep(1)
    else:
        pytest.fail(f"job {job} still queued after {timeout} s\n{logs(d)}")
    out = must(["scontrol", "-o", "show", "job", job], env=env)
    return [dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            for line in out.splitlines()]


def test_sbatch_array_runs_shards_that_merge_into_one_night(cluster,
                                                            installed,
                                                            tmp_path):
    env, d = cluster
    bindir, plugin, share = installed
    campaigns = tmp_path / "campaigns"
    campaigns.mkdir()
    (campaigns / "nightly.ini").write_text(CAMPAIGN)
    results = tmp_path / "nightly"
    job_env = {k: v for k, v in env.items()
               if not k.startswith(("JOB_COMPLETION", "FUTUREDISK_RUN",
                                    "FUTUREDISK_SHARD"))}
    job_env.update(PATH=f"{bindir}:{env['PATH']}", FUTUREDISK_PLUGIN=plugin,
                   FUTUREDISK=f"{bindir}/futuredisk",
                   FUTUREDISK_CAMPAIGNS=str(campaigns),
                   FUTUREDISK_RESULTS=str(results))
    # The array and the resources on the command line override the
    # script's #SBATCH lines: two tasks, one CPU each, so both run at once
    # on this 2-CPU node.
    job = must(["sbatch", "--parsable", "--array=0-1", "--cpus-per-task=1",
                "--mem=2G", f"--chdir={tmp_path}", f"{share}/slurm.sbatch"],
               env=job_env).strip().split(";")[0]
    tasks = wait_job(env, job, d)
    outputs = "\n".join(open(f, errors="replace").read()
                        for f in sorted(glob.glob(f"{tmp_path}/futuredisk-*.log")))
    assert len(tasks) == 2, (tasks, outputs, logs(d))
    for t in tasks:
        assert (t["JobState"], t["ExitCode"]) == ("COMPLETED", "0:0"), \
            (t, outputs, logs(d))

    shards = sorted(glob.glob(f"{results}/shard-*.db"))
    assert [os.path.basename(s) for s in shards] == ["shard-0.db",
                                                     "shard-1.db"], outputs
    night = f"slurm-{job}"
    per_shard = []
    for s in shards:
        con = sqlite3.connect(s)
        per_shard.append(con.execute(
            "SELECT run_id, count(*) FROM trials GROUP BY run_id").fetchall())
        con.close()
    assert per_shard == [[(night, 2)], [(night, 2)]], (per_shard, outputs)

    fd = f"{bindir}/futuredisk"
    merged = str(tmp_path / "nightly.db")
    out = must([fd, "merge", merged, *shards], env=job_env)
    assert "shard-0.db: 2 trials added" in out, out
    con = sqlite3.connect(merged)
    rows = con.execute("SELECT run_id, scenario, seed FROM trials").fetchall()
    con.close()
    assert len(rows) == len(set(rows)) == 4
    assert {r[0] for r in rows} == {night}
    html = tmp_path / "nightly.html"
    must([fd, "report", merged, "-o", str(html)], env=job_env)
    assert night in html.read_text()
