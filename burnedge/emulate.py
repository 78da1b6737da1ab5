"""Emulation: a bundle's test vectors run for a target's CPU under QEMU user mode, by its backend's standalone runner.

Steps (`emulate`):

1. read the bundle (a trusted key must have signed it: burnedge.bundle.signing) and take its library for the
   target (lib/<target>/model.so);
2. stage a job folder (`stage`): the runner of the bundle's backend built for the target (`backend.runner`), the
   library, weights.bin (the weight blob), job.txt, and vectors/<i>/in_<k>.bin, ref_<k>.bin (the host's
   reference outputs), plus the target's libgomp so the folder also runs on a board or in a container;
3. run ``QEMU -cpu MODEL -L SYSROOT runner job.txt`` (an instruction the modelled CPU lacks traps) or, with
   runner="docker", the same in a container of the target's platform;
4. read back every output and compare it with the reference: bit-exact for an int8 bundle (every op int8) and
   for integer outputs, else within `tolerance` relative to the largest |reference| (see README: bit-exactness).

`keep` keeps the staged folder: copy it to a board and run ``./runner job.txt`` there, no Python needed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import backends
from . import bundle as bundle_format
from .bundle import Bundle, signing
from .bundle.vectors import as_declared, bit_exact
from .feeds import Check, compare
from .targets import Target, TargetError, get

__all__ = ["EmulationError", "Result", "emulate", "stage"]

RUNNERS = ("qemu", "docker")
_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "bool": "bool"}
_DTYPES.update({f"{s}int{b}": f"{s[:1] or 'i'}{b}" for s in ("", "u") for b in (8, 16, 32, 64)})


class EmulationError(TargetError):
    """The runner could not run: a missing library for the target, a crash, an illegal instruction."""


@dataclass
class Result:
    """What one emulated run found: the checks (one per vector and output), times, and the outputs themselves."""

    target: str
    command: list[str]
    checks: list[Check]
    exact: bool  # True: every output had to match the reference bit for bit
    tolerance: float
    arena_bytes: int
    run_us: list[float]  # per vector, measured by the runner inside the emulator
    wall_s: float  # the whole emulated process
    outputs: list[dict[str, np.ndarray]] = field(repr=False)
    log: str = field(repr=False, default="")
    folder: Path | None = None

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def max_abs(self) -> float:
        return max((c.max_abs for c in self.checks), default=0.0)

    @property
    def max_relative(self) -> float:
        return max((c.relative for c in self.checks), default=0.0)


def _exact(b: Bundle) -> bool:
    """An int8 bundle whose every op runs in int8: its outputs are the reference's, bit for bit, on any target."""
    return bit_exact(b.manifest)


def stage(b: Bundle, target: Target, folder: Path, tolerance: float = 1e-4) -> Path:
    """Writes the runner's folder for `target` (see the module docstring); returns the job file."""
    signing.require(b, "stage its library for the runner")
    libs = _libraries(b, target)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(backends.lookup(b.backend).runner(target), folder / "runner")
    (folder / "model.so").write_bytes(b.member(libs[target.name]["path"]))
    (folder / "weights.bin").write_bytes(b.weights().tobytes())
    if target.emulator and target.emulator.sysroot:
        for gomp in sorted(Path(target.emulator.sysroot).glob("lib/libgomp.so.1")):
            shutil.copy(gomp, folder / "libgomp.so.1")
    tol = 0.0 if _exact(b) else tolerance
    lines = [
        "burnedge-runner 1",
        f"# {b.name} for target {target.name}: {target.description}",
        "library model.so",
        f"weights weights.bin {b.weight_bytes}",
        f"arena {b.arena_bytes}",
    ]
    for k, t in enumerate(b.manifest["inputs"]):
        nbytes = int(np.prod(t["shape"], dtype=np.int64)) * np.dtype(t["dtype"]).itemsize
        lines.append(f"input {k} {t['offset']} {nbytes} {t['name']}")
    outs = [t for t in b.manifest["outputs"] if t.get("offset") is not None]
    for k, t in enumerate(outs):
        nbytes = int(np.prod(t["shape"], dtype=np.int64)) * np.dtype(t["dtype"]).itemsize
        kind = _DTYPES.get(t["dtype"])
        if kind is None:
            raise EmulationError(f"{b.path}: output {t['name']!r} has dtype {t['dtype']}, which the runner lacks")
        lines.append(f"output {k} {t['offset']} {nbytes} {kind} {tol if kind[0] in 'fb' else 0:g} {t['name']}")
    for i, (feeds, refs) in enumerate(b.vectors()):
        vec = folder / "vectors" / str(i)
        vec.mkdir(parents=True, exist_ok=True)
        for k, t in enumerate(b.manifest["inputs"]):
            (vec / f"in_{k}.bin").write_bytes(np.ascontiguousarray(feeds[t["name"]], np.dtype(t["dtype"])).tobytes())
        for k, t in enumerate(outs):
            (vec / f"ref_{k}.bin").write_bytes(np.ascontiguousarray(refs[t["name"]]).tobytes())
        lines.append(f"vector vectors/{i}")
    job = folder / "job.txt"
    job.write_text("\n".join(lines) + "\n")
    return job


def _libraries(b: Bundle, target: Target) -> dict:
    """The bundle's libraries, after checking that one is for `target`."""
    libs = b.manifest["libraries"]
    if target.name not in libs:
        raise EmulationError(
            f"{b.path}: the bundle carries no library for target {target.name!r} (it has: {', '.join(libs) or '-'}); "
            f"export it with --target {target.name}"
        )
    return libs


def _command(target: Target, runner: str, folder: Path, threads: int) -> list[str]:
    args = ["--threads", str(threads), "job.txt"]
    if runner == "docker":
        if shutil.which("docker") is None:
            raise EmulationError("--runner docker: the docker command is not installed; use --runner qemu")
        try:
            probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
            failed, why = probe.returncode != 0, (probe.stderr.strip().splitlines() or ["no answer"])[-1]
        except subprocess.TimeoutExpired:
            failed, why = True, "no answer in 60 s"
        if failed:
            raise EmulationError(
                f"--runner docker: no Docker engine is running on this machine (`docker info` failed: {why}); "
                "use --runner qemu (the default), which needs no engine"
            )
        if target.emulator is None or not target.emulator.docker_platform:
            raise EmulationError(f"target {target.name!r} ({target.path}) names no emulator.docker_platform")
        e = target.emulator
        return ["docker", "run", "--rm", "--platform", e.docker_platform, "-v", f"{folder}:/job", "-w", "/job",
                e.docker_image, "./runner", *args]  # fmt: skip
    if target.emulator is None:
        if not target.native:
            raise EmulationError(f"target {target.name!r} ({target.path}) has no [emulator] section")
        return ["./runner", *args]
    e = target.emulator
    if shutil.which(e.command[0]) is None:
        raise EmulationError(
            f"QEMU for target {target.name!r} is not installed ({e.command[0]!r} not found); "
            f"install it with: apt-get install {e.package}"
        )
    if e.sysroot and not Path(e.sysroot).is_dir():
        raise EmulationError(
            f"the C library of target {target.name!r} ({e.sysroot}) is missing; install it with: "
            f"apt-get install {target.package}"
        )
    return [*e.argv(), "./runner", *args]


def _failure(cmd: list[str], proc: subprocess.CompletedProcess) -> EmulationError:
    rc = proc.returncode
    signal = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    why = {4: "an illegal instruction: the library uses an instruction this CPU lacks", 11: "a segmentation fault"}
    text = why.get(signal, f"signal {signal}" if signal else f"exit status {rc}")
    tail = "\n".join((proc.stderr or "").strip().splitlines()[-10:])
    return EmulationError(f"the runner failed under {' '.join(cmd[:-4] or cmd)}: {text}\n{tail}".rstrip())


def emulate(
    source: Bundle | str | Path,
    target: str | Target,
    runner: str = "qemu",
    threads: int = 1,
    tolerance: float = 1e-4,
    keep: str | Path | None = None,
    timeout: float | None = None,
    trust: bundle_format.TrustSpec = None,
) -> Result:
    """Runs the bundle's test vectors with its library for `target` under the target's emulator (see the module
    docstring); returns a Result whose `ok` is the verdict. A missing library, emulator or Docker engine, or a crash,
    raises EmulationError naming the fix. The bundle must be signed by a trusted key (`trust`: as Session's)."""
    if runner not in RUNNERS:
        raise EmulationError(f"unknown runner {runner!r}; runners: {', '.join(RUNNERS)}")
    b = source if isinstance(source, Bundle) else bundle_format.read(source, trust)
    signing.require(b, "stage its library for the runner")  # on the host, before anything is built or copied
    t = target if isinstance(target, Target) else get(target)
    if not b.vectors():
        raise EmulationError(f"{b.path}: the bundle carries no test vectors (export it with test_vectors >= 1)")
    if t.os == "baremetal":
        raise EmulationError(
            f"target {t.name!r} is a microcontroller: its bundle runs as firmware (burnedge.firmware.emulate, or "
            f"`burnedge emulate {b.path} --target {t.name}`), not under QEMU user mode"
        )
    try:
        _libraries(b, t)
        no_library = None
    except EmulationError as exc:
        no_library = exc  # the news, said first; a missing emulator too is said after it, so one run says both
    with tempfile.TemporaryDirectory(prefix="burnedge-emulate-") as tmp:
        folder = Path(keep) if keep is not None else Path(tmp)
        if keep is not None and folder.exists() and any(folder.iterdir()) and not (folder / "job.txt").is_file():
            raise EmulationError(f"{folder} exists and is not a runner folder; refusing to write into it")
        try:
            cmd = _command(t, runner, folder, threads)  # before staging: a missing emulator or engine fails early
        except EmulationError as exc:
            raise EmulationError(f"{no_library}. Also: {exc}" if no_library else str(exc)) from None
        if no_library is not None:
            raise no_library
        stage(b, t, folder, tolerance)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise EmulationError(f"the runner took longer than {timeout:g} s under {' '.join(cmd[:3])}") from None
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise _failure(cmd, proc)
        return _collect(b, t, cmd, folder, proc.stdout, wall, tolerance, keep is not None)


def _collect(
    b: Bundle, t: Target, cmd: list[str], folder: Path, log: str, wall: float, tolerance: float, kept: bool
) -> Result:
    """Reads the runner's outputs back and checks them in Python (the runner's own verdict is only printed)."""
    exact = _exact(b)
    outs = [o for o in b.manifest["outputs"] if o.get("offset") is not None]
    constants = b.constant_outputs()
    checks, outputs = [], []
    for i, (_, refs) in enumerate(b.vectors()):
        got: dict[str, np.ndarray] = {}
        for k, o in enumerate(outs):
            raw = (folder / "vectors" / str(i) / f"out_{k}.bin").read_bytes()
            arr = np.frombuffer(raw, np.dtype(o["dtype"])).reshape(o["shape"])
            got[o["name"]] = arr
            ref = as_declared(refs, {o["name"]: o["shape"]})[o["name"]]  # an older bundle's scalar: shape (1,)
            checks.append(Check(i, o["name"], *compare(arr, ref, 0.0 if exact else tolerance)))
        got.update({n: v.copy() for n, v in constants.items()})
        outputs.append(got)
    times = [float(line.split()[3]) for line in log.splitlines() if line.startswith("vector ") and "time_us" in line]
    return Result(t.name, cmd, checks, exact, 0.0 if exact else tolerance, b.arena_bytes, times, wall, outputs, log,
                  folder if kept else None)  # fmt: skip
