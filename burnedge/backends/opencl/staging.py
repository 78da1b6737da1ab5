"""Pinned host memory for runs in flight, and the future a queued run returns.

Why: a copy between the device and ordinary (pageable) host memory is not truly asynchronous on GPU drivers: the
driver stages it through its own pinned buffer and may wait for the queue to reach the copy. So each executable
keeps DEPTH slots of pinned memory (a buffer allocated with CL_MEM_ALLOC_HOST_PTR and mapped once), one per run
in flight. A run copies its feeds into its slot on the host, the device reads them from there and writes the
outputs back into the slot, and the run's future copies them out into fresh arrays when it completes. A slot is
reused only after the run that held it has finished (its outputs collected), which also bounds how far the host
can run ahead of the device.

    slot   |-- input 0 --|-- input 1 --| ... |-- output 0 --| ... |     (64-byte aligned regions)
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...errors import BurnedgeError

try:
    import pyopencl as cl
except ImportError:
    cl = None

__all__ = ["DEPTH", "PendingRun", "QueueCalls", "QueueEvent", "Ring"]

DEPTH = 4  # runs in flight per executable


class QueueEvent:
    """A pyopencl event seen as the runtime's events are (`native.Event`): `wait()` and `complete()`."""

    def __init__(self, event: Any):
        self._event = event

    def wait(self) -> None:
        self._event.wait()

    def complete(self) -> bool:
        return self._event.command_execution_status <= cl.command_execution_status.COMPLETE


class QueueCalls:
    """A run's enqueues through pyopencl, with the interface of `native.Native`: the fallback where the OpenCL
    library cannot be opened with cffi (slower per call, the same results)."""

    def __init__(self, queue: Any, arena: Any, kernels: Sequence[tuple[Any, Any]]):
        self._queue, self._arena, self._kernels = queue, arena, kernels

    def enqueue(self) -> None:
        for k, ln in self._kernels:
            cl.enqueue_nd_range_kernel(self._queue, k, ln.global_size, ln.local_size)

    def write(self, offset: int, array: np.ndarray) -> None:
        cl.enqueue_copy(self._queue, self._arena, array, dst_offset=offset, is_blocking=False)

    def read(self, offset: int, array: np.ndarray, last: bool = False) -> QueueEvent | None:
        event = cl.enqueue_copy(self._queue, array, self._arena, src_offset=offset, is_blocking=False)
        if not last:
            return None
        self._queue.flush()
        return QueueEvent(event)

    def marker(self) -> QueueEvent:
        event = QueueEvent(cl.enqueue_marker(self._queue))
        self._queue.flush()
        return event


class PendingRun(concurrent.futures.Future):
    """A queued run: `result()` waits for its last read-back and returns the outputs (no thread involved);
    `event` has `wait()` and `complete()` (a `native.Event` or a `QueueEvent`)."""

    def __init__(self, event: Any, collect: Callable[[], dict[str, np.ndarray]]):
        super().__init__()
        self._event, self._collect = event, collect
        self._finishing = threading.Lock()  # the caller's result() and a run reusing the slot may race
        self.set_running_or_notify_cancel()

    def _finish(self) -> None:
        with self._finishing:
            if super().done():
                return
            try:
                self._event.wait()
            except BurnedgeError as exc:  # the device failed the run: the future says so, the slot is free
                self.set_exception(exc)
                return
            outputs, self._collect = self._collect(), None
            self.set_result(outputs)

    def done(self) -> bool:
        if not super().done() and self._event.complete():
            self._finish()
        return super().done()

    def result(self, timeout: float | None = None) -> dict[str, np.ndarray]:
        self._finish()
        return super().result(timeout)


def _layout(slots: Sequence[Any]) -> tuple[list[int], int]:
    offsets, end = [], 0
    for s in slots:
        offsets.append(end)
        end += -(-int(np.prod(s.shape, dtype=np.int64)) * np.dtype(s.dtype).itemsize // 64) * 64
    return offsets, end


class Ring:
    """DEPTH slots of pinned host memory, each holding one run's inputs and outputs (see the module's text)."""

    def __init__(self, context: Any, queue: Any, inputs: Sequence[Any], outputs: Sequence[Any], depth: int = 0):
        depth = depth or DEPTH
        self.inputs, self.outputs = list(inputs), list(outputs)
        in_offsets, in_bytes = _layout(self.inputs)
        out_offsets, out_bytes = _layout(self.outputs)
        size = max(in_bytes + out_bytes, 64)
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
        rw = cl.map_flags.READ | cl.map_flags.WRITE
        self._buffers, self._hosts, self._owners = [], [], [None] * depth
        for _ in range(depth):
            buf = cl.Buffer(context, flags, size)
            host, _ = cl.enqueue_map_buffer(queue, buf, rw, 0, (size,), np.uint8, is_blocking=True)
            self._buffers.append(buf)
            self._hosts.append(host)
        self._in = [self._views(h, self.inputs, in_offsets, 0) for h in self._hosts]
        self._out = [self._views(h, self.outputs, out_offsets, in_bytes) for h in self._hosts]
        self._next = 0

    @staticmethod
    def _views(host: np.ndarray, slots: Sequence[Any], offsets: Sequence[int], base: int) -> list[np.ndarray]:
        views = []
        for s, off in zip(slots, offsets):
            dtype = np.dtype(np.uint8 if np.dtype(s.dtype) == np.bool_ else s.dtype)
            n = int(np.prod(s.shape, dtype=np.int64))
            views.append(host[base + off : base + off + n * dtype.itemsize].view(dtype).reshape(s.shape))
        return views

    def take(self) -> int:
        """The next slot, once the run that held it has finished and given back its outputs."""
        i = self._next
        self._next = (i + 1) % len(self._hosts)
        owner, self._owners[i] = self._owners[i], None
        if owner is not None:
            owner._finish()
        return i

    def own(self, i: int, run: PendingRun) -> None:
        self._owners[i] = run

    def input_views(self, i: int) -> list[np.ndarray]:
        return self._in[i]

    def output_views(self, i: int) -> list[np.ndarray]:
        return self._out[i]
