"""Checking an edge bundle against the test vectors it carries, on its own backend."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import backends, bundle
from .bundle import Bundle, BundleError
from .bundle.vectors import as_declared
from .feeds import Check, check_feeds, compare

__all__ = ["ROUNDING_MARGIN", "verify"]

# C sums in sequence, the float32 opinion with numpy's blocked sums, which drift less: on basic-pitch's constant-Q
# filter bank C landed 2.9 times the opinion's spread from the reference; 4 covers that with a little room.
ROUNDING_MARGIN = 4.0


def verify(
    source: Bundle | str | os.PathLike[str], threads: int = 1, tolerance: float = 1e-4, trust: bundle.TrustSpec = None
) -> list[Check]:
    """Runs a bundle's test vectors on its own backend; one Check per (vector, output). No vectors: an error.

    An output within `tolerance` of max |reference| passes. So does one within what rounding alone explains, from
    its manifest row (written by the exporter, see quantize.rounding): one quantization "step" of an output
    dequantized from int8 (a float value before int8 landed on the other side of a boundary), or ROUNDING_MARGIN
    times its "rounding", the spread the reference itself showed on these vectors between float64 and float32 sums
    (and, before int8, nudged float values). A well-conditioned output spreads by ~1e-7 and gains nothing; an
    ill-conditioned one (a log of a power near float32's floor) is held to what float32 can do. Check.allowed says
    how much was granted; int8 steps themselves are exact (`checked<c>` proves it step by step). The bundle must be
    signed by a trusted key (`trust`: as Session's)."""
    b = source if isinstance(source, Bundle) else bundle.read(source, trust)
    vectors = b.vectors()
    if not vectors:
        raise BundleError(f"{b.path}: the bundle carries no test vectors (export it with test_vectors >= 1)")
    model = backends.lookup(b.backend).load(b, threads)
    checks = []
    ins, outs = {t.name: t.shape for t in b.inputs}, {t.name: t.shape for t in b.outputs}
    allowed = {r["name"]: _allowed(r) for r in b.manifest["outputs"]}
    for i, (feeds, refs) in enumerate(vectors):
        feeds, refs = as_declared(feeds, ins), as_declared(refs, outs)
        got = model.run(check_feeds(b.inputs, feeds, where=f"{b.path} test vector {i}"))
        for name, ref in refs.items():
            max_abs, rel, ok = compare(got[name], ref, tolerance)
            grant = 0.0
            if not ok and allowed.get(name) and np.isfinite(max_abs) and ref.size:
                step, rounding = allowed[name]
                ulps = 4 * float(np.spacing(np.max(np.abs(ref)).astype(np.float32)))
                grant = max(step + ulps if step else 0.0, ROUNDING_MARGIN * rounding)
                ok = max_abs <= grant
            checks.append(Check(i, name, max_abs, rel, ok, grant))
    return checks


def _allowed(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """(step, rounding) of a manifest output row; None when it has neither (a float bundle's outputs)."""
    step, rounding = row.get("step"), row.get("rounding")
    step = float(step) if isinstance(step, (int, float)) and step > 0 else 0.0
    rounding = float(rounding) if isinstance(rounding, (int, float)) and rounding > 0 else 0.0
    return (step, rounding) if step or rounding else None
