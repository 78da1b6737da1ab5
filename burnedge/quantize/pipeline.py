"""Post-training static quantization end to end: optimise, calibrate, pick a method, rewrite to int8, measure, keep
layers float.

``quantize_model(model, calibration, method="auto", keep_float="auto", state="auto")`` returns the int8 graph and a
QuantizationReport, whether or not the target is met (`burnedge.exporter.export_int8` refuses to write a bundle
below it). Steps:

1. optimise a copy of the graph (QDQ import first when it holds Q/DQ pairs, then `burnedge.passes.optimize`) and
   split fused nodes to the int8 granularity (`prepare.split_fused`), so every tensor an int8 op writes is a
   tensor of the float graph; pair state inputs with state outputs (`stream.pair_states`): calibration batches
   are then a time-ordered stream and every run feeds each frame the previous frame's state;
2. calibrate: one float run per calibration batch feeds the statistics of every method tried ("auto": minmax,
   percentile, entropy, mse; `measure.calibrate_all`, with a progress bar) and keeps the float tensors of the
   validation frames (default: the first `report_batches` batches; a stream is measured whole); tensors
   holding -inf or NaN (an attention mask) get no int8 form;
3. for each method: rewrite (`rewrite.rewrite`, rules in `rules/`), keeping the named nodes in float, and
   measure: run the int8 graph (numpy references; a stream with its own int8 state fed back) on the validation
   frames and compare every tensor it recomputes with the float reference (SQNR, cosine, max error); keep the
   method whose model outputs measure best (target met first, then cosine, then SQNR);
4. with ``keep_float="auto"``: while the target is missed and the budget lasts (`keep_float_budget`: a count,
   or a fraction of the int8 computing layers, rounded up; default 10 %), keep the int8 layer adding the most
   error in float and go back to 3 for that method (the ranges stay: they come from the float graph); the
   measured best of these steps is returned, so a step that made it worse is undone;
5. if the target is still missed: weight-only fallbacks. The int8 MatMul/Gemm layers with constant weights are
   ranked by what each alone in int8 costs the model output (`sensitivity.rank_alone`), and, most harmful first,
   kept float with int8 weights (`rules.matmul.weight_only`) until the target is met or `WEIGHT_ONLY_BUDGET` of
   the int8 computing layers are. They do not count against `keep_float_budget`: their weights stay int8, so the
   bundle keeps most of its size win; only their activations are float. This is the known remedy for BERT-like
   models, whose feed-forward projections read heavy-tailed GELU and LayerNorm outputs that per-tensor int8
   cannot hold.

Deterministic: no randomness, calibrators are order-independent, and the rewrite follows node order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import BurnedgeError, InputError
from ..ir import Graph
from ..model import Model
from ..passes import optimize
from .calibrate import CALIBRATORS
from .measure import calibrate_all, float_reference, measure
from .prepare import split_fused
from .qdq import has_qdq, import_qdq
from .qparams import QParams
from .report import _db
from .result import QuantizationReport
from .rewrite import Rewrite, rewrite
from .sensitivity import candidates, rank_alone
from .stream import StateSpec, pair_states

__all__ = ["AUTO_METHODS", "QuantizationReport", "prepared_graph", "quantize_model"]

AUTO_METHODS = ("minmax", "percentile", "entropy", "mse")  # what method="auto" tries, in this order (ties: first)
DEFAULT_BUDGET = 0.1  # keep_float="auto" may keep up to 10 % of the int8 computing layers in float
WEIGHT_ONLY_BUDGET = 0.25  # ... and up to 25 % of them weight-only int8 (step 5)


def prepared_graph(graph: Graph) -> Graph:
    """A copy of `graph` as int8 quantization sees it: QDQ imported, optimised, fused nodes split (step 1)."""
    g = graph.copy()
    return split_fused(optimize(import_qdq(g) if has_qdq(g) else g))


def _input_qparams(rw: Rewrite) -> dict[str, QParams]:
    """Graph inputs whose every reader in the int8 graph is one QuantizeLinear -> its qparams."""
    readers = rw.out.consumers()
    out = {}
    for name in rw.out.inputs:
        rs = readers.get(name, [])
        if name in rw.q and rs and all(r.op_type == "QuantizeLinear" for r in rs):
            out[name] = rw.q[name][1]
    return out


def _keep_set(graph: Graph, keep_float: str | Iterable[str]) -> tuple[bool, list[str]]:
    items = [keep_float] if isinstance(keep_float, str) else list(keep_float)
    auto = "auto" in items
    names = [k for k in items if k != "auto"]
    known = {n.name for n in graph.nodes} | {name for n in graph.nodes for _, name in n.origin}
    for k in names:
        if k not in known and not any(n.startswith(k + "/") for n in known):
            shown = ", ".join(sorted(known)[:12])
            raise BurnedgeError(f"keep_float: no node named {k!r}; nodes include {shown}")
    return auto, names


def _methods(method: str) -> list[str]:
    if method.lower() == "auto":
        return list(AUTO_METHODS)
    if method.lower() not in CALIBRATORS:
        known = ", ".join(["auto", *sorted(CALIBRATORS)])
        raise BurnedgeError(f"unknown calibration method {method!r}; available: {known}")
    return [method.lower()]


def _budget(budget: int | float, rw: Rewrite) -> int:
    """How many layers `auto` may keep in float: `budget` itself (an int), or that fraction of the int8 computing
    layers rounded up (a float in (0, 1])."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
        raise BurnedgeError(f"keep_float_budget must be a count >= 0 or a fraction in (0, 1], not {budget!r}")
    if isinstance(budget, int):
        return budget
    if budget > 1:
        raise BurnedgeError(f"keep_float_budget {budget!r}: a fraction lies in (0, 1]; give a count as an int")
    computing = [d for d in rw.decisions if _computing(d.int8_op) and "folded" not in d.reason]
    return math.ceil(budget * len(computing))


def _computing(op: str | None) -> bool:
    """An int8 op that computes (not a movement op keeping its own name, not a bare rescale)."""
    return bool(op) and op.startswith("Q") and op != "QRequant"  # type: ignore[union-attr]


def quantize_model(
    model: Graph | Model,
    calibration: Iterable[Mapping[str, np.ndarray]],
    method: str = "auto",
    keep_float: str | Iterable[str] = "auto",
    validation: Iterable[Mapping[str, np.ndarray]] | None = None,
    target_cosine: float | None = 0.99,
    target_db: float | None = None,
    keep_float_budget: int | float = DEFAULT_BUDGET,
    report_batches: int = 8,
    progress: bool = True,
    state: StateSpec = "auto",
    **calibrator_options: Any,
) -> tuple[Graph, QuantizationReport]:
    """Post-training static int8 quantization of `model` (see the module docstring); returns (graph, report).

    `calibration` is an iterable of feed dicts (input name -> array, the model's shapes; a state input may be
    left out: the first frame then starts from zeros); `method` "auto" or one calibrator; `keep_float` "auto",
    node names, or both (["auto", "name"]; () keeps nothing by choice); `state` "auto", None, or
    {input: output} pairs fed back; `validation` (default: the first `report_batches` calibration batches, all
    of them for a stream) is what the report, "auto" and the target measure on.
    """
    graph = model.graph if isinstance(model, Model) else model
    g = prepared_graph(graph)
    pairs = pair_states(g, state)
    methods = _methods(method)
    if isinstance(calibration, Mapping):
        raise InputError("calibration data is one dict of arrays; pass an iterable of them, e.g. [feeds]")
    batches = list(calibration)
    keep_n = 0 if validation is not None else len(batches) if pairs else report_batches
    fp = calibrate_all(g, batches, methods, calibrator_options, pairs, keep_n, progress)
    frames, reference = (fp.frames, fp.reference) if validation is None else float_reference(g, list(validation), pairs)
    unsafe = {n: f"holds {c} non-finite value(s) (an attention mask?)" for n, c in fp.nonfinite.items() if c}
    auto, names = _keep_set(g, keep_float)
    keep = dict.fromkeys(names, "user asked")

    weight_only: set[str] = set()

    def attempt(m: str, keep: dict[str, str], auto_kept: list[str]) -> tuple[Rewrite, QuantizationReport]:
        rw = rewrite(g, fp.ranges[m], set(keep), keep, unsafe, weight_only)
        acc = measure(rw, frames, reference, pairs, f"int8 accuracy: {g.name} ({m})")
        rep = QuantizationReport(
            g.name, m, acc, rw.decisions, dict(rw.qparams), _input_qparams(rw), list(g.outputs), len(batches),
            len(frames), target_cosine, target_db, list(auto_kept), state=dict(pairs),
        )  # fmt: skip
        return rw, rep

    tried = [attempt(m, keep, []) for m in methods]
    rw, report = max(tried, key=lambda t: _score(t[1]))  # max keeps the first of equals
    cosines = {r.method: r.output_cosine for _, r in tried} if len(tried) > 1 else {}
    budget = _budget(keep_float_budget, rw) if auto else None
    best = (rw, report)
    auto_kept: list[str] = []
    while auto and not report.meets_target() and len(auto_kept) < (budget or 0):
        worst = _sensitive(report, rw, set(keep))
        if not worst:
            break
        layer, db = worst[0]
        keep[layer] = f"auto: the layer adding the most error (SQNR {_db(db)} dB in int8)"
        auto_kept.append(layer)
        rw, report = attempt(report.method, keep, auto_kept)
        if _score(report) > _score(best[1]):
            best = (rw, report)
    if auto and not best[1].meets_target():
        best = _weight_only(best, g, fp.ranges[best[1].method], frames, reference, pairs, unsafe, weight_only, attempt)
    rw, report = best
    report.tried, report.keep_float_budget = cosines, budget
    report.sensitive = [] if report.meets_target() else _sensitive(report, rw, set(report.kept_float), 3)
    return rw.out, report


def _weight_only(
    best: tuple[Rewrite, QuantizationReport],
    g: Graph,
    ranges: Mapping[str, tuple[float, float]],
    frames: list[dict[str, Any]],
    reference: list[dict[str, np.ndarray]],
    pairs: Mapping[str, str],
    unsafe: Mapping[str, str],
    weight_only: set[str],
    attempt: Callable[[str, dict[str, str], list[str]], tuple[Rewrite, QuantizationReport]],
) -> tuple[Rewrite, QuantizationReport]:
    """Step 5 of the module docstring, from the `best` (rewrite, report) so far; adds to `weight_only` (which
    `attempt` reads) and returns the best measured."""
    rw, report = best
    keep = {d.node: d.reason for d in report.decisions if d.int8_op is None and d.reason.startswith(("auto", "user"))}
    auto_kept = list(report.auto_kept)
    layers = [d for d in rw.decisions if _computing(d.int8_op) and "folded" not in d.reason]
    cap = math.ceil(WEIGHT_ONLY_BUDGET * len(layers))
    matmuls = candidates(g, {d.node: d.int8_op for d in layers})
    for layer, cos in rank_alone(g, ranges, matmuls, frames, reference, pairs, unsafe)[:cap]:
        keep[layer] = f"auto: model-output cosine {cos:.4f} with this layer alone in int8"
        weight_only.add(layer)
        auto_kept.append(layer)
        rw, report = attempt(report.method, keep, auto_kept)
        if _score(report) > _score(best[1]):
            best = (rw, report)
        if report.meets_target():
            break
    return best


def _score(report: QuantizationReport) -> tuple[bool, float, float]:
    """How good a measured result is: target met first, then the output cosine, then the output SQNR."""
    db = report.output_sqnr_db
    return report.meets_target(), report.output_cosine, -math.inf if math.isnan(db) else db


def _sensitive(report: QuantizationReport, rw: Rewrite, kept: set[str], n: int = 1) -> list[tuple[str, float]]:
    """The `n` int8 computing layers adding the most error, as (layer, output SQNR dB): the largest SQNR drops
    from their inputs to their outputs.

    A layer's input SQNR is the lowest over its activation inputs (a graph input or constant counts as exact); ties
    go to the lower output SQNR. Taking the drop, not the output SQNR, matters in networks that amplify noise:
    there the deepest layers are worst only because everything before them erred.
    """
    rows = {r.tensor: r for r in report.accuracy.rows}
    inputs = {n.name: [i for i in n.inputs if i and rw.is_activation(i)] for n in rw.src.nodes}
    ranked = []
    for row in report.accuracy.rows:
        if row.note or row.layer in kept or not _computing(row.op):
            continue
        ins = [rows[i].sqnr_db for i in inputs.get(row.layer, []) if i in rows]
        drop = min(ins, default=math.inf) - row.sqnr_db
        ranked.append(((-drop if not math.isnan(drop) else math.inf, row.sqnr_db, row.layer), row))
    ranked.sort(key=lambda kr: kr[0])
    out: list[tuple[str, float]] = []
    for _, row in ranked:
        if row.layer not in (name for name, _ in out):
            out.append((row.layer, row.sqnr_db))
        if len(out) == n:
            break
    return out
