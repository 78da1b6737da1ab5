"""Test-suite wide: the `boards` marker (tests needing the cross compilers and QEMU of tests/system-packages.txt),
and a $BURNEDGE_HOME of the test run's own, so no test reads or writes the real one (~/.config/burnedge)."""

from __future__ import annotations

import os
import shutil
import tempfile

from . import system

_HOME_OWNER = "BURNEDGE_TEST_HOME_OWNER"  # the pid of the process that made the run's home (xdist workers share it)


def _test_home() -> None:
    """One temporary BURNEDGE_HOME for the whole run: made by the first pytest process and inherited by its
    pytest-xdist workers, which race to make its local key (burnedge.bundle.keys makes it atomically)."""
    if os.environ.get(_HOME_OWNER) and os.environ.get("BURNEDGE_HOME", "").startswith(tempfile.gettempdir()):
        return
    os.environ["BURNEDGE_HOME"] = tempfile.mkdtemp(prefix="burnedge-test-home-")
    os.environ[_HOME_OWNER] = str(os.getpid())


def pytest_configure(config):
    _test_home()
    config.addinivalue_line(
        "markers",
        "boards: needs the system packages of tests/system-packages.txt (cross compilers, QEMU); skipped naming "
        "the missing ones where they are not installed (failed under CI)",
    )


def pytest_runtest_setup(item):
    if item.get_closest_marker("boards") is not None:
        system.require()


def pytest_unconfigure(config):
    if os.environ.get(_HOME_OWNER) == str(os.getpid()):
        shutil.rmtree(os.environ["BURNEDGE_HOME"], ignore_errors=True)
