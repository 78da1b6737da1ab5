"""Fuzz target: the ONNX importer on mutated small seed models (corpus/onnx/; harness.py states the property).

A mutation edits the ModelProto: a node's op type, inputs or outputs; an attribute added, dropped or given another
value or type; a graph input's dims or element type; an initializer's dims, data type, bytes or an external-data
reference; the opset; or the serialized bytes themselves. The result goes through `burnedge.load` (read from a
file in the sandbox) and, when it imports, through a numpy Session run on zeros (unless a Loop or Scan is left
to run: it runs as long as the model says).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from hypothesis import given
from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto, helper

import burnedge

from .harness import CORPUS, FUZZ, Tally, holds, sandbox

SEEDS = {p.stem: p.read_bytes() for p in sorted((CORPUS / "onnx").glob("*.onnx"))}
TALLY = Tally("importer")
OPS = ["Relu", "Add", "MatMul", "Conv", "MaxPool", "Reshape", "Gather", "Concat", "Loop", "If", "Expand", "Tile",
       "Slice", "Transpose", "Cast", "Div", "Mod", "Split", "Pad", "Resize", "ConstantOfShape", "Range", "TopK",
       "Einsum", "Twice", "NoSuchOp", "Scan", "GatherND", "ScatterND", "Squeeze", "Unsqueeze", "ReduceSum"]  # fmt: skip
ATTRS = ["axis", "axes", "strides", "pads", "kernel_shape", "dilations", "group", "perm", "to", "mode", "keepdims",
         "then_branch", "body", "value", "alpha", "fmod", "batch_dims", "split", "equation"]  # fmt: skip
ints = st.integers(-(2**40), 2**40) | st.sampled_from([0, -1, 1, 2, 3, 2**31, 2**63 - 1, -(2**63)])


def _attribute(draw, name: str) -> AttributeProto:
    kind = draw(st.sampled_from(["int", "ints", "float", "string", "tensor", "graph"]))
    if kind == "int":
        return helper.make_attribute(name, draw(ints))
    if kind == "ints":
        return helper.make_attribute(name, draw(st.lists(ints, max_size=6)), attr_type=AttributeProto.INTS)
    if kind == "float":
        return helper.make_attribute(name, draw(st.floats(allow_nan=True)))
    if kind == "string":
        return helper.make_attribute(name, draw(st.text(max_size=8)))
    if kind == "tensor":
        dims = draw(st.lists(st.integers(0, 4), max_size=3))
        t = helper.make_tensor(name, TensorProto.INT64, dims, np.zeros(int(np.prod(dims)), np.int64).tolist())
        return helper.make_attribute(name, t)
    body = onnx.load_from_string(SEEDS[draw(st.sampled_from(sorted(SEEDS)))]).graph
    return helper.make_attribute(name, body)


def _tensor_edit(draw, t: TensorProto) -> None:
    what = draw(st.sampled_from(["dims", "type", "raw", "external"]))
    if what == "dims":
        del t.dims[:]
        t.dims.extend(draw(st.lists(st.integers(-2, 2**33) | st.integers(0, 5), max_size=4)))
    elif what == "type":
        t.data_type = draw(st.integers(0, 30) | st.sampled_from([999, -1]))
    elif what == "raw":
        t.raw_data = draw(st.binary(max_size=80))
    else:
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        entry = t.external_data.add()
        entry.key, entry.value = "location", draw(st.sampled_from(["w.bin", "../w.bin", "/etc/passwd", "sub/x"]))


@st.composite
def mutated(draw) -> bytes:
    model = onnx.load_from_string(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    g = model.graph
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.sampled_from(["op", "io", "attr", "attr", "input", "init", "opset", "bytes"]))
        if where == "op" and g.node:
            draw(st.sampled_from(list(g.node))).op_type = draw(st.sampled_from(OPS))
        elif where == "io" and g.node:
            node = draw(st.sampled_from(list(g.node)))
            names = [*sorted({n for x in g.node for n in [*x.input, *x.output]}), "", "nope"]
            field = node.input if draw(st.booleans()) else node.output
            if field and draw(st.booleans()):
                field[draw(st.integers(0, len(field) - 1))] = draw(st.sampled_from(names))
            else:
                field.append(draw(st.sampled_from(names)))
        elif where == "attr" and g.node:
            node = draw(st.sampled_from(list(g.node)))
            if node.attribute and draw(st.booleans()):
                del node.attribute[draw(st.integers(0, len(node.attribute) - 1))]
            else:
                name = draw(st.sampled_from(ATTRS + [a.name for a in node.attribute]))
                kept = [a for a in node.attribute if a.name != name]
                new = _attribute(draw, name)
                del node.attribute[:]
                node.attribute.extend([*kept, new])
        elif where == "input" and g.input:
            tt = draw(st.sampled_from(list(g.input))).type.tensor_type
            if draw(st.booleans()):
                tt.elem_type = draw(st.integers(0, 30))
            else:
                dims = draw(st.lists(st.integers(-3, 2**40) | st.integers(0, 6), max_size=5))
                tt.ClearField("shape")
                for d in dims:
                    tt.shape.dim.add().dim_value = d
        elif where == "init" and g.initializer:
            _tensor_edit(draw, draw(st.sampled_from(list(g.initializer))))
        elif where == "opset":
            model.opset_import[0].version = draw(st.integers(-1, 30))
        elif where == "bytes":
            data = bytearray(model.SerializeToString())
            for _ in range(draw(st.integers(1, 4))):
                data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
            return bytes(data)
    return model.SerializeToString()


# run-time control flow runs as long as the model says (a Loop without a trip count whose condition stays true
# never ends, by ONNX's definition): such a model is imported and compiled, not run
RUNS_AS_LONG_AS_IT_SAYS = ("Loop", "Scan")
RUN_BYTES = 64 << 20


def _use(path) -> None:
    model = burnedge.load(path)
    sess = burnedge.Session(model, backend="numpy")
    if any(n.op_type in RUNS_AS_LONG_AS_IT_SAYS for n in model.graph.nodes):
        return
    if sess.arena_bytes + sum(t.dtype.itemsize * math.prod(t.shape) for t in sess.inputs) > RUN_BYTES:
        return  # a model that big runs as long as its size says, too
    sess.run({t.name: np.zeros(t.shape, t.dtype) for t in sess.inputs})


@FUZZ
@given(data=mutated())
def test_the_importer_refuses_or_imports_every_mutated_model(data):
    with sandbox() as folder:
        path = folder / "m.onnx"
        path.write_bytes(data)
        holds(TALLY, lambda: _use(path), folder)


def teardown_module(module) -> None:
    TALLY.write()
