"""Targets: the boards a bundle is compiled for, one TOML file each, loaded into a frozen `Target`.

Where targets come from, later ones replacing earlier ones of the same name (the file name without .toml):

1. the files shipped with burnedge (``burnedge/targets/*.toml``, beside this module, in the wheel too);
2. the folders (or files) in $BURNEDGE_TARGETS, separated by ':';
3. the folders (or files) a caller passes as `dirs`;
4. a path to a .toml file given where a target name is expected (``--target ./myboard.toml``).

A file (see burnedge/targets/rpi4.toml for a commented one)::

    description = "Raspberry Pi 4 (Cortex-A72, 64-bit Raspberry Pi OS)"
    arch = "aarch64"                  # aarch64, armv7, riscv64, x86_64
    os = "linux"
    triple = "aarch64-linux-gnu"      # the Debian multiarch triple of the board's userland
    cores = 4
    ram_mb = 1024                     # a bundle whose arena + weights exceed it is refused
    features = ["fp", "asimd"]        # CPU features the library needs, as the kernel names them (HWCAP)
    native = false                    # true: build for the machine running burnedge (-march=native)
    kernels = ["reference", "arm"]    # the kernel sets the C backend builds (default: chosen from arch/features)

    [compiler]
    cc = "aarch64-linux-gnu-gcc"
    ar = "aarch64-linux-gnu-ar"
    package = "gcc-aarch64-linux-gnu libc6-dev-arm64-cross"   # what to apt-get install when cc is missing
    flags = ["-mcpu=cortex-a72"]      # added to burnedge's own: -O3 -std=c11 -fPIC -pthread and warnings
    ldflags = []

    [emulator]                        # how `burnedge emulate` runs the target (QEMU user mode)
    command = ["qemu-aarch64", "-cpu", "cortex-a72"]
    package = "qemu-user"
    sysroot = "/usr/aarch64-linux-gnu"  # the target's libc, libm, libgomp (QEMU's -L)
    docker_platform = "linux/arm64"   # for --runner docker
    docker_image = "debian:bookworm-slim"

A microcontroller (``os = "baremetal"``; see burnedge/targets/cortex-m4.toml) has no ram_mb but its memories,
the stack it reserves, and a QEMU system-mode emulator whose SysTick clock the firmware counts with::

    os = "baremetal"
    stack_bytes = 16384               # the top of RAM kept for the stack (the run measures what it used)
    [memory.flash]                    # code, weights (const) and initial data
    base = 0x00000000
    size = 0x400000
    [memory.ram]                      # the arena, statics and the stack
    base = 0x20000000
    size = 0x400000
    [emulator]
    command = ["qemu-system-arm", "-machine", "mps2-an386", "-cpu", "cortex-m4"]
    package = "qemu-system-arm"
    clock_hz = 25_000_000             # SysTick's clock in the board model

A bad file is a `TargetError` naming the file and the field; an unknown name lists the known targets. A target
is data: how to compile for it and load on it is each backend's business (its `build` and `load`).
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import host
from ..errors import BurnedgeError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["BUILTIN_DIR", "Emulator", "Memory", "Target", "TargetError", "available", "get", "load_file", "resolve"]

BUILTIN_DIR = Path(__file__).resolve().parent
ENV = "BURNEDGE_TARGETS"
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_OSES = ("linux", "baremetal")
MEMORIES = ("flash", "ram")  # what a bare-metal target must describe


class TargetError(BurnedgeError):
    """An unknown target, a malformed target file, or a toolchain or emulator the machine lacks."""


@dataclass(frozen=True)
class Emulator:
    """How to run a target's programs here: a QEMU user-mode command with the board's CPU model."""

    command: tuple[str, ...]
    package: str = "qemu-user"
    sysroot: str | None = None
    docker_platform: str | None = None
    docker_image: str = "debian:bookworm-slim"
    clock_hz: int | None = None  # system mode: the clock SysTick counts (QEMU -icount shift=0: 1 instruction = 1 ns)

    def argv(self) -> list[str]:
        """The command to prefix a target program with (QEMU's -L points it at the target's libraries)."""
        return [*self.command, *(["-L", self.sysroot] if self.sysroot else [])]


@dataclass(frozen=True)
class Memory:
    """One memory of a microcontroller: where it starts and how many bytes it has."""

    name: str
    base: int
    size: int


@dataclass(frozen=True)
class Target:
    """One board: its architecture, compiler and flags, CPU features, cores, RAM, and how to emulate it."""

    name: str
    path: Path
    description: str
    os: str
    arch: str
    triple: str
    cores: int
    ram_mb: int
    features: tuple[str, ...]
    cc: str
    ar: str
    package: str
    flags: tuple[str, ...]
    ldflags: tuple[str, ...] = ()
    native: bool = False
    emulator: Emulator | None = None
    kernels: tuple[str, ...] = ()  # the C kernel sets to build; () lets the backend choose from arch and features
    memories: tuple[Memory, ...] = ()  # bare metal: flash and ram
    stack_bytes: int = 16384  # bare metal: the stack reserved at the top of RAM

    def memory(self, name: str) -> Memory:
        for m in self.memories:
            if m.name == name:
                return m
        raise TargetError(f"target {self.name!r} ({self.path}) has no memory {name!r}")

    def check_fits(self, nbytes: int, arena_bytes: int | None = None, weight_bytes: int | None = None) -> None:
        """Refuses a model whose arena and weights exceed the board's RAM; on a microcontroller, whose weights
        exceed its flash or whose arena and stack exceed its RAM, naming the bytes needed and available of each."""
        if self.os == "baremetal":
            weights = nbytes - (arena_bytes or 0) if weight_bytes is None else weight_bytes
            arena = nbytes - weights if arena_bytes is None else arena_bytes
            self.check_memories({"flash": (weights, "weights"), "ram": (arena + self.stack_bytes, "arena + stack")})
            return
        if nbytes > self.ram_mb * 2**20:
            raise TargetError(
                f"the model needs {nbytes:,} bytes (arena + weights), more than the {self.ram_mb} MB of RAM of "
                f"target {self.name!r} ({self.path})"
            )

    def check_memories(self, needs: dict[str, tuple[int, str]]) -> None:
        """`needs`: memory name -> (bytes, what they are); any over its memory's size is a TargetError that lists
        every memory's need and size."""
        rows = [(self.memory(name), n, what) for name, (n, what) in needs.items()]
        if all(n <= m.size for m, n, _ in rows):
            return
        said = "; ".join(
            f"{m.name} needs {n:,} bytes ({what}) of {m.size:,}" + (f", {n - m.size:,} too many" if n > m.size else "")
            for m, n, what in rows
        )
        raise TargetError(f"the model does not fit target {self.name!r} ({self.path}): {said}")


# -- reading files --------------------------------------------------------------------------------------------------
# field -> (type, required); a table is its own dict of fields
_TOP: dict[str, tuple[Any, bool]] = {
    "description": (str, True),
    "os": (str, True),
    "arch": (str, False),
    "triple": (str, False),
    "cores": (int, False),
    "ram_mb": (int, False),
    "features": (list, False),
    "native": (bool, False),
    "kernels": (list, False),
    "stack_bytes": (int, False),
    "memory": (dict, False),
    "compiler": (dict, True),
    "emulator": (dict, False),
}
_COMPILER: dict[str, tuple[Any, bool]] = {
    "cc": (str, True),
    "ar": (str, False),
    "package": (str, True),
    "flags": (list, False),
    "ldflags": (list, False),
}
_EMULATOR: dict[str, tuple[Any, bool]] = {
    "command": (list, True),
    "package": (str, False),
    "sysroot": (str, False),
    "docker_platform": (str, False),
    "docker_image": (str, False),
    "clock_hz": (int, False),
}
_MEMORY: dict[str, tuple[Any, bool]] = {"base": (int, True), "size": (int, True)}
_KINDS = {str: "a string", int: "a whole number", bool: "true or false", dict: "a table", list: "a list of strings"}
_NEEDED_UNLESS_NATIVE = ("arch", "triple", "cores", "ram_mb")


def _check(path: Path, table: dict[str, Any], fields: dict[str, tuple[Any, bool]], prefix: str = "") -> None:
    for key in table:
        if key not in fields:
            raise TargetError(
                f"{path}: unknown field {prefix + key!r} (known: {', '.join(prefix + f for f in fields)})"
            )
    for key, (kind, required) in fields.items():
        if key not in table:
            if required:
                raise TargetError(f"{path}: missing required field {prefix + key!r}")
            continue
        value = table[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if ok and kind is list:
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            what = _KINDS[kind]
            raise TargetError(f"{path}: field {prefix + key!r} must be {what}, not {type(value).__name__} ({value!r})")
        if kind is int and value < (0 if key == "base" else 1):
            raise TargetError(f"{path}: field {prefix + key!r} must be at least 1, not {value}")


def load_file(path: str | os.PathLike[str]) -> Target:
    """One target file, validated: every error names the file and the field."""
    path = Path(path)
    name = path.stem
    if not _NAME.match(name):
        raise TargetError(f"{path}: a target's file name must be lower-case letters, digits, '.', '_' or '-'")
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise TargetError(f"{path}: cannot read the target file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise TargetError(f"{path}: not valid TOML ({exc})") from None
    _check(path, data, _TOP)
    native = data.get("native", False)
    if data["os"] not in _OSES:
        raise TargetError(f"{path}: field 'os' must be one of {', '.join(_OSES)}, not {data['os']!r}")
    memories = _memories(path, data)
    if not native:
        for key in _NEEDED_UNLESS_NATIVE:
            if key == "ram_mb" and memories:
                continue
            if key not in data:
                raise TargetError(f"{path}: missing required field {key!r} (only a native target may leave it out)")
    compiler = data["compiler"]
    _check(path, compiler, _COMPILER, "compiler.")
    emulator = None
    if "emulator" in data:
        _check(path, data["emulator"], _EMULATOR, "emulator.")
        e = data["emulator"]
        if not e["command"]:
            raise TargetError(f"{path}: field 'emulator.command' must name a program (e.g. [\"qemu-aarch64\"])")
        emulator = Emulator(
            tuple(e["command"]),
            e.get("package", "qemu-user"),
            e.get("sysroot"),
            e.get("docker_platform"),
            e.get("docker_image", "debian:bookworm-slim"),
            e.get("clock_hz"),
        )
    return Target(
        name=name,
        path=path,
        description=data["description"],
        os=data["os"],
        arch=data.get("arch") or platform.machine(),
        triple=data.get("triple") or host.triple(),
        cores=data.get("cores") or os.cpu_count() or 1,
        ram_mb=data.get("ram_mb") or (max(1, memories[-1].size >> 20) if memories else host.ram_mb()),
        features=tuple(data.get("features", ())),
        cc=os.environ.get("CC", compiler["cc"]) if native else compiler["cc"],
        ar=compiler.get("ar", "ar"),
        package=compiler["package"],
        flags=tuple(compiler.get("flags", ())),
        ldflags=tuple(compiler.get("ldflags", ())),
        native=native,
        emulator=emulator,
        kernels=tuple(data.get("kernels", ())),
        memories=memories,
        stack_bytes=data.get("stack_bytes", 16384),
    )


def _memories(path: Path, data: dict[str, Any]) -> tuple[Memory, ...]:
    """[memory.flash] and [memory.ram]: required on bare metal, refused elsewhere."""
    tables = data.get("memory", {})
    if data["os"] != "baremetal":
        if tables:
            raise TargetError(f"{path}: field 'memory' is for os = \"baremetal\" targets")
        return ()
    out = []
    for name in MEMORIES:
        if name not in tables:
            raise TargetError(f"{path}: missing required table 'memory.{name}' (base and size in bytes)")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise TargetError(f"{path}: field 'memory.{name}' must be a table (base, size)")
        _check(path, table, _MEMORY, f"memory.{name}.")
        out.append(Memory(name, table["base"], table["size"]))
    return tuple(sorted(out, key=lambda m: MEMORIES.index(m.name) if m.name in MEMORIES else len(MEMORIES)))


def _files(places: Iterable[str | os.PathLike[str]]) -> list[Path]:
    out = []
    for place in places:
        p = Path(place)
        if p.is_dir():
            out.extend(sorted(p.glob("*.toml")))
        elif p.suffix == ".toml" and p.is_file():
            out.append(p)
        else:
            raise TargetError(f"{p}: not a folder of target files nor a .toml file (check ${ENV} and --targets-dir)")
    return out


def available(dirs: Sequence[str | os.PathLike[str]] = ()) -> dict[str, Target]:
    """Every known target by name: burnedge's, then $BURNEDGE_TARGETS's, then `dirs`' (later ones win)."""
    env = [d for d in os.environ.get(ENV, "").split(os.pathsep) if d]
    places = [BUILTIN_DIR] if BUILTIN_DIR.is_dir() else []
    targets: dict[str, Target] = {}
    for f in _files([*places, *env, *dirs]):
        targets[f.stem] = load_file(f)
    return targets


def get(name: str, dirs: Sequence[str | os.PathLike[str]] = ()) -> Target:
    """A target by name (or by the path of its .toml file); an unknown name lists the known ones."""
    if name.endswith(".toml") and Path(name).is_file():
        return load_file(name)
    known = available(dirs)
    if name not in known:
        raise TargetError(
            f"unknown target {name!r}; known targets: {', '.join(sorted(known))} "
            f"(add your own: a NAME.toml file in a folder named by ${ENV})"
        )
    return known[name]


def resolve(spec: str | Sequence[str], dirs: Sequence[str | os.PathLike[str]] = ()) -> list[Target]:
    """Targets from "rpi4,rpi5" or ["rpi4", "rpi5"]: each once, in order; none at all is an error."""
    names = spec.split(",") if isinstance(spec, str) else [n for item in spec for n in str(item).split(",")]
    names = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if not names:
        raise TargetError("no target given; known targets: " + ", ".join(sorted(available(dirs))))
    return [get(n, dirs) for n in names]
