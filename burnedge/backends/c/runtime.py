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
class _Arena:
    """One pooled arena: its bytes, the C pointer to them, and (name, view) of each input and output."""

    memory: np.ndarray
    pointer: object
    inputs: list[tuple[str, np.ndarray]]
    outputs: list[tuple[str, np.ndarray]]


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
        if threads < 1:
            raise BurnedgeError(f"threads must be at least 1, not {threads}")
        self.threads = threads
        self._pool: queue.SimpleQueue[_Arena] = queue.SimpleQueue()

    def _new_arena(self) -> _Arena:
        """An arena with its C pointer and the views of every input and output, made once and reused."""
        arena = aligned_empty(max(self.arena_bytes, 1))

        def view(s: TensorSlot) -> np.ndarray:
            nbytes = math.prod(s.shape) * s.dtype.itemsize
            return arena[s.offset : s.offset + nbytes].view(s.dtype).reshape(s.shape)

        ins = [(s.name, view(s)) for s in self.inputs]
        outs = [(s.name, view(s) if s.offset is not None else self.constants[s.name]) for s in self.outputs]
        return _Arena(arena, _FFI.from_buffer("uint8_t[]", arena), ins, outs)

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        try:
            a = self._pool.get_nowait()
        except queue.Empty:
            a = self._new_arena()
        try:
            for name, view in a.inputs:
                view[...] = feeds[name]
            rc = self._lib.be_model_run(a.pointer, self._wptr, self.threads)
            if rc != 0:
                raise BurnedgeError(f"the model library returned error {rc}")
            return {name: view.copy() for name, view in a.outputs}
        finally:
            self._pool.put(a)
