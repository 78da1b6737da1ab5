"""A run's enqueues through the OpenCL C API itself, called with cffi (ABI mode: no compiler involved).

Why: pyopencl spends several microseconds of Python per enqueue (argument conversion, an event object per call),
and a small network's kernels run for less than that on a GPU: the host, not the device, then sets the pace, so
runs queued back to back could not overlap. Here a run's launches are prepared once (the kernel handles, their
ranges as C arrays) and each enqueue is one foreign call with no event. The handles are pyopencl's own objects
(`int_ptr`), which stay alive in the executable; the functions come from the very OpenCL library pyopencl loaded
(an ICD loader dispatches through the handle, so any loader would do, but the same one keeps a single copy).

When the library cannot be found or opened, `Native.open()` returns None and the executable keeps pyopencl's
calls: slower, same results.
"""

from __future__ import annotations

import ctypes.util
import glob
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .emit import Launch, OpenCLError

try:
    import cffi
except ImportError:  # cffi is a core dependency; without it the pyopencl path is used
    cffi = None
try:
    import pyopencl as cl
except ImportError:
    cl = None

__all__ = ["Native"]

_CDEF = """
typedef int32_t cl_int;
typedef uint32_t cl_uint;
cl_int clEnqueueNDRangeKernel(void *queue, void *kernel, cl_uint dim, const size_t *offset, const size_t *global,
                              const size_t *local, cl_uint n_wait, const void *wait, void *event);
cl_int clEnqueueWriteBuffer(void *queue, void *buffer, cl_uint blocking, size_t offset, size_t size, const void *ptr,
                            cl_uint n_wait, const void *wait, void *event);
cl_int clEnqueueReadBuffer(void *queue, void *buffer, cl_uint blocking, size_t offset, size_t size, void *ptr,
                           cl_uint n_wait, const void *wait, void *event);
"""
_lib: dict[str, Any] = {}


def _library_paths() -> list[str]:
    """Where the OpenCL library is: the one this process already mapped (pyopencl's), then the system's."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1]
                if "libOpenCL" in os.path.basename(path) and path not in found:
                    found.append(path)
    except OSError:
        pass
    if cl is not None:
        found += sorted(glob.glob(os.path.join(os.path.dirname(cl.__file__), ".libs", "libOpenCL*")))
    system = ctypes.util.find_library("OpenCL")
    return found + ([system] if system else []) + ["libOpenCL.so.1"]


def _open() -> tuple[Any, Any] | None:
    if "lib" not in _lib:
        _lib["lib"] = None
        if cffi is not None and os.environ.get("BURNEDGE_OPENCL_NATIVE", "1") != "0":
            ffi = cffi.FFI()
            ffi.cdef(_CDEF)
            for path in _library_paths():
                try:
                    _lib["lib"] = (ffi, ffi.dlopen(path))
                    break
                except OSError:
                    continue
    return _lib["lib"]


class Native:
    """One queue's launches and its arena copies as direct C calls; `open` gives None where that is not possible."""

    def __init__(self, ffi: Any, lib: Any, queue: Any, arena: Any, kernels: Sequence[tuple[Any, Launch]]):
        self._ffi, self._lib = ffi, lib
        self._queue = ffi.cast("void *", queue.int_ptr)
        self._arena = ffi.cast("void *", arena.int_ptr)
        self._keep = (queue, arena, kernels)  # the pyopencl objects own the handles used below
        self._launches = []
        for k, ln in kernels:
            gws = ffi.new("size_t[]", list(ln.global_size))
            lws = ffi.new("size_t[]", list(ln.local_size)) if ln.local_size is not None else ffi.NULL
            self._launches.append((ffi.cast("void *", k.int_ptr), len(ln.global_size), gws, lws, ln.kernel))

    @staticmethod
    def open(queue: Any, arena: Any, kernels: Sequence[tuple[Any, Launch]]) -> Native | None:
        opened = _open()
        return None if opened is None else Native(opened[0], opened[1], queue, arena, kernels)

    def enqueue(self) -> None:
        """Every launch of a run, in order, no events."""
        call, q, null = self._lib.clEnqueueNDRangeKernel, self._queue, self._ffi.NULL
        for kernel, dim, gws, lws, name in self._launches:
            status = call(q, kernel, dim, null, gws, lws, 0, null, null)
            if status:
                raise OpenCLError(f"OpenCL kernel {name}: enqueue failed with status {status}")

    def write(self, offset: int, array: np.ndarray) -> None:
        """A non-blocking copy of `array` (kept alive by the caller until the run ends) into the arena at `offset`."""
        ptr, null = self._ffi.cast("void *", array.ctypes.data), self._ffi.NULL
        status = self._lib.clEnqueueWriteBuffer(self._queue, self._arena, 0, offset, array.nbytes, ptr, 0, null, null)
        if status:
            raise OpenCLError(f"OpenCL input copy of {array.nbytes} bytes failed with status {status}")

    def read(self, offset: int, array: np.ndarray) -> None:
        """A non-blocking copy from the arena at `offset` into `array` (complete once the run's marker is)."""
        ptr, null = self._ffi.cast("void *", array.ctypes.data), self._ffi.NULL
        status = self._lib.clEnqueueReadBuffer(self._queue, self._arena, 0, offset, array.nbytes, ptr, 0, null, null)
        if status:
            raise OpenCLError(f"OpenCL output copy of {array.nbytes} bytes failed with status {status}")
