"""Losses and metrics by name, and the running sums an epoch accumulates (reduced across processes under DDP).

A loss is `fn(outputs, targets) -> scalar tensor` (a batch mean); a metric is `fn(outputs, targets) -> tensor`
(a batch mean too). Both registries are dicts; an unknown name is an error that lists the known ones.

A model whose output already is a probability distribution (the zoo's MLPerf Tiny networks end in Softmax) gets
``cross_entropy`` as the negative log of the target's probability, not a second softmax: `outputs_probabilities`
tells the two apart from the graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
import torch.nn.functional as F

from ..errors import BurnedgeError

__all__ = ["LOSSES", "METRICS", "Sums", "loss_fn", "metric_fns", "outputs_probabilities"]

Fn = Callable[[Any, Any], torch.Tensor]


def _classes(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Class indices of `targets`: as given, or the argmax of one-hot / soft targets shaped like the outputs."""
    if targets.is_floating_point() and targets.shape == outputs.shape:
        return targets.argmax(dim=1)
    return targets.long()


def _cross_entropy(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(outputs.float(), _classes(outputs, targets))


def _nll_of_probabilities(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.nll_loss(torch.log(outputs.float().clamp_min(1e-12)), _classes(outputs, targets))


def _like(outputs: torch.Tensor, targets: torch.Tensor, name: str) -> torch.Tensor:
    """`targets` as float in the outputs' shape (a regression target), or a one-line error saying why not."""
    if targets.numel() != outputs.numel():
        raise BurnedgeError(
            f"{name}: targets of shape {list(targets.shape)} do not fit outputs of shape {list(outputs.shape)} "
            "(class indices need cross_entropy / accuracy)"
        )
    return targets.float().reshape(outputs.shape)


def _regression(fn: Callable[..., torch.Tensor], name: str) -> Fn:
    def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return fn(outputs.float(), _like(outputs, targets, name))

    return loss


LOSSES: dict[str, Fn] = {
    "cross_entropy": _cross_entropy,
    "mse": _regression(F.mse_loss, "mse"),
    "l1": _regression(F.l1_loss, "l1"),
    "smooth_l1": _regression(F.smooth_l1_loss, "smooth_l1"),
    "bce": _regression(F.binary_cross_entropy_with_logits, "bce"),
}


def _accuracy(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    if outputs.ndim == 1 or outputs.shape[1] == 1:  # one logit: a binary classifier
        return ((outputs.reshape(-1) > 0).long() == targets.reshape(-1).long()).float().mean()
    return (outputs.argmax(dim=1) == _classes(outputs, targets)).float().mean()


def _mae(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return (outputs.float() - _like(outputs, targets, "mae")).abs().mean()


def _mse(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return (outputs.float() - _like(outputs, targets, "mse")).square().mean()


METRICS: dict[str, Fn] = {"accuracy": _accuracy, "mae": _mae, "mse": _mse}


def outputs_probabilities(module: Any) -> bool:
    """True when `module` is a burnedge graph whose (first) output comes out of a Softmax node."""
    graph = getattr(module, "graph", None)
    if graph is None or not getattr(graph, "outputs", None):
        return False
    last = next((n for n in graph.nodes if graph.outputs[0] in n.outputs), None)
    return last is not None and last.op_type == "Softmax"


def loss_fn(loss: str | Fn, module: Any = None) -> Fn:
    """The loss function `loss` names (or `loss` itself when callable)."""
    if callable(loss):
        return loss
    if loss not in LOSSES:
        raise BurnedgeError(f"unknown loss {loss!r}; known: {', '.join(sorted(LOSSES))} (or pass a function)")
    if loss == "cross_entropy" and outputs_probabilities(module):
        return _nll_of_probabilities
    return LOSSES[loss]


def metric_fns(metrics: Iterable[str | Fn]) -> dict[str, Fn]:
    """{name: function} for `metrics`: names from METRICS, or callables (named by their __name__)."""
    out: dict[str, Fn] = {}
    for m in metrics:
        if callable(m):
            out[getattr(m, "__name__", f"metric{len(out)}")] = m
        elif m == "loss":  # always reported
            continue
        elif m in METRICS:
            out[m] = METRICS[m]
        else:
            raise BurnedgeError(f"unknown metric {m!r}; known: {', '.join(sorted(METRICS))} (or pass a function)")
    return out


class Sums:
    """Sample-weighted sums of the loss and each metric over an epoch, kept on the device: one or two small
    kernels a step and no sync (the count is a Python int)."""

    def __init__(self, names: Iterable[str], device: torch.device):
        self.names = ["loss", *names]
        self.totals = torch.zeros(len(self.names), dtype=torch.float64, device=device)
        self.n = 0

    def add(self, n: int, values: Mapping[str, torch.Tensor]) -> None:
        if len(self.names) == 1:
            row = values["loss"].detach().reshape(1)
        else:
            row = torch.stack([values[k].detach().float().reshape(()) for k in self.names])
        self.totals.add_(row, alpha=n)
        self.n += n

    def packed(self) -> torch.Tensor:
        """The sums and then the count, as one tensor (what an all-reduce adds up over the processes)."""
        return torch.cat([self.totals, torch.tensor([float(self.n)], dtype=torch.float64, device=self.totals.device)])

    def means(self, packed: torch.Tensor | None = None) -> dict[str, float]:
        """{name: mean}, from `packed` (say after an all-reduce), else from this process's own sums."""
        t = (self.packed() if packed is None else packed).tolist()
        count = max(t[-1], 1.0)
        return {k: v / count for k, v in zip(self.names, t[:-1])}

    @property
    def count(self) -> int:
        return self.n
