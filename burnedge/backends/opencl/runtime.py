"""The OpenCL runtime: the shared context, programs built once per device and source, and the executable.

Who owns what: one context and device per process (`device()`), shared by every session; each executable owns
its in-order queue, ONE arena buffer (every activation at its planned offset) and its weight buffer, uploaded
once when it is made. A run writes the inputs, enqueues every kernel and reads the outputs back, all
non-blocking on the in-order queue: no host sync between steps, nothing allocated on the device. Runs queued
back to back reuse the arena safely because the queue is in order.

    arena buffer |-- input --|-- conv0 --|-- relu0 (in place) --| ... |   (offsets from the plan)
    weights      |-- w0 --|-- b0 --|-- w1 ... |                        (read-only, per executable)

Programs are cached by device and source hash under $BURNEDGE_HOME/cache/opencl (the device's binary), so a
second load of the same bundle builds nothing; `builds` counts real builds from source in this process.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...files import write_atomic
from .emit import Launch, OpenCLError
from .native import Native
from .staging import PendingRun, QueueCalls, Ring

try:
    import pyopencl as cl
except ImportError:  # the opencl extra is not installed: the backend says so
    cl = None

__all__ = ["INSTALL", "CLModel", "Slot", "builds", "cache_root", "compute_units", "device", "device_key", "program"]

INSTALL = "pyopencl is not installed: pip install 'burnedge[opencl]'"
NO_PLATFORM = (
    "no OpenCL platform with a device here: install an OpenCL driver (Debian: apt-get install pocl-opencl-icd; "
    "NVIDIA: point OCL_ICD_VENDORS at a folder with an .icd file naming libnvidia-opencl.so.1)"
)
GPU_OPTIONS = "-cl-std=CL1.2 -cl-mad-enable"
# a CPU device (PoCL, what CI tests on): its optimiser takes ~6x longer to build a small model than the
# unoptimised program takes to run it, so programs under LIGHT flops build unoptimised there;
# BURNEDGE_OPENCL_OPTIONS overrides every choice
CPU_OPTIONS = "-cl-std=CL1.2 -cl-opt-disable"
LIGHT = 20_000_000
_state: dict[str, Any] = {"builds": 0}
_lock = threading.Lock()


def unavailable() -> str | None:
    """None when an OpenCL device is usable here, else a one-line reason naming what to install."""
    if cl is None:
        return INSTALL
    try:
        device()
    except OpenCLError as exc:
        return str(exc)
    return None


def device() -> tuple[Any, Any]:
    """(context, device) shared by every session of this process: BURNEDGE_OPENCL_DEVICE picks one by a
    substring of its name, else the first GPU, else the first device of any kind."""
    with _lock:
        if "context" not in _state:
            try:
                devices = [d for p in cl.get_platforms() for d in p.get_devices()]
            except cl.Error:
                devices = []
            if not devices:
                raise OpenCLError(NO_PLATFORM)
            want = os.environ.get("BURNEDGE_OPENCL_DEVICE", "")
            if want:
                picked = [d for d in devices if want.lower() in d.name.lower()]
                if not picked:
                    names = ", ".join(d.name for d in devices)
                    raise OpenCLError(f"BURNEDGE_OPENCL_DEVICE={want!r} matches no device; devices: {names}")
            else:
                picked = [d for d in devices if d.type & cl.device_type.GPU] or devices
            dev = picked[0]
            _state["device"] = dev
            _state["context"] = cl.Context([dev])
        return _state["context"], _state["device"]


def compute_units() -> int:
    """The shared device's compute units as the GEMM heuristics see them: 0 for a device that is no GPU;
    BURNEDGE_OPENCL_COMPUTE_UNITS overrides (tests reach the GPU paths on PoCL with it)."""
    if os.environ.get("BURNEDGE_OPENCL_COMPUTE_UNITS"):
        return int(os.environ["BURNEDGE_OPENCL_COMPUTE_UNITS"])
    _, dev = device()
    return int(dev.max_compute_units) if dev.type & cl.device_type.GPU else 0


def device_key(dev: Any) -> str:
    """What a built binary depends on: the device, its driver and platform."""
    text = f"{dev.platform.name}|{dev.platform.version}|{dev.name}|{dev.driver_version}|{dev.version}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_root() -> Path:
    home = os.environ.get("BURNEDGE_HOME") or os.environ.get("BURNEDGE_CACHE") or Path.home() / ".cache" / "burnedge"
    root = Path(home) / "cache" / "opencl"
    root.mkdir(parents=True, exist_ok=True)
    return root


def builds() -> int:
    """How many programs this process built from source (a cached binary does not count)."""
    return _state["builds"]


def build_options(dev: Any, flops: int = LIGHT) -> str:
    """The build options of a program computing `flops` per run on `dev`."""
    light = not dev.type & cl.device_type.GPU and flops < LIGHT
    return os.environ.get("BURNEDGE_OPENCL_OPTIONS", CPU_OPTIONS if light else GPU_OPTIONS)


def program(source: str, flops: int = LIGHT) -> Any:
    """`source` built for the shared device: from the cached binary when there is one, else built and cached."""
    ctx, dev = device()
    options = build_options(dev, flops)
    key = hashlib.sha256(f"{device_key(dev)}|{options}|{source}".encode()).hexdigest()[:32]
    memo = _state.setdefault("programs", {})
    if key in memo:
        return memo[key]
    path = cache_root() / "programs" / f"{key}.bin"
    prg = None
    if path.is_file():
        try:
            prg = cl.Program(ctx, [dev], [path.read_bytes()]).build(options=options)
        except cl.Error:  # a damaged or stale binary: build from source again
            prg = None
    if prg is None:
        try:
            prg = cl.Program(ctx, source).build(options=options)
        except cl.Error as exc:
            log = str(exc).strip().splitlines()
            raise OpenCLError(f"OpenCL build failed on {dev.name}: {' / '.join(log[-6:])}") from None
        _state["builds"] += 1
        binary = prg.get_info(cl.program_info.BINARIES)[0]
        if binary:
            write_atomic(path, bytes(binary))
    memo[key] = prg
    return prg


@dataclass(frozen=True)
class Slot:
    name: str
    offset: int | None
    dtype: np.dtype
    shape: tuple[int, ...]


class CLModel:
    """A program with its launches over one arena: `run_async(feeds)` queues a run, `run` waits for it."""

    def __init__(
        self,
        source: str,
        launches: list[Launch],
        weights: np.ndarray,
        arena_bytes: int,
        inputs: list[Slot],
        outputs: list[Slot],
        constants: Mapping[str, np.ndarray],
        tensors: Mapping[str, Slot] | None = None,
        steps: int = 0,
        flops: int = 0,
    ):
        self.context, self.device = device()
        self.source, self.launches = source, launches
        self.arena_bytes = arena_bytes
        self.inputs, self.outputs, self.constants = inputs, outputs, dict(constants)
        self.tensors = dict(tensors or {})
        self.steps = steps
        self.plan = None  # the plan it was compiled from (a loaded bundle has none): run_steps reads constants
        self.queue = cl.CommandQueue(self.context, self.device)
        mf = cl.mem_flags
        self.arena = cl.Buffer(self.context, mf.READ_WRITE, max(arena_bytes, 64))
        blob = np.ascontiguousarray(weights).view(np.uint8)
        self.weights = cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=blob)
        self.flops = flops  # per run (GEMMs and convolutions), for achieved FLOP/s
        prg = program(source, flops)
        self._stepped = []  # every launch, for runs step by step
        for launch in launches:
            k = cl.Kernel(prg, launch.kernel)
            k.set_args(self.arena, self.weights)
            self._stepped.append((k, launch))
        self._kernels = [(k, ln) for k, ln in self._stepped if not ln.step_only]  # what a run enqueues
        self._native = Native.open(self.queue, self.arena, self._kernels)  # None: pyopencl's calls instead
        self._calls = self._native or QueueCalls(self.queue, self.arena, self._kernels)
        self._ring = Ring(self.context, self.queue, inputs, [s for s in outputs if s.name not in self.constants])
        self._lock = threading.Lock()

    @property
    def native(self) -> bool:
        """Whether runs enqueue through the OpenCL C API directly (else through pyopencl's calls)."""
        return self._native is not None

    @property
    def kernel_count(self) -> int:
        """Kernels one run enqueues."""
        return len(self._kernels)

    def _enqueue(self, kernels: list[tuple[Any, Launch]]) -> list[Any]:
        return [cl.enqueue_nd_range_kernel(self.queue, k, ln.global_size, ln.local_size) for k, ln in kernels]

    def _write_inputs(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        keep = []
        for s in self.inputs:
            a = np.ascontiguousarray(feeds[s.name], dtype=s.dtype)
            if a.dtype == np.bool_:
                a = a.view(np.uint8)
            if a.nbytes:
                cl.enqueue_copy(self.queue, self.arena, a, dst_offset=s.offset, is_blocking=False)
            keep.append(a)
        return keep

    def _read(self, slot: Slot) -> tuple[np.ndarray, Any]:
        out = np.empty(slot.shape, np.uint8 if slot.dtype == np.bool_ else slot.dtype)
        ev = None
        if out.nbytes:
            ev = cl.enqueue_copy(self.queue, out, self.arena, src_offset=slot.offset, is_blocking=False)
        return (out.view(np.bool_) if slot.dtype == np.bool_ else out), ev

    def run_async(self, feeds: Mapping[str, np.ndarray]) -> PendingRun:
        """Queues one run (inputs, every kernel, outputs) through a pinned slot and returns its future; it waits
        only when every slot is taken by a run still in flight."""
        with self._lock:
            i = self._ring.take()
            for s, view in zip(self.inputs, self._ring.input_views(i)):
                np.copyto(view, np.asarray(feeds[s.name]).reshape(view.shape), casting="unsafe")
                if view.nbytes:
                    self._calls.write(s.offset, view)
            self._calls.enqueue()
            reads = [(s, v) for s, v in zip(self._ring.outputs, self._ring.output_views(i)) if v.nbytes]
            for s, view in reads[:-1]:
                self._calls.read(s.offset, view)
            done = self._calls.read(reads[-1][0].offset, reads[-1][1], last=True) if reads else self._calls.marker()
            run = PendingRun(done, lambda: self._collect(i))
            self._ring.own(i, run)
        return run

    def _collect(self, i: int) -> dict[str, np.ndarray]:
        """The outputs of the finished run that held slot `i`, copied out of it."""
        read = {s.name: v.copy() for s, v in zip(self._ring.outputs, self._ring.output_views(i))}
        outs = {}
        for s in self.outputs:
            if s.name in self.constants:
                outs[s.name] = np.array(self.constants[s.name])
            else:
                outs[s.name] = read[s.name].view(np.bool_) if s.dtype == np.bool_ else read[s.name]
        return outs

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.run_async(feeds).result()

    def replay(self, runs: int = 1) -> None:
        """Enqueues every kernel `runs` times over the arena as it is (the last run's inputs) and waits: a run's
        device time without host transfers, which is what a benchmark compares with device-resident engines."""
        with self._lock:
            for _ in range(runs):
                self._calls.enqueue()
            self.queue.finish()

    def run_steps(self, feeds: Mapping[str, np.ndarray], before=None, after=None) -> dict[str, np.ndarray]:
        """Runs step by step, waiting after each; `before(i, read)` / `after(i, read)` read tensors from the arena."""
        n_steps = max(self.steps, max((ln.step for ln in self.launches), default=-1) + 1)

        def read(name: str) -> np.ndarray:
            if name in self.constants:
                return np.array(self.constants[name])
            slot = self.tensors.get(name)
            if slot is None or slot.offset is None:
                return np.array(self.plan.graph.values[name].data, copy=True)
            out, ev = self._read(slot)
            if ev is not None:
                ev.wait()
            return out

        with self._lock:
            keep = self._write_inputs(feeds)
            for i in range(n_steps):
                if before is not None:
                    self.queue.finish()
                    before(i, read)
                self._enqueue([(k, ln) for k, ln in self._stepped if ln.step == i])
                if after is not None:
                    self.queue.finish()
                    after(i, read)
            self.queue.finish()
            del keep
        return {s.name: read(s.name) for s in self.outputs}

    def kernel_times(self, feeds: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[tuple[Launch, float]]]:
        """One run on a profiling queue: its outputs, and every kernel it enqueued with its device seconds."""
        queue = cl.CommandQueue(self.context, self.device, properties=cl.command_queue_properties.PROFILING_ENABLE)
        with self._lock:
            saved, self.queue = self.queue, queue
            try:
                keep = self._write_inputs(feeds)
                events = self._enqueue(self._kernels)
                reads = {s.name: self._read(s)[0] for s in self.outputs if s.name not in self.constants}
                queue.finish()
                del keep
            finally:
                self.queue = saved
        outs = {
            s.name: np.array(self.constants[s.name]) if s.name in self.constants else reads[s.name]
            for s in self.outputs
        }
        return outs, [(ln, (ev.profile.end - ev.profile.start) * 1e-9) for (_, ln), ev in zip(self._kernels, events)]

    def profile(self, feeds: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[float]]:
        """One run timed on the device (what profiled<opencl> asks): the outputs, and seconds per plan step."""
        outs, times = self.kernel_times(feeds)
        per_step = [0.0] * max(self.steps, max((ln.step for ln, _ in times), default=-1) + 1)
        for ln, t in times:
            per_step[ln.step] += t
        return outs, per_step
