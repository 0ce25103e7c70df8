"""Shared fixtures for the harness's end-to-end tests."""
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def futuredisk():
    """Path of the built `futuredisk` binary (CTest passes it in)."""
    path = os.environ.get("FUTUREDISK")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("FUTUREDISK must name the built futuredisk binary")
    return path


@pytest.fixture
def run(futuredisk):
    """run(*args) -> CompletedProcess with text stdout/stderr."""
    def _run(*args, check=None):
        p = subprocess.run([futuredisk, *args], capture_output=True,
                           text=True, timeout=300)
        if check is not None:
            assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
        return p
    return _run
