"""Running a compiled model: the library loaded through cffi (ABI mode: no compiler needed), a pool of arenas.

Ownership: the runtime owns one read-only weights blob per model and a pool of arenas; each `run` takes an arena
from the pool (making one when all are busy), so concurrent runs never share scratch memory, and gives it back.
Inputs are copied into the arena at their planned offsets; outputs are copied out before the arena goes back.
"""

from __future__ import annotations

import math
import queue
from dataclasses import dataclass
from pathlib import Path

import cffi
import numpy as np

from ...errors import BurnedgeError

__all__ = ["CModel", "TensorSlot", "aligned_empty"]

_FFI = cffi.FFI()
_FFI.cdef(
    """
    int be_model_run(uint8_t *arena, const uint8_t *weights, int threads);
    size_t be_model_arena_bytes(void);
    size_t be_model_weight_bytes(void);
    """
)


def aligned_empty(nbytes: int, align: int = 64) -> np.ndarray:
    """A uint8 array of `nbytes` whose data starts on an `align`-byte boundary."""
    raw = np.empty(nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes]


@dataclass(frozen=True)
class TensorSlot:
    """Where a model input or output lives: its arena offset (None for a constant output) and type."""

    name: str
    offset: int | None
    dtype: np.dtype
    shape: tuple[int, ...]


class CModel:
    """A loaded model library with its weights; `run` is thread-safe."""

    def __init__(
        self,
        library: Path,
        weights: np.ndarray,
        inputs: list[TensorSlot],
        outputs: list[TensorSlot],
        constants: dict[str, np.ndarray],
        threads: int = 1,
    ):
        try:
            self._lib = _FFI.dlopen(str(library))
        except OSError as exc:
            raise BurnedgeError(f"cannot load the model library {library}: {exc}") from None
        self.arena_bytes = int(self._lib.be_model_arena_bytes())
        if int(self._lib.be_model_weight_bytes()) != weights.nbytes:
            raise BurnedgeError(
                f"{library}: expects {int(self._lib.be_model_weight_bytes())} bytes of weights, got {weights.nbytes}"
            )
        self._weights = weights
        self._wptr = _FFI.from_buffer("uint8_t[]", weights)
        self.inputs, self.outputs, self.constants = inputs, outputs, constants
        self._out_bytes = [math.prod(s.shape) * s.dtype.itemsize for s in outputs]
        if threads < 1:
            raise BurnedgeError(f"threads must be at least 1, not {threads}")
        self.threads = threads
        self._pool: queue.SimpleQueue[np.ndarray] = queue.SimpleQueue()

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        try:
            arena = self._pool.get_nowait()
        except queue.Empty:
            arena = aligned_empty(max(self.arena_bytes, 1))
        try:
            for s in self.inputs:
                view = arena[s.offset : s.offset + feeds[s.name].nbytes].view(s.dtype).reshape(s.shape)
                view[...] = feeds[s.name]
            rc = self._lib.be_model_run(_FFI.from_buffer("uint8_t[]", arena), self._wptr, self.threads)
            if rc != 0:
                raise BurnedgeError(f"the model library returned error {rc}")
            out = {}
            for s, nbytes in zip(self.outputs, self._out_bytes):
                if s.offset is None:
                    out[s.name] = self.constants[s.name].copy()
                else:
                    out[s.name] = arena[s.offset : s.offset + nbytes].view(s.dtype).reshape(s.shape).copy()
            return out
        finally:
            self._pool.put(arena)
