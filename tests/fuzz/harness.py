"""What the fuzz targets share: the budget, the property every input must meet, and the tally of inputs tried.

The property: a call on a hostile input returns normally or raises a burnedge error (a BurnedgeError subclass)
whose message is one non-empty line; never another exception, never a hang (each input gets `TIMEOUT` seconds,
enforced with SIGALRM), never a file written outside the sandbox it was given nor a file of it lost (the sandbox's
listing is the same after the call as before it, apart from the paths the target says it may write).

Budget: `BURNEDGE_FUZZ_EXAMPLES` inputs per target (default 100: a few seconds each, part of the normal suite). A
long run: ``BURNEDGE_FUZZ_EXAMPLES=100000 python -m pytest tests/fuzz`` or, spread over processes with a tally,
``python tests/fuzz/long_run.py --examples 100000 --jobs 16``. With `BURNEDGE_FUZZ_TALLY` set to a file, each
target appends "target inputs" to it at the end of its run.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

import burnedge
from burnedge import BurnedgeError, limits

EXAMPLES = int(os.environ.get("BURNEDGE_FUZZ_EXAMPLES", "100"))
TIMEOUT = float(os.environ.get("BURNEDGE_FUZZ_TIMEOUT", "20"))
CORPUS = Path(__file__).parent / "corpus"
# burnedge.limits lowered for the calls under test, so that an input at a limit stays well inside TIMEOUT on a
# loaded CI machine (a 1 GiB constant folds in seconds; the fuzz is after crashes, not after the limits' values)
FUZZ_LIMITS = {"max_folded_bytes": 32 << 20, "max_arena_bytes": 256 << 20, "max_member_bytes": 64 << 20}

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # hangs are caught by SIGALRM (TIMEOUT), not by hypothesis's timing
    database=None,  # writes nothing into the repository
    suppress_health_check=list(HealthCheck),
    derandomize="BURNEDGE_FUZZ_SEED" not in os.environ,  # CI: the same inputs every run
)


# Signed bundles: a mutated bundle is signed by nobody; to reach the parsers behind the signature the targets open
# it with the explicit opt-in (trust="any", whose warning is expected here), where this burnedge has signatures.
TRUST_ANY = {"trust": "any"} if "trust" in inspect.signature(burnedge.Session).parameters else {}


class Hang(BaseException):
    """An input ran past TIMEOUT seconds (a BaseException: no `except Exception` in the code under test hides it)."""


class Tally:
    """Counts the inputs a target tried and refused; appended to BURNEDGE_FUZZ_TALLY every 500 inputs and at the
    end, so that a run stopped at its time limit still counts what it did."""

    def __init__(self, target: str) -> None:
        self.target, self.inputs, self.refused = target, 0, 0
        self._written = (0, 0)

    def count(self, refused: bool) -> None:
        self.inputs += 1
        self.refused += int(refused)
        if self.inputs % 500 == 0:
            self.write()

    def write(self) -> None:
        path = os.environ.get("BURNEDGE_FUZZ_TALLY")
        inputs, refused = self.inputs - self._written[0], self.refused - self._written[1]
        if path and inputs:
            with open(path, "a") as f:
                f.write(f"{self.target} {inputs} {refused}\n")
        self._written = (self.inputs, self.refused)


@contextlib.contextmanager
def sandbox() -> Iterator[Path]:
    """A fresh temporary folder for one input, removed after it."""
    with tempfile.TemporaryDirectory(prefix="burnedge-fuzz-") as d:
        yield Path(d)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum, frame):
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def listing(folder: Path) -> dict[str, int]:
    """{relative path: size} of every file under `folder` (the sandbox's state)."""
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}


def holds(tally: Tally, call: Callable[[], Any], sandbox: Path | None = None, may_write: tuple[str, ...] = ()) -> Any:
    """Runs `call` under the property (module docstring); returns its result, or None when it refused the input.

    A refusal must be a BurnedgeError with a one-line message; any other exception propagates, so hypothesis
    reports (and shrinks) the input."""
    before = listing(sandbox) if sandbox is not None else None
    result, refused = None, False
    try:
        with (
            _alarm(TIMEOUT),
            warnings.catch_warnings(),
            limits.raised(**FUZZ_LIMITS),
            contextlib.chdir(sandbox or os.getcwd()),
        ):  # relative writes land in the sandbox
            warnings.filterwarnings("ignore", message=".*untrusted bundle")
            result = call()
    except BurnedgeError as exc:
        refused = True
        text = str(exc)
        assert text.strip() and "\n" not in text.strip(), f"{type(exc).__name__} message is not one line: {text!r}"
    tally.count(refused)
    if sandbox is not None:
        after = listing(sandbox)
        lost = sorted(set(before) - set(after))
        assert not lost, f"files lost: {lost}"
        new = sorted(p for p in set(after) - set(before) if not p.startswith(may_write))
        assert not new, f"files written outside the temporary folder: {new}"
    return result
