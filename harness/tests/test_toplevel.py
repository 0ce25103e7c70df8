"""The top-level ./futuredisk script: set-up by need, and nothing for
--help or a typo.

The script runs from a copy in a scratch directory, with fake dpkg-query,
apt-get and id first on PATH: they report every package missing, record
what apt-get was asked, and can pretend not to be root.  apt-get fails,
so the script stops before it builds anything.
"""
import os
import re
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

FAKES = {
    # Nothing is installed.
    "dpkg-query": "#!/bin/sh\nexit 1\n",
    # Record the call; fail, so the script goes no further.
    "apt-get": "#!/bin/sh\necho \"$*\" >> \"$FAKE_LOG\"\nexit 1\n",
    "id": "#!/bin/sh\necho \"${FAKE_UID:-0}\"\n",
}


@pytest.fixture
def script(tmp_path):
    """run(*args, uid=0) -> (CompletedProcess, [apt-get calls])."""
    shutil.copy(os.path.join(TOP, "futuredisk"), tmp_path / "futuredisk")
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, text in FAKES.items():
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    log = tmp_path / "apt.log"

    def run(*args, uid=0):
        env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}",
                   FAKE_LOG=str(log), FAKE_UID=str(uid))
        p = subprocess.run([str(tmp_path / "futuredisk"), *args],
                           capture_output=True, text=True, env=env,
                           timeout=60, stdin=subprocess.DEVNULL)
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return p, calls
    return run


def packages(script_text, array):
    """The package names of one of the script's arrays."""
    body = re.search(array + r"=\(\n(.*?)\n\)", script_text, re.S).group(1)
    return [w for line in body.splitlines()
            for w in line.split("#")[0].split()]


@pytest.fixture(scope="module")
def lists():
    with open(os.path.join(TOP, "futuredisk")) as f:
        text = f.read()
    return packages(text, "run_packages"), packages(text, "test_packages")


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["help"],
                                  ["test", "--help"]])
def test_help_installs_nothing(script, args):
    p, calls = script(*args)
    assert p.returncode == 0, p.stderr
    assert calls == []
    assert "CTEST-ARG" in p.stdout and "-R store" in p.stdout
    assert not os.path.exists(os.path.join(os.path.dirname(
        p.args[0]), "build"))


def test_unknown_command_installs_nothing(script):
    p, calls = script("tset")
    assert p.returncode == 2
    assert calls == []
    assert "unknown command 'tset'" in p.stderr


def test_no_command(script):
    p, calls = script()
    assert p.returncode == 2 and calls == []
    assert "Usage:" in p.stdout


def test_demo_installs_only_what_running_needs(script, lists):
    run_pkgs, test_pkgs = lists
    p, calls = script("demo")
    assert p.returncode == 1
    # One line names the packages before anything is installed.
    line = [ln for ln in p.stderr.splitlines() if "installing" in ln]
    assert len(line) == 1 and line[0].split(": ")[-1].split() == run_pkgs
    install = [c for c in calls if c.startswith("install")]
    assert install and all(c.split()[-len(run_pkgs):] == run_pkgs
                           for c in install)
    assert not set(test_pkgs) & set(" ".join(calls).split())
    # The set-up log goes under build/, never beside the sources.
    assert "build/setup.log" in p.stderr


def test_test_adds_the_test_packages(script, lists):
    run_pkgs, test_pkgs = lists
    p, calls = script("test", "-R", "store")
    assert p.returncode == 1
    install = [c for c in calls if c.startswith("install")]
    assert install and install[0].split()[-len(run_pkgs + test_pkgs):] == \
        run_pkgs + test_pkgs


@pytest.mark.parametrize("cmd,test_too", [("model", False), ("test", True)])
def test_not_root_prints_the_line(script, lists, cmd, test_too):
    run_pkgs, test_pkgs = lists
    p, calls = script(cmd, uid=1000)
    assert p.returncode == 2
    assert calls == []
    want = "apt-get install -y --no-install-recommends " + " ".join(
        run_pkgs + (test_pkgs if test_too else []))
    assert want in p.stderr.splitlines()


def test_commands_match_the_binary(futuredisk):
    """The script's list of commands is the binary's dispatch table."""
    with open(os.path.join(TOP, "futuredisk")) as f:
        listed = re.search(r'^commands=" (.*) "$', f.read(), re.M).group(1)
    out = subprocess.run([futuredisk, "--help"], capture_output=True,
                         text=True, check=True).stdout
    table = out.split("Commands:\n")[1].split("\n\n")[0]
    assert listed.split() == [line.split()[0] for line in table.splitlines()]
