"""Reductions in torch (the registry's reduce.py): ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare,
ArgMax and ArgMin, with `axes` as an attribute (older opsets) or an input, keepdims and noop_with_empty_axes."""

from __future__ import annotations

import torch

from .registry import Call, op

_REDUCE = {
    "ReduceSum": lambda x, d, k: torch.sum(x, d, keepdim=k),
    "ReduceMean": lambda x, d, k: torch.mean(x, d, keepdim=k),
    "ReduceMax": lambda x, d, k: torch.amax(x, d, keepdim=k),
    "ReduceMin": lambda x, d, k: torch.amin(x, d, keepdim=k),
    "ReduceProd": lambda x, d, k: _prod(x, d, k),
    "ReduceL1": lambda x, d, k: torch.sum(x.abs(), d, keepdim=k),
    "ReduceL2": lambda x, d, k: torch.sqrt(torch.sum(x * x, d, keepdim=k)),
    "ReduceLogSum": lambda x, d, k: torch.log(torch.sum(x, d, keepdim=k)),
    "ReduceLogSumExp": lambda x, d, k: torch.logsumexp(x, d, keepdim=k),
    "ReduceSumSquare": lambda x, d, k: torch.sum(x * x, d, keepdim=k),
}
_AXES_INPUT = {"ReduceSum": 13}  # the opset from which `axes` is an input (18 for the others)


def _prod(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=keep)
    return x


@op(*_REDUCE)
def reduce(c: Call, x, axes=None):
    kind = c.node.op_type
    from_input = c.since >= _AXES_INPUT.get(kind, 18)
    ax = c.ints(1, axes) if from_input else c.attr("axes")
    keep = bool(c.attr("keepdims", 1))
    if not ax:
        if from_input and c.attr("noop_with_empty_axes", 0):
            return x
        ax = list(range(x.dim()))
    dims = tuple(sorted({int(a) % x.dim() for a in ax})) if x.dim() else ()
    if not dims:
        return _REDUCE[kind](x.reshape(1), (0,), False).reshape(()) if x.dim() == 0 else x
    if x.numel() == 0 and kind in ("ReduceMax", "ReduceMin"):  # an empty reduction gives the identity element
        fill = -torch.inf if kind == "ReduceMax" else torch.inf
        shape = [1 if i in dims else s for i, s in enumerate(x.shape) if keep or i not in dims]
        return torch.full(shape, fill, dtype=x.dtype, device=x.device)
    return _REDUCE[kind](x, dims, keep)


@op("ArgMax", "ArgMin")
def arg_reduce(c: Call, x):
    axis = c.attr("axis", 0) % x.dim()
    keep = bool(c.attr("keepdims", 1))
    biggest = c.node.op_type == "ArgMax"
    if c.attr("select_last_index", 0):
        flipped = x.flip(axis)
        i = torch.argmax(flipped, axis, keepdim=keep) if biggest else torch.argmin(flipped, axis, keepdim=keep)
        return x.shape[axis] - 1 - i
    return torch.argmax(x, axis, keepdim=keep) if biggest else torch.argmin(x, axis, keepdim=keep)
