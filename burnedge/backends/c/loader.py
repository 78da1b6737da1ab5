"""Loading a C bundle: the library that runs on this machine (the bundle's own, or rebuilt from its source), with
the bundle's weights, as a CModel.

A library built for this very CPU wins; else one cross-compiled for a target whose triple and required CPU
features this machine has (the most specific one); else the bundle's source is compiled here, with burnedge's
kernels when they are the bundle's, else with the bundle's own. A bundle's library is copied to the cache under
its hash and loaded from there (the hash is checked again on every load). Only a bundle a trusted key signed is
loaded or rebuilt (burnedge.bundle.signing.require), and a row must say which CPU runs it (cross.pick_library).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

from ... import host
from ...bundle import Bundle, BundleError, signing
from ...files import sweep, temp_beside, write_atomic
from .build import BuildError, build_model, cache_dir, kernel_sources
from .cross import pick_library
from .runtime import CModel, TensorSlot, aligned_copy

__all__ = ["kernel_dir", "library", "load"]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def library(b: Bundle) -> Path:
    """A loadable library for this host (see the module docstring), of a bundle a trusted key signed."""
    signing.require(b, "load or build its library")
    here = host.fingerprint()
    lib = pick_library(b.manifest["libraries"].values(), here)
    if lib is not None:
        sha = b.manifest["files"][lib["path"]]["sha256"]
        cached = cache_dir() / "bundles" / f"{sha}.so"
        if not (cached.is_file() and _sha256(cached.read_bytes()) == sha):
            write_atomic(cached, b.member(lib["path"]))
        return cached
    same = b.kernels == kernel_sources()
    try:
        return build_model(b.source) if same else build_model(b.source, kernel_dir=kernel_dir(b))
    except BuildError as exc:
        raise BundleError(
            f"{b.path}: no library in the bundle runs on this host ({here['system']} {here['machine']}) "
            f"and rebuilding it from the bundle's {'source' if same else 'own kernels'} failed; export the "
            f"model again here or for this board's target ({exc})"
        ) from None


def kernel_dir(b: Bundle) -> Path:
    """The bundle's own kernel sources in a cache folder (named by their hash), for rebuilding its library."""
    kernels = b.kernels
    if not kernels or any("/" in n or not n.endswith((".c", ".h")) for n in kernels):
        raise BundleError(f"{b.path}: the bundle carries no usable kernel sources (src/kernels/*.c, *.h)")
    digest = _sha256(repr(sorted(kernels.items())).encode())[:20]
    folder = cache_dir() / "kernels" / digest
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        sweep(folder)
        tmp = temp_beside(folder, folder=True)
        for name, text in kernels.items():
            (tmp / name).write_text(text)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process placed it first
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def slots(rows: list[dict]) -> list[TensorSlot]:
    return [TensorSlot(t["name"], t.get("offset"), np.dtype(t["dtype"]), tuple(t["shape"])) for t in rows]


def load(b: Bundle, threads: int = 1) -> CModel:
    """The bundle's library loaded with its weights, ready to run (thread-safe)."""
    ins, outs = slots(b.manifest["inputs"]), slots(b.manifest["outputs"])
    return CModel(library(b), aligned_copy(b.weights()), ins, outs, b.constant_outputs(), threads)
