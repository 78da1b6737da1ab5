"""What `quantize_model` hands back besides the graph: the QuantizationReport, and the message of a missed target.

The report says what was decided (the calibration method and how every method tried measured, the layers kept in
float and why, the states fed back) and how accurate the int8 graph is (float against int8 on the validation
frames, per layer). `below_target` is the short message `export_int8` raises when the target is missed.
"""

from __future__ import annotations

import html
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any

from ..files import write_atomic
from .qparams import QParams
from .report import AccuracyReport, _db
from .rewriter import Decision
from .stream import state_text

__all__ = ["QuantizationReport", "below_target"]


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
    tried: dict[str, float] = field(default_factory=dict)  # method -> model-output cosine (method "auto")
    keep_float_budget: int | None = None  # layers `auto` may keep in float; None: auto was off
    state: dict[str, str] = field(default_factory=dict)  # state input -> the output fed back into it
    sensitive: list[tuple[str, float]] = field(default_factory=list)  # int8 layers adding most error, SQNR dB

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
    def output_max_error(self) -> float:
        """The largest |float - int8| over the model's outputs."""
        return max((r.max_abs_error for r in self._output_rows()), default=0.0)

    @property
    def kept_float(self) -> dict[str, str]:
        """Node -> why it stays float (no int8 rule, user asked, auto ...)."""
        return {d.node: d.reason for d in self.decisions if d.int8_op is None}

    @property
    def int8_ops(self) -> dict[str, int]:
        c = Counter(d.int8_op for d in self.decisions if d.int8_op and "folded" not in d.reason)
        return dict(sorted(c.items()))

    @property
    def weight_only(self) -> list[str]:
        """The layers `auto` kept float with int8 weights (beyond `keep_float_budget`, which counts the others)."""
        return [n for n in self.auto_kept if self.kept_float.get(n, "").endswith("weight-only int8")]

    def meets_target(self) -> bool:
        ok = True
        if self.target_cosine is not None:
            ok &= self.output_cosine >= self.target_cosine
        if self.target_db is not None:
            ok &= self.output_sqnr_db >= self.target_db
        return ok

    def summary(self) -> str:
        method = self.method
        if len(self.tried) > 1:
            method += " (auto, the best measured of " + ", ".join(f"{m} {c:.6f}" for m, c in self.tried.items()) + ")"
        lines = [
            f"int8 quantization of {self.model}: method {method}, {self.calibration_batches} calibration "
            f"batch(es), measured on {self.validation_batches}",
        ]
        if self.state:
            lines.append(f"streaming: state {state_text(self.state)} fed back frame by frame (int8 its own)")
        lines += [
            self.verdict(),
            "int8 ops: " + (", ".join(f"{op} {n}" for op, n in self.int8_ops.items()) or "none"),
        ]
        kept = self.kept_float
        wo = len(self.weight_only)
        auto = "" if self.keep_float_budget is None else f"; auto kept {len(self.auto_kept) - wo} of a budget of "
        auto += f"{self.keep_float_budget}" + (f" (and {wo} weight-only int8)" if wo else "") if auto else ""
        lines.append(f"kept in float: {len(kept)} node(s){auto}" + (":" if kept else ""))
        lines.extend(f"  {node}: {why}" for node, why in kept.items())
        return "\n".join(lines) + "\n"

    def verdict(self) -> str:
        """The model output's measures against the target, in one line."""
        return (
            f"model output: cosine {self.output_cosine:.6f}, SQNR {_db(self.output_sqnr_db)} dB, max |error| "
            f"{self.output_max_error:.4g}" + self._target_text()
        )

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
        page = self.accuracy.to_html(
            threshold_db, outputs=self.outputs, target_cosine=self.target_cosine, target_db=self.target_db
        )
        summary = "<pre>" + html.escape(self.summary()) + "</pre>\n"
        head, sep, tail = page.partition("</h1>\n")
        return head + sep + summary + tail

    def write_html(self, path: Any, threshold_db: float = 20.0):
        return write_atomic(path, self.to_html(threshold_db).encode())


def below_target(report: QuantizationReport, report_path: Any = None) -> str:
    """One line: what was measured against what target, the layers to look at, and what to try."""
    want = []
    if report.target_cosine is not None:
        want.append(f"cosine {report.output_cosine:.4f} < {report.target_cosine:g}")
    if report.target_db is not None:
        want.append(f"SQNR {_db(report.output_sqnr_db)} dB < {report.target_db:g} dB")
    how = "streaming, state fed back" if report.state else f"on {report.validation_batches} batch(es)"
    text = f"int8 misses its target: model output {' / '.join(want)} ({how}, method {report.method}"
    if report.auto_kept:
        wo = len(report.weight_only)
        text += f", {len(report.auto_kept) - wo} layer(s) kept float by auto" + (f", {wo} weight-only" if wo else "")
    text += ")"
    if report.sensitive:
        text += "; layers adding the most error: " + ", ".join(f"{n} ({_db(db)} dB)" for n, db in report.sensitive)
    text += (
        "; try --keep-float NODE, a larger --keep-float-budget, another --method, more or realer calibration data,"
        " or --allow-below-target to write the bundle anyway"
    )
    text += "; no bundle written" + (f" (the report is written: {report_path})" if report_path is not None else "")
    return text
