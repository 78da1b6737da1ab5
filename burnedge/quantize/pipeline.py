"""Post-training static quantization end to end: optimise, calibrate, rewrite to int8, measure, keep layers float.

``quantize_model(model, calibration, method="minmax", keep_float=())`` returns the int8 graph and a QuantizationReport.
Steps:

1. optimise a copy of the graph (QDQ import first when it holds Q/DQ pairs, then `burnedge.passes.optimize`) and
   split fused nodes to the int8 granularity
   (`prepare.split_fused`), so every tensor an int8 op writes is a tensor of the float graph;
2. calibrate: run that graph on every calibration batch, feeding every float tensor to the chosen calibrator
   (`observe.collect`, with a progress bar), and compute one range per tensor; tensors holding -inf or NaN (an
   attention mask) get no int8 form;
3. rewrite (`rewrite.rewrite`, rules in `rules.py`), keeping the named nodes in float;
4. measure: run the float graph and the int8 graph (numpy references) on the validation batches (default: the
   first `report_batches` calibration batches) and compare every tensor the int8 graph recomputes (SQNR, cosine,
   max error), worst first; the model outputs give the headline numbers;
5. with ``keep_float="auto"``: while the output's cosine (or SQNR) misses the target, keep the int8 layer with the
   lowest SQNR in float and go back to 3 (the ranges stay: they come from the float graph), at most `max_auto`
   times.

Deterministic: no randomness, calibrators are order-independent, and the rewrite follows node order.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..errors import BurnedgeError
from ..files import write_atomic
from ..ir import Graph
from ..model import Model
from ..ops.interpreter import interpret
from ..passes import optimize
from .calibrate import make_calibrator
from .observe import check_feeds, collect, observe_floats
from .prepare import split_fused
from .qdq import has_qdq, import_qdq
from .qparams import QParams, dequantize
from .report import AccuracyReport, _db
from .rewrite import Decision, Rewrite, rewrite

__all__ = ["QuantizationReport", "quantize_model"]


@dataclass
class QuantizationReport:
    """What quantization did and how accurate the int8 graph is (float vs int8 on the validation data)."""

    model: str
    method: str
    accuracy: AccuracyReport
    decisions: list[Decision]
    qparams: dict[str, QParams]
    inputs: dict[str, QParams]  # graph inputs the int8 graph quantizes right away -> their qparams
    outputs: list[str]
    calibration_batches: int
    validation_batches: int
    target_cosine: float | None = None
    target_db: float | None = None
    auto_kept: list[str] = field(default_factory=list)

    def _output_rows(self):
        return [r for r in self.accuracy.rows if r.tensor in self.outputs]

    @property
    def output_cosine(self) -> float:
        """The lowest cosine over the model's float outputs (1 when there is none)."""
        return min((r.cosine for r in self._output_rows()), default=1.0)

    @property
    def output_sqnr_db(self) -> float:
        return min((r.sqnr_db for r in self._output_rows()), default=math.inf)

    @property
    def kept_float(self) -> dict[str, str]:
        """Node -> why it stays float (no int8 rule, user asked, auto ...)."""
        return {d.node: d.reason for d in self.decisions if d.int8_op is None}

    @property
    def int8_ops(self) -> dict[str, int]:
        c = Counter(d.int8_op for d in self.decisions if d.int8_op and "folded" not in d.reason)
        return dict(sorted(c.items()))

    def meets_target(self) -> bool:
        ok = True
        if self.target_cosine is not None:
            ok &= self.output_cosine >= self.target_cosine
        if self.target_db is not None:
            ok &= self.output_sqnr_db >= self.target_db
        return ok

    def summary(self) -> str:
        lines = [
            f"int8 quantization of {self.model}: method {self.method}, {self.calibration_batches} calibration "
            f"batch(es), measured on {self.validation_batches}",
            f"model output: cosine {self.output_cosine:.6f}, SQNR {_db(self.output_sqnr_db)} dB" + self._target_text(),
            "int8 ops: " + (", ".join(f"{op} {n}" for op, n in self.int8_ops.items()) or "none"),
        ]
        kept = self.kept_float
        lines.append(f"kept in float: {len(kept)} node(s)" + (":" if kept else ""))
        lines.extend(f"  {node}: {why}" for node, why in kept.items())
        return "\n".join(lines) + "\n"

    def _target_text(self) -> str:
        parts = []
        if self.target_cosine is not None:
            parts.append(f"cosine >= {self.target_cosine:g}")
        if self.target_db is not None:
            parts.append(f"SQNR >= {self.target_db:g} dB")
        if not parts:
            return ""
        return f" (target {' and '.join(parts)}: {'met' if self.meets_target() else 'NOT met'})"

    def to_text(self, limit: int | None = None) -> str:
        return self.summary() + "\n" + self.accuracy.to_text(limit)

    def print(self, file: IO[str] | None = None, limit: int | None = None) -> None:
        file = file or sys.stdout
        file.write(self.summary() + "\n")
        self.accuracy.print(file, limit)

    def to_html(self, threshold_db: float = 20.0) -> str:
        import html

        page = self.accuracy.to_html(
            threshold_db, outputs=self.outputs, target_cosine=self.target_cosine, target_db=self.target_db
        )
        summary = "<pre>" + html.escape(self.summary()) + "</pre>\n"
        head, sep, tail = page.partition("</h1>\n")
        return head + sep + summary + tail

    def write_html(self, path: Any, threshold_db: float = 20.0):
        return write_atomic(path, self.to_html(threshold_db).encode())


def _prepared(graph: Graph) -> Graph:
    g = graph.copy()
    return split_fused(optimize(import_qdq(g) if has_qdq(g) else g))


def _run_int8(graph: Graph, feeds: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Every tensor of the int8 graph on one batch (value by value on the numpy references), constants included."""
    env: dict[str, Any] = dict(graph.constants())
    interpret(graph, feeds, store=env)
    return env


def _float_tensors(graph: Graph, feeds: Mapping[str, np.ndarray], wanted: set[str], where: str) -> dict[str, Any]:
    """The float tensors named in `wanted` of one run of `graph`."""
    got: dict[str, Any] = {}

    def see(name: str, arr: np.ndarray) -> None:
        if name in wanted:
            got[name] = arr

    observe_floats(graph, feeds, see, where)
    return got


def measure(rw: Rewrite, batches: Sequence[Mapping[str, np.ndarray]], title: str) -> AccuracyReport:
    """Float against int8, tensor by tensor, over `batches` (the float graph is rw.src)."""
    notes = {}
    reasons = {d.node: d.reason for d in rw.decisions if d.int8_op is None}
    for tensor, (layer, _) in rw.layers.items():
        if layer in reasons:
            notes[tensor] = f"kept in float: {reasons[layer]}"
    report = AccuracyReport(rw.layers, notes, title)
    wanted = set(rw.layers) | set(rw.src.outputs)
    for i, feeds in enumerate(batches):
        ref = _float_tensors(rw.src, feeds, wanted, f"validation batch {i}")
        env = _run_int8(rw.out, feeds)
        got = {}
        for name in ref:
            if name in rw.q:
                qname, qp = rw.q[name]
                got[name] = dequantize(env[qname], qp)
            elif rw.fname.get(name) in env and name not in rw.src.inputs:
                got[name] = env[rw.fname[name]]
        report.add(ref, got)
    return report


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


def quantize_model(
    model: Graph | Model,
    calibration: Iterable[Mapping[str, np.ndarray]],
    method: str = "minmax",
    keep_float: str | Iterable[str] = (),
    validation: Iterable[Mapping[str, np.ndarray]] | None = None,
    target_cosine: float | None = 0.99,
    target_db: float | None = None,
    max_auto: int = 16,
    report_batches: int = 8,
    progress: bool = True,
    **calibrator_options: Any,
) -> tuple[Graph, QuantizationReport]:
    """Post-training static int8 quantization of `model` (see the module docstring); returns (graph, report).

    `calibration` is an iterable of feed dicts (input name -> array, the model's shapes); `keep_float` is "auto",
    node names, or both (["auto", "name"]); `validation` (default: the first `report_batches` calibration batches)
    is what the report and ``auto`` measure on.
    """
    graph = model.graph if isinstance(model, Model) else model
    g = _prepared(graph)
    calibrator = make_calibrator(method, **calibrator_options)
    batches = list(calibration) if not isinstance(calibration, Mapping) else calibration
    collect(g, batches, calibrator, progress=progress)
    ranges = calibrator.compute()
    unsafe = {n: f"holds {c} non-finite value(s) (an attention mask?)" for n, c in calibrator.nonfinite.items() if c}
    val = list(validation) if validation is not None else list(batches[:report_batches])
    for i, feeds in enumerate(val):
        check_feeds(g, feeds, f"validation batch {i}")
    auto, names = _keep_set(g, keep_float)
    keep = dict.fromkeys(names, "user asked")
    auto_kept: list[str] = []
    while True:
        rw = rewrite(g, ranges, set(keep), keep, unsafe)
        report = QuantizationReport(
            g.name,
            calibrator.name,
            measure(rw, val, f"int8 accuracy: {g.name} ({calibrator.name})"),
            rw.decisions,
            dict(rw.qparams),
            _input_qparams(rw),
            list(g.outputs),
            len(batches),
            len(val),
            target_cosine,
            target_db,
            list(auto_kept),
        )
        if not auto or report.meets_target() or len(auto_kept) >= max_auto:
            return rw.out, report
        worst = _most_sensitive(report, rw, set(keep))
        if worst is None:
            return rw.out, report
        keep[worst.layer] = f"auto: the layer adding the most error (SQNR {_db(worst.sqnr_db)} dB in int8)"
        auto_kept.append(worst.layer)


def _most_sensitive(report: QuantizationReport, rw: Rewrite, kept: set[str]):
    """The int8 computing layer that adds the most error: the largest SQNR drop from its inputs to its output.

    A layer's input SQNR is the lowest over its activation inputs (a graph input or constant counts as exact); ties
    go to the lower output SQNR. Taking the drop, not the output SQNR, matters in networks that amplify noise:
    there the deepest layers are worst only because everything before them erred.
    """
    rows = {r.tensor: r for r in report.accuracy.rows}
    inputs = {n.name: [i for i in n.inputs if i and rw.is_activation(i)] for n in rw.src.nodes}
    best, best_key = None, None
    for row in report.accuracy.rows:
        # int8 computing ops only: movement ops and Concat keep their own names, QRequant only rescales
        if row.note or row.layer in kept or not row.op.startswith("Q") or row.op == "QRequant":
            continue
        ins = [rows[i].sqnr_db for i in inputs.get(row.layer, []) if i in rows]
        drop = min(ins, default=math.inf) - row.sqnr_db
        key = (-drop if not math.isnan(drop) else math.inf, row.sqnr_db, row.layer)
        if best_key is None or key < best_key:
            best, best_key = row, key
    return best
