"""Test-suite wide: the `boards` marker (tests needing the cross compilers and QEMU of tests/system-packages.txt)."""

from __future__ import annotations

from . import system


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "boards: needs the system packages of tests/system-packages.txt (cross compilers, QEMU); skipped naming "
        "the missing ones where they are not installed (failed under CI)",
    )


def pytest_runtest_setup(item):
    if item.get_closest_marker("boards") is not None:
        system.require()
