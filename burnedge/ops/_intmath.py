"""burnedge's integer semantics where ONNX leaves a result undefined: one rule, and every backend follows it.

ONNX (and C) leave integer division by zero, INT_MIN / -1, out-of-range indices and float -> int casts of NaN or
of values outside the target type undefined; the C they became trapped (SIGFPE) or differed between boards. burnedge
defines each one, here in numpy (the spec) and in the generated C the same way:

- ``Div``: truncates toward zero; ``x / 0 == 0``; ``INT_MIN / -1 == INT_MIN`` (the two's complement wrap of numpy's
  integer overflow; the generated C negates through the unsigned type, so no undefined behaviour either).
- ``Mod``: the remainder that keeps ``x == q * y + r``: its sign is the divisor's for ``fmod=0`` (Python's ``%``)
  and the dividend's for ``fmod=1`` (C's ``%``); ``x % 0 == x`` (so the identity holds with ``x / 0 == 0``) and
  ``INT_MIN % -1 == 0``.
- float -> integer ``Cast``: truncates toward zero, NaN gives 0, values beyond the type's range (infinities
  too) saturate to its minimum or maximum (as Rust's ``as``, WebAssembly's ``trunc_sat`` and Arm's ``FCVTZS``).
- an index outside its axis after counting negative ones from the end (Gather, GatherElements, GatherND,
  ScatterElements, ScatterND): a gather reads zeros for it, a scatter skips that update. Constant indices out of
  range are refused when the model is imported (burnedge/importers/checked.py).
"""

from __future__ import annotations

import numpy as np

__all__ = ["float_to_int", "in_range", "int_div", "int_mod"]


def _signed_minus_one(b: np.ndarray) -> np.ndarray:
    return b == -1 if b.dtype.kind == "i" else np.zeros(b.shape, bool)


def int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a / b` truncated toward zero, with `x / 0 == 0` and `INT_MIN / -1 == INT_MIN` (broadcasting)."""
    a, b = np.broadcast_arrays(a, np.asarray(b, a.dtype))
    zero, minus_one = b == 0, _signed_minus_one(b)
    safe = np.where(zero | minus_one, 1, b).astype(a.dtype)
    q = a // safe
    q = np.where((a - q * safe != 0) & ((a < 0) != (safe < 0)), q + 1, q)  # floor -> toward zero
    with np.errstate(over="ignore"):
        neg = np.negative(a)  # wraps for INT_MIN
    return np.where(zero, 0, np.where(minus_one, neg, q)).astype(a.dtype)


def int_mod(a: np.ndarray, b: np.ndarray, fmod: bool) -> np.ndarray:
    """The remainder of `a / b` (sign of `b`, or of `a` when `fmod`), with `x % 0 == x` and `INT_MIN % -1 == 0`."""
    a, b = np.broadcast_arrays(a, np.asarray(b, a.dtype))
    zero, minus_one = b == 0, _signed_minus_one(b)
    safe = np.where(zero | minus_one, 1, b).astype(a.dtype)
    r = np.fmod(a, safe) if fmod else np.mod(a, safe)
    return np.where(zero, a, np.where(minus_one, 0, r)).astype(a.dtype)


def float_to_int(x: np.ndarray, to: np.dtype) -> np.ndarray:
    """`x` (floating) as integer type `to`: truncated, NaN -> 0, out of range saturated to `to`'s limits."""
    info = np.iinfo(to)
    wide = np.asarray(x, dtype=np.float64)
    lo, hi = float(info.min), float(info.max)
    # float(hi) of a 64-bit type rounds up to 2**63 / 2**64, just outside the range: compare with >=
    t = np.trunc(np.nan_to_num(wide, nan=0.0, posinf=hi, neginf=lo))
    out = np.where(t >= hi, info.max, np.where(t <= lo, info.min, 0)).astype(to)
    inside = (t > lo) & (t < hi)
    out[inside] = t[inside].astype(to)
    return out


def in_range(indices: np.ndarray, dim: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices with negative ones counted from the end, clamped into range; the mask of those that were in range).

    Callers read zeros (gathers) or skip the update (scatters) where the mask is False.
    """
    dim = np.asarray(dim, np.int64)
    idx = np.where(indices < 0, indices.astype(np.int64) + dim, indices.astype(np.int64))
    ok = (idx >= 0) & (idx < dim)
    return np.where(ok, idx, 0), ok
