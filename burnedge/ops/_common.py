"""Helpers shared by op files: axis normalisation, output-dtype rules, broadcasting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_axes", "norm_axis", "same_dtype"]


def norm_axis(axis: int, rank: int, what: str = "axis") -> int:
    """A non-negative axis for rank `rank`; out of range is a ValueError (the node's name gets added upstream)."""
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def as_axes(axes: Sequence[int] | np.ndarray | None, rank: int) -> tuple[int, ...] | None:
    """Normalised, sorted axes from an attribute or a constant input; None stays None."""
    if axes is None:
        return None
    return tuple(sorted(norm_axis(int(a), rank) for a in np.asarray(axes).reshape(-1)))


def same_dtype(result: np.ndarray | np.generic, like: np.ndarray) -> np.ndarray:
    """`result` as an array of `like`'s dtype (numpy promotes float32 with Python floats to float64 at times)."""
    return np.asarray(result).astype(like.dtype, copy=False)
