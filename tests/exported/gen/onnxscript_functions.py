"""Model authored with onnxscript (the library under torch's dynamo exporter) that uses
ONNX local functions *with attributes*: function bodies reference the caller's attribute
values through ``ref_attr_name`` (alpha of LeakyRelu, and a float turned into a tensor via
Constant(value_float=@scale)), one function calls another passing attributes on, the two
DenseAct call sites pass alpha=0.2 or rely on the default 0.1, and NormLast declares an
attribute (axis, default -1) that its body never uses.

Needs onnxscript; runs in the venv with the main torch + onnxscript:
    /tmp/venv-torch/bin/python tests/exported/gen/onnxscript_functions.py
"""

import numpy as np
import onnx
import onnxscript
from _meta import out_path, write_meta
from onnx import numpy_helper
from onnxscript import FLOAT, script
from onnxscript import opset18 as op
from onnxscript.values import Opset

NAME = "onnxscript_functions"
local = Opset("burnedge.test", 1)


@script(local, default_opset=op)
def ScaledLeaky(X, alpha: float = 0.1, scale: float = 2.0):
    s = op.CastLike(op.Constant(value_float=scale), X)
    return op.LeakyRelu(X, alpha=alpha) * s


@script(local, default_opset=op)
def DenseAct(X, W, B, alpha: float = 0.1):
    return ScaledLeaky(op.MatMul(X, W) + B, alpha=alpha, scale=0.5)


@script(local, default_opset=op)
def NormLast(X, axis: int = -1):
    m = op.ReduceMax(X, op.Constant(value_ints=[-1]), keepdims=1)
    e = op.Exp(X - m)
    return e / op.ReduceSum(e, op.Constant(value_ints=[-1]), keepdims=1)


@script(default_opset=op)
def main(x: FLOAT[2, 12], w1: FLOAT[12, 16], b1: FLOAT[16], w2: FLOAT[16, 5], b2: FLOAT[5]) -> FLOAT[2, 5]:
    h = DenseAct(x, w1, b1, alpha=0.2)
    h = DenseAct(h, w2, b2)  # default alpha
    return NormLast(h)


model = main.to_model_proto()
# turn the weight inputs into initializers, as an exporter would
rng = np.random.default_rng(3)
weights = {"w1": (12, 16), "b1": (16,), "w2": (16, 5), "b2": (5,)}
for name, shape in weights.items():
    model.graph.initializer.append(numpy_helper.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name))
keep = [i for i in model.graph.input if i.name not in weights]
del model.graph.input[:]
model.graph.input.extend(keep)
model.producer_name = "onnxscript"
model.producer_version = onnxscript.__version__
onnx.checker.check_model(model, full_check=True)
onnx.save(model, out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="onnxscript @script(...).to_model_proto()",
    exporter_version=onnxscript.__version__,
    framework="onnxscript",
    framework_version=onnxscript.__version__,
    features=[
        "local functions with attributes (ref_attr_name)",
        "attribute defaults in FunctionProto.attribute_proto",
        "nested function call passing attributes",
        "Constant(value_float=@ref) inside a function",
        "CastLike",
        "ReduceMax/ReduceSum-18 axes inputs",
        "custom function domain burnedge.test",
    ],
    generator_env="venv --system-site-packages (main torch) + onnxscript==" + onnxscript.__version__,
)
print("wrote", out_path(f"{NAME}.onnx"))
