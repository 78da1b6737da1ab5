"""Exporting a model to an edge bundle (`burnedge.verifier` checks one against the test vectors it carries).

model --compiler.plan (the backend's passes and scratch)--> Plan --backend.artifacts--> sources + weight blob
      --backend.build(target), per target--> libraries
      --the numpy reference on seeded random inputs--> test vectors
      --bundle.write--> NAME.bedge   (see burnedge.bundle.format for the members)
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, numpy_helper

from . import backends, bundle, compiler
from .bundle import BundleError, encode_npz, example_inputs
from .bundle.blob import weights_file
from .errors import QuantizationTargetError
from .feeds import Check, compare
from .files import write_atomic
from .importers import bound, load
from .importers.onnx import read
from .model import Model
from .plan import Plan
from .quantize.interface import Interface, int8_interface
from .quantize.pipeline import DEFAULT_BUDGET, quantize_model
from .quantize.result import below_target
from .quantize.rounding import allowances, second_opinions, spreads
from .quantize.stream import StateSpec, load_stream_calibration, pair_states
from .targets import resolve
from .version import __version__

__all__ = ["Check", "compare", "example_inputs", "export", "export_int8"]

# dtypes safetensors stores as themselves; any other is stored as raw bytes (the manifest keeps the real dtype)


def _source(
    model: Model | ModelProto | str | os.PathLike[str], input_shapes, bind: Mapping[str, Any] | None = None
) -> tuple[Model, bytes | None]:
    """The model to export and the bytes of its ONNX file (with external data inlined), when there is one; inputs
    in `bind` become initializers of that file too, so that it still reproduces the bundle (what bench runs)."""
    if isinstance(model, Model):
        for option, value in (("input_shapes", input_shapes), ("bind", bind)):
            if value:
                raise BundleError(f"{option} applies to a model path; a loaded Model already has static shapes")
        src = model.source
        if src is None or not src.is_file() or src.suffix.lower() != ".onnx":
            return model, None
        proto = read(src)
        inputs = {i.name for i in proto.graph.input} - {i.name for i in proto.graph.initializer}
        # a Model loaded with bind= has fewer inputs than its file: the file alone would not reproduce it
        return model, (proto.SerializeToString() if inputs == {i.name for i in model.inputs} else None)
    if isinstance(model, ModelProto):
        proto = ModelProto()
        proto.CopyFrom(model)  # first: importing may rewrite the proto (inlined functions)
        loaded = load(model, input_shapes=input_shapes, bind=bind)
    else:
        loaded = load(Path(model), input_shapes=input_shapes, bind=bind)
        proto = read(Path(model))
    for name, value in bound(proto, bind).items():
        for field in (proto.graph.input, proto.graph.initializer):
            kept = [item for item in field if item.name != name]
            del field[:]
            field.extend(kept)
        proto.graph.initializer.append(numpy_helper.from_array(value, name))
    return loaded, proto.SerializeToString()


def _plan(plan: Plan, weights: Mapping[str, tuple[int, np.ndarray]]) -> dict[str, Any]:
    """plan.json: every step with the ONNX ops fused into it and where its tensors live, then the buffers."""
    g = plan.graph

    def tensor(name: str) -> dict[str, Any]:
        v = g.values[name]
        t: dict[str, Any] = {"name": name, "shape": list(v.shape), "dtype": v.dtype.name}
        if v.is_const:
            t["weights_offset"] = weights[name][0] if name in weights else None
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


def _io_table(
    plan: Plan, names: list[str], constant_keys: dict[str, str], qparams: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Inputs or outputs for the manifest: name, shape, dtype, arena offset (a constant output: its weights key);
    an input an int8 graph quantizes right away also gets its "quantization" (scale, zero point ...)."""
    rows = []
    for name in names:
        v = plan.graph.values[name]
        row = {"name": name, "shape": list(v.shape), "dtype": v.dtype.name, "offset": plan.offsets.get(name)}
        if qparams and name in qparams:
            row["quantization"] = qparams[name]
        rows.append({**row, "constant": constant_keys[name]} if name in constant_keys else row)
    return rows


def _destination(path: str | os.PathLike[str], name: str) -> Path:
    """`path` itself, or NAME.bedge inside it when it is a folder that is not a bundle (by bundle.is_bundle)."""
    dest = Path(path)
    if dest.is_dir() and not dest.is_symlink() and not bundle.is_bundle(dest):
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
    include_source: bool = False,
    quantize: str | None = None,
    calibration: Iterable[Mapping[str, np.ndarray]] | str | os.PathLike[str] | None = None,
    method: str = "auto",
    keep_float: str | Iterable[str] = "auto",
    report: str | os.PathLike[str] | None = None,
    backend: str = "c",
    bind: Mapping[str, Any] | None = None,
    allow_below_target: bool = False,
    **int8_options: Any,
) -> Path:
    """Compiles `model` (a Model, an onnx.ModelProto or an .onnx path) for `target`, writes an edge bundle, and
    returns its path.

    The bundle holds the plan, weights, C source, the compiled library, the source ONNX model only with
    `include_source` (what `bench` runs onnxruntime on, and a numpy Session; it about doubles the size) and
    `test_vectors` test vectors whose reference outputs come from the numpy backend. `path` may be a folder: the
    bundle is then NAME.bedge in it. An op `backend` cannot run fails here, listing every such op. Writing is atomic.
    `bind` ({input name: value}, as `burnedge.load` takes it) fixes inputs to constants, e.g. an input that
    selects a branch of an If (Silero VAD's ``sr``); the bundle's inputs are the others.

    ``quantize="int8"`` quantizes first (`burnedge.quantize.quantize_model`): `calibration` is an iterable of feed
    dicts or a path (a folder of .npy/.npz files or one .npz; see `burnedge.quantize.data`), `method` the
    calibrator ("auto": the best measured), `keep_float` "auto" and/or node names; `report` writes the accuracy
    report (.html: a page with the per-layer plot; anything else: text). Below the accuracy target nothing is
    written and QuantizationTargetError says why, unless `allow_below_target`. `int8_options` go to
    `export_int8` (state, keep_float_budget, target_cosine ...). The bundle's inputs keep float types and also
    take int8 arrays.
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
            backend=backend,
            bind=bind,
            allow_below_target=allow_below_target,
            **int8_options,
        )[0]
    int8_only = calibration is not None or report is not None or allow_below_target or int8_options
    if int8_only or (keep_float and keep_float != "auto"):
        raise BundleError("calibration, keep_float, report and the int8 options apply to quantize='int8'")
    return _export(
        model, path, target, input_shapes, test_vectors, unpacked, include_source, backend=backend, bind=bind
    )


def export_int8(
    model: Model | ModelProto | str | os.PathLike[str],
    path: str | os.PathLike[str],
    calibration: Iterable[Mapping[str, np.ndarray]] | str | os.PathLike[str] | None,
    method: str = "auto",
    keep_float: str | Iterable[str] = "auto",
    report: str | os.PathLike[str] | None = None,
    target: str = "host",
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    test_vectors: int = 2,
    unpacked: bool = False,
    include_source: bool = False,
    scheme: str = "int8",
    progress: bool = True,
    backend: str = "c",
    bind: Mapping[str, Any] | None = None,
    allow_below_target: bool = False,
    state: StateSpec = "auto",
    keep_float_budget: int | float = DEFAULT_BUDGET,
    target_cosine: float | None = 0.99,
    target_db: float | None = None,
    validation: Iterable[Mapping[str, np.ndarray]] | str | os.PathLike[str] | None = None,
):
    """`export` with int8 quantization; returns (bundle path, QuantizationReport).

    `validation` (feed dicts, a folder or an .npz file, like `calibration`): inputs the calibration never saw,
    which the report, method "auto", keep-float "auto" and the target then measure on (default: the calibration
    batches themselves, so the figure can be better than on new inputs).

    When the measured model output misses the target (`target_cosine`, `target_db`), no bundle is written and
    QuantizationTargetError (carrying the report) says by how much, which layers add the most error and what
    to try; the `report` file, when asked for, is written all the same (it is what one diagnoses with).
    ``allow_below_target=True`` writes the bundle anyway, with a warning. `state` pairs state inputs with the
    outputs fed back into them ("auto" by name, {} for none; `burnedge.quantize.stream`): calibration data is
    then a time-ordered stream, and may leave the state inputs out.
    """
    if scheme != "int8":
        raise BundleError(f"unknown quantization {scheme!r}; available: int8")
    if calibration is None:
        raise BundleError("quantize='int8' needs calibration data (feed dicts, a folder or an .npz file)")
    loaded, onnx_bytes = _source(model, input_shapes, bind)
    pairs = pair_states(loaded.graph, state)
    if isinstance(calibration, (str, os.PathLike)):
        calibration = load_stream_calibration(calibration, loaded.graph, pairs)
    if isinstance(validation, (str, os.PathLike)):
        validation = load_stream_calibration(validation, loaded.graph, pairs, "validation")
    graph, rep = quantize_model(
        loaded,
        calibration,
        validation=validation,
        method=method,
        keep_float=keep_float,
        keep_float_budget=keep_float_budget,
        state=state,
        target_cosine=target_cosine,
        target_db=target_db,
        progress=progress,
    )
    if report is not None:
        text = rep.to_html() if str(report).lower().endswith((".html", ".htm")) else rep.to_text()
        write_atomic(report, text.encode())
    if not rep.meets_target():
        if not allow_below_target:
            raise QuantizationTargetError(below_target(rep, report), rep, report)
        warnings.warn(f"int8 below its target, written anyway (allow_below_target): {rep.verdict()}", stacklevel=2)
    # a bundle for microcontrollers only takes and gives int8 (the float buffers would cost more than the arena)
    interface = int8_interface(graph) if all(t.os == "baremetal" for t in resolve(target)) else None
    quantized = Model(graph, name=loaded.name, source=None, producer=loaded.producer)
    info = {
        "scheme": "int8",
        "method": rep.method,
        "methods_tried": {m: round(c, 6) for m, c in rep.tried.items()},
        "state": rep.state,
        "target_met": rep.meets_target(),
        "calibration_batches": rep.calibration_batches,
        "output_cosine": round(rep.output_cosine, 6),
        "output_sqnr_db": None if not np.isfinite(rep.output_sqnr_db) else round(rep.output_sqnr_db, 3),
        "int8_ops": rep.int8_ops,
        "kept_float": rep.kept_float,
        "inputs": {name: qp.to_dict() for name, qp in rep.inputs.items()},
    }
    args = (quantized, path, target, None, test_vectors, unpacked, include_source, onnx_bytes, info, backend)
    out = _export(*args, None, interface)
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
    backend: str = "c",
    bind: Mapping[str, Any] | None = None,
    interface: Interface | None = None,
) -> Path:
    """Writes the bundle (`export`); microcontrollers alone: planned for one thread (the least scratch), and int8
    I/O (`interface`), whose vectors are quantized on the host by the removed QuantizeLinear nodes."""
    targets = resolve(target)  # "rpi4,rpi5" or a list; an unknown name lists the known ones
    if not isinstance(test_vectors, int) or test_vectors < 0:
        raise BundleError(f"test_vectors must be a count >= 0, not {test_vectors!r}")
    model, onnx_bytes = _source(model, input_shapes, bind)
    if quantization is not None:
        onnx_bytes = source_bytes  # the float model it was quantized from (what bench compares with)
    dest = _destination(path, model.name)
    bundle.check_destination(dest)  # before the compile: fail fast
    b = backends.get(backend)
    # an int8 graph was optimised before calibration; importing QDQ again would undo its kept-float islands
    one_thread = all(t.os == "baremetal" for t in targets)
    options = compiler.Options(qdq=False if quantization is not None else None, max_threads=1 if one_thread else 0)
    plan = compiler.plan(model, b, options)
    art = b.artifacts(plan)
    for t in targets:
        t.check_fits(plan.arena_bytes + art.weight_bytes, plan.arena_bytes, art.weight_bytes)
    libraries = {t.name: b.build(art, t) for t in targets}
    constants = {n: plan.graph.values[n].data for n in plan.graph.outputs if plan.graph.values[n].is_const}
    weights, layout, const_keys = weights_file(art.weights, constants)

    members = {"plan.json": bundle.dumps(_plan(plan, art.weights)), "weights.safetensors": weights}
    members.update(art.members)
    for lib in libraries.values():
        members.update(lib.members)
    if onnx_bytes is not None and include_source:
        members["model.onnx"] = onnx_bytes
    # the reference runs the optimised graph the library runs, so int8 vectors hold its exact bytes
    reference = compiler.compile(plan.graph, "numpy").executable
    g = plan.graph
    opinions = second_opinions(g, lambda graph: compiler.compile(graph, "numpy").executable)
    rounding: dict[str, float] = {}
    for i in range(test_vectors):
        feeds = example_inputs(model.graph, seed=i)
        if interface is not None and interface.quantizer is not None:
            feeds = interface.quantize({**feeds, **example_inputs(interface.quantizer, seed=i)})
        refs = reference.run(feeds)
        arrays = {f"in_{k}": feeds[n] for k, n in enumerate(g.inputs)}
        arrays.update({f"out_{k}": refs[n] for k, n in enumerate(g.outputs)})
        members[f"vectors/{i}.npz"] = encode_npz(arrays)
        for name, spread in spreads(opinions, feeds, refs).items():
            rounding[name] = max(rounding.get(name, 0.0), spread)

    allow = allowances(g, rounding)
    io = interface or Interface()  # what verify accepts beyond the tolerance: rounding before int8
    manifest = {
        "format": bundle.FORMAT,
        "format_version": bundle.FORMAT_VERSION,
        "burnedge_version": __version__,
        "backend": b.name,
        "model": {
            "name": model.name,
            "producer": model.producer,
            "opset": model.opset,
            "source": model.source.name if model.source else None,
        },
        "target": ",".join(t.name for t in targets),
        "inputs": _io_table(plan, g.inputs, {}, {**(quantization or {}).get("inputs", {}), **io.inputs}),
        "outputs": [{**r, **allow.get(r["name"], {})} for r in _io_table(plan, g.outputs, const_keys, io.outputs)],
        "steps": len(plan.steps),
        "arena_bytes": plan.arena_bytes,
        "arena_lower_bound_bytes": plan.lower_bound_bytes,
        "planner": plan.planner,
        "weight_bytes": art.weight_bytes,
        "weights": layout,
        "libraries": {name: lib.row for name, lib in libraries.items()},
        "vectors": [f"vectors/{i}.npz" for i in range(test_vectors)],
    }
    if quantization is not None:
        manifest["quantization"] = {k: v for k, v in quantization.items() if k != "inputs"}
        if io.inputs or io.outputs:
            manifest["quantization"]["interface"] = {"inputs": sorted(io.inputs), "outputs": sorted(io.outputs)}
    return bundle.write(dest, manifest, members, unpacked=unpacked)
