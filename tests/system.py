"""The system packages the tests need (tests/system-packages.txt): which are missing here, and how to say so.

scripts/test installs them with apt-get when run as root. Elsewhere the tests that need them (marked `boards`) are
skipped, the reason naming the missing packages and the command that installs them; where the machine is meant to
have them (`CI` or `BURNEDGE_REQUIRE_ARM64` set, as .ci/run does) a missing package fails the test instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest

LIST = Path(__file__).resolve().with_name("system-packages.txt")


def packages() -> dict[str, str]:
    """Package name -> the file (absolute path) or command whose presence shows it is installed, in file order."""
    out = {}
    for line in LIST.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            if len(fields) != 2:
                raise ValueError(f"{LIST}: expected 'PACKAGE FILE-OR-COMMAND', got {line!r}")
            out[fields[0]] = fields[1]
    return out


def installed(probe: str) -> bool:
    return Path(probe).exists() if probe.startswith("/") else shutil.which(probe) is not None


def missing(names: Iterable[str] | None = None) -> list[str]:
    """The packages of `names` (default: all of the list) not installed here."""
    known = packages()
    wanted = list(known) if names is None else list(names)
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise KeyError(f"{unknown} not in {LIST}")
    return [n for n in wanted if not installed(known[n])]


def strict() -> bool:
    """True where the machine is meant to have every package (CI): a missing one fails rather than skips."""
    return bool(os.environ.get("CI") or os.environ.get("BURNEDGE_REQUIRE_ARM64"))


def unavailable(reason: str) -> None:
    """Skips the running test, or fails it where everything is meant to be there."""
    (pytest.fail if strict() else pytest.skip)(reason)


def require(names: Iterable[str] | None = None) -> None:
    """Skips (or, under CI, fails) the running test when any of `names` (default: all) is not installed."""
    gone = missing(names)
    if gone:
        unavailable(
            f"needs the system package(s) {' '.join(gone)}, not installed here; install them with "
            f"`sudo apt-get install {' '.join(gone)}` (or run `sudo scripts/test`, which installs them all)"
        )
