"""The importer's calls into converters that may fail on a malformed model, each failure a ModelError naming the
tensor or node: a TensorProto to an array (numpy_helper), a sparse tensor to a dense one, an op's shape inference,
and the zeros shape inference runs an op on (within max_folded_bytes: an input declared 2**33 floats wide was
allocated, then filled, by the first op without an `infer`).

A tensor's data is checked against its dims and type before conversion (raw_data of the wrong length was a
ValueError from a reshape), and external data is never read here: `importers.onnx.read` loads it from the model
file's folder; a tensor that still points to an external file (a ModelProto built in memory, a bundle's
model.onnx) would otherwise be read relative to the current directory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from onnx import SparseTensorProto, TensorProto, helper, numpy_helper

from .. import limits
from ..errors import BurnedgeError, ModelError
from ..ir import Graph, Node, Value

__all__ = ["check_constant_indices", "infer", "sparse_to_dense", "to_array", "zeros"]


def to_array(t: TensorProto, what: str = "tensor") -> np.ndarray:
    """`t` as a numpy array; malformed data (wrong length, unknown type, external data not loaded) a ModelError."""
    where = f"{what} {t.name!r}"
    if t.data_location == TensorProto.EXTERNAL:
        location = next((e.value for e in t.external_data if e.key == "location"), "?")
        raise ModelError(
            f"{where} keeps its data in the external file {location!r}, which is not loaded: burnedge reads external "
            "data only beside a model file (burnedge.load(path))"
        )
    if any(d < 0 for d in t.dims):
        raise ModelError(f"{where} has negative dims {list(t.dims)}")
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
    except (KeyError, ValueError, TypeError):
        raise ModelError(f"{where} has an unknown data type {t.data_type}") from None
    packed = dtype.name in ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")  # several elements a byte
    if t.HasField("raw_data") and dtype.kind != "O" and not packed:
        want = math.prod(t.dims) * dtype.itemsize
        if len(t.raw_data) != want:
            raise ModelError(
                f"{where}: raw_data holds {len(t.raw_data)} bytes; dims {list(t.dims)} of "
                f"{TensorProto.DataType.Name(t.data_type)} need {want}"
            )
    try:
        return numpy_helper.to_array(t)
    except BurnedgeError:
        raise
    except Exception as exc:  # onnx raises ValueError, TypeError, KeyError ... for malformed tensors
        raise ModelError(f"{where} is malformed ({type(exc).__name__}: {exc})") from None


def sparse_to_dense(sp: SparseTensorProto) -> np.ndarray:
    """A sparse tensor (values, indices: flat or coordinate) as a dense array; bad indices are a ModelError."""
    values = to_array(sp.values, "sparse tensor")
    indices = to_array(sp.indices, "sparse tensor indices")
    try:
        dense = np.zeros(tuple(sp.dims), dtype=values.dtype)
        if indices.ndim == 1:
            dense.reshape(-1)[indices] = values
        else:
            dense[tuple(indices.T)] = values
    except (IndexError, ValueError, TypeError) as exc:
        raise ModelError(f"sparse tensor {sp.values.name!r} is malformed ({type(exc).__name__}: {exc})") from None
    return dense


def infer(node: Node, args: list[Any]) -> list[tuple[tuple[int, ...], np.dtype]]:
    """(shape, dtype) of each output of `node` from its op's `infer`; attributes it cannot take are a ModelError."""
    for key in ("strides", "dilations", "kernel_shape"):
        value = node.attrs.get(key)
        if isinstance(value, list) and any(not isinstance(v, int) or v < 1 for v in value):
            raise ModelError(f"node {node.name!r} ({node.op_type}): {key} must be positive integers, not {value}")
    try:
        specs = node.op.infer(*args, **node.attrs)
        return [(tuple(int(d) for d in s.shape), np.dtype(s.dtype)) for s in specs]
    except BurnedgeError:
        raise
    except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise ModelError(
            f"node {node.name!r} ({node.op_type}): invalid attributes or inputs ({type(exc).__name__}: {exc})"
        ) from None


def zeros(v: Value) -> np.ndarray:
    """Zeros of `v`'s shape and dtype, to run an op on for its output shape; bounded by max_folded_bytes."""
    limits.check("max_folded_bytes", math.prod(v.shape) * max(v.dtype.itemsize, 1), f"tensor {v.name!r}")
    if v.dtype == object:
        return np.full(v.shape, "", dtype=object)
    return np.zeros(v.shape, v.dtype)


INDEXING = ("Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Scatter")


def check_constant_indices(graph: Graph) -> None:
    """Refuses constant indices outside their axis (after counting negative ones from the end): burnedge reads
    zeros for them at run time (ops/_intmath.py), but a constant one is a mistake in the model, said at import."""
    for node in graph.nodes:
        if node.op_type not in INDEXING or node.op.domain or len(node.inputs) < 2:
            continue
        data, idx = graph.values.get(node.inputs[0]), graph.values.get(node.inputs[1])
        if data is None or idx is None or not idx.is_const or idx.data.size == 0 or not data.shape:
            continue
        ind = np.asarray(idx.data, np.int64)
        if node.op_type in ("GatherND", "ScatterND"):
            if ind.ndim == 0:
                continue
            b = int(node.attrs.get("batch_dims", 0))
            dims = np.array(data.shape[b : b + ind.shape[-1]], np.int64)
            if dims.size != ind.shape[-1]:
                continue  # the op's own shape check reports it
        else:
            ind = ind.reshape(-1)
            dims = np.int64(data.shape[int(node.attrs.get("axis", 0)) % len(data.shape)])
        if ((ind < -dims) | (ind >= dims)).any():
            bad = int(ind[((ind < -dims) | (ind >= dims))].reshape(-1)[0])
            raise ModelError(
                f"node {node.name!r} ({node.op_type}): constant index {bad} is outside its axis "
                f"(size {dims.tolist()}; indices must lie in [-size, size))"
            )
