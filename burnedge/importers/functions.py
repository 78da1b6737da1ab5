"""A node replaced by its op's ONNX function body: for a backend that lacks the op but has the ops the body uses.

Many ONNX schemas define an op as a function of simpler ops (MeanVarianceNormalization, FlexAttention ...), either
fixed (`function_body`) or built for the node's attributes and input types (a context-dependent function). `expand`
turns one node into that body: the node, its schema function as a model-local function and its inputs' types make
a one-node model, which the importer inlines, converts, types and folds as it does any model (so the import limits
hold); its nodes are then spliced into the graph under the node's name, reading the node's inputs and writing its
outputs.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import dtypes, limits
from ..errors import ModelError
from ..ir import Graph, Node
from .onnx import from_proto
from .unroll import splice_as

__all__ = ["expand", "expand_functions", "function_of"]


def _schema(node: Node, graph: Graph | None):
    """The schema of `node`'s op and the opset it is taken at: the graph's (its newest without one) for the ONNX
    domain, the op's own version elsewhere (the graph records the ONNX domain's opset only)."""
    if node.op.domain:
        opset = node.op.since
    else:
        opset = graph.opset if graph is not None and graph.opset else onnx.defs.onnx_opset_version()
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.op.domain), opset
    except onnx.defs.SchemaError:
        return None, opset


def function_of(node: Node, graph: Graph | None = None) -> bool:
    """Whether the schema of `node`'s op (at `graph`'s opset, else its newest) defines a function body."""
    s, opset = _schema(node, graph)
    if s is None:
        return False
    versions = [*s.function_opset_versions, *s.context_dependent_function_opset_versions]
    return any(v <= opset for v in versions)


def _attr_proto(name: str, value) -> onnx.AttributeProto:
    if isinstance(value, np.ndarray):
        return helper.make_attribute(name, numpy_helper.from_array(value))
    if isinstance(value, Graph):
        return helper.make_attribute(name, _graph_proto(value))
    if isinstance(value, list) and value and isinstance(value[0], Graph):
        return helper.make_attribute(name, [_graph_proto(g) for g in value])
    return helper.make_attribute(name, value)


def _node_proto(node: Node) -> onnx.NodeProto:
    proto = helper.make_node(node.op_type, node.inputs, node.outputs, node.name, domain=node.op.domain)
    proto.attribute.extend(_attr_proto(k, v) for k, v in sorted(node.attrs.items()) if v is not None and v != [])
    return proto


def _graph_proto(g: Graph) -> onnx.GraphProto:
    """A subgraph attribute (score_mod, a Loop body ...) back as ONNX, for the one-node model."""
    used = {n for node in g.nodes for n in node.inputs} | set(g.outputs)
    consts = [n for n in g.values if g.values[n].is_const and n in used and n not in g.inputs]
    return helper.make_graph(
        [_node_proto(n) for n in g.nodes],
        g.name or "subgraph",
        [_value_info(g, n) for n in g.inputs],
        [_value_info(g, n) for n in g.outputs],
        [numpy_helper.from_array(np.asarray(g.values[n].data), n) for n in consts],
    )


def _value_info(graph: Graph, name: str) -> onnx.ValueInfoProto:
    v = graph.values[name]
    dims = [d if d >= 0 else None for d in v.shape]
    return helper.make_tensor_value_info(name, dtypes.to_onnx(v.dtype), dims)


def _function(node: Node, graph: Graph, proto: onnx.NodeProto) -> onnx.FunctionProto:
    schema, opset = _schema(node, graph)
    if schema is None:
        raise ModelError("its op has no ONNX schema")
    if schema.has_context_dependent_function:
        types = [_value_info(graph, n).type.SerializeToString() if n else b"" for n in node.inputs]
        body = schema.get_context_dependent_function_with_opset_version(opset, proto.SerializeToString(), types)
    elif schema.has_function:
        body = schema.get_function_with_opset_version(opset)
    else:
        raise ModelError("its schema defines no function body")
    if not body:
        raise ModelError(f"its schema has no function body for opset {opset}")
    f = onnx.FunctionProto.FromString(body)
    f.name, f.domain = node.op_type, node.op.domain
    return f


def expand(node: Node, graph: Graph) -> list[Node]:
    """The nodes of `node`'s ONNX function body, their values added to `graph` under `<node name>/`.

    A ModelError (a LimitError past the import limits) when the body cannot be built or imported for this node.
    """
    schema, opset = _schema(node, graph)
    attrs = dict(node.attrs)
    for k, a in schema.attributes.items() if schema is not None else ():
        if k not in attrs and a.default_value.type != onnx.AttributeProto.UNDEFINED:
            attrs[k] = helper.get_attribute_value(a.default_value)
    proto = _node_proto(Node(node.op, node.name, node.inputs, node.outputs, attrs))
    f = _function(node, graph, proto)
    inputs = [n for n in dict.fromkeys([*node.inputs, *node.captures]) if n]
    consts = [n for n in inputs if graph.values[n].is_const]
    g = helper.make_graph(
        [proto],
        "function",
        [_value_info(graph, n) for n in inputs if n not in consts],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in node.outputs if o],
        [numpy_helper.from_array(np.asarray(graph.values[n].data), n) for n in consts],
    )
    opsets = {o.domain: o.version for o in f.opset_import}
    opsets.setdefault("", graph.opset or onnx.defs.onnx_opset_version())
    opsets[node.op.domain] = max(opsets.get(node.op.domain, 1), node.op.since)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()], functions=[f])
    body = from_proto(model)
    return splice_as(body, graph, node.name, node.outputs)


def expand_functions(graph: Graph, lacks) -> Graph:
    """`graph` with every node for which `lacks(node)` is true replaced by its op's ONNX function body (bodies that
    use such ops are expanded in turn); the nodes of the result count against max_nodes. A body that cannot be
    built is a ModelError naming the node and why."""
    pending, kept = list(graph.nodes), []
    while pending:
        node = pending.pop(0)
        if lacks(node) and function_of(node, graph):
            try:
                pending[:0] = expand(node, graph)
            except limits.LimitError as exc:
                raise limits.LimitError(f"node {node.name!r} ({node.op.key}) as its ONNX function: {exc}") from None
            except ModelError as exc:
                raise ModelError(
                    f"node {node.name!r} ({node.op.key}): the backend lacks the op, and its ONNX function "
                    f"cannot replace it: {exc}"
                ) from None
            limits.check("max_nodes", len(kept) + len(pending), f"node {node.name!r} ({node.op_type}) expanded")
            continue
        kept.append(node)
    graph.nodes = kept
    graph.verify()
    return graph
