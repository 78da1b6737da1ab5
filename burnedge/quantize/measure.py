"""The float side of quantization, computed once: one calibration pass for every calibrator, and the float reference
tensors of the validation frames; then the int8 measurement of any rewrite against that reference.

Cost: the float graph (numpy references, the slow part) runs once per calibration batch whatever the number of
calibrators tried, and the validation frames' float tensors are kept from that same pass (when validation is the
first calibration batches) or from one pass over the validation data; every candidate rewrite and every
keep-float step then only runs its int8 graph. Memory: every float tensor of the validation frames is held.

The calibrators share one set of statistics: the histogram calibrators differ only in how they read the same
histograms (`calibrate.py`), so one of them observes and the others are given its statistics before computing.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BurnedgeError
from ..ir import Graph
from ..ops.interpreter import interpret
from .calibrate import CALIBRATORS, Calibrator, make_calibrator
from .observe import collect, observe_floats
from .qparams import dequantize
from .report import AccuracyReport
from .rewriter import Rewrite
from .stream import fed_back

__all__ = ["FloatPass", "calibrate_all", "float_reference", "measure"]

Range = tuple[float, float]
_SHARED = ("_min", "_max", "counts", "nonfinite", "histograms")  # what a calibrator's observe() builds


@dataclass
class FloatPass:
    """What the float graph gave: the ranges per calibrator, the non-finite counts, and the reference frames."""

    ranges: dict[str, dict[str, Range]]  # method -> tensor -> (min, max)
    nonfinite: dict[str, int]
    batches: int
    frames: list[dict[str, Any]]  # the feeds of each kept frame as run (state inputs filled in)
    reference: list[dict[str, np.ndarray]]  # every float tensor of each kept frame


class _Tap:
    """A calibrator stand-in for `observe.collect`: feeds the lead calibrator and keeps what the pipeline needs
    from the frame being run (its float tensors, for the first `keep` frames; its state outputs, for the next)."""

    def __init__(self, lead: Calibrator, states: set[str]):
        self.lead, self.states = lead, states
        self.keeping: dict[str, np.ndarray] | None = None
        self.last: dict[str, np.ndarray] = {}

    def observe(self, name: str, array: np.ndarray) -> None:
        self.lead.observe(name, array)
        if self.keeping is not None:
            self.keeping[name] = array
        if name in self.states:
            self.last[name] = array


class _Frames:
    """The calibration batches in order with their states fed back (`stream.fed_back`), sized for the progress
    bar; frame i < keep is recorded, and the tap told to keep its tensors."""

    def __init__(self, graph: Graph, batches: Sequence[Any], pairs: Mapping[str, str], tap: _Tap, keep: int):
        self.graph, self.batches, self.pairs, self.tap, self.keep = graph, batches, pairs, tap, keep
        self.frames: list[dict[str, Any]] = []
        self.reference: list[dict[str, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[Any]:
        for i, feeds in enumerate(fed_back(self.graph, self.batches, self.pairs, lambda: dict(self.tap.last))):
            self.tap.last = {}
            self.tap.keeping = None
            if i < self.keep:
                self.frames.append(feeds)
                self.tap.keeping = {}
                self.reference.append(self.tap.keeping)
            yield feeds


def calibrate_all(
    graph: Graph,
    batches: Sequence[Any],
    methods: Sequence[str],
    options: Mapping[str, Any],
    pairs: Mapping[str, str],
    keep: int,
    progress: bool,
) -> FloatPass:
    """One float pass over `batches` (a stream when `pairs`) computing the ranges of every method in `methods`;
    the first `keep` frames are kept as the float reference."""
    calibrators = {m: make_calibrator(m, **_options(m, options, len(methods) > 1)) for m in methods}
    # a histogram calibrator observes, when there is one: its statistics serve every method
    lead = next((c for c in calibrators.values() if hasattr(c, "histograms")), next(iter(calibrators.values())))
    tap = _Tap(lead, set(pairs.values()))
    frames = _Frames(graph, batches, pairs, tap, keep)
    collect(graph, frames, tap, progress=progress)  # type: ignore[arg-type]  # a stand-in with observe()
    ranges = {}
    for m, c in calibrators.items():
        if c is not lead:
            _share(lead, c)
        ranges[m] = c.compute()
    return FloatPass(ranges, dict(lead.nonfinite), len(batches), frames.frames, frames.reference)


def _options(method: str, options: Mapping[str, Any], several: bool) -> dict[str, Any]:
    """The calibrator options `method` takes: all of them for a method asked by name, else those its class
    accepts (method "auto": ``percentile=99.9`` goes to the percentile calibrator only)."""
    if not several:
        return dict(options)
    accepted = inspect.signature(CALIBRATORS[method]).parameters
    unknown = [k for k in options if not any(k in inspect.signature(c).parameters for c in CALIBRATORS.values())]
    if unknown:
        raise BurnedgeError(f"calibrator option(s) {unknown} are taken by no calibration method")
    return {k: v for k, v in options.items() if k in accepted}


def _share(lead: Calibrator, other: Calibrator) -> None:
    """Gives `other` the statistics `lead` observed (histograms only between calibrators with the same bins)."""
    for attr in _SHARED:
        if not (hasattr(other, attr) and hasattr(lead, attr)):
            continue
        if attr == "histograms" and other.bins != lead.bins:  # type: ignore[attr-defined]
            raise ValueError(f"{other.name} and {lead.name} must have the same bins to share histograms")
        setattr(other, attr, getattr(lead, attr))


def float_reference(
    graph: Graph, batches: Sequence[Any], pairs: Mapping[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, np.ndarray]]]:
    """(frames as run, every float tensor of each) of one float pass over validation `batches`."""
    frames: list[dict[str, Any]] = []
    reference: list[dict[str, np.ndarray]] = []
    for i, feeds in enumerate(fed_back(graph, batches, pairs, lambda: reference[-1])):
        seen: dict[str, np.ndarray] = {}
        observe_floats(graph, feeds, seen.__setitem__, f"validation batch {i}")
        frames.append(feeds)
        reference.append(seen)
    return frames, reference


def _run_int8(graph: Graph, feeds: Mapping[str, Any]) -> dict[str, Any]:
    """Every tensor of the int8 graph on one frame (value by value on the numpy references), constants included."""
    env: dict[str, Any] = dict(graph.constants())
    interpret(graph, feeds, store=env)
    return env


def measure(
    rw: Rewrite,
    frames: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, np.ndarray]],
    pairs: Mapping[str, str],
    title: str,
) -> AccuracyReport:
    """Float against int8, tensor by tensor, over the frames; with `pairs` the int8 graph is fed its own state
    outputs frame after frame (as it will be in use), not the float ones."""
    notes = {}
    reasons = {d.node: d.reason for d in rw.decisions if d.int8_op is None}
    for tensor, (layer, _) in rw.layers.items():
        if layer in reasons:
            notes[tensor] = f"kept in float: {reasons[layer]}"
    report = AccuracyReport(rw.layers, notes, title)
    wanted = set(rw.layers) | set(rw.src.outputs)  # what the int8 graph recomputes (inputs are not layers)
    last: list[dict[str, Any]] = [{}]  # the int8 run of the frame before: its state outputs feed this one
    for feeds, ref in zip(fed_back(rw.src, frames, pairs, lambda: last[0]), reference):
        env = last[0] = _run_int8(rw.out, feeds)
        got = {}
        for name in wanted & ref.keys():
            if name in rw.q:
                qname, qp = rw.q[name]
                got[name] = dequantize(env[qname], qp)
            elif rw.fname.get(name) in env and name not in rw.src.inputs:
                got[name] = env[rw.fname[name]]
        report.add(ref, got)
    return report
