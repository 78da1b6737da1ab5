"""Recurrent layers as PyTorch names them: LSTM and GRU (lowered to the ONNX LSTM / GRU ops), LSTMCell and GRUCell.

Parameters keep torch's names and layouts (`weight_ih_l0` [G*H, I], `weight_hh_l0_reverse`, `bias_ih_l1` ...), so a
torch state dict loads as it is. At trace time each layer becomes one ONNX node per layer (both directions in one),
with its weights repacked once, as constants:

1. gate order: torch LSTM stacks i, f, g, o, ONNX i, o, f, c; torch GRU r, z, n, ONNX z, r, h;
2. W = weight_ih [D, G*H, I], R = weight_hh [D, G*H, H], B = bias_ih ++ bias_hh [D, 2*G*H] (zeros without bias);
3. torch's GRU applies the reset gate after the hidden product (n = tanh(W_n x + b_in + r * (U_n h + b_hn))):
   ONNX's linear_before_reset=1;
4. Y [T, D, B, H] -> torch's [T, B, D*H] (transpose, reshape); a stacked layer takes that as its input; the final
   states of every layer and direction, [D, B, H] each, concatenate to torch's [layers*D, B, H].

The cells are plain matmuls with sigmoid / tanh (one step, the state carried by the caller: a streaming model's
state inputs and outputs).
"""

from __future__ import annotations

import math

import numpy as np

from . import functional as F
from ._state import current
from .module import Module
from .tensor import Parameter, Tensor

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "torch_to_onnx_gates"]

_GATES = {"LSTM": 4, "GRU": 3}
# ONNX gate k is torch gate _ORDER[op][k]
_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2)}
_RNG = np.random.default_rng(0)


def _uniform(shape: tuple[int, ...], bound: float) -> Parameter:
    """torch's initialisation of recurrent weights: U(-1/sqrt(H), 1/sqrt(H)), float32."""
    return Parameter(_RNG.uniform(-bound, bound, size=shape).astype(np.float32))


def torch_to_onnx_gates(op: str, weight: np.ndarray) -> np.ndarray:
    """Reorders the gate blocks of a torch weight or bias ([G*H, ...] or [G*H]) into ONNX's gate order."""
    blocks = np.split(np.asarray(weight), _GATES[op], axis=0)
    return np.concatenate([blocks[k] for k in _ORDER[op]], axis=0)


class _RNNBase(Module):
    """LSTM / GRU: torch's constructor, parameters and return values; one ONNX node per layer."""

    op = ""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
    ) -> None:
        super().__init__()
        if proj_size:
            raise ValueError(f"{type(self).__name__}: proj_size={proj_size} is not supported (only 0)")
        if num_layers < 1 or hidden_size < 1:
            raise ValueError(f"{type(self).__name__}: num_layers and hidden_size must be >= 1")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, dropout  # dropout: training only
        self.bidirectional = bidirectional
        gates, bound = _GATES[self.op] * hidden_size, 1 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            size = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in self._suffixes(layer):
                setattr(self, f"weight_ih{suffix}", _uniform((gates, size), bound))
                setattr(self, f"weight_hh{suffix}", _uniform((gates, hidden_size), bound))
                if bias:
                    setattr(self, f"bias_ih{suffix}", _uniform((gates,), bound))
                    setattr(self, f"bias_hh{suffix}", _uniform((gates,), bound))

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _suffixes(self, layer: int) -> list[str]:
        return [f"_l{layer}", f"_l{layer}_reverse"][: self.num_directions]

    def _weights(self, layer: int) -> list[Tensor]:
        """W, R, B of one layer as ONNX wants them ([D, G*H, I], [D, G*H, H], [D, 2*G*H]), as constants."""
        w, r, b = [], [], []
        for suffix in self._suffixes(layer):
            w.append(torch_to_onnx_gates(self.op, getattr(self, f"weight_ih{suffix}").numpy()))
            r.append(torch_to_onnx_gates(self.op, getattr(self, f"weight_hh{suffix}").numpy()))
            if self.bias:
                ih = torch_to_onnx_gates(self.op, getattr(self, f"bias_ih{suffix}").numpy())
                hh = torch_to_onnx_gates(self.op, getattr(self, f"bias_hh{suffix}").numpy())
                b.append(np.concatenate([ih, hh]))
            else:
                b.append(np.zeros(2 * _GATES[self.op] * self.hidden_size, np.float32))
        return [current().const(np.stack(v).astype(np.float32)) for v in (w, r, b)]

    def _layer(self, x: Tensor, layer: int, states: list[Tensor | None]) -> tuple[Tensor, list[Tensor]]:
        """One layer over x [T, B, I]: (torch's output [T, B, D*H], the final states [D, B, H] each)."""
        W, R, B = self._weights(layer)
        attrs = {"hidden_size": self.hidden_size, "direction": "bidirectional" if self.bidirectional else "forward"}
        if self.op == "GRU":
            attrs["linear_before_reset"] = 1
        inputs = [x, W, R, B, None, *states]
        y, *finals = current().op(self.op, *inputs, n_out=1 + len(states), **attrs)
        steps, batch = x.shape[0], x.shape[1]
        y = y.transpose(1, 2).reshape(steps, batch, self.num_directions * self.hidden_size)
        return y, finals

    def _initial(self, hx: Tensor | None, batch: int) -> Tensor:
        shape = (self.num_layers * self.num_directions, batch, self.hidden_size)
        if hx is None:
            return current().const(np.zeros(shape, np.float32))
        if tuple(hx.shape) != shape:
            raise current().error(f"initial state has shape {list(hx.shape)}; expected {list(shape)}")
        return hx

    def _run(self, x: Tensor, initial: list[Tensor | None]) -> tuple[Tensor, list[Tensor]]:
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        batch, d = x.shape[1], self.num_directions
        if unbatched:
            initial = [None if s is None else s.unsqueeze(1) for s in initial]
        full = [self._initial(s, batch) for s in initial]
        finals: list[list[Tensor]] = [[] for _ in initial]
        for layer in range(self.num_layers):
            x, last = self._layer(x, layer, [s[layer * d : (layer + 1) * d] for s in full])
            for kept, state in zip(finals, last):
                kept.append(state)
        states = [F.cat(kept, 0) if len(kept) > 1 else kept[0] for kept in finals]
        if unbatched:
            return x.squeeze(1), [s.squeeze(1) for s in states]
        return (x.transpose(0, 1) if self.batch_first else x), states


class LSTM(_RNNBase):
    """torch.nn.LSTM: forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))."""

    op = "LSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):  # noqa: A002 - torch's name
        y, (h, c) = self._run(input, list(hx) if hx is not None else [None, None])
        return y, (h, c)


class GRU(_RNNBase):
    """torch.nn.GRU: forward(input, h_0=None) -> (output, h_n)."""

    op = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None):  # noqa: A002 - torch's name
        y, (h,) = self._run(input, [hx])
        return y, h


class _CellBase(Module):
    """One step of an LSTM / GRU: weight_ih [G*H, I], weight_hh [G*H, H], bias_ih, bias_hh, in torch's gate order."""

    gates = 0

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        n, bound = self.gates * hidden_size, 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((n, input_size), bound)
        self.weight_hh = _uniform((n, hidden_size), bound)
        if bias:
            self.bias_ih = _uniform((n,), bound)
            self.bias_hh = _uniform((n,), bound)
        else:
            self.bias_ih = self.bias_hh = None

    def _projections(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        return F.linear(x, self.weight_ih, self.bias_ih), F.linear(h, self.weight_hh, self.bias_hh)

    def _zeros(self, x: Tensor) -> Tensor:
        return current().const(np.zeros((*x.shape[:-1], self.hidden_size), np.float32))


class LSTMCell(_CellBase):
    """torch.nn.LSTMCell: forward(input, (h, c)=None) -> (h', c')."""

    gates = 4

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):  # noqa: A002 - torch's name
        h, c = hx if hx is not None else (self._zeros(input), self._zeros(input))
        xi, hh = self._projections(input, h)
        i, f, g, o = F.chunk(xi + hh, 4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c


class GRUCell(_CellBase):
    """torch.nn.GRUCell: forward(input, h=None) -> h'."""

    gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None):  # noqa: A002 - torch's name
        h = hx if hx is not None else self._zeros(input)
        xi, hh = self._projections(input, h)
        xr, xz, xn = F.chunk(xi, 3, -1)
        hr, hz, hn = F.chunk(hh, 3, -1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return (1 - z) * n + z * h
