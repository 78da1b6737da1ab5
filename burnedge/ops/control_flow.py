"""Control flow: If, Loop and Scan, interpreting their subgraph attributes through the executor's ``_run``.

Spec: https://onnx.ai/onnx/operators/ (If opset 1+, Loop opset 1+, Scan opset 8 (batched, ``sequence_lens``,
``directions``) and opset 9+ (axes and directions per input and output); later versions only add types).
Values the subgraphs read from enclosing scopes are supplied by the core (``node.captures``).

Static shapes: the importer infers output types by running a node on zero-filled inputs. If's ``cond`` is not
static (zeros pick the else branch, so both branches should produce the same types). Loop's trip count ``M``
and initial condition ``cond`` are ``static``: the scan outputs (stacked per iteration) have a leading dimension
equal to the number of iterations, which zeros would get wrong (M = 0, cond = false), so a model whose ``M`` or
``cond`` depends on a graph input asks for that input to be bound. A Loop that stops on a condition its body
computes from the data can still have scan outputs whose length depends on the data: such a model plans
correctly only when the condition does not depend on graph inputs (else running it fails with a shape error).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import limits
from . import register
from ._common import norm_axis


def _own(v: Any) -> Any:
    """A fresh copy of a subgraph result (results may be views of the node's inputs or of outer values)."""
    if v is None:
        return None
    if isinstance(v, list):
        return [_own(x) for x in v]
    return np.array(v, copy=True)


def _flag(v: Any) -> bool:
    return bool(np.asarray(v).reshape(-1)[0])


def _stack(parts: list[np.ndarray], probe) -> np.ndarray:
    """Scan outputs stacked along a new axis 0; with no iterations, an empty array shaped like one `probe()`."""
    if parts:
        return np.stack(parts)
    one = np.asarray(probe())
    return np.zeros((0,) + one.shape, one.dtype)


# -- If -------------------------------------------------------------------------------------------------------------
@register("If", since=1)
def if_(cond, *, then_branch, else_branch, _run):
    """Runs the branch that `cond` (a one-element bool tensor) selects; returns that branch's outputs."""
    outs = _run(then_branch if _flag(cond) else else_branch)
    return tuple(_own(o) for o in outs)


# -- Loop -----------------------------------------------------------------------------------------------------------
@register("Loop", since=1, static=(0, 1))
def loop(M, cond, *v_initial, body, _run):
    """Runs `body` while ``i < M`` (when given) and `cond` (when given) hold.

    Body: ``(iteration_num, cond, *carried) -> (cond, *carried, *scan_outputs)``. Returns the final carried
    values, then every scan output stacked along a new axis 0.
    """
    trips = None if M is None else int(np.asarray(M).reshape(-1)[0])
    n_carried = len(v_initial)
    n_scan = len(body.outputs) - 1 - n_carried
    if n_scan < 0:
        raise ValueError(f"the body has {len(body.outputs)} outputs for {n_carried} loop-carried values")
    keep = True if cond is None else _flag(cond)
    c = np.array(True) if cond is None else np.asarray(cond, dtype=bool)
    carried = list(v_initial)
    scans: list[list[np.ndarray]] = [[] for _ in range(n_scan)]
    i = 0
    while keep and (trips is None or i < trips):
        limits.spend_trip()  # bounded at import (burnedge.limits.counting_trips); free at run time
        outs = _run(body, np.array(i, np.int64), c, *carried)
        c = np.asarray(outs[0], dtype=bool)
        keep = _flag(c)
        carried = list(outs[1 : 1 + n_carried])
        for k, s in enumerate(outs[1 + n_carried :]):
            scans[k].append(s)
        i += 1
    probe_outs: list[Any] = []

    def probe(k: int):
        # no iteration ran: one body evaluation tells each scan output's per-iteration shape and dtype
        if not probe_outs:
            probe_outs.extend(_run(body, np.array(0, np.int64), np.array(True), *carried))
        return probe_outs[1 + n_carried + k]

    stacked = [_stack(parts, lambda k=k: probe(k)) for k, parts in enumerate(scans)]
    return tuple(_own(v) for v in carried) + tuple(stacked)


# -- Scan -----------------------------------------------------------------------------------------------------------
def _scan_loop(states, slices_at, n_steps, body, _run):
    """Runs `body` over `n_steps` steps; returns the final states and the per-step scan outputs (lists)."""
    n_states = len(states)
    n_out = len(body.outputs) - n_states
    if n_out < 0:
        raise ValueError(f"the body has {len(body.outputs)} outputs for {n_states} state variables")
    outs_per_step: list[list[np.ndarray]] = [[] for _ in range(n_out)]
    for t in range(n_steps):
        limits.spend_trip()
        outs = _run(body, *states, *slices_at(t))
        states = list(outs[:n_states])
        for k, o in enumerate(outs[n_states:]):
            outs_per_step[k].append(np.asarray(o))
    return states, outs_per_step


@register("Scan", since=8)
def scan_8(sequence_lens, *xs, body, num_scan_inputs, directions=None, _run):
    """Opset-8 Scan: axis 0 of every input is a batch; scan inputs are scanned along axis 1 (reversed where
    `directions` says 1). Steps past a batch entry's sequence length give zeros in the scan outputs."""
    n_states = len(xs) - num_scan_inputs
    inits, seqs = xs[:n_states], xs[n_states:]
    batch = xs[0].shape[0]
    max_len = seqs[0].shape[1] if seqs else 0
    lens = np.full(batch, max_len) if sequence_lens is None else np.asarray(sequence_lens).reshape(-1)
    finals: list[list[np.ndarray]] = [[] for _ in range(n_states)]
    outs: list[list[np.ndarray]] = []
    for b in range(batch):
        n = min(int(lens[b]), max_len)

        def slices_at(t, b=b, n=n):
            return [s[b, n - 1 - t] if directions and directions[j] else s[b, t] for j, s in enumerate(seqs)]

        states, per_step = _scan_loop([x[b] for x in inits], slices_at, n, body, _run)
        for k, st in enumerate(states):
            finals[k].append(np.asarray(st))
        if not outs:
            outs = [[] for _ in per_step]
        for k, parts in enumerate(per_step):
            y = _stack(
                parts,
                lambda k=k, b=b: _run(body, *[x[b] for x in inits], *[np.zeros(s.shape[2:], s.dtype) for s in seqs])[
                    n_states + k
                ],
            )
            padded = np.zeros((max_len,) + y.shape[1:], y.dtype)
            padded[: y.shape[0]] = y
            outs[k].append(padded)
    return tuple(np.stack(f) for f in finals) + tuple(np.stack(o) for o in outs)


@register("Scan", since=9)
def scan_9(
    *xs,
    body,
    num_scan_inputs,
    scan_input_axes=None,
    scan_input_directions=None,
    scan_output_axes=None,
    scan_output_directions=None,
    _run,
):
    """Opset-9+ Scan: scan inputs are sliced along their `scan_input_axes` (reversed where the direction is 1);
    scan outputs are stacked along `scan_output_axes` (in reverse order where the direction is 1)."""
    n_states = len(xs) - num_scan_inputs
    states, seqs = list(xs[:n_states]), []
    for j, x in enumerate(xs[n_states:]):
        ax = norm_axis(scan_input_axes[j] if scan_input_axes else 0, x.ndim)
        s = np.moveaxis(x, ax, 0)
        if scan_input_directions and scan_input_directions[j]:
            s = s[::-1]
        seqs.append(s)
    lengths = {s.shape[0] for s in seqs}
    if len(lengths) > 1:
        raise ValueError(f"scan inputs have different lengths {sorted(lengths)}")
    n_steps = lengths.pop() if lengths else 0
    states, per_step = _scan_loop(states, lambda t: [s[t] for s in seqs], n_steps, body, _run)
    results = []
    for k, parts in enumerate(per_step):
        y = _stack(
            parts, lambda k=k: _run(body, *states, *[np.zeros(s.shape[1:], s.dtype) for s in seqs])[n_states + k]
        )
        if scan_output_directions and scan_output_directions[k]:
            y = y[::-1]
        ax = norm_axis(scan_output_axes[k] if scan_output_axes else 0, y.ndim)
        results.append(np.ascontiguousarray(np.moveaxis(y, 0, ax)))
    return tuple(_own(s) for s in states) + tuple(results)
