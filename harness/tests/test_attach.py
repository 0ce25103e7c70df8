"""`futuredisk attach` / `futuredisk detach`: an emulated disk as a
mounted file system through nbdkit + nbdfuse + losetup --direct-io=on,
and nothing left behind afterwards, after failures too."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import leftovers


@pytest.fixture
def mountpoint(tmp_path):
    d = tmp_path / "mnt"
    d.mkdir()
    return str(d)


def test_attach_mkfs_write_detach(run, mountpoint):
    p = run("attach", "--mount", mountpoint, "--profile", "roadmap-2006",
            "--size", "256M", "--fs", "ext4", "--mkfs", "--seed", "3",
            "--faults", "consumer,lse=0", "--attach", "loop", check=0)
    info = dict(line.split(" ", 1) for line in p.stdout.splitlines())
    assert info["device"].startswith("/dev/loop")
    assert os.path.ismount(mountpoint)
    try:
        with open(os.path.join(mountpoint, "hello"), "w") as f:
            f.write("tomorrow's disk\n")
        # The control socket answers while attached.
        p = subprocess.run([os.environ["FUTUREDISK"], "ctl", info["control"],
                            "stats"], capture_output=True, text=True)
        stats = json.loads(p.stdout)["stats"]
        assert stats["profile"] == "roadmap-2006" and stats["seed"] == 3
        assert stats["writes"] > 0
        # A second attach on the same mount point is refused.
        p = run("attach", "--mount", mountpoint, check=1)
        assert "already has an attached disk" in p.stderr
    finally:
        p = run("detach", mountpoint)
    assert p.returncode == 0, p.stderr
    # detach prints the server's final stats.
    assert json.loads(p.stdout)["size"] == 256 << 20
    assert not os.path.ismount(mountpoint)
    assert leftovers(mountpoint.replace("/", "_")) == []
    assert leftovers(mountpoint) == []
    # Nothing attached any more.
    assert "nothing attached" in run("detach", mountpoint, check=1).stderr


def test_server_that_died_is_reported_and_torn_down(run, mountpoint):
    """nbdkit killed under a mounted file system: detach says so (exit 1,
    naming it), still takes everything down, and leaves nothing to detach
    again."""
    run("attach", "--mount", mountpoint, "--profile", "roadmap-2006",
        "--size", "128M", "--fs", "ext4", "--mkfs", "--attach", "loop",
        check=0)
    state = "/run/futuredisk/attach/" + mountpoint.replace("/", "_")
    with open(os.path.join(state, "nbdkit.pid")) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGKILL)
    p = run("detach", mountpoint, check=1)
    assert f"nbdkit (pid {pid}) died under the disk" in p.stderr, p.stderr
    assert not os.path.ismount(mountpoint)
    assert leftovers(mountpoint.replace("/", "_")) == []
    assert leftovers(mountpoint) == []
    assert "nothing attached" in run("detach", mountpoint, check=1).stderr


def test_mkfs_beside_a_died_fuse_server_names_its_mount(run, mountpoint,
                                                       tmp_path):
    """nbdfuse killed: its mount is dead, mkfs.btrfs of another disk fails
    on it (it stats every mount), and the error names that mount."""
    run("attach", "--mount", mountpoint, "--profile", "roadmap-2006",
        "--size", "128M", "--fs", "ext4", "--mkfs", "--attach", "loop",
        check=0)
    state = "/run/futuredisk/attach/" + mountpoint.replace("/", "_")
    try:
        with open(os.path.join(state, "nbdfuse.pid")) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        other = tmp_path / "other"
        other.mkdir()
        p = run("attach", "--mount", str(other), "--profile", "roadmap-2006",
                "--size", "256M", "--fs", "btrfs", "--mkfs", "--attach",
                "loop", check=1)
        assert ("FUSE mounts whose server is gone (umount -l each): "
                + os.path.join(state, "fuse")) in p.stderr, p.stderr
        assert leftovers(str(other)) == []
    finally:
        run("detach", mountpoint)
    assert not os.path.ismount(mountpoint)


def fs_uuid(device):
    """The UUID blkid reads on a device."""
    return subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value",
                           device], capture_output=True, text=True,
                          check=True).stdout.strip()


# A seed nobody else's disk is likely to have on this machine.
UUID_SEED = "727100447"


@pytest.mark.parametrize("fs,size", [("xfs", "512M"), ("btrfs", "256M")])
def test_mkfs_uuid_follows_the_seed(run, tmp_path, fs, size):
    """xfs and btrfs take their UUID from the seed, as ext4 does: made
    again with the same seed, the same UUID; with another, another.  A
    disk of the same seed attached beside it mounts too: xfs with
    nouuid, btrfs with the seed's next UUID (mkfs.btrfs refuses one
    another device has), said on stderr."""
    mounts = []

    def attach(seed):
        """Attach a disk made with seed: (its mount, UUID, stderr)."""
        m = str(tmp_path / f"m{len(mounts)}")
        os.mkdir(m)
        mounts.append(m)
        p = run("attach", "--mount", m, "--profile", "roadmap-2013",
                "--size", size, "--fs", fs, "--mkfs", "--seed", seed,
                "--attach", "loop", check=0)
        assert os.path.ismount(m)
        info = dict(line.split(" ", 1) for line in p.stdout.splitlines())
        return m, fs_uuid(info["device"]), p.stderr

    try:
        m0, first, _ = attach(UUID_SEED)
        m1, beside, said = attach(UUID_SEED)
        if fs == "btrfs":
            assert beside != first
            assert "made with the seed's UUID no. 2" in said, said
        else:
            assert beside == first
        run("detach", m1, check=0)
        run("detach", m0, check=0)
        m2, again, said = attach(UUID_SEED)
        assert again == first and "UUID no." not in said, said
        run("detach", m2, check=0)
        m3, other, _ = attach(str(int(UUID_SEED) + 1))
        assert other != first
        run("detach", m3, check=0)
    finally:
        for m in mounts:
            if os.path.ismount(m):
                run("detach", m)
    for m in mounts:
        assert leftovers(m.replace("/", "_")) == [] and leftovers(m) == []


def test_store_survives_reattach(run, mountpoint, tmp_path):
    store = str(tmp_path / "disk.img")
    run("attach", "--mount", mountpoint, "--profile", "ent-15k", "--size",
        "128M", "--fs", "ext4", "--mkfs", "--store", store, check=0)
    try:
        with open(os.path.join(mountpoint, "kept"), "w") as f:
            f.write("still here\n")
    finally:
        run("detach", mountpoint, check=0)
    run("attach", "--mount", mountpoint, "--profile", "ent-15k", "--size",
        "128M", "--fs", "ext4", "--store", store, check=0)
    try:
        with open(os.path.join(mountpoint, "kept")) as f:
            assert f.read() == "still here\n"
    finally:
        run("detach", mountpoint, check=0)
    assert leftovers(mountpoint.replace("/", "_")) == []


@pytest.mark.parametrize("args,message", [
    ([], "--mount DIR is required"),
    (["--mount", "/nonexistent/mnt"], "/nonexistent/mnt: No such file"),
    (["--mkfs"], "--mkfs needs --fs TYPE"),
    (["--fs", "ext5"], "unknown file system 'ext5' (adapters: ext4"),
    (["--seed", "x"], "--seed: 'x'"),
    (["--fs", "ext4", "--faults", "lse=2"], "lse: 2 is out of range [0, 1]"),
    (["--fs", "ext4", "--faults", "awful"], "faults: unknown preset 'awful'"),
    (["--fs", "ext4", "--profile", "floppy"], "unknown profile 'floppy'"),
    (["--fs", "ext4", "--size", "64M", "--attach", "loop"],
     "mount -t ext4 /dev/loop"),
    (["--fs", "ext4", "--attach", "bogus"],
     "--attach bogus: not one of auto, nbd, loop"),
])
def test_bad_arguments_leave_nothing(run, mountpoint, args, message):
    argv = list(args)
    if "--mount" not in argv and args and args[0] != "--mkfs":
        argv = ["--mount", mountpoint] + argv
    if args and args[0] == "--mkfs":
        argv = ["--mount", mountpoint] + argv
    p = run("attach", *argv)
    assert p.returncode in (1, 2), p.stdout
    assert message in p.stderr, p.stderr
    assert not os.path.ismount(mountpoint)
    assert leftovers(mountpoint.replace("/", "_")) == []


@pytest.mark.parametrize("how", ["plugin", "parameter"])
def test_server_that_cannot_start_fails_at_once(futuredisk, mountpoint,
                                                tmp_path, how):
    """An nbdkit that cannot start (a plugin it cannot load, a plugin
    parameter it refuses) fails the attach at once, in nbdkit's own
    words, and leaves nothing behind: through the sanitizer build's
    preload wrapper too (env LD_PRELOAD=... nbdkit), where nbdkit hangs in
    its exit handlers after a plugin it could not load, and attach used
    to wait 120 s for it, then say only that it was not ready.  (The
    60 s bound is a hang guard, not a timing.)"""
    env = dict(os.environ)
    args = ["--size", "64M"]
    if how == "plugin":
        bogus = tmp_path / "not-a-plugin.so"
        bogus.write_text("not a shared object\n" * 64)
        env["FUTUREDISK_PLUGIN"] = str(bogus)
        said = (f"nbdkit failed: nbdkit: error: cannot open plugin '{bogus}': "
                f"{bogus}: invalid ELF header")
    else:
        args = ["--size", "huge"]
        said = "nbdkit failed: nbdkit: error: size: 'huge' is not a size"
    p = subprocess.run([futuredisk, "attach", "--mount", mountpoint,
                        "--profile", "roadmap-2006", "--fs", "ext4",
                        "--attach", "loop", *args],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert said in p.stderr, p.stderr
    assert "not ready within" not in p.stderr and "env failed" not in p.stderr
    assert not os.path.ismount(mountpoint)
    assert leftovers(mountpoint.replace("/", "_")) == []


def test_plugin_the_user_cannot_read_is_named(futuredisk):
    """A plugin under a directory the user may not search (a checkout in
    a 0700 directory, the command run as another user): the trial fails
    at once, naming the plugin, the user and the directory in the way,
    and nbdkit is never started (it would say only "Permission denied";
    through the sanitizer build's preload wrapper it would then hang).
    Not pytest's tmp_path: its parents are private to root, and the
    trial's directory must be the other user's to make."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="fd-plugin."))
    try:
        os.chmod(scratch, 0o777)
        private = scratch / "private"
        private.mkdir()
        os.chmod(private, 0o700)
        plugin = private / "nbdkit-futuredisk-plugin.so"
        shutil.copy(os.environ["FUTUREDISK_PLUGIN"], plugin)
        d = scratch / "t"
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                            "--clear-groups", futuredisk, "run", "--fs",
                            "ext4", "--think", "real", "--dir", str(d)],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "FUTUREDISK_PLUGIN": str(plugin)})
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert (f"error: the plugin {plugin} is not readable by user nobody: "
                f"{private} is mode 0700, owned by root (set "
                "FUTUREDISK_PLUGIN to a copy nobody can read)") in p.stdout, \
            (p.stdout, p.stderr)
        assert not (d / "nbdkit.log").exists()
        assert leftovers(str(scratch)) == []
    finally:
        shutil.rmtree(scratch)


@pytest.mark.skipif(os.path.exists("/sys/block/nbd0"),
                    reason="this kernel has nbd (test_nbd_vm covers it)")
def test_attach_nbd_without_kernel_nbd(run, mountpoint):
    """Asking for nbd where the kernel has none is an error, not a silent
    fallback to the loop device."""
    p = run("attach", "--mount", mountpoint, "--size", "64M", "--fs", "ext4",
            "--mkfs", "--attach", "nbd", check=1)
    assert "--attach nbd: the kernel has no nbd devices" in p.stderr
    assert leftovers(mountpoint.replace("/", "_")) == []
    assert leftovers(mountpoint) == []


def test_help(run):
    assert "--attach auto|nbd|loop" in run("attach", "--help",
                                           check=0).stdout
    assert "--faults SPEC" in run("attach", "--help", check=0).stdout
    assert "detach DIR" in run("detach", "--help", check=0).stdout


def free_loops():
    """Loop devices with nothing attached (their sysfs has no backing file)."""
    return [d for d in os.listdir("/sys/block") if d.startswith("loop")
            and not os.path.exists(f"/sys/block/{d}/loop/backing_file")]


def queue(dev, name):
    """A number of the device's request queue in sysfs."""
    with open(f"/sys/block/{dev}/queue/{name}") as f:
        return int(f.read())


def attach64(run, mountpoint, via, profile="roadmap-2006"):
    """A 64 MiB ext4 disk attached `via`; what attach printed."""
    p = run("attach", "--mount", mountpoint, "--profile", profile,
            "--size", "64M", "--fs", "ext4", "--mkfs", "--attach", via,
            check=0)
    return dict(line.split(" ", 1) for line in p.stdout.splitlines())


def test_read_ahead_is_a_disks_whatever_device_we_get(run, mountpoint):
    # A loop device keeps the read-ahead of its last use (a file on a real
    # disk leaves 2,560 KiB); the attach must give its device a plain
    # disk's 128 KiB whatever it had.  Another test may take the device
    # set up here first: then try again with the next.
    subprocess.run(["losetup", "-f"], check=True, capture_output=True)
    was = {}
    try:
        got, dev, primed = attach_primed(run, mountpoint, was)
    finally:
        # What the machine's other loop devices had, back (still free ones).
        for d, kb in was.items():
            if d in free_loops():
                with open(f"/sys/block/{d}/queue/read_ahead_kb", "w") as f:
                    f.write(f"{kb}\n")
    assert dev in primed, "five attaches never got a loop device set up"
    assert got == 128


def attach_primed(run, mountpoint, was):
    for _ in range(5):
        primed = free_loops()
        assert primed, "losetup -f left no free loop device"
        for d in primed:
            was.setdefault(d, queue(d, "read_ahead_kb"))
            with open(f"/sys/block/{d}/queue/read_ahead_kb", "w") as f:
                f.write("4096\n")
        dev = attach64(run, mountpoint, "loop")["device"].removeprefix(
            "/dev/")
        try:
            got = queue(dev, "read_ahead_kb")
        finally:
            assert run("detach", mountpoint).returncode == 0
        if dev in primed:
            break
    return got, dev, primed


@pytest.mark.parametrize("profile,spins", [("roadmap-2006", 1),
                                           ("ssd-sata", 0)])
def test_loop_device_spins_as_the_profile_says(run, mountpoint, profile,
                                               spins):
    # A loop device over a FUSE file says its disk does not spin; the nbd
    # device takes it from the export.  The file systems lay out by it.
    dev = attach64(run, mountpoint, "loop", profile)["device"].removeprefix(
        "/dev/")
    try:
        got = queue(dev, "rotational")
    finally:
        assert run("detach", mountpoint).returncode == 0
    assert got == spins


def test_serial_attach_is_one_fuse_thread_on_one_connection(run, mountpoint):
    # The kernel's requests reach the drive one at a time, in its order:
    # nbdfuse on one FUSE thread (-s) and one NBD connection (-C 1).
    info = attach64(run, mountpoint, "serial")
    try:
        assert info["device"].startswith("/dev/loop")
        assert info["attach"] == "serial"
        sock_dir = os.path.dirname(info["control"])
        fuse = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().decode().split("\0")[:-1]
            except OSError:
                continue
            if argv and os.path.basename(argv[0]) == "nbdfuse" and \
                    any(a.startswith(sock_dir + "/") for a in argv):
                fuse.append(argv)
        assert len(fuse) == 1, fuse
        argv = fuse[0]
        assert "-s" in argv and argv[argv.index("-C") + 1] == "1", argv
    finally:
        assert run("detach", mountpoint).returncode == 0
    # The default spreads the requests over FUSE's threads and several
    # connections.
    info = attach64(run, mountpoint, "loop")
    assert run("detach", mountpoint).returncode == 0
    assert info["attach"] == "loop"
