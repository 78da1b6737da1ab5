"""int8 rules: per source op, how it runs as burnedge int8 ops (ops/quantized.py), or why it stays float.

A rule is ``rule(rw, node) -> str | None`` (`base.py`: the registry and what rules share): it checks first, and
either returns the reason the node stays float (emitting nothing) or emits the int8 nodes and returns None. One
module per op family, named as the op file in `burnedge/ops/` is. The computing ops:

    conv.py         Conv, FusedConv (act Relu/Clip/none) -> QConv: weights per output channel, int32 bias, act as clamp
    matmul.py       Gemm, FusedGemm, MatMul, FusedMatMul -> QMatMul when the weights are constant (transposed as needed)
    elementwise.py  Add / Mul of two tensors -> QAdd / QMul (a constant operand is quantized per tensor);
                    ops tagged int8_lut, one-input chains -> QLut: the float reference on the 256 int8 inputs
    activations.py  Softmax (last axis) -> QSoftmax
    pool.py         AveragePool, GlobalAveragePool -> QAvgPool, QGlobalAvgPool
    movement.py     Concat -> Concat of inputs requantized (QRequant) to the output's qparams
    reduce.py       ReduceMean over the innermost axes -> QGlobalAvgPool between reshapes; ReduceSum stays float

and the ops tagged int8_passthrough (`movement.py`: views, MaxPool, ReduceMax, ReduceMin ...), which run unchanged
on int8 with the input's qparams. A QConv, QMatMul or QAdd whose output is read only by a Relu or a Clip with
constant bounds absorbs it into its clamp, with that node's (narrower) range. Cheap ops (LUTs, adds, movement) run
in int8 only when one of their inputs already is int8 or is a graph input: in the middle of a float island they
would only add a quantize/dequantize pair.
"""

from __future__ import annotations

from ...ops.fixedpoint import add_multipliers
from . import activations, conv, elementwise, matmul, movement, pool, reduce
from .activations import softmax_table
from .base import RULES, Rule, rule

__all__ = ["RULES", "Rule", "add_multipliers", "rule", "softmax_table"]

_FAMILIES = (
    activations,
    conv,
    elementwise,
    matmul,
    movement,
    pool,
    reduce,
)  # each registers its rules by being imported
