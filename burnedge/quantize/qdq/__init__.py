"""QDQ import: the DequantizeLinear -> float op -> QuantizeLinear islands of an already-quantized model (as
onnxruntime's quantize_static or PyTorch write them) become burnedge int8 ops; QLinearConv / QLinearMatMul with
constant weights become QConv / QMatMul.

An island is a float node whose activation inputs come from per-tensor int8 DequantizeLinear nodes and whose one
output goes (optionally through a Relu or Clip) to one per-tensor QuantizeLinear. It becomes:

    Conv (constant weights)             QConv (per-channel multipliers; Relu / Clip -> y_min, y_max)
    Gemm / MatMul (constant 2-D B)      QMatMul (+ int32 bias from Gemm's C)
    BatchNormalization                  QConv, depthwise 1x1, weights +-127 (a per-channel affine map)
    Add / Mul of two activations        QAdd / QMul
    AveragePool / GlobalAveragePool     QAvgPool / QGlobalAvgPool (+ QRequant when the output qparams differ)
    Softmax                             QSoftmax when the output has its scale 1/256 and zp -128
    unary elementwise op                QLut: table[i] = Q(op(DQ(i))), the float island evaluated 256 times
    MaxPool, Reshape, Flatten, ...      the same op on the int8 values (+ QRequant of inputs whose qparams differ)

Steps (`import_qdq`):
  0. drop dead nodes (a dead reader would keep a value from having one reader; the importer has folded constants);
  1. uint8 activations become int8 (`unsigned.signed_activations`: exact, value - 128 and zero point - 128);
  2. in order, each candidate node is matched (`matchers.MATCHERS` returns the new nodes or why not); a match
     replaces the float node, its clamp and its QuantizeLinear by int8 nodes writing the QuantizeLinear's output;
  3. DequantizeLinear nodes nobody reads any more are dropped.

Weights: the importer folds DequantizeLinear of constant weights into float32 constants; `params.exact_int8` finds
the int8 values and per-channel scales behind them (exactly: their float32 product gives back every weight bit for
bit), so symmetric int8 weights of any quantizer come back; weights that no int8 tensor with zero point 0 gives
back exactly (asymmetric uint8 ones with |q - zp| > 127, say) keep their island in float. Biases are rounded to
int32 at ``s_in * s_w`` (what onnxruntime's quantizer stores). Islands left in float are correct, just not int8:
`explain(graph)` lists them with the reason, and `import_qdq` adds those lines to ``graph.notes`` when the graph has
such a list (no warnings). A graph without QuantizeLinear, DequantizeLinear, QLinearConv or QLinearMatMul has
nothing to import (`has_qdq`).
"""

from __future__ import annotations

from ...ir import Graph, Node
from .island import Folder
from .matchers import MATCHERS, match_unary
from .unsigned import signed_activations

__all__ = ["explain", "fold", "has_qdq", "import_qdq"]

QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul"})


def has_qdq(graph: Graph) -> bool:
    """Whether `graph` holds ONNX quantization nodes (Q/DQ pairs or QLinear ops) for `import_qdq` to turn to int8."""
    return any(not n.op.domain and n.op_type in QDQ_OPS for n in graph.nodes)


def _is_island(f: Folder, node: Node) -> bool:
    """True when `node` reads a DequantizeLinear output (so leaving it in float is worth a note)."""
    return any(f.producers.get(n) is not None and f.producers[n].op_type == "DequantizeLinear" for n in node.inputs)


def fold(graph: Graph) -> tuple[Graph, list[str]]:
    """The pass, returning the rewritten graph and one line per quantized island left in float."""
    signed_activations(graph)
    f = Folder(graph)
    for node in graph.nodes:
        if id(node) in f.removed or node.op.domain:
            continue
        rule = MATCHERS.get(node.op_type)
        if rule is None and "elementwise" in node.op.tags:
            rule = match_unary
        if rule is None:
            if _is_island(f, node) and node.op_type not in ("QuantizeLinear", "DequantizeLinear"):
                f.notes.append(f"{node.op_type} {node.name!r} stays in float: burnedge has no int8 rule for it")
            continue
        result = rule(f, node)
        if isinstance(result, str):
            if _is_island(f, node) or node.op_type.startswith("QLinear"):
                f.notes.append(f"{node.op_type} {node.name!r} stays in float: {result}")
            continue
        new, folded = result
        f.replace[id(node)] = new
        f.removed.update(id(n) for n in folded)
    nodes: list[Node] = []
    for node in graph.nodes:
        if id(node) in f.removed:
            continue
        nodes.extend(f.replace.get(id(node), [node]))
    dead = {o for n in graph.nodes if id(n) in f.replace or id(n) in f.removed for o in n.outputs if o}
    graph.nodes = nodes
    live = {o for n in nodes for o in n.outputs}
    for name in dead - live:
        graph.values.pop(name, None)
    graph.prune()
    return graph, f.notes


def explain(graph: Graph) -> list[str]:
    """One line per quantized island of `graph` that the import leaves in float, with the reason."""
    g = graph.copy()
    g.prune()
    return fold(g)[1]


def import_qdq(graph: Graph) -> Graph:
    """The int8 graph of a QDQ `graph` (rewritten in place and returned); islands left float are noted on
    ``graph.notes`` when the graph has that list."""
    graph.prune()
    graph, notes = fold(graph)
    target = getattr(graph, "notes", None)
    if isinstance(target, list):
        target.extend(notes)
    graph.verify()
    return graph
