"""Session: runs a model or an edge bundle on a backend, checking every feed's name, shape and dtype first."""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import backends, compiler, limits
from . import bundle as bundle_format
from .bundle import Bundle, BundleError, signing
from .errors import BurnedgeError
from .feeds import check_feeds
from .importers import load
from .importers.onnx import from_proto
from .model import Model, TensorInfo

__all__ = ["Session"]


class Session:
    """A model compiled for one backend. `run(feeds)` maps input names to arrays and returns outputs by name.

    `model` is a Model, a model path (.onnx) or an edge bundle (a .bedge file or folder, or a read Bundle). A
    bundle runs on the backend that built it by default (the manifest says which: the C backend), from the
    library it carries (rebuilt only when it was built for another CPU); on any other backend, the source model it
    carries runs with the bundle's input shapes. A model is compiled by burnedge.compiler for `backend` (default
    the numpy reference); a decorated name works too (`checked<c>`, `profiled<c>`). `threads` sets the cores a C
    run uses (1: deterministic). A bundle runs only when a trusted key signed it (`trust`: public key files trusted
    on top of this machine's; "any": run it unchecked, with a warning; see burnedge.bundle.signing).
    """

    def __init__(
        self,
        model: Model | Bundle | str | os.PathLike[str],
        backend: str | None = None,
        threads: int = 1,
        trust: signing.TrustSpec = None,
    ):
        if isinstance(model, (str, os.PathLike)):
            model = bundle_format.read(model, trust) if bundle_format.looks_like(model) else load(Path(model))
        if not isinstance(model, (Model, Bundle)):
            raise BurnedgeError(f"Session needs a Model, a bundle or a model path, not {type(model).__name__}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise BurnedgeError(f"threads must be a whole number >= 1, not {threads!r}")
        limits.check("max_threads", threads, f"Session(threads={threads})")
        self.manifest: dict | None = None  # a bundle's manifest; the bundle's members are not kept
        self.plan = None  # the plan a model was compiled to (a bundle's is in its plan.json)
        if isinstance(model, Bundle):
            signing.require(model)
            name = backend or model.backend
            self.name, self.manifest = model.name, model.manifest
            self._inputs, self._outputs = model.inputs, model.outputs
            # a prebuilt library needs no compiler: the bundle's own backend loads it (a rebuild says what it lacks)
            own = name == model.backend or name.endswith(f"<{model.backend}>")
            self.backend = backends.lookup(name) if own else backends.get(name)
            self.model = None if own else self._bundled_model(model)
            if own:
                self._exe = self.backend.load(model, threads)
            else:
                self._exe = self._compile(self.model, threads)
        else:
            self.backend = backends.get(backend or "numpy")
            self.name, self.model = model.name, model
            self._inputs, self._outputs = model.inputs, model.outputs
            self._exe = self._compile(model, threads)
        self._int8_inputs = _int8_inputs(model)

    def _compile(self, model: Model, threads: int):
        compiled = compiler.compile(model, self.backend, compiler.Options(threads=threads))
        self.plan = compiled.plan
        return compiled.executable

    @staticmethod
    def _bundled_model(b: Bundle) -> Model:
        import onnx

        if b.manifest.get("quantization"):
            raise BurnedgeError(
                f"{b.path}: an int8 bundle runs on the {b.backend} backend only (the model it carries is the "
                "float source it was quantized from)"
            )
        if b.onnx is None:
            raise BurnedgeError(
                f"{b.path}: the bundle carries no source model; it runs on the {b.backend} backend only"
            )
        try:
            proto = onnx.load_from_string(b.onnx)
        except Exception as exc:  # protobuf's DecodeError, and what a damaged message trips on
            raise BundleError(f"{b.path}: model.onnx is not a readable ONNX model ({type(exc).__name__})") from None
        graph = from_proto(proto, {t.name: t.shape for t in b.inputs})
        return Model(graph, name=b.name, source=None, producer=proto.producer_name)

    @property
    def executable(self):
        """What the backend compiled or loaded (a decorator backend's gives its extras: `profile()` ...)."""
        return self._exe

    @property
    def inputs(self) -> list[TensorInfo]:
        return self._inputs

    @property
    def outputs(self) -> list[TensorInfo]:
        return self._outputs

    @property
    def arena_bytes(self) -> int:
        return self._exe.arena_bytes

    def _int8(self, name: str, arr: np.ndarray) -> np.ndarray:
        """An int8 array for a float input the graph quantizes right away: dequantized exactly (the graph's
        QuantizeLinear gives it back)."""
        info = next(i for i in self._inputs if i.name == name)
        if arr.dtype == np.int8 and info.dtype.kind == "f" and name in self._int8_inputs:
            scale, zero_point = self._int8_inputs[name]
            return ((arr.astype(np.int32) - zero_point).astype(np.float32) * scale).astype(info.dtype)
        return arr

    def run(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs the model once; returns {output name: array}."""
        return self._exe.run(check_feeds(self._inputs, feeds, convert=self._int8 if self._int8_inputs else None))

    def run_async(self, feeds: Mapping[str, object]) -> concurrent.futures.Future:
        """Queues one run and returns a future of its outputs: a backend with a device queue (opencl) returns at
        once and runs queued back to back without waiting in between; any other runs now and returns a done
        future. `run(feeds)` and `run_async(feeds).result()` give the same outputs."""
        checked = check_feeds(self._inputs, feeds, convert=self._int8 if self._int8_inputs else None)
        queue = getattr(self._exe, "run_async", None)
        if queue is not None:
            return queue(checked)
        done: concurrent.futures.Future = concurrent.futures.Future()
        try:
            done.set_result(self._exe.run(checked))
        except BurnedgeError as exc:
            done.set_exception(exc)
        return done

    def close(self) -> None:
        """Lets the backend's worker threads go (the C runtime's: they start again if the session runs again)."""
        close = getattr(self._exe, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session({self.name!r}, backend={self.backend.name!r})"


def _int8_inputs(model: Model | Bundle) -> dict[str, tuple[np.float32, int]]:
    """Float inputs an int8 graph quantizes right away (every reader is one per-tensor int8 QuantizeLinear) ->
    (scale, zero point): such an input also takes int8 arrays, dequantized exactly before the run."""
    if isinstance(model, Bundle):
        rows = model.manifest.get("inputs", [])
        return {
            r["name"]: (np.float32(r["quantization"]["scale"]), int(r["quantization"]["zero_point"]))
            for r in rows
            if r.get("quantization")
        }
    g = model.graph
    readers = g.consumers()
    out = {}
    for name in g.inputs:
        rs = readers.get(name, [])
        if len(rs) != 1 or rs[0].op_type != "QuantizeLinear" or len(rs[0].inputs) < 3 or not rs[0].inputs[2]:
            continue
        scale, zero_point = (g.values[n].data for n in rs[0].inputs[1:3])
        if scale is None or zero_point is None or scale.size != 1 or zero_point.dtype != np.int8:
            continue
        out[name] = (np.float32(scale.reshape(())), int(zero_point.reshape(())))
    return out
