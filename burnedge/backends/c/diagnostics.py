"""Compiler diagnostics fit to show: only those about the sources being built, never text of any other file.

A source may include any file the compiler can read (`#include "/etc/passwd"`, an assembler `.include`), and the
compiler quotes what it chokes on: the offending line, a token of it. A bundle's source is compiled only when a
trusted key signed it (burnedge.bundle.signing), and even then its build errors must not carry other files' text
into logs and messages. So a failure reports only the diagnostics located in the build's own folders (the model
source and the kernels) with their source excerpts, and lines naming no file (the linker, "compilation
terminated"); the rest is counted, not shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["diagnostics"]

# "FILE:LINE[:COL]: ..." (gcc, clang, as) or "FILE: ..." ("FILE: Assembler messages:", "FILE: In function 'f':")
_LOCATED = re.compile(r"^(?:In file included from |\s+from )?(?P<file>[^\s:][^:]*?):(?:(\d+):)?(?:\d+:)?\s")
_EXCERPT = re.compile(r"^\s*(\d+\s*)?\|")  # "   12 | int x = y;" and "      |         ^"
_TOOL = re.compile(r"^(collect2|cc1|cc|gcc|clang|ld|/usr/bin/ld|\S*-ld|\S*-gcc|\S*-as|lto1)(:| )|^compilation termin")


def _inside(file: str, folders: Sequence[Path]) -> bool:
    try:
        p = Path(file).resolve()
    except (OSError, RuntimeError):
        return False
    return any(p == f or f in p.parents for f in folders)


def diagnostics(stderr: str, sources: Sequence[Path]) -> list[str]:
    """The lines of `stderr` about files in the folders `sources` (see the module docstring)."""
    folders = [Path(s).resolve() for s in sources]
    shown, hidden, keep_excerpt = [], 0, False
    for line in stderr.strip().splitlines():
        if _EXCERPT.match(line):
            ok = keep_excerpt
        elif (m := _LOCATED.match(line)) and not _TOOL.match(line):
            ok = keep_excerpt = _inside(m["file"], folders)
        else:
            ok, keep_excerpt = bool(_TOOL.match(line)), False
        if ok:
            shown.append(line)
        else:
            hidden += 1
    if hidden:
        shown.append(f"({hidden} line(s) about files outside the sources being built are not shown)")
    return shown
