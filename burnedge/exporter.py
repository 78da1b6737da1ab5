"""Exporting a model to an edge bundle, and checking a bundle against the test vectors it carries.

model --prepare--> Plan + C source + weight blob --cc--> model.so
      --numpy reference on seeded random inputs--> test vectors
      --bundle_writer.write--> NAME.bedge   (see burnedge.bundle for the members)
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto

from . import bundle, bundle_writer
from .bundle import Bundle, BundleError
from .ir import Graph
from .model import Model

__all__ = ["Check", "compare", "example_inputs", "export", "export_int8", "verify"]

# dtypes safetensors stores as themselves; any other is stored as raw bytes (the manifest keeps the real dtype)
_SAFETENSORS = {"bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64"}
_SAFETENSORS |= {"uint8", "uint16", "uint32", "uint64"}


def example_inputs(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic random inputs of the right shapes and dtypes: floats ~ N(0, 1), booleans fair coins, integers
    in [0, 2) or, for the indices of a Gather, in [0, size of the gathered axis)."""
    rng = np.random.default_rng(seed)
    bound: dict[str, int] = {}
    for node in graph.nodes:
        if node.op_type in ("Gather", "GatherElements") and len(node.inputs) > 1 and node.inputs[1] in graph.inputs:
            shape = graph.values[node.inputs[0]].shape
            if shape:
                dim = shape[int(node.attrs.get("axis", 0)) % len(shape)]
                bound[node.inputs[1]] = min(bound.get(node.inputs[1], dim), dim)
    feeds = {}
    for name in graph.inputs:
        v = graph.values[name]
        if v.dtype.kind == "f":
            feeds[name] = rng.standard_normal(v.shape).astype(v.dtype)
        elif v.dtype.kind == "b":
            feeds[name] = rng.random(v.shape) < 0.5
        elif v.dtype.kind in "iu":
            feeds[name] = rng.integers(0, max(bound.get(name, 2), 1), v.shape).astype(v.dtype)
        else:
            raise BundleError(f"cannot make test inputs for input {name!r} of dtype {v.dtype}")
    return feeds


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz archive with fixed timestamps (np.savez stamps the current time, which breaks reproducibility)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for key, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())
    return buf.getvalue()


def _source(model: Model | ModelProto | str | os.PathLike[str], input_shapes) -> tuple[Model, bytes | None]:
    """The model to export and the bytes of its ONNX file (with external data inlined), when there is one."""
    from .importers import load
    from .importers.onnx import read

    if isinstance(model, ModelProto):
        data = model.SerializeToString()  # first: importing may rewrite the proto (inlined functions)
        return load(model, input_shapes=input_shapes), data
    if not isinstance(model, Model):
        path = Path(model)
        loaded = load(path, input_shapes=input_shapes)
        return loaded, read(path).SerializeToString()
    if input_shapes:
        raise BundleError("input_shapes applies to a model path; a loaded Model already has static shapes")
    src = model.source
    if src is None or not src.is_file() or src.suffix.lower() != ".onnx":
        return model, None
    proto = read(src)
    inputs = {i.name for i in proto.graph.input} - {i.name for i in proto.graph.initializer}
    # a Model loaded with bind= has fewer inputs than its file: the file alone would not reproduce it
    return model, (proto.SerializeToString() if inputs == {i.name for i in model.inputs} else None)


def _plan(plan, emitted) -> dict[str, Any]:
    """plan.json: every step with the ONNX ops fused into it and where its tensors live, then the buffers."""
    g = plan.graph

    def tensor(name: str) -> dict[str, Any]:
        v = g.values[name]
        t: dict[str, Any] = {"name": name, "shape": list(v.shape), "dtype": v.dtype.name}
        if v.is_const:
            t["weights_offset"] = emitted.weights[name][0] if name in emitted.weights else None
        else:
            t["offset"] = plan.offsets.get(name)
        return t

    steps = []
    for i, node in enumerate(plan.steps):
        step = {
            "index": i,
            "name": node.name,
            "op": f"{node.op.domain}.{node.op_type}" if node.op.domain else node.op_type,
            "ops": [op for op, _ in node.onnx_ops],
            "fused": [{"op": op, "node": name} for op, name in node.onnx_ops],
            "inputs": [tensor(n) for n in node.inputs if n],
            "outputs": [tensor(n) for n in node.outputs if n],
        }
        if i in plan.scratch:
            step["scratch"] = {"offset": plan.scratch[i][0], "bytes": plan.scratch[i][1]}
        steps.append(step)
    return {
        "arena_bytes": plan.arena_bytes,
        "arena_lower_bound_bytes": plan.lower_bound_bytes,
        "planner": plan.planner,
        "steps": steps,
        "buffers": plan.timeline(),
    }


def _weights(emitted, constants: dict[str, np.ndarray]) -> tuple[bytes, list[dict[str, Any]], dict[str, str]]:
    """weights.safetensors, the blob layout, and the key of each constant output."""
    from safetensors.numpy import save

    tensors: dict[str, np.ndarray] = {}
    layout = []

    def add(key: str, arr: np.ndarray) -> None:
        arr = np.ascontiguousarray(arr)
        tensors[key] = arr if arr.dtype.name in _SAFETENSORS else arr.reshape(-1).view(np.uint8)

    for key, (offset, arr) in sorted(emitted.weights.items(), key=lambda kv: kv[1][0]):
        add(key, arr)
        layout.append(
            {"key": key, "offset": offset, "bytes": arr.nbytes, "dtype": arr.dtype.name, "shape": list(arr.shape)}
        )
    keys = {}
    for name, arr in constants.items():
        key = f"output:{name}"
        while key in tensors:
            key += "'"
        add(key, arr)
        keys[name] = key
    return save(tensors), layout, keys


def _io_table(slots, constant_keys: dict[str, str], qparams: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Inputs or outputs for the manifest: name, shape, dtype, arena offset (a constant output: its weights key);
    an input an int8 graph quantizes right away also gets its "quantization" (scale, zero point ...)."""
    rows = []
    for s in slots:
        row = {"name": s.name, "shape": list(s.shape), "dtype": s.dtype.name, "offset": s.offset}
        if qparams and s.name in qparams:
            row["quantization"] = qparams[s.name]
        rows.append({**row, "constant": constant_keys[s.name]} if s.name in constant_keys else row)
    return rows


def _destination(path: str | os.PathLike[str], name: str) -> Path:
    """`path` itself, or NAME.bedge inside it when it is a folder that is not an unpacked bundle."""
    dest = Path(path)
    if dest.is_dir() and not (dest / bundle.MANIFEST).is_file():
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "model"
        dest = dest / f"{safe}{bundle.SUFFIX}"
    return dest


def export(
    model: Model | ModelProto | str | os.PathLike[str],
    path: str | os.PathLike[str],
    target: str | Sequence[str] = "host",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    test_vectors: int = 2,
    unpacked: bool = False,
    include_source: bool = True,
    quantize: str | None = None,
    calibration: Iterable[Mapping[str, np.ndarray]] | str | os.PathLike[str] | None = None,
    method: str = "minmax",
    keep_float: str | Iterable[str] = (),
    report: str | os.PathLike[str] | None = None,
) -> Path:
    """Compiles `model` (a Model, an onnx.ModelProto or an .onnx path) for `target`, writes an edge bundle, and
    returns its path.

    The bundle holds the plan, weights, C source, the compiled library, the source ONNX model (unless not
    `include_source`: it is what `bench` runs onnxruntime on, and about doubles the size) and `test_vectors` test
    vectors whose reference outputs come from the numpy backend. `path` may be a folder: the bundle is then
    NAME.bedge in it. An op without a C kernel fails here, listing every such op. Writing is atomic.

    ``quantize="int8"`` quantizes first (`burnedge.quantize.quantize_model`): `calibration` is an iterable of feed
    dicts or a path (a folder of .npy/.npz files or one .npz; see `burnedge.quantize.data`), `method` the
    calibrator, `keep_float` "auto" and/or node names; `report` writes the accuracy report (.html: a page with
    the per-layer plot; anything else: text). The bundle's inputs keep float types and also take int8 arrays.
    """
    if quantize is not None:
        return export_int8(
            model,
            path,
            calibration,
            method,
            keep_float,
            report,
            target,
            input_shapes,
            test_vectors,
            unpacked,
            include_source,
            quantize,
        )[0]
    if calibration is not None or keep_float or report is not None:
        raise BundleError("calibration, keep_float and report apply to quantize='int8'")
    return _export(model, path, target, input_shapes, test_vectors, unpacked, include_source)


def export_int8(
    model: Model | ModelProto | str | os.PathLike[str],
    path: str | os.PathLike[str],
    calibration: Iterable[Mapping[str, np.ndarray]] | str | os.PathLike[str] | None,
    method: str = "minmax",
    keep_float: str | Iterable[str] = (),
    report: str | os.PathLike[str] | None = None,
    target: str = "host",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    test_vectors: int = 2,
    unpacked: bool = False,
    include_source: bool = True,
    scheme: str = "int8",
    progress: bool = True,
):
    """`export` with int8 quantization; returns (bundle path, QuantizationReport)."""
    from .quantize.data import load_calibration
    from .quantize.pipeline import quantize_model
    from .quantize.report import write_atomic

    if scheme != "int8":
        raise BundleError(f"unknown quantization {scheme!r}; available: int8")
    if calibration is None:
        raise BundleError("quantize='int8' needs calibration data (feed dicts, a folder or an .npz file)")
    loaded, onnx_bytes = _source(model, input_shapes)
    if isinstance(calibration, (str, os.PathLike)):
        calibration = load_calibration(calibration, loaded.graph)
    graph, rep = quantize_model(loaded, calibration, method=method, keep_float=keep_float, progress=progress)
    if report is not None:
        text = rep.to_html() if str(report).lower().endswith((".html", ".htm")) else rep.to_text()
        write_atomic(report, text.encode())
    quantized = Model(graph, name=loaded.name, source=None, producer=loaded.producer)
    info = {
        "scheme": "int8",
        "method": rep.method,
        "calibration_batches": rep.calibration_batches,
        "output_cosine": round(rep.output_cosine, 6),
        "output_sqnr_db": None if not np.isfinite(rep.output_sqnr_db) else round(rep.output_sqnr_db, 3),
        "int8_ops": rep.int8_ops,
        "kept_float": rep.kept_float,
        "inputs": {name: qp.to_dict() for name, qp in rep.inputs.items()},
    }
    out = _export(quantized, path, target, None, test_vectors, unpacked, include_source, onnx_bytes, info)
    return out, rep


def _export(
    model: Model | ModelProto | str | os.PathLike[str],
    path: str | os.PathLike[str],
    target: str | Sequence[str],
    input_shapes: Mapping[str, Sequence[int]] | None,
    test_vectors: int,
    unpacked: bool,
    include_source: bool,
    source_bytes: bytes | None = None,
    quantization: dict[str, Any] | None = None,
) -> Path:
    from .backends.c import prepare, slots
    from .backends.c.build import kernel_sources
    from .passes import DEFAULT_PIPELINE
    from .session import Session
    from .targets import build_libraries, resolve

    targets = resolve(target)  # "rpi4,rpi5" or a list; an unknown name lists the known ones
    if not isinstance(test_vectors, int) or test_vectors < 0:
        raise BundleError(f"test_vectors must be a count >= 0, not {test_vectors!r}")
    model, onnx_bytes = _source(model, input_shapes)
    if quantization is not None:
        onnx_bytes = source_bytes  # the float model it was quantized from (what bench compares with)
    dest = _destination(path, model.name)
    bundle_writer.check_destination(dest)  # before the compile: fail fast
    # an int8 graph was optimised before calibration; folding its QDQ pairs again would undo kept-float islands
    pipeline = tuple(p for p in DEFAULT_PIPELINE if quantization is None or p != "fold_qdq")
    plan, emitted = prepare(model.graph, pipeline)
    for t in targets:
        t.check_fits(plan.arena_bytes + emitted.weight_bytes)
    libraries, library_table = build_libraries(emitted.source, targets)
    ins, outs, constants = slots(plan)
    weights, layout, const_keys = _weights(emitted, constants)

    members = {"plan.json": bundle_writer.dumps(_plan(plan, emitted)), "weights.safetensors": weights}
    members["src/model.c"] = emitted.source.encode()
    members.update({f"src/kernels/{n}": text.encode() for n, text in kernel_sources().items()})
    members.update(libraries)
    if onnx_bytes is not None and include_source:
        members["model.onnx"] = onnx_bytes
    # the reference runs the optimised graph the library runs, so int8 vectors hold its exact bytes
    reference = Session(Model(plan.graph, model.name), backend="numpy")
    for i in range(test_vectors):
        feeds = example_inputs(model.graph, seed=i)
        refs = reference.run(feeds)
        arrays = {f"in_{k}": feeds[s.name] for k, s in enumerate(ins)}
        arrays.update({f"out_{k}": refs[s.name] for k, s in enumerate(outs)})
        members[f"vectors/{i}.npz"] = _npz(arrays)

    from . import __version__  # NOTE: here, not at the top: burnedge/__init__.py imports this module first

    manifest = {
        "format": bundle.FORMAT,
        "format_version": bundle.FORMAT_VERSION,
        "burnedge_version": __version__,
        "model": {
            "name": model.name,
            "producer": model.producer,
            "opset": model.opset,
            "source": model.source.name if model.source else None,
        },
        "target": ",".join(t.name for t in targets),
        "inputs": _io_table(ins, {}, (quantization or {}).get("inputs", {})),
        "outputs": _io_table(outs, const_keys),
        "steps": len(plan.steps),
        "arena_bytes": plan.arena_bytes,
        "arena_lower_bound_bytes": plan.lower_bound_bytes,
        "planner": plan.planner,
        "weight_bytes": emitted.weight_bytes,
        "weights": layout,
        "libraries": library_table,
        "vectors": [f"vectors/{i}.npz" for i in range(test_vectors)],
    }
    if quantization is not None:
        manifest["quantization"] = {k: v for k, v in quantization.items() if k != "inputs"}
    return bundle_writer.write(dest, manifest, members, unpacked=unpacked)


# -- checking -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One output of one test vector: the largest absolute error, that error relative to max |reference|, ok."""

    vector: int
    output: str
    max_abs: float
    relative: float
    ok: bool


def compare(got: np.ndarray, ref: np.ndarray, tolerance: float = 1e-4) -> tuple[float, float, bool]:
    """(max abs error, relative error, ok): floats relative to max |ref| (NaN and inf must match position for
    position), integers and booleans exactly."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return float("inf"), float("inf"), False
    if ref.size == 0:
        return 0.0, 0.0, True
    g, r = got.astype(np.float64), ref.astype(np.float64)
    if ref.dtype.kind != "f":
        diff = float(np.max(np.abs(g - r)))
        return diff, diff, diff == 0
    inf = np.isinf(r)
    if not np.array_equal(np.isnan(g), np.isnan(r)) or not np.array_equal(g[inf], r[inf]):
        return float("inf"), float("inf"), False
    finite = np.isfinite(r)
    if not finite.any():
        return 0.0, 0.0, True
    diff = float(np.max(np.abs(g[finite] - r[finite])))
    rel = diff / max(float(np.max(np.abs(r[finite]))), 1e-30)
    return diff, rel, rel <= tolerance


def verify(source: Bundle | str | os.PathLike[str], threads: int = 1, tolerance: float = 1e-4) -> list[Check]:
    """Runs a bundle's test vectors on its library; one Check per (vector, output). No vectors: an error."""
    b = source if isinstance(source, Bundle) else bundle.read(source)
    vectors = b.vectors()
    if not vectors:
        raise BundleError(f"{b.path}: the bundle carries no test vectors (export it with test_vectors >= 1)")
    model = b.load(threads)
    checks = []
    for i, (feeds, refs) in enumerate(vectors):
        got = model.run(feeds)
        checks.extend(Check(i, name, *compare(got[name], ref, tolerance)) for name, ref in refs.items())
    return checks
