"""Running a compiled model: the library loaded through cffi (ABI mode: no compiler needed), a pool of arenas.

Ownership: the runtime owns one read-only weights blob per model and a pool of arenas; each `run` takes an arena
from the pool (making one when all are busy), so concurrent runs never share scratch memory, and gives it back.
Inputs are copied into the arena at their planned offsets; outputs are copied out before the arena goes back.

Every generated library also exports one entry per step and a timed run (see emit.py): `run_steps` runs it step
by step with hooks that read any tensor of the plan (`tensors`, known when the plan is), `profile` times each step.
"""

from __future__ import annotations

import math
import queue
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import cffi
import numpy as np

from ...errors import BurnedgeError

__all__ = ["CModel", "TensorSlot", "aligned_copy", "aligned_empty"]

_FFI = cffi.FFI()
_FFI.cdef(
    """
    int be_model_run(uint8_t *arena, const uint8_t *weights, int threads);
    size_t be_model_arena_bytes(void);
    size_t be_model_weight_bytes(void);
    int be_model_steps(void);
    int be_model_step(uint8_t *arena, const uint8_t *weights, int threads, int step);
    int be_model_profile(uint8_t *arena, const uint8_t *weights, int threads, double *ns);
    int be_model_close(void);
    int be_model_workers(void);
    """
)


def aligned_empty(nbytes: int, align: int = 64) -> np.ndarray:
    """A uint8 array of `nbytes` whose data starts on an `align`-byte boundary."""
    raw = np.empty(nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes]


def aligned_copy(data: np.ndarray) -> np.ndarray:
    """A read-only, 64-byte aligned copy of a byte array (a weight blob as the generated code addresses it)."""
    out = aligned_empty(data.nbytes)
    out[:] = data.reshape(-1).view(np.uint8)
    out.flags.writeable = False
    return out


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
    channels_last: bool = False  # stored (N, H, W, C) / (N, L, C) while `shape` is the graph's (N, C, ...)


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
        tensors: Mapping[str, TensorSlot] | None = None,
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
        self.tensors = dict(tensors or {})  # every arena tensor of the plan by name (compiled from a plan)
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

    def _take(self, feeds: Mapping[str, np.ndarray]) -> _Arena:
        try:
            a = self._pool.get_nowait()
        except queue.Empty:
            a = self._new_arena()
        for name, view in a.inputs:
            view[...] = feeds[name]
        return a

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        a = self._take(feeds)
        try:
            rc = self._lib.be_model_run(a.pointer, self._wptr, self.threads)
            if rc != 0:
                raise BurnedgeError(f"the model library returned error {rc}")
            return {name: view.copy() for name, view in a.outputs}
        finally:
            self._pool.put(a)

    def close(self) -> None:
        """Stops the library's worker threads (kernels/workers.h) unless another session's run is using them;
        a later run starts them again. A library built before the worker pool has none to stop."""
        try:
            self._lib.be_model_close()
        except AttributeError:
            pass

    def workers(self) -> int:
        """Worker threads the library runs now (0 for a library without the pool)."""
        try:
            return int(self._lib.be_model_workers())
        except AttributeError:
            return 0

    def _steps(self) -> int:
        try:
            return int(self._lib.be_model_steps())
        except AttributeError:
            raise BurnedgeError(
                "this model library has no per-step entry (be_model_step): it was built by an older burnedge; "
                "export the model again to profile or check it step by step"
            ) from None

    def run_steps(self, feeds: Mapping[str, np.ndarray], before=None, after=None) -> dict[str, np.ndarray]:
        """Runs step by step; `before(i, read)` / `after(i, read)` see step i's tensors (`read(name)` copies one
        out of the arena; a constant comes from the weights). Returns the outputs, as `run` does."""
        n = self._steps()
        a = self._take(feeds)

        def read(name: str) -> np.ndarray:
            s = self.tensors[name]
            nbytes = math.prod(s.shape) * s.dtype.itemsize
            flat = a.memory[s.offset : s.offset + nbytes].view(s.dtype)
            if s.channels_last:  # back to the graph's layout, as the reference computes it
                return np.moveaxis(flat.reshape(s.shape[0], *s.shape[2:], s.shape[1]), -1, 1).copy()
            return flat.reshape(s.shape).copy()

        try:
            for i in range(n):
                if before is not None:
                    before(i, read)
                rc = self._lib.be_model_step(a.pointer, self._wptr, self.threads, i)
                if rc != 0:
                    raise BurnedgeError(f"the model library returned error {rc} at step {i}")
                if after is not None:
                    after(i, read)
            return {name: view.copy() for name, view in a.outputs}
        finally:
            self._pool.put(a)

    def profile(self, feeds: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[float]]:
        """One run, timed in C between steps: the outputs, and seconds per step."""
        n = self._steps()
        ns = np.zeros(max(n, 1), np.float64)
        a = self._take(feeds)
        try:
            rc = self._lib.be_model_profile(a.pointer, self._wptr, self.threads, _FFI.from_buffer("double[]", ns))
            if rc != 0:
                raise BurnedgeError(f"the model library returned error {rc}")
            outs = {name: view.copy() for name, view in a.outputs}
        finally:
            self._pool.put(a)
        return outs, [float(t) * 1e-9 for t in ns[:n]]
