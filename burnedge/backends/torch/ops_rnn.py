"""Recurrent layers in torch: LSTM, GRU and RNN (the registry's rnn.py), one layer, forward / reverse /
bidirectional, ONNX gate orders (LSTM i o f c, GRU z r h), peepholes, clip, `layout` and initial states.

The input projection of all steps is one matmul; the recurrence loops over time in Python, so autograd sees every
step. Custom activations and `sequence_lens` shorter than the sequence are refused (the reference has them).
"""

from __future__ import annotations

import torch

from .registry import Call, op

_DEFAULT = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _check(c: Call, kind: str, x, seq_lens) -> None:
    acts = c.attr("activations")
    if acts and [a.lower() for a in acts] != [a.lower() for a in _DEFAULT[kind] * (len(acts) // len(_DEFAULT[kind]))]:
        raise ValueError(f"{kind} activations {list(acts)} are not supported on torch (only the defaults)")
    if c.attr("input_forget", 0):
        raise ValueError("LSTM input_forget is not supported on torch")
    steps = x.shape[1] if c.attr("layout", 0) else x.shape[0]
    if seq_lens is not None and bool((seq_lens != steps).any()):
        raise ValueError("sequence_lens shorter than the sequence are not supported on torch")


def _cell(kind: str, c: Call, gx, h, cell, r, rb, p):
    """One step of one direction: gx (B, G*H) the input projection, h / cell (B, H) the state."""
    clip = c.attr("clip")

    def act(t, fn):
        t = t if clip is None else torch.clamp(t, -clip, clip)
        return fn(t)

    if kind == "RNN":
        h = act(gx + h @ r.t() + rb, torch.tanh)
        return h, cell
    if kind == "GRU":
        hs = r.shape[1]
        gh = h @ r.t()
        z = act(gx[:, :hs] + gh[:, :hs] + rb[:hs], torch.sigmoid)
        rr = act(gx[:, hs : 2 * hs] + gh[:, hs : 2 * hs] + rb[hs : 2 * hs], torch.sigmoid)
        if c.attr("linear_before_reset", 0):
            n = act(gx[:, 2 * hs :] + rr * (gh[:, 2 * hs :] + rb[2 * hs :]), torch.tanh)
        else:
            n = act(gx[:, 2 * hs :] + (rr * h) @ r[2 * hs :].t() + rb[2 * hs :], torch.tanh)
        return (1 - z) * n + z * h, cell
    hs = r.shape[1]
    g = gx + h @ r.t() + rb
    pi, po, pf = (p[:hs], p[hs : 2 * hs], p[2 * hs :]) if p is not None else (0, 0, 0)
    i = act(g[:, :hs] + pi * cell, torch.sigmoid)
    f = act(g[:, 2 * hs : 3 * hs] + pf * cell, torch.sigmoid)
    cand = act(g[:, 3 * hs :], torch.tanh)
    cell = f * cell + i * cand
    o = act(g[:, hs : 2 * hs] + po * cell, torch.sigmoid)
    return o * torch.tanh(cell), cell


def _recurrent(kind: str, c: Call, x, w, r, b=None, seq_lens=None, h0=None, c0=None, p=None):
    _check(c, kind, x, seq_lens)
    layout = c.attr("layout", 0)
    x = x.transpose(0, 1) if layout else x  # (T, B, I)
    steps, batch = x.shape[0], x.shape[1]
    dirs, gh = w.shape[0], w.shape[1]
    hs = gh // _GATES[kind]
    direction = c.attr("direction", "forward")
    if b is None:
        b = torch.zeros((dirs, 2 * gh), dtype=x.dtype, device=x.device)
    if h0 is not None and layout:
        h0 = h0.transpose(0, 1)
    if c0 is not None and layout:
        c0 = c0.transpose(0, 1)
    ys, hs_last, cs_last = [], [], []
    for d in range(dirs):
        reverse = direction == "reverse" or (direction == "bidirectional" and d == 1)
        gx = x @ w[d].t() + b[d, :gh]  # (T, B, G*H): every step's input projection at once
        h = h0[d] if h0 is not None else torch.zeros((batch, hs), dtype=x.dtype, device=x.device)
        cell = c0[d] if c0 is not None else torch.zeros((batch, hs), dtype=x.dtype, device=x.device)
        out = [None] * steps
        for t in reversed(range(steps)) if reverse else range(steps):
            h, cell = _cell(kind, c, gx[t], h, cell, r[d], b[d, gh:], None if p is None else p[d])
            out[t] = h
        ys.append(torch.stack(out))  # (T, B, H)
        hs_last.append(h)
        cs_last.append(cell)
    y = torch.stack(ys, 1)  # (T, dirs, B, H)
    yh, yc = torch.stack(hs_last), torch.stack(cs_last)  # (dirs, B, H)
    if layout:
        y, yh, yc = y.permute(2, 0, 1, 3), yh.transpose(0, 1), yc.transpose(0, 1)
    outs = [y, yh, yc] if kind == "LSTM" else [y, yh]
    return tuple(outs[: len(c.node.outputs)])


@op("LSTM")
def lstm(c: Call, *args):
    return _recurrent("LSTM", c, *args)


@op("GRU")
def gru(c: Call, *args):
    return _recurrent("GRU", c, *args)


@op("RNN")
def rnn(c: Call, *args):
    return _recurrent("RNN", c, *args)
