"""The torch backend's int8 ops (backends/torch/ops_quantized.py) against the int8 spec, byte for byte: the C
backend's test graphs (tests/backends/int8_graphs.py) and the requantisation's edge cases (shifts that saturate,
the largest multipliers, zero multipliers, rounding ties), which QAT's eval forward relies on; and its fused float
ops (backends/torch/ops_fused.py), which QAT trains, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import burnedge
from burnedge import nn
from burnedge.compiler import compile  # noqa: A004
from burnedge.passes import optimize
from burnedge.quantize.pipeline import prepared_graph
from tests.backends.int8_graphs import I8, RNG, G, add_attrs, chain, i8, nhwc_chain, same, softmax_table, stem_chain

torch = pytest.importorskip("torch", reason="the torch backend needs the train extra")
from burnedge.backends.torch import TorchBackend  # noqa: E402


def _check(g: G) -> None:
    same(g, compile(g.model(), TorchBackend()).executable.run(g.feeds()))


@pytest.mark.parametrize("build", [chain, nhwc_chain, stem_chain])
def test_the_c_backends_int8_chains(build):
    _check(build())


def test_requantisation_edge_cases():
    g = G()
    a = g.input("a", np.concatenate([np.arange(-128, 128), i8(700)]).astype(I8).reshape(4, -1))
    b = g.input("b", i8(4, 239))
    c = g.input("c", i8(239))
    for i, shift in enumerate([1, 5, 31, 45, 62]):
        g.node("QAdd", [a, b], f"add{i}", a_zero_point=127, b_zero_point=-128, y_zero_point=5, **add_attrs(shift),
               y_min=-50, y_max=60)  # fmt: skip
    g.node("QAdd", [a, c], "add_broadcast", a_zero_point=-3, b_zero_point=100, y_zero_point=-128, **add_attrs(33))
    for i, shift in enumerate([-40, -31, -20, 0, 5, 40]):  # down-shifts, exact, and saturating up-shifts
        g.node("QMul", [a, b], f"mul{i}", a_zero_point=-128, b_zero_point=127, multiplier=2**31 - 1, shift=shift)
    g.node("QMul", [a, c], "mul_zero", multiplier=0, shift=-3)
    for i, (m, sh) in enumerate([(1518500250, 0), (2**30, -3), (2**31 - 1, -30), (2**30, 3), (0, 0), (1 << 30, 31)]):
        g.node("QRequant", [a], f"rq{i}", x_zero_point=i * 20 - 60, y_zero_point=-i * 7, multiplier=m, shift=sh)
    g.node("QLut", [a], "lut", table=i8(256))
    g.node("QSoftmax", [a], "softmax", table=softmax_table(0.07))
    g.node("QGlobalAvgPool", [g.input("p", i8(2, 3, 5, 7))], "gap", zero_point=-9)
    _check(g)


def test_qmatmul_per_column_multipliers_and_a_bias():
    g = G()
    x = g.input("x", i8(3, 5, 24))
    w = g.const("w", i8(24, 9, lo=-127))
    bias = g.const("bias", RNG.integers(-(2**20), 2**20, 9).astype(np.int32))
    rq = {"multiplier": RNG.integers(2**30, 2**31, 9).astype(np.int32),
          "shift": RNG.integers(-14, 2, 9).astype(np.int32)}  # fmt: skip
    g.node("QMatMul", [x, w, bias], "mm", a_zero_point=-17, y_zero_point=3, y_min=-100, y_max=120, **rq)
    _check(g)


def test_the_fused_ops_of_a_prepared_graph_match_numpy():
    """What QAT trains: FusedConv (residual, activations), FusedGemm / FusedMatMul and Elementwise chains."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
            self.conv2 = nn.Conv2d(6, 6, 1)
            self.fc = nn.Linear(6 * 5 * 5, 7)
            self.proj = nn.Linear(7, 4)

        def forward(self, x):
            a = nn.relu(self.conv1(x * 0.5 + 0.25))
            b = nn.functional.hardswish(self.conv2(a) + a)
            h = nn.tanh(self.fc(nn.flatten(b, 1)))
            return nn.sigmoid((nn.matmul(h, self.proj.weight.t()) + self.proj.bias) * 2.0 - 1.0)

    traced = burnedge.trace(Net(), {"x": (2, 3, 5, 5)}).graph
    x = {"x": RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)}
    seen = []
    for graph in (optimize(traced.copy()), prepared_graph(traced)):  # fused with the residual; split for int8
        seen.append(sorted({f"{n.op_type}/{n.attrs.get('activation', '')}/{len(n.inputs)}" for n in graph.nodes}))
        want = compile(graph, "numpy").executable.run(x)
        got = compile(graph, TorchBackend()).executable.run(x)
        for name, w in want.items():
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6)
    assert {"FusedConv/HardSwish/4", "FusedGemm/Tanh/3", "FusedMatMul//3", "Elementwise//1"} <= set(seen[0]), seen
