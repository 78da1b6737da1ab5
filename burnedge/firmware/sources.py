"""A firmware folder: the backend's model sources, a template's files (burnedge/firmware_templates/), the linker
script made from the target's memories, and the bundle's test vectors as C arrays.

    DIR/  model.c model.h weights.c kernels/ config.mk config.cmake      the model library (every template)
          Makefile CMakeLists.txt                                        library: builds libburnedge_model.a
          Makefile startup.c semihost.h main.c vectors.c vectors.h link.ld   baremetal: builds firmware.elf
"""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import numpy as np

from .. import backends
from ..bundle import Bundle
from ..bundle.vectors import as_declared, bit_exact
from ..files import c_array, write_atomic
from ..targets import Target, TargetError

__all__ = ["TEMPLATES", "TEMPLATE_DIR", "linker_script", "qemu_argv", "vectors_source", "write_folder"]

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "firmware_templates"
TEMPLATES = ("baremetal", "library")
MARKER = "model.h"  # a folder holding it is a firmware folder: writing into it again is allowed


def linker_script(target: Target) -> str:
    """link.ld for `target`: FLASH and RAM from its [memory] tables, the stack of stack_bytes at the top of RAM."""
    flash, ram = target.memory("flash"), target.memory("ram")
    text = (TEMPLATE_DIR / "baremetal" / "link.ld.in").read_text()
    return string.Template(text).substitute(
        target=target.name,
        target_file=target.path.name,
        flash_base=f"0x{flash.base:08x}",
        flash_size=f"0x{flash.size:x}",
        ram_base=f"0x{ram.base:08x}",
        ram_size=f"0x{ram.size:x}",
        stack_bytes=target.stack_bytes,
    )


def _io(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("offset") is not None]


def vectors_source(b: Bundle, tolerance: float = 1e-4) -> tuple[str, str]:
    """vectors.c and vectors.h: each vector's inputs and the host's reference outputs, in the manifest's order,
    each output's kind ('f': float32, compared within `tolerance` of the largest |reference|, or 0 for a bit-exact
    bundle; 'i': any other dtype, compared byte for byte)."""
    ins, outs = _io(b.manifest["inputs"]), _io(b.manifest["outputs"])
    exact = bit_exact(b.manifest)
    vectors = b.vectors()
    c = ['#include "vectors.h"', ""]
    for v, (feeds, refs) in enumerate(vectors):
        for k, t in enumerate(ins):
            data = np.ascontiguousarray(feeds[t["name"]], np.dtype(t["dtype"])).tobytes()
            c.append(c_array(f"be_in_{v}_{k}", data))
        refs = as_declared(refs, {t["name"]: t["shape"] for t in outs})
        for k, t in enumerate(outs):
            c.append(c_array(f"be_ref_{v}_{k}", np.ascontiguousarray(refs[t["name"]], np.dtype(t["dtype"])).tobytes()))
    rows = lambda kind, n: ", ".join(f"be_{kind}_{{v}}_{k}" for k in range(n)) or "0"  # noqa: E731
    c.append("const uint8_t *const be_vec_in[BE_VECTORS][BE_NUM_INPUTS] = {")
    c.extend("    {" + rows("in", len(ins)).format(v=v) + "}," for v in range(len(vectors)))
    c.append("};")
    c.append("const uint8_t *const be_vec_ref[BE_VECTORS][BE_NUM_OUTPUTS] = {")
    c.extend("    {" + rows("ref", len(outs)).format(v=v) + "}," for v in range(len(vectors)))
    c.append("};")
    kinds = ["'f'" if t["dtype"] == "float32" else "'i'" for t in outs]
    tols = ["0.0f" if exact or k == "'i'" else f"{tolerance:g}f" for k in kinds]
    c.append(f"const char be_out_kind[BE_NUM_OUTPUTS] = {{{', '.join(kinds)}}};")
    c.append(f"const float be_out_tol[BE_NUM_OUTPUTS] = {{{', '.join(tols)}}};")
    h = [
        f"/* the test vectors of {b.name!r}: inputs and the host's reference outputs (generated) */",
        "#ifndef BURNEDGE_VECTORS_H",
        "#define BURNEDGE_VECTORS_H",
        "#include <stdint.h>",
        '#include "model.h"',
        f"#define BE_VECTORS {len(vectors)}",
        "extern const uint8_t *const be_vec_in[BE_VECTORS][BE_NUM_INPUTS];",
        "extern const uint8_t *const be_vec_ref[BE_VECTORS][BE_NUM_OUTPUTS];",
        "extern const char be_out_kind[BE_NUM_OUTPUTS];",
        "extern const float be_out_tol[BE_NUM_OUTPUTS];",
        "#endif",
        "",
    ]
    return "\n".join(c) + "\n", "\n".join(h)


def write_folder(b: Bundle, target: Target, folder: Path, template: str = "baremetal", tolerance: float = 1e-4) -> None:
    """Writes the firmware folder of `template` for `target` (see the module docstring); refuses a folder that
    holds other things."""
    if template not in TEMPLATES:
        raise TargetError(f"unknown firmware template {template!r}; templates: {', '.join(TEMPLATES)}")
    if target.os != "baremetal":
        raise TargetError(
            f"target {target.name!r} ({target.path}) is not a microcontroller (os = {target.os!r}); firmware is for "
            'os = "baremetal" targets such as cortex-m4'
        )
    if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not (folder / MARKER).is_file())):
        raise TargetError(f"{folder} exists and is not a firmware folder; refusing to write into it")
    files = dict(backends.lookup(b.backend).firmware_sources(b, target))
    for src in sorted((TEMPLATE_DIR / template).iterdir()):
        if src.is_file() and not src.name.endswith(".in"):
            files[src.name] = src.read_bytes()
    if template == "baremetal":
        files["link.ld"] = linker_script(target).encode()
        vc, vh = vectors_source(b, tolerance)
        files["vectors.c"], files["vectors.h"] = vc.encode(), vh.encode()
        e = target.emulator
        if e is not None:
            files["config.mk"] += f"QEMU = {' '.join(qemu_argv(target))}\n".encode()
    if (folder / "kernels").is_dir():
        shutil.rmtree(folder / "kernels")  # a kernel the model no longer calls must not stay behind
    for name, data in sorted(files.items()):
        write_atomic(folder / name, data)


def qemu_argv(target: Target) -> list[str]:
    """The QEMU system-mode command for `target`, without -kernel: semihosting on, no display or serial, and
    -icount shift=0 so the virtual clock counts instructions (deterministic, whatever the machine's load)."""
    e = target.emulator
    if e is None:
        raise TargetError(f"target {target.name!r} ({target.path}) has no [emulator] section")
    return [*e.command, "-nodefaults", "-display", "none", "-monitor", "none", "-serial", "none",
            "-chardev", "stdio,id=semihosting", "-semihosting-config", "enable=on,target=native,chardev=semihosting",
            "-icount", "shift=0"]  # fmt: skip
