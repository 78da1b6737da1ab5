"""Quantization-aware training that matches burnedge's int8 exactly: train in torch, evaluate by the integer path.

    Model --prepare_qat(model, calibration)--> QATModule (torch) --train with PyTorch--> convert --> int8 Model
          --burnedge.export--> bundle          evaluate_int8: the numpy int8 reference, correct samples counted

`prepare_qat` steps:

1. prepare the graph as post-training quantization does (`quantize.pipeline.prepared_graph`: QDQ import,
   `passes.optimize` with BatchNorm folded and conv + bias + relu fused, fused nodes split to the int8 ops'
   granularity), so the module trains the very graph that becomes int8;
2. calibrate it (one burnedge calibrator, `method`): the observed range of every float tensor;
3. rewrite it to int8 once (`quantize.rewrite`, keeping nothing float by choice): the tensors the int8 graph
   holds in int8 (the quantization points, with their QParams), and the layers running as QConv / QMatMul;
4. the module (a `GraphModule` of the prepared graph, PyTorch names kept) fake-quantizes in train mode
   (`fake_quant`): each point's tensor after the node writing it (a graph input as it enters), each int8 layer's
   weights per output channel with the scales burnedge computes from the current weights, its bias as int32
   steps; straight-through gradients.

In eval mode the module runs the int8 graph itself: `convert` (the same rewrite, the current weights, the
calibrated ranges) run by the torch backend's integer ops, which equal the numpy reference and the C kernels bit
for bit. `evaluate_int8` counts correct samples with the numpy reference of that int8 graph: the number the
bundle reproduces. Activation ranges stay the calibrated ones (training adapts the weights to them, and the
conversion uses them), so what was trained is what is exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch

from .. import compiler
from ..backends.torch import GraphModule
from ..errors import BurnedgeError, InputError
from ..ir import Graph
from ..model import Model
from ..quantize.calibrate import CALIBRATORS
from ..quantize.measure import calibrate_all
from ..quantize.pipeline import prepared_graph
from ..quantize.qparams import QParams
from ..quantize.rewrite import Rewrite, rewrite
from . import fake_quant, from_torch

__all__ = ["QATModule", "convert", "evaluate_int8", "prepare_qat"]

Ranges = Mapping[str, tuple[float, float]]
_LAYERS = ("QConv", "QMatMul")  # the int8 ops with weights, whose weights and bias are fake-quantized


class QATModule(GraphModule):
    """The prepared float graph in torch with burnedge's fake quantization (train mode) or its int8 graph run by
    the torch backend's integer ops (eval mode). Made by `prepare_qat`; `state_dict()` keys are the model's."""

    def __init__(self, graph: Graph, ranges: Ranges, unsafe: Mapping[str, str], name: str, method: str = "minmax"):
        super().__init__(graph)
        self.name, self.method = name, method
        self._observe(ranges, unsafe)

    def _observe(self, ranges: Ranges, unsafe: Mapping[str, str]) -> None:
        """Takes calibrated ranges; the quantization points, their QParams and the int8 layers follow (step 3)."""
        self.ranges, self.unsafe = dict(ranges), dict(unsafe)
        graph = self.graph
        rw = self._rewrite(self.float_model().graph)
        self.points = {t: qp for t, (_, qp) in rw.q.items() if not graph.values[t].is_const}
        self._after = [[o for o in node.outputs if o in self.points] for node in graph.nodes]
        nodes = {n.name: n for n in graph.nodes}
        found = [_layer(nodes[d.node], self.points) for d in rw.decisions if d.int8_op in _LAYERS and not d.reason]
        self.layers = [lay for lay in found if lay is not None]
        if not self.points:
            raise BurnedgeError(f"model {self.name!r}: no tensor of it runs in int8, so there is nothing to train")
        self._int8: tuple[tuple[int, ...], GraphModule] | None = None

    def recalibrate(self, calibration_feeds: Iterable[Mapping[str, np.ndarray]], progress: bool = False) -> None:
        """Calibrates again with the current weights (what post-training quantization of the trained model would
        observe): training then continues, and the conversion quantizes, with these ranges."""
        self._observe(*_calibrate(self.float_model().graph, calibration_feeds, self.method, progress))

    def _rewrite(self, graph: Graph) -> Rewrite:
        return rewrite(graph, self.ranges, unsafe=self.unsafe)

    def float_model(self) -> Model:
        """The prepared float graph with the current weights, as a Model."""
        return from_torch(self, Model(self.graph, name=self.name))

    def int8_graph(self) -> Graph:
        """The int8 graph of the current weights: burnedge's rewrite with the calibrated ranges."""
        return self._rewrite(self.float_model().graph).out

    def _fake_weights(self) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        for w_name, b_name, x, axis in self.layers:
            w = self.tensor(w_name)
            b = self.tensor(b_name) if b_name else None
            wqp, bqp = fake_quant.weight_scales(w, b, self.points[x], axis)
            out[w_name] = fake_quant.weight(w, wqp)
            if b is not None:
                out[b_name] = fake_quant.bias(b, bqp)
        return out

    def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> Any:
        feeds = dict(zip(self.graph.inputs, args)) | kwargs
        if not self.training:
            return self._int8_forward(feeds)
        feeds = {n: fake_quant.activation(t, self.points[n]) if n in self.points else t for n, t in feeds.items()}
        env = self.run_graph(feeds | self._fake_weights(), self._fake_outputs)
        outs = tuple(env[n] for n in self.graph.outputs)
        return outs[0] if len(outs) == 1 else outs

    def _fake_outputs(self, i: int, env: dict[str, torch.Tensor]) -> None:
        for name in self._after[i]:
            env[name] = fake_quant.activation(env[name], self.points[name])

    def _int8_forward(self, feeds: Mapping[str, torch.Tensor]) -> Any:
        """The int8 graph on the host CPU (rebuilt when a weight changed), outputs on the inputs' device."""
        version = tuple(p._version for p in self.parameters())
        if self._int8 is None or self._int8[0] != version:
            self._int8 = (version, GraphModule(self.int8_graph()).eval())
        device = next(iter(feeds.values())).device if feeds else torch.device("cpu")
        with torch.no_grad():
            env = self._int8[1].run_graph({n: t.detach().cpu() for n, t in feeds.items()})
        outs = tuple(env[n].to(device) for n in self.graph.outputs)
        return outs[0] if len(outs) == 1 else outs

    def int8_outputs(self, *args: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every tensor of the int8 graph's run on `args` (eval mode's forward), by name."""
        feeds = dict(zip(self.graph.inputs, args))
        self._int8_forward(feeds)
        assert self._int8 is not None
        with torch.no_grad():
            return self._int8[1].run_graph({n: t.detach().cpu() for n, t in feeds.items()})


def _layer(node, points: Mapping[str, QParams]) -> tuple[str, str, str, int] | None:
    """(weight, bias or "", input, output-channel axis) of an int8 layer whose weights the module rounds."""
    op, x, w = node.op_type, node.inputs[0], node.inputs[1]
    b = node.inputs[2] if len(node.inputs) > 2 else ""
    if x not in points:
        return None
    if op.endswith("Conv"):
        return w, b, x, 0
    if op.endswith("Gemm"):
        if float(node.attrs.get("alpha", 1.0)) != 1.0 or float(node.attrs.get("beta", 1.0)) != 1.0:
            return None  # scaled weights: rounded only at conversion
        return w, b, x, 0 if node.attrs.get("transB", 0) else 1
    return w, b, x, 1  # MatMul: weights [K, N]


def _batches(graph: Graph, calibration_feeds: Iterable[Mapping[str, np.ndarray]]) -> list[Mapping[str, np.ndarray]]:
    if isinstance(calibration_feeds, Mapping):
        raise InputError("calibration data is one dict of arrays; pass an iterable of them, e.g. [feeds]")
    batches = list(calibration_feeds)
    if not batches:
        raise InputError("prepare_qat needs at least one calibration batch (a dict of input name -> array)")
    for i, feeds in enumerate(batches):
        if not isinstance(feeds, Mapping):
            raise InputError(f"calibration batch {i} is a {type(feeds).__name__}, not a dict of input arrays")
        for name in graph.inputs:
            v = graph.values[name]
            if name not in feeds:
                raise InputError(f"calibration batch {i} lacks input {name!r}; the model takes {list(graph.inputs)}")
            if tuple(np.shape(feeds[name])) != v.shape:
                raise InputError(
                    f"calibration batch {i}, input {name!r}: shape {list(np.shape(feeds[name]))}, "
                    f"the model takes {list(v.shape)}"
                )
    return batches


def prepare_qat(
    model: Model,
    calibration_feeds: Iterable[Mapping[str, np.ndarray]],
    method: str = "minmax",
    device: str = "cpu",
    progress: bool = False,
) -> QATModule:
    """A torch module for quantization-aware training of `model` (see the module docstring), on `device`, in
    train mode. `calibration_feeds` is an iterable of feed dicts in the model's shapes; `method` one calibrator."""
    if not isinstance(model, Model):
        raise BurnedgeError(f"prepare_qat needs a burnedge.Model, not {type(model).__name__}")
    if method not in CALIBRATORS:
        raise BurnedgeError(f"unknown calibration method {method!r}; available: {', '.join(sorted(CALIBRATORS))}")
    graph = prepared_graph(model.graph)
    return QATModule(graph, *_calibrate(graph, calibration_feeds, method, progress), model.name, method).to(device)


def _calibrate(graph: Graph, calibration_feeds, method: str, progress: bool) -> tuple[Ranges, dict[str, str]]:
    """(range of every float tensor, tensors whose range is unusable and why) from one calibration pass."""
    fp = calibrate_all(graph, _batches(graph, calibration_feeds), [method], {}, {}, 0, progress)
    return fp.ranges[method], {n: f"holds {c} non-finite value(s)" for n, c in fp.nonfinite.items() if c}


def convert(qat_module: QATModule, model: Model | None = None) -> Model:
    """The int8 Model of `qat_module`'s current weights (what `burnedge.export` turns into the bundle); it takes
    `model`'s name and producer when given (the model the module was prepared from)."""
    if not isinstance(qat_module, QATModule):
        raise BurnedgeError(f"convert needs the module prepare_qat made, not {type(qat_module).__name__}")
    name = model.name if model is not None else qat_module.name
    return Model(qat_module.int8_graph(), name=name, producer=model.producer if model is not None else None)


def _is_int8(graph: Graph) -> bool:
    return any(n.op.domain == "burnedge" and n.op_type.startswith("Q") for n in graph.nodes)


def evaluate_int8(model_or_module: Model | QATModule, x: np.ndarray, y: np.ndarray) -> int:
    """How many of the samples `x` (first axis) the int8 model classifies as `y` (class indices): the argmax of
    its first output over the last axis, by burnedge's numpy int8 reference, in batches of the model's batch size
    (a QATModule is converted first)."""
    model = convert(model_or_module) if isinstance(model_or_module, QATModule) else model_or_module
    if not isinstance(model, Model):
        raise BurnedgeError(f"evaluate_int8 needs an int8 Model or a QATModule, not {type(model).__name__}")
    g = model.graph
    if not _is_int8(g):
        raise BurnedgeError(f"model {model.name!r} runs no int8 op: quantize it first (convert, quantize_model)")
    if len(g.inputs) != 1:
        raise InputError(f"evaluate_int8 takes models of one input; {model.name!r} has {list(g.inputs)}")
    x, y = np.asarray(x), np.asarray(y).reshape(-1)
    shape = g.values[g.inputs[0]].shape
    if x.ndim != len(shape) or tuple(x.shape[1:]) != tuple(shape[1:]) or len(x) != len(y):
        raise InputError(
            f"evaluate_int8: samples of shape {list(x.shape)} with {len(y)} labels; input {g.inputs[0]!r} "
            f"takes [N, {', '.join(map(str, shape[1:]))}] with N labels"
        )
    reference, batch, correct = compiler.compile(g, "numpy").executable, shape[0], 0
    for start in range(0, len(x), batch):
        chunk = x[start : start + batch].astype(g.values[g.inputs[0]].dtype)
        n = len(chunk)
        if n < batch:
            chunk = np.concatenate([chunk, np.zeros((batch - n, *chunk.shape[1:]), chunk.dtype)])
        out = reference.run({g.inputs[0]: chunk})[g.outputs[0]]
        correct += int((np.asarray(out)[:n].argmax(-1) == y[start : start + n]).sum())
    return correct
