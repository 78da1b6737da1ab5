"""Recurrent models: state inputs paired with the state outputs that feed them, and runs in streaming order.

A recurrent model exported for streaming (an LSTM voice detector, say) takes its state as inputs (``h``, ``c``) and
returns the next state as outputs (``hn``, ``cn``); the caller feeds each frame the state the previous frame
returned. Quantizing such a model with the state taken from the data measures something no user sees: in use the
int8 state is fed back and its error compounds frame after frame. So when states are paired, calibration batches
are a time-ordered stream, and every run over them (the float calibration pass, each int8 measurement) feeds each
frame the previous frame's state output from the same graph; the first frame takes its state from its batch, or
zeros when the batch has none.

Pairing (``state="auto"``): an input and an output pair when they have the same shape and float dtype and their
names match once the usual state affixes are taken off, case-insensitively:
input ``h``, ``h0``, ``h_in``, ``h_prev``, ``past_h``, ``in_h``  <->  output ``hn``, ``h_n``, ``h_out``,
``h_new``, ``next_h``, ``new_h``, ``present_h``, ``out_h``, ``hN``/``h1`` (a word affix needs its separator).
A name that matches several on the other side pairs with none (the user says which with
``state={"in": "out"}``), and a model all of whose inputs would pair (an autoencoder) has no state.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..dtypes import is_float
from ..errors import BurnedgeError, InputError
from ..ir import Graph
from .data import load_calibration

__all__ = ["StateSpec", "fed_back", "load_stream_calibration", "pair_states", "state_text"]

StateSpec = str | Mapping[str, str] | Iterable[str] | None

_SEP = r"[_.:/-]"  # a word affix (in, out, prev, next ...) needs a separator: "input" is not "in" + "put"
_IN = [rf"^(.+?)(?:0|{_SEP}(?:in|prev|old|0))$", rf"^(?:in|prev|past|old){_SEP}(.+)$", r"^(.+)$"]
_OUT = [rf"^(.+?)(?:n|1|{_SEP}(?:n|out|new|next|1))$", rf"^(?:out|new|next|present){_SEP}(.+)$"]


def _keys(name: str, patterns: list[str]) -> set[str]:
    n = name.lower()
    return {m.group(1) for p in patterns if (m := re.match(p, n))}


def _auto(graph: Graph) -> dict[str, str]:
    ins = [n for n in graph.inputs if not graph.values[n].is_const and is_float(graph.values[n].dtype)]
    outs = [n for n in graph.outputs if n not in graph.inputs]
    candidates: dict[str, list[str]] = {}
    for i in ins:
        vi, ki = graph.values[i], _keys(i, _IN)
        for o in outs:
            vo = graph.values[o]
            if vo.dtype == vi.dtype and tuple(vo.shape) == tuple(vi.shape) and ki & _keys(o, _OUT):
                candidates.setdefault(i, []).append(o)
    taken = [o for os in candidates.values() for o in os]
    pairs = {i: os[0] for i, os in candidates.items() if len(os) == 1 and taken.count(os[0]) == 1}
    # a stream has data besides its state: a model all of whose inputs pair (an autoencoder) is no stream
    return pairs if len(pairs) < len(ins) or len(graph.inputs) > len(ins) else {}


def pair_states(graph: Graph, state: StateSpec = "auto") -> dict[str, str]:
    """{state input: state output} for `graph`: "auto" pairs by name (module docstring), None, "none" or {}
    pairs nothing, a mapping or "IN=OUT" strings name the pairs (checked: both exist, same shape and dtype)."""
    if state is None or (isinstance(state, str) and state.lower() in ("none", "")):
        return {}
    if isinstance(state, str) and state.lower() == "auto":
        return _auto(graph)
    if isinstance(state, str):
        state = [state]
    pairs = dict(state) if isinstance(state, Mapping) else dict(_split(s) for s in state)
    for i, o in pairs.items():
        if i not in graph.inputs:
            raise BurnedgeError(f"state {i}={o}: {i!r} is not an input of the model; inputs: {list(graph.inputs)}")
        if o not in graph.outputs:
            raise BurnedgeError(f"state {i}={o}: {o!r} is not an output of the model; outputs: {list(graph.outputs)}")
        vi, vo = graph.values[i], graph.values[o]
        if vi.dtype != vo.dtype or tuple(vi.shape) != tuple(vo.shape):
            raise BurnedgeError(
                f"state {i}={o}: input {vi.dtype} {list(vi.shape)} and output {vo.dtype} {list(vo.shape)} differ; "
                "a state output must have its input's shape and dtype"
            )
        if not is_float(vi.dtype):
            raise BurnedgeError(f"state {i}={o}: the state is {vi.dtype}; only float states are fed back")
    return pairs


def _split(text: str) -> tuple[str, str]:
    i, sep, o = text.partition("=")
    if not sep or not i.strip() or not o.strip():
        raise BurnedgeError(f"state {text!r}: expected IN=OUT (a state input and the output that feeds it)")
    return i.strip(), o.strip()


def state_text(pairs: Mapping[str, str]) -> str:
    """What is fed back, as "h <- hn, c <- cn", for messages and the report."""
    return ", ".join(f"{i} <- {o}" for i, o in pairs.items())


def fed_back(
    graph: Graph,
    batches: Iterable[Mapping[str, np.ndarray]],
    pairs: Mapping[str, str],
    previous: Callable[[], Mapping[str, Any]],
) -> Iterator[dict[str, Any]]:
    """The feeds of each frame in order, state inputs filled in: the first frame's from its batch (zeros when
    absent), every later frame's from ``previous()``, the outputs of the frame run just before (called lazily,
    after the caller has run that frame). Without pairs the batches pass through as they are."""
    for i, feeds in enumerate(batches):
        if not pairs:
            yield feeds  # type: ignore[misc]
            continue
        if not isinstance(feeds, Mapping):
            yield feeds  # type: ignore[misc]  # the feed check names the problem
            continue
        feeds = dict(feeds)
        last = previous() if i else {}
        for name, out in pairs.items():
            if i:
                if out not in last:
                    raise BurnedgeError(f"state {name}={out}: frame {i - 1} produced no {out!r} to feed back")
                feeds[name] = last[out]
            elif name not in feeds:
                v = graph.values[name]
                feeds[name] = np.zeros(v.shape, v.dtype)
        yield feeds


def load_stream_calibration(
    path: str | os.PathLike[str], graph: Graph, states: Mapping[str, str], what: str = "calibration"
) -> list[dict[str, np.ndarray]]:
    """Calibration files (`data.load_calibration`) for a model whose `states` are fed back: the files may leave
    the state inputs out (a .npy of frames then feeds the one other input); files that carry them are read as
    they are."""
    if not states:
        return load_calibration(path, graph, what)
    inputs = [n for n in graph.inputs if n not in states]
    try:
        return load_calibration(path, Graph(graph.name, inputs, graph.outputs, graph.nodes, graph.values), what)
    except InputError as first:
        try:
            return load_calibration(path, graph, what)
        except InputError:
            raise first from None
