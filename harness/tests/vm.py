"""A throwaway virtual machine with a kernel that has nbd, for testing
what the host kernel cannot (containers have no nbd module).

The guest boots Debian's kernel (package linux-image-amd64) under QEMU
with a tiny initramfs (busybox-static and the modules to reach the
host's files), sees the host's root file system read-only over 9p with a
RAM overlay on top (so it runs the very binaries under test, wherever
they are, and can write anywhere without touching the host; /run alone
starts empty), loads further modules from
the host's /lib/modules as usual, runs one shell script as root and
powers off.  A second 9p share, writable, carries the script in and its
output and exit status out.

QEMU uses software emulation (TCG): the nested KVM of the machines this
project runs on hangs at boot.  Boot takes about ten seconds; commands
run some ten times slower than on the host.
"""
import glob
import os
import re
import shutil
import subprocess

GUEST_OUT = "/run/vmout"  # where the guest sees the writable share

# Modules the initramfs loads itself, with their dependencies: enough to
# mount the host's root over virtio-9p with an overlay.
BOOT_MODULES = ["virtio_pci", "9pnet_virtio", "9p", "overlay"]

INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules); do insmod "$m" || echo "vm: insmod $m failed"; done
mkdir -p /lower /upper /root
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 \\
  hostroot /lower
mount -t tmpfs -o size=75% tmpfs /upper
mkdir -p /upper/data /upper/work
mount -t overlay overlay \\
  -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /root
mount -t proc proc /root/proc
mount -t sysfs sysfs /root/sys
mount -t devtmpfs devtmpfs /root/dev
mount -t tmpfs tmpfs /root/run
mkdir -p /root/run/vmout /root/dev/pts /root/dev/shm
mount -t devpts devpts /root/dev/pts
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none out /root{out}
chroot /root /bin/sh -c 'cd {out} && PATH=/usr/sbin:/usr/bin:/sbin:/bin \\
  /bin/sh ./script >./log 2>&1; echo $? >./rc'
sync
poweroff -f
""".format(out=GUEST_OUT)


def kernel():
    """(vmlinuz, release) of the newest Debian kernel in /boot whose
    modules are installed.  Newest by version, not by name: as text,
    6.1.0-9 sorts after 6.1.0-13; and a kernel left in /boot after its
    modules went cannot load nbd."""
    def version(release):
        return [int(w) if w.isdigit() else w
                for w in re.split(r"(\d+)", release)]

    releases = [image.split("vmlinuz-", 1)[1]
                for image in glob.glob("/boot/vmlinuz-*")]
    releases = [r for r in releases if os.path.isdir(f"/lib/modules/{r}")]
    if not releases:
        raise RuntimeError("no kernel with its modules in /boot: install "
                           "linux-image-amd64")
    release = max(releases, key=version)
    return f"/boot/vmlinuz-{release}", release


def module_files(release, names):
    """The .ko files for names and their dependencies, in load order."""
    out = []
    for name in names:
        deps = subprocess.run(
            ["modprobe", "-S", release, "--show-depends", name],
            capture_output=True, text=True, check=True).stdout
        for line in deps.splitlines():
            words = line.split()
            if words and words[0] == "insmod" and words[1] not in out:
                out.append(words[1])
    return out


def build_initramfs(workdir):
    """An initramfs (cpio, newc) in workdir; returns its path."""
    _, release = kernel()
    root = os.path.join(workdir, "initramfs")
    os.makedirs(os.path.join(root, "bin"))
    for d in ("proc", "sys", "dev", "lib/modules"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
    names = []
    for ko in module_files(release, BOOT_MODULES):
        dest = os.path.join("/lib/modules", os.path.basename(ko))
        shutil.copy(ko, root + dest)
        names.append(dest)
    with open(os.path.join(root, "modules"), "w") as f:
        f.write("\n".join(names) + "\n")
    with open(os.path.join(root, "init"), "w") as f:
        f.write(INIT)
    os.chmod(os.path.join(root, "init"), 0o755)
    image = os.path.join(workdir, "initramfs.cpio")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True,
                           check=True).stdout
    with open(image, "wb") as f:
        subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=root,
                       input=files, stdout=f, check=True)
    return image


def run(script, workdir, timeout=900, memory="3G"):
    """Run the shell script as root in a fresh guest.  Returns (exit
    status, output).  The guest's console goes to workdir/console.log."""
    vmlinuz, _ = kernel()
    initrd = build_initramfs(workdir)
    out = os.path.join(workdir, "out")
    os.makedirs(out)
    with open(os.path.join(out, "script"), "w") as f:
        f.write(script)
    console = os.path.join(workdir, "console.log")
    with open(console, "w") as log:
        subprocess.run(
            ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max",
             "-smp", "2", "-m", memory, "-nographic", "-no-reboot",
             "-kernel", vmlinuz, "-initrd", initrd,
             "-append", "console=ttyS0 quiet panic=-1",
             "-virtfs", "local,path=/,mount_tag=hostroot,"
             "security_model=none,readonly=on,multidevs=remap",
             "-virtfs", f"local,path={out},mount_tag=out,"
             "security_model=none,multidevs=remap"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            timeout=timeout, check=False)
    try:
        with open(os.path.join(out, "rc")) as f:
            rc = int(f.read())
    except (OSError, ValueError):
        with open(console, errors="replace") as f:
            raise RuntimeError("the guest did not finish its script; "
                               "console:\n" + f.read()[-4000:])
    with open(os.path.join(out, "log"), errors="replace") as f:
        return rc, f.read()
