"""ONNX ModelProto -> Graph, in numbered phases.

1. read: parse the file (and its external data files); refuse what is not an ONNX model;
2. inline: expand the model's local functions into plain nodes (onnx.inliner does it);
3. convert: bind every node to a registry op for the model's opset, parse attributes; collect *all* missing ops
   and fail once, listing them;
4. shapes: make graph inputs static from the model or `input_shapes`; replace `bind` inputs with constants;
5. infer + fold: in topological order, evaluate nodes whose inputs are all constant (shape subgraphs, Constant
   nodes, If/Loop on constant conditions and trip counts) and infer output types of the rest;
6. finalize: drop dead nodes and constants, verify().
Every phase is bounded (burnedge.limits, applied by importers/bounds.py); a Loop's shapes come from loop_shapes.py.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnx.inliner
from onnx import AttributeProto, GraphProto, ModelProto

from .. import dtypes, limits
from ..errors import BurnedgeError, ModelError, NotStaticError, UnsupportedOpError
from ..files import require_regular
from ..ir import Graph, Node, Value
from ..ops import REQUIRED, OpDef, Spec, for_onnx
from ..ops.interpreter import evaluate
from . import bounds, static
from .checked import check_constant_indices, infer, sparse_to_dense, to_array
from .checked import zeros as _zeros
from .loop_shapes import loop_shapes
from .unroll import inline_if, unroll_loop

__all__ = ["from_proto", "infer_and_fold", "read"]

Missing = dict[tuple[str, str, int], list[str]]


# -- 1. read ------------------------------------------------------------------------------------------------------
def read(path: str | os.PathLike[str]) -> ModelProto:
    """Parses an .onnx file and its external data; any failure is a ModelError naming the file."""
    path = require_regular(path, ModelError, "model")
    if not path.is_file():
        raise ModelError(f"{path}: no such file")
    try:
        model = onnx.load_model(str(path), load_external_data=False)
    except Exception as exc:
        raise ModelError(
            f"{path}: not a readable ONNX model ({type(exc).__name__}: {' '.join(str(exc).split())})"
        ) from None
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.output:
        raise ModelError(f"{path}: not an ONNX model (no IR version or no graph outputs; truncated or wrong file?)")
    try:
        onnx.external_data_helper.load_external_data_for_model(model, str(path.parent))
    except Exception as exc:  # onnx raises its own ValidationError for a missing or unsafe data file
        raise ModelError(f"{path}: cannot read external data: {' '.join(str(exc).split())}") from None
    return model


# -- 2. inline -----------------------------------------------------------------------------------------------------
def _fill_function_defaults(model: ModelProto) -> None:
    """Writes a local function's attribute defaults onto each call that omits them.

    onnx's inliner leaves an attribute that refers to an omitted caller attribute unset (so LeakyRelu falls back
    to its own alpha) instead of taking the function's declared default, as onnxruntime does.
    """
    defaults = {(f.domain, f.name): list(f.attribute_proto) for f in model.functions}

    def fill(nodes) -> None:
        for n in nodes:
            given = {a.name for a in n.attribute}
            for a in defaults.get((n.domain, n.op_type), []):
                if a.name not in given:
                    n.attribute.append(a)
            for a in n.attribute:
                if a.type == AttributeProto.GRAPH:
                    fill(a.g.node)
                for g in a.graphs:
                    fill(g.node)

    fill(model.graph.node)
    for f in model.functions:
        fill(f.node)


# -- 3. convert ---------------------------------------------------------------------------------------------------
def _attr(a: AttributeProto, opsets: dict[str, int], missing: Missing) -> Any:
    A = AttributeProto
    if a.ref_attr_name:
        raise ModelError(f"attribute {a.name!r} refers to a function attribute outside a function")
    if a.type == A.FLOAT:
        return float(a.f)
    if a.type == A.INT:
        return int(a.i)
    if a.type == A.STRING:
        return a.s.decode("utf-8")
    if a.type == A.TENSOR:
        return to_array(a.t, f"attribute {a.name!r}:")
    if a.type == A.SPARSE_TENSOR:
        return sparse_to_dense(a.sparse_tensor)
    if a.type == A.GRAPH:
        return _convert(a.g, opsets, missing, sub=True)
    if a.type == A.FLOATS:
        return [float(f) for f in a.floats]
    if a.type == A.INTS:
        return [int(i) for i in a.ints]
    if a.type == A.STRINGS:
        return [s.decode("utf-8") for s in a.strings]
    if a.type == A.TENSORS:
        return [to_array(t, f"attribute {a.name!r}:") for t in a.tensors]
    if a.type == A.GRAPHS:
        return [_convert(g, opsets, missing, sub=True) for g in a.graphs]
    if a.type == A.TYPE_PROTO:
        return a.tp
    raise ModelError(f"attribute {a.name!r} has an unknown type {a.type}")


def _value_type(vi: onnx.ValueInfoProto) -> tuple[np.dtype, list[int | str | None]] | None:
    t = vi.type
    if not t.HasField("tensor_type"):
        return None
    dims: list[int | str | None] = []
    for d in t.tensor_type.shape.dim:
        dims.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or None))
    dtype = dtypes.from_onnx(t.tensor_type.elem_type) if t.tensor_type.elem_type else np.dtype("float32")
    return dtype, dims


def _convert(g: GraphProto, opsets: dict[str, int], missing: Missing, sub: bool) -> Graph:
    """GraphProto -> Graph with nodes bound to ops; types of non-constant values are filled in later."""
    values: dict[str, Value] = {}
    for init in g.initializer:
        arr = to_array(init, "initializer")
        values[init.name] = Value(init.name, arr.dtype, arr.shape, arr)
    for sp in g.sparse_initializer:
        arr = sparse_to_dense(sp)
        values[sp.values.name] = Value(sp.values.name, arr.dtype, arr.shape, arr)
    inputs = [vi.name for vi in g.input if vi.name not in values]
    for vi in g.input:
        if vi.name not in values:
            vt = _value_type(vi)
            dtype, dims = vt if vt else (np.dtype("float32"), [])
            values[vi.name] = Value(vi.name, dtype, tuple(d if isinstance(d, int) else -1 for d in dims))
    nodes: list[Node] = []
    for i, n in enumerate(g.node):
        name = n.name or f"{n.op_type}_{i}"
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        opset = opsets.get(domain, 0)
        opdef = for_onnx(n.op_type, opset, domain)
        attrs = {a.name: _attr(a, opsets, missing) for a in n.attribute}
        if opdef is None:
            missing.setdefault((domain, n.op_type, opset), []).append(name)
            continue
        nodes.append(Node(opdef, name, list(n.input), list(n.output), _check_attrs(opdef, name, attrs)))
    graph = Graph(g.name or "main", inputs, [o.name for o in g.output], nodes, values, opsets.get("", 0))
    if sub:
        for vi in g.output:
            vt = _value_type(vi)
            if vt and vi.name not in values:
                values[vi.name] = Value(vi.name, vt[0], ())
    for node in nodes:
        node.captures = _captures(node)
    return graph


def _check_attrs(op: OpDef, node: str, attrs: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(attrs) - set(op.attrs))
    if unknown:
        raise ModelError(
            f"node {node!r} ({op.name}): unknown attribute(s) {unknown}; {op.name} takes {sorted(op.attrs) or 'none'}"
        )
    absent = [k for k, v in op.attrs.items() if v is REQUIRED and k not in attrs]
    if absent:
        raise ModelError(f"node {node!r} ({op.name}): missing required attribute(s) {absent}")
    return attrs


def _subgraphs(node: Node) -> list[Graph]:
    out: list[Graph] = []
    for v in node.attrs.values():
        if isinstance(v, Graph):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, Graph))
    return out


def _captures(node: Node) -> list[str]:
    """Names that `node`'s subgraphs read from enclosing scopes, in first-use order."""
    seen: dict[str, None] = {}
    for g in _subgraphs(node):
        defined = set(g.inputs) | {n for n, v in g.values.items() if v.is_const}
        for inner in g.nodes:
            for n in inner.uses():
                if n not in defined:
                    seen[n] = None
            defined.update(inner.outputs)
        for n in g.outputs:
            if n not in defined:
                seen[n] = None
    return list(seen)


# -- 4. shapes ----------------------------------------------------------------------------------------------------
def _static_inputs(
    graph: Graph, g: GraphProto, input_shapes: Mapping[str, Sequence[int]], bind: Mapping[str, Any]
) -> None:
    names = set(graph.inputs)
    for k in list(input_shapes) + list(bind):
        if k not in names:
            raise ModelError(f"no graph input named {k!r}; the inputs are {sorted(names)}")
    protos = {vi.name: vi for vi in g.input}
    unresolved: list[str] = []
    for name in list(graph.inputs):
        v = graph.values[name]
        if name in bind:
            arr = np.asarray(bind[name])
            if arr.dtype != v.dtype:
                arr = arr.astype(v.dtype)
            graph.values[name] = Value(name, arr.dtype, arr.shape, arr)
            graph.inputs.remove(name)
            continue
        vt = _value_type(protos[name])
        dims = vt[1] if vt else []
        if name in input_shapes:
            shape = tuple(int(d) for d in input_shapes[name])
            if len(shape) != len(dims) and vt and protos[name].type.tensor_type.HasField("shape"):
                raise ModelError(
                    f"input_shapes[{name!r}] = {list(shape)} has rank {len(shape)}; "
                    f"the model declares rank {len(dims)} ({dims})"
                )
            for i, (d, s) in enumerate(zip(dims, shape)):
                if isinstance(d, int) and d > 0 and d != s:
                    raise ModelError(f"input_shapes[{name!r}] = {list(shape)} contradicts the model's dim {i} = {d}")
            graph.values[name] = Value(name, v.dtype, shape)
        elif (
            vt is None
            or not protos[name].type.tensor_type.HasField("shape")
            or any(not isinstance(d, int) or d < 0 for d in dims)
        ):
            shown = name if name.isprintable() else repr(name)  # a name holding a newline stays on the line
            unresolved.append(f"{shown} {['?' if not isinstance(d, int) else d for d in dims]}")
    if unresolved:
        raise NotStaticError(
            "input(s) with dynamic or unknown dimensions: "
            + ", ".join(unresolved)
            + "; give them with input_shapes={name: (d0, d1, ...)} (CLI: --input-shape NAME=1,3,224,224)"
        )


# -- 5. infer + fold ----------------------------------------------------------------------------------------------
def infer_and_fold(graph: Graph) -> None:
    """Types every value of `graph` from its inputs' shapes, folding what is constant (control flow on a constant
    condition inlined, constant-trip loops unrolled); a shape that depends on an input's value is a NotStaticError."""
    origins: dict[str, frozenset[str]] = {n: frozenset([n]) for n in graph.inputs}
    kept: list[Node] = []
    pending = deque(graph.nodes)
    budget = bounds.Budget()
    while pending:
        node = pending.popleft()
        spliced = _fold_control_flow(node, graph, budget)
        if spliced is not None:
            pending.extendleft(reversed(spliced))
            continue
        ins = [graph.values[n] if n else None for n in node.inputs]
        caps = [graph.values[n] for n in node.captures]
        op = node.op
        deps = frozenset().union(*(origins.get(n, frozenset()) for n in node.uses()))
        shape_only = "shape_only" in op.tags
        consts = all(v is None or v.is_const for v in ins + caps)
        if not op.random and (shape_only or consts) and bounds.foldable_loop(node, [v and v.data for v in ins]):
            args = [None if v is None else (v.data if v.is_const else _zeros(v)) for v in ins]
            bounds.check_args(node, args)
            outs = evaluate(node, args, {v.name: v.data if v.is_const else _zeros(v) for v in caps})
            bounds.check_result(node, outs)
            for name, arr in zip(node.outputs, outs):
                if name:
                    graph.values[name] = Value(name, arr.dtype, arr.shape, arr)
            continue
        for i in op.static:
            if i < len(ins) and ins[i] is not None and not ins[i].is_const:
                src = sorted(origins.get(node.inputs[i], frozenset()))
                raise NotStaticError(
                    f"node {node.name!r} ({node.op_type}): input {i} {node.inputs[i]!r} must be known at compile "
                    f"time, but it depends on graph input(s) {src}; bind them with bind={{name: array}}",
                    tuple(src),
                )
        if op.dynamic_shape:
            raise NotStaticError(
                f"node {node.name!r} ({node.op_type}): its output shape depends on the values of "
                f"graph input(s) {sorted(deps)}; bind them with bind={{name: array}}",
                tuple(sorted(deps)),
            )
        if op.name == "If" and not op.domain:
            outs_t = _if_shapes(node, ins, caps, origins.get(node.inputs[0], frozenset()))
        elif op.name == "Loop" and not op.domain:
            args = [None if v is None else (v.data if v.is_const else _zeros(v)) for v in ins]
            outs_t = loop_shapes(node, args, {v.name: v.data if v.is_const else _zeros(v) for v in caps})
        elif op.infer is not None:
            outs_t = infer(
                node, [None if v is None else (v.data if v.is_const else Spec(v.shape, v.dtype)) for v in ins]
            )
        else:
            args = [None if v is None else (v.data if v.is_const else _zeros(v)) for v in ins]
            bounds.check_args(node, args)
            outs = evaluate(node, args, {v.name: v.data if v.is_const else _zeros(v) for v in caps})
            bounds.check_result(node, outs)
            outs_t = [(a.shape, a.dtype) for a in outs]
        for name, (shape, dtype) in zip(node.outputs, outs_t):
            if name:
                graph.values[name] = Value(name, np.dtype(dtype), tuple(int(d) for d in shape))
                origins[name] = deps
        kept.append(node)
    graph.nodes = kept


def _if_shapes(node: Node, ins: list[Value | None], caps: list[Value], deps: frozenset[str]) -> list[tuple]:
    """Output shapes of an If whose condition is known only at run time (it depends on the graph inputs `deps`): both
    branches must run on these shapes and agree on them (the plan holds one shape per tensor); else the condition
    has to be bound, and the error says so."""
    args = [None if v is None else (v.data if v.is_const else _zeros(v)) for v in ins]
    scope = {v.name: v.data if v.is_const else _zeros(v) for v in caps}
    hint = f"bind graph input(s) {sorted(deps)} to fix the branch (bind={{name: value}}; CLI: --bind NAME=VALUE)"
    shapes = []
    for branch in (True, False):
        try:
            outs = evaluate(node, [np.array(branch), *args[1:]], scope)
        except ModelError as exc:
            raise NotStaticError(
                f"node {node.name!r} (If): its condition depends on graph input(s) {sorted(deps)}, and the "
                f"{'then' if branch else 'else'} branch cannot run on these input shapes ({exc}); {hint}",
                tuple(sorted(deps)),
            ) from exc
        shapes.append([(a.shape, a.dtype) for a in outs])
    if shapes[0] != shapes[1]:
        differ = [f"{o}: {list(t[0])} vs {list(e[0])}" for o, t, e in zip(node.outputs, *shapes) if t != e]
        raise NotStaticError(
            f"node {node.name!r} (If): its branches give different output shapes (then vs else: "
            f"{'; '.join(differ)}) and its condition depends on graph input(s) {sorted(deps)}; {hint}",
            tuple(sorted(deps)),
        )
    return shapes[0]


def _fold_control_flow(node: Node, graph: Graph, budget: bounds.Budget) -> list[Node] | None:
    """Plain nodes replacing an If on a constant condition or an unrollable Loop; None leaves the node as is."""
    if node.op.name == "If" and not node.op.domain:
        cond = graph.values[node.inputs[0]]
        if cond.is_const and cond.data.size == 1:
            return inline_if(node, bool(cond.data.reshape(())), graph)
    if node.op.name == "Loop" and not node.op.domain:
        return unroll_loop(node, graph, budget)
    return None


# -- 6. finalize --------------------------------------------------------------------------------------------------
def from_proto(
    model: ModelProto, input_shapes: Mapping[str, Sequence[int]] | None = None, bind: Mapping[str, Any] | None = None
) -> Graph:
    """Phases 2-6: a parsed ModelProto -> a static, verified Graph. Every failure is a burnedge error: what no
    phase names more precisely (a malformed proto an onnx helper trips on, nesting deep enough for a
    RecursionError) becomes a ModelError naming its type."""
    try:
        return _phases(model, input_shapes, bind)
    except BurnedgeError:
        raise
    except Exception as exc:
        raise ModelError(f"cannot import the model, it is malformed ({type(exc).__name__}: {exc})") from None


def _phases(
    model: ModelProto, input_shapes: Mapping[str, Sequence[int]] | None, bind: Mapping[str, Any] | None
) -> Graph:
    bounds.check_functions(model)  # before the inliner: a function bomb is counted, not expanded
    static.check(model)  # sequences, maps, ImageDecoder: said as impossible, not as a missing op
    if model.functions:
        _fill_function_defaults(model)
        try:
            model = onnx.inliner.inline_local_functions(model)
        except Exception as exc:
            raise ModelError(f"cannot inline the model's local functions: {exc}") from None
    opsets = {("" if o.domain in ("", "ai.onnx") else o.domain): int(o.version) for o in model.opset_import}
    if "" not in opsets:
        opsets[""] = 1 if model.ir_version < 3 else 0
    missing: Missing = {}
    graph = _convert(model.graph, opsets, missing, sub=False)
    if missing:
        raise UnsupportedOpError(missing)
    _static_inputs(graph, model.graph, input_shapes or {}, bind or {})
    graph.toposort()
    with limits.counting_trips():  # subgraphs run to fold or infer shapes: bounded, never a 10**9-trip hang
        infer_and_fold(graph)
    check_constant_indices(graph)
    graph.prune()
    graph.verify()
    return graph
