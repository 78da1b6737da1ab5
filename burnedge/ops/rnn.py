"""Recurrent layers: LSTM, GRU and RNN (one layer, forward / reverse / bidirectional).

Spec: https://onnx.ai/onnx/operators/ (LSTM, GRU, RNN). Versions: opset 1 (``output_sequence``, ignored: Y is
always computed), GRU 3 (``linear_before_reset``), opset 7 (current attributes) and opset 14 (``layout``; 22 only
adds types). Supports ``sequence_lens`` (steps past a sequence's length give zeros in Y and keep the state; the
reverse direction starts at each sequence's last valid step), ``initial_h`` / ``initial_c``, LSTM peepholes
``P`` and ``input_forget``, ``clip`` (applied to gate pre-activations), and custom ``activations`` with
``activation_alpha`` / ``activation_beta`` (consumed in order by the functions that take them). The input
projection of all steps is one matmul; only the recurrence loops over time (vectorised over batch).
"""

from __future__ import annotations

import inspect
from functools import partial

import numpy as np

from . import Spec, register
from ._common import sum_dtype


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# name -> (function(x, alpha, beta), default alpha or None, default beta or None)
_ACTS = {
    "relu": (lambda x, a, b: np.maximum(x, 0), None, None),
    "tanh": (lambda x, a, b: np.tanh(x), None, None),
    "sigmoid": (lambda x, a, b: _sigmoid(x), None, None),
    "affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda x, a, b: np.where(x > a, x, 0), 1.0, None),
    "scaledtanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0))), 1.0, None),
    "softsign": (lambda x, a, b: x / (1 + np.abs(x)), None, None),
    "softplus": (lambda x, a, b: np.logaddexp(x, 0), None, None),
}


def _apply(fn, a, b, dtype, x):
    return fn(x, a, b).astype(dtype, copy=False)


def _activations(names, alphas, betas, defaults, n_dirs, dtype):
    """Per direction, the list of activation callables (f, g[, h])."""
    names = list(names) if names else list(defaults) * n_dirs
    if len(names) == len(defaults) and n_dirs == 2:
        names = names * 2
    if len(names) != len(defaults) * n_dirs:
        raise ValueError(f"expected {len(defaults) * n_dirs} activations, got {names}")
    alphas, betas = list(alphas or []), list(betas or [])
    fns = []
    for name in names:
        key = name.lower()
        if key not in _ACTS:
            raise ValueError(f"unsupported activation {name!r}")
        fn, da, db = _ACTS[key]
        a = (alphas.pop(0) if alphas else da) if da is not None else 0.0
        b = (betas.pop(0) if betas else db) if db is not None else 0.0
        fns.append(partial(_apply, fn, dtype.type(a), dtype.type(b), dtype))
    k = len(defaults)
    return [fns[d * k : (d + 1) * k] for d in range(n_dirs)]


def _n_dirs(direction: str) -> int:
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ValueError(f"unknown direction {direction!r}")
    return 2 if direction == "bidirectional" else 1


def _recur(kind, X, W, R, B, seq_lens, h0, c0, P, *, direction, hidden_size, acts, clip, layout, **extra):
    """Runs `kind` ('lstm', 'gru', 'rnn') over all directions; returns (Y, Y_h, Y_c) in the ONNX layout."""
    out_dtype = X.dtype
    dt = sum_dtype()  # float64 gates and state, rounded once at the end (see _common)
    if X.ndim != 3:
        order = "[batch, seq, input]" if layout else "[seq, batch, input]"
        raise ValueError(f"{kind.upper()}: X must have rank 3 {order}, got shape {list(X.shape)}")
    if layout:
        X = np.swapaxes(X, 0, 1)
        h0 = None if h0 is None else np.swapaxes(h0, 0, 1)
        c0 = None if c0 is None else np.swapaxes(c0, 0, 1)
    X = X.astype(dt, copy=False)
    T, Bn, _ = X.shape
    D = _n_dirs(direction)
    H = int(hidden_size) if hidden_size else R.shape[-1]
    G = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    lens = np.full(Bn, T, np.int64) if seq_lens is None else np.asarray(seq_lens).astype(np.int64).reshape(Bn)
    lens = np.clip(lens, 0, T)
    ragged = bool((lens != T).any())
    t_idx = np.arange(T)[:, None]
    mask = t_idx < lens[None, :]  # [T, B]
    cols = np.arange(Bn)[None, :]
    fns = _activations(acts[0], acts[1], acts[2], acts[3], D, dt)
    clip_fn = (lambda v: np.clip(v, -dt.type(clip), dt.type(clip))) if clip is not None else (lambda v: v)
    Y = np.zeros((T, D, Bn, H), dt)
    Yh = np.zeros((D, Bn, H), dt)
    Yc = np.zeros((D, Bn, H), dt)
    for d in range(D):
        reverse = direction == "reverse" or d == 1
        idx = np.where(mask, lens[None, :] - 1 - t_idx, t_idx) if reverse else np.broadcast_to(t_idx, (T, Bn))
        xs = X[idx, cols]  # [T, B, I], each sequence in processing order
        w, r = W[d].astype(dt, copy=False), R[d].astype(dt, copy=False)
        wb = np.zeros(G * H, dt) if B is None else B[d, : G * H].astype(dt, copy=False)
        rb = np.zeros(G * H, dt) if B is None else B[d, G * H :].astype(dt, copy=False)
        xw = np.matmul(xs, w.T) + wb  # [T, B, G*H]
        h = np.zeros((Bn, H), dt) if h0 is None else h0[d].astype(dt)
        c = np.zeros((Bn, H), dt) if c0 is None else c0[d].astype(dt)
        f = fns[d]
        p = None if P is None else P[d].astype(dt, copy=False)
        ys = np.zeros((T, Bn, H), dt)
        for t in range(T):
            if kind == "lstm":
                g = xw[t] + np.matmul(h, r.T) + rb
                gi, go, gf, gc = g[:, :H], g[:, H : 2 * H], g[:, 2 * H : 3 * H], g[:, 3 * H :]
                if p is not None:
                    gi = gi + p[:H] * c
                    gf = gf + p[2 * H :] * c
                i_t = f[0](clip_fn(gi))
                f_t = (1 - i_t) if extra.get("input_forget") else f[0](clip_fn(gf))
                c_new = f_t * c + i_t * f[1](clip_fn(gc))
                if p is not None:
                    go = go + p[H : 2 * H] * c_new
                h_new = f[0](clip_fn(go)) * f[2](c_new)
            elif kind == "gru":
                hr = np.matmul(h, r[: 2 * H].T) + rb[: 2 * H]
                z = f[0](clip_fn(xw[t, :, :H] + hr[:, :H]))
                rr = f[0](clip_fn(xw[t, :, H : 2 * H] + hr[:, H:]))
                if extra.get("linear_before_reset"):
                    hh = xw[t, :, 2 * H :] + rr * (np.matmul(h, r[2 * H :].T) + rb[2 * H :])
                else:
                    hh = xw[t, :, 2 * H :] + np.matmul(rr * h, r[2 * H :].T) + rb[2 * H :]
                hh = f[1](clip_fn(hh))
                h_new = (1 - z) * hh + z * h
                c_new = c
            else:
                h_new = f[0](clip_fn(xw[t] + np.matmul(h, r.T) + rb))
                c_new = c
            if ragged:
                m = mask[t][:, None]
                h_new, c_new = np.where(m, h_new, h), np.where(m, c_new, c)
                ys[t] = np.where(m, h_new, 0)
            else:
                ys[t] = h_new
            h, c = h_new.astype(dt, copy=False), c_new.astype(dt, copy=False)
        Y[:, d] = ys[idx, cols]  # back to time order (idx is its own inverse)
        Yh[d], Yc[d] = h, c
    if layout:
        Y, Yh, Yc = np.transpose(Y, (2, 0, 1, 3)), np.swapaxes(Yh, 0, 1), np.swapaxes(Yc, 0, 1)
    return tuple(np.ascontiguousarray(a, dtype=out_dtype) for a in (Y, Yh, Yc))


def _infer(n_out):
    def infer(X, W, R, *rest, direction="forward", hidden_size=None, layout=0, **_):
        D = _n_dirs(direction)
        H = int(hidden_size) if hidden_size else int(R.shape[-1])
        if layout:
            Bn, T = X.shape[0], X.shape[1]
            specs = [Spec((Bn, T, D, H), X.dtype)] + [Spec((Bn, D, H), X.dtype)] * (n_out - 1)
        else:
            T, Bn = X.shape[0], X.shape[1]
            specs = [Spec((T, D, Bn, H), X.dtype)] + [Spec((D, Bn, H), X.dtype)] * (n_out - 1)
        return specs

    return infer


_INPUTS = {
    "LSTM": ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"),
    "GRU": ("X", "W", "R", "B", "sequence_lens", "initial_h"),
    "RNN": ("X", "W", "R", "B", "sequence_lens", "initial_h"),
}
_DEFAULT_ACTS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}
_COMMON = {
    "activation_alpha": None,
    "activation_beta": None,
    "activations": None,
    "clip": None,
    "direction": "forward",
    "hidden_size": None,
}
# (op, since) -> the attributes that version adds to _COMMON, with their defaults
_VERSIONS = {
    ("LSTM", 1): {"input_forget": 0, "output_sequence": 0},
    ("LSTM", 7): {"input_forget": 0},
    ("LSTM", 14): {"input_forget": 0, "layout": 0},
    ("GRU", 1): {"output_sequence": 0},
    ("GRU", 3): {"linear_before_reset": 0, "output_sequence": 0},
    ("GRU", 7): {"linear_before_reset": 0},
    ("GRU", 14): {"linear_before_reset": 0, "layout": 0},
    ("RNN", 1): {"output_sequence": 0},
    ("RNN", 7): {},
    ("RNN", 14): {"layout": 0},
}


def _make(op: str, since: int, extra: dict) -> None:
    """Registers one version of `op`: its signature (inputs, then attributes) is built from the tables above."""
    names = _INPUTS[op]
    attrs = {**_COMMON, **extra}
    P = inspect.Parameter
    params = [P(n, P.POSITIONAL_OR_KEYWORD, default=P.empty if i < 3 else None) for i, n in enumerate(names)]
    params += [P(k, P.KEYWORD_ONLY, default=v) for k, v in attrs.items()]

    def ref(*args, **kw):
        ins = dict(zip(names, args + (None,) * (len(names) - len(args))))
        a = {**attrs, **kw}
        acts = (a["activations"], a["activation_alpha"], a["activation_beta"], _DEFAULT_ACTS[op])
        Y, Yh, Yc = _recur(
            op.lower(),
            ins["X"],
            ins["W"],
            ins["R"],
            ins["B"],
            ins["sequence_lens"],
            ins["initial_h"],
            ins.get("initial_c"),
            ins.get("P"),
            direction=a["direction"],
            hidden_size=a["hidden_size"],
            acts=acts,
            clip=a["clip"],
            layout=a.get("layout", 0),
            input_forget=a.get("input_forget", 0),
            linear_before_reset=a.get("linear_before_reset", 0),
        )
        return (Y, Yh, Yc) if op == "LSTM" else (Y, Yh)

    ref.__signature__ = inspect.Signature(params)
    ref.__name__ = ref.__qualname__ = f"{op.lower()}_{since}"
    ref.__doc__ = f"ONNX {op} since opset {since}: outputs Y, Y_h" + (", Y_c." if op == "LSTM" else ".")
    register(op, since=since, infer=_infer(3 if op == "LSTM" else 2))(ref)


for (_op, _since), _extra in _VERSIONS.items():
    _make(_op, _since, _extra)
