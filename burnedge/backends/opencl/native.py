"""A run's enqueues through the OpenCL C API itself, called with cffi (ABI mode: no compiler involved).

Why: pyopencl spends several microseconds of Python per enqueue (argument conversion, an event object per call),
and a small network's kernels run for less than that on a GPU: the host, not the device, then sets the pace, so
runs queued back to back could not overlap. Here a run's launches are prepared once and enqueued with the least
host work the device allows:

- with `cl_khr_command_buffer` (PoCL has it; NVIDIA's driver 580 on an H200 does not): every kernel of a run is
  recorded once into a command buffer, each waiting on the one before (a chain of sync points), and a run
  enqueues it with ONE call;
- else one `clEnqueueNDRangeKernel` per kernel, with no event (about 8 us of host time each on that H200).

The copies and the run's completion event are direct calls too (`Event` wraps a raw cl_event). The handles are
pyopencl's own objects (`int_ptr`), kept alive by this object; the functions come from the very OpenCL library
pyopencl loaded (an ICD loader dispatches through the handle, so any loader would do, but the same one keeps one
copy). When the library cannot be opened, `Native.open()` returns None and the executable keeps pyopencl's calls:
slower, same results. BURNEDGE_OPENCL_NATIVE=0 turns the native path off, =calls keeps it without command buffers.
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

__all__ = ["Event", "Native"]

_CDEF = """
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *cl_event;
cl_int clEnqueueNDRangeKernel(void *queue, void *kernel, cl_uint dim, const size_t *offset, const size_t *global,
                              const size_t *local, cl_uint n_wait, const cl_event *wait, cl_event *event);
cl_int clEnqueueWriteBuffer(void *queue, void *buffer, cl_uint blocking, size_t offset, size_t size, const void *ptr,
                            cl_uint n_wait, const cl_event *wait, cl_event *event);
cl_int clEnqueueReadBuffer(void *queue, void *buffer, cl_uint blocking, size_t offset, size_t size, void *ptr,
                           cl_uint n_wait, const cl_event *wait, cl_event *event);
cl_int clEnqueueMarkerWithWaitList(void *queue, cl_uint n_wait, const cl_event *wait, cl_event *event);
cl_int clFlush(void *queue);
cl_int clWaitForEvents(cl_uint n, const cl_event *events);
cl_int clGetEventInfo(cl_event event, cl_uint name, size_t size, void *value, size_t *size_ret);
cl_int clReleaseEvent(cl_event event);
cl_int clGetDeviceInfo(void *device, cl_uint name, size_t size, void *value, size_t *size_ret);
void *clGetExtensionFunctionAddressForPlatform(void *platform, const char *name);
typedef void *(*create_cb_t)(cl_uint n_queues, void **queues, const cl_ulong *properties, cl_int *status);
typedef cl_int (*finalize_cb_t)(void *cb);
typedef cl_int (*release_cb_t)(void *cb);
typedef cl_int (*enqueue_cb_t)(cl_uint n_queues, void **queues, void *cb, cl_uint n_wait, const cl_event *wait,
                               cl_event *event);
typedef cl_int (*record_kernel_t)(void *cb, void *queue, const void *properties, void *kernel, cl_uint dim,
                                  const size_t *offset, const size_t *global, const size_t *local, cl_uint n_wait,
                                  const cl_uint *wait, cl_uint *sync_point, void *mutable_handle);
"""
_EVENT_STATUS = 0x11D3  # CL_EVENT_COMMAND_EXECUTION_STATUS; CL_COMPLETE is 0, errors are negative
_CB_CAPABILITIES = 0x12A9  # CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR
_CB_SIMULTANEOUS = 1 << 2  # ... _CAPABILITY_SIMULTANEOUS_USE_KHR: enqueue again while the last is pending
_CB_FLAGS, _CB_FLAG_SIMULTANEOUS = 0x1293, 1 << 0  # CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
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


class Event:
    """A raw cl_event this process owns: `wait()`, `complete()`, released when garbage collected."""

    def __init__(self, ffi: Any, lib: Any, handle: Any):
        self._lib, self._handle, self._null = lib, ffi.gc(handle, lib.clReleaseEvent), ffi.NULL
        self._status = ffi.new("cl_int *")

    def wait(self) -> None:
        status = self._lib.clWaitForEvents(1, [self._handle])
        if status:
            raise OpenCLError(f"OpenCL run failed on the device (status {status})")

    def complete(self) -> bool:
        self._lib.clGetEventInfo(self._handle, _EVENT_STATUS, 4, self._status, self._null)
        return self._status[0] <= 0


class Native:
    """One queue's launches, arena copies and events as direct C calls; `open` gives None where not possible."""

    def __init__(self, ffi: Any, lib: Any, queue: Any, arena: Any, kernels: Sequence[tuple[Any, Launch]]):
        self._ffi, self._lib, self._null = ffi, lib, ffi.NULL
        self._queue = ffi.cast("void *", queue.int_ptr)
        self._arena = ffi.cast("void *", arena.int_ptr)
        self._keep = (queue, arena, kernels)  # the pyopencl objects own the handles used below
        self._event = ffi.new("cl_event *")
        self._launches = []
        for k, ln in kernels:
            gws = ffi.new("size_t[]", list(ln.global_size))
            lws = ffi.new("size_t[]", list(ln.local_size)) if ln.local_size is not None else ffi.NULL
            self._launches.append((ffi.cast("void *", k.int_ptr), len(ln.global_size), gws, lws, ln.kernel))
        self._graph = None  # (command buffer, enqueue function, queue array) once recorded
        if os.environ.get("BURNEDGE_OPENCL_NATIVE", "1") != "calls" and self._launches:
            self._graph = self._record(queue.device)

    @staticmethod
    def open(queue: Any, arena: Any, kernels: Sequence[tuple[Any, Launch]]) -> Native | None:
        opened = _open()
        return None if opened is None else Native(opened[0], opened[1], queue, arena, kernels)

    @property
    def recorded(self) -> bool:
        """Whether a run's kernels are one recorded command buffer (else one call per kernel)."""
        return self._graph is not None

    def _function(self, platform: Any, name: str, ctype: str) -> Any:
        handle = self._ffi.cast("void *", platform.int_ptr)
        ptr = self._lib.clGetExtensionFunctionAddressForPlatform(handle, name.encode())
        return None if ptr == self._null else self._ffi.cast(ctype, ptr)

    def _record(self, device: Any) -> tuple[Any, Any, Any] | None:
        """The run's kernels recorded as one command buffer, or None where the device has no such extension or
        recording fails (then runs enqueue kernel by kernel)."""
        if "cl_khr_command_buffer" not in device.extensions.split():
            return None
        ffi, platform = self._ffi, device.platform
        fns = [
            self._function(platform, name, ctype)
            for name, ctype in [
                ("clCreateCommandBufferKHR", "create_cb_t"),
                ("clCommandNDRangeKernelKHR", "record_kernel_t"),
                ("clFinalizeCommandBufferKHR", "finalize_cb_t"),
                ("clEnqueueCommandBufferKHR", "enqueue_cb_t"),
                ("clReleaseCommandBufferKHR", "release_cb_t"),
            ]
        ]
        if any(f is None for f in fns):
            return None
        create, record, finalize, enqueue, release = fns
        caps = ffi.new("cl_ulong *")
        self._lib.clGetDeviceInfo(ffi.cast("void *", device.int_ptr), _CB_CAPABILITIES, 8, caps, ffi.NULL)
        if not caps[0] & _CB_SIMULTANEOUS:
            return None  # replays enqueue one buffer many times back to back: it must allow that
        queues = ffi.new("void *[1]", [self._queue])
        status = ffi.new("cl_int *")
        cb = create(1, queues, ffi.new("cl_ulong[]", [_CB_FLAGS, _CB_FLAG_SIMULTANEOUS, 0]), status)
        if status[0] or cb == ffi.NULL:
            return None
        cb = ffi.gc(cb, release)
        prev, point = ffi.new("cl_uint[1]"), ffi.new("cl_uint *")
        for i, (kernel, dim, gws, lws, _) in enumerate(self._launches):
            # each kernel waits on the one before: the run's order, whatever the device makes of the buffer
            wait = (1, prev) if i else (0, ffi.NULL)
            if record(cb, ffi.NULL, ffi.NULL, kernel, dim, ffi.NULL, gws, lws, *wait, point, ffi.NULL):
                return None
            prev[0] = point[0]
        if finalize(cb):
            return None
        return cb, enqueue, queues

    def enqueue(self) -> None:
        """Every launch of a run, in order, no event: the recorded buffer in one call, else kernel by kernel."""
        null = self._null
        if self._graph is not None:
            cb, enqueue, queues = self._graph
            status = enqueue(1, queues, cb, 0, null, null)
            if status:
                raise OpenCLError(f"OpenCL: enqueueing the run's command buffer failed with status {status}")
            return
        call, q = self._lib.clEnqueueNDRangeKernel, self._queue
        for kernel, dim, gws, lws, name in self._launches:
            status = call(q, kernel, dim, null, gws, lws, 0, null, null)
            if status:
                raise OpenCLError(f"OpenCL kernel {name}: enqueue failed with status {status}")

    def write(self, offset: int, array: np.ndarray) -> None:
        """A non-blocking copy of `array` (kept alive by the caller until the run ends) into the arena at `offset`."""
        ptr, null = self._ffi.cast("void *", array.ctypes.data), self._null
        status = self._lib.clEnqueueWriteBuffer(self._queue, self._arena, 0, offset, array.nbytes, ptr, 0, null, null)
        if status:
            raise OpenCLError(f"OpenCL input copy of {array.nbytes} bytes failed with status {status}")

    def read(self, offset: int, array: np.ndarray, last: bool = False) -> Event | None:
        """A non-blocking copy from the arena at `offset` into `array` (complete once the run's event is). The
        `last` one of a run gives that event (the queue is in order: it completes after everything before it)
        and flushes the queue, as `marker` does: one call fewer per run."""
        ptr, null = self._ffi.cast("void *", array.ctypes.data), self._null
        event = self._event if last else null
        status = self._lib.clEnqueueReadBuffer(self._queue, self._arena, 0, offset, array.nbytes, ptr, 0, null, event)
        if status:
            raise OpenCLError(f"OpenCL output copy of {array.nbytes} bytes failed with status {status}")
        if not last:
            return None
        self._lib.clFlush(self._queue)
        return Event(self._ffi, self._lib, self._event[0])

    def marker(self) -> Event:
        """An event completing when everything queued so far has, then the queue flushed to the device."""
        status = self._lib.clEnqueueMarkerWithWaitList(self._queue, 0, self._null, self._event)
        if status:
            raise OpenCLError(f"OpenCL: enqueueing a marker failed with status {status}")
        self._lib.clFlush(self._queue)
        return Event(self._ffi, self._lib, self._event[0])
