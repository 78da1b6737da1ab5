"""This machine: its OS, architecture, multiarch triple, CPU features and RAM (the one place that probes the host).

`fingerprint()` is what a library built with -march=native depends on (the OS, the architecture and a hash of
the CPU's instruction-set flags); `features()` are those flags by the names Linux gives them (the auxiliary
vector's HWCAP bits on ARM and RISC-V, which stay right under QEMU user mode, else /proc/cpuinfo).
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import sys
import sysconfig
from pathlib import Path

__all__ = ["fingerprint", "features", "machine", "ram_mb", "triple"]

_AARCH64_HWCAP = (
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 "
    "sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg"
).split()
_AARCH64_HWCAP2 = (
    "dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svef32mm svef64mm svebf16 i8mm bf16 "
    "dgh rng bti mte"
).split()
_ARM_HWCAP = (
    "swp half thumb 26bit fastmult fpa vfp edsp java iwmmxt crunch thumbee neon vfpv3 vfpv3d16 tls vfpv4 idiva "
    "idivt vfpd32 lpae evtstrm"
).split()


def machine() -> str:
    """The architecture as `uname -m` names it (x86_64, aarch64, armv7l, riscv64)."""
    return platform.machine()


def triple() -> str:
    """The multiarch triple of this Python (aarch64-linux-gnu, arm-linux-gnueabihf ...): the libraries it loads."""
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        return str(multiarch)
    m = platform.machine().lower()
    arm32 = m.startswith("arm") and sys.maxsize < 2**32
    return "arm-linux-gnueabihf" if arm32 else f"{m}-{platform.system().lower()}-gnu"


def _cpuinfo_flags() -> list[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("flags", "Features"):
                return value.split()
    except OSError:
        pass
    return []


@functools.cache
def features() -> frozenset[str]:
    """The CPU features of this machine as Linux names them (see the module docstring)."""
    arch = triple().split("-")[0]
    tables = {"aarch64": (_AARCH64_HWCAP, _AARCH64_HWCAP2), "arm": (_ARM_HWCAP, [])}
    try:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef("unsigned long getauxval(unsigned long type);")
        libc = ffi.dlopen(None)
        hwcap, hwcap2 = int(libc.getauxval(16)), int(libc.getauxval(26))  # AT_HWCAP, AT_HWCAP2
    except (OSError, AttributeError, ImportError):
        hwcap = hwcap2 = 0
    if arch == "riscv64" and hwcap:
        return frozenset(chr(ord("a") + i) for i in range(26) if hwcap >> i & 1)
    if arch in tables and hwcap:
        one, two = tables[arch]
        return frozenset(
            [n for i, n in enumerate(one) if hwcap >> i & 1] + [n for i, n in enumerate(two) if hwcap2 >> i & 1]
        )
    return frozenset(_cpuinfo_flags())


@functools.cache
def fingerprint() -> dict[str, str]:
    """What a library built with -march=native depends on: OS, architecture and the CPU's instruction set flags."""
    flags = " ".join(sorted(_cpuinfo_flags())) or platform.processor()
    cpu = hashlib.sha256(flags.encode()).hexdigest()[:16]
    return {"system": platform.system(), "machine": platform.machine(), "cpu": cpu}


def ram_mb() -> int:
    """This machine's physical memory in MiB (1024 where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return 1024
