"""The per-layer accuracy report: float against int8 (dequantized) tensors, worst layer first, as text or HTML.

Per tensor, over every batch added (sums in float64, so batches accumulate exactly like one big batch):

- SQNR (dB) = 10 log10(sum f^2 / sum (f - q)^2): +inf when the int8 tensor is exact, -inf when f is all zero
  but q is not;
- cosine = sum f q / sqrt(sum f^2 * sum q^2): 1 when both are all zero, 0 when only one is;
- max |f - q|.

Positions where the float tensor is not finite (an attention mask's -inf) are left out. Layers sort by SQNR,
lowest first (ties: cosine, then name), so the guilty layer heads the table. The HTML page is self-contained: a
table and an inline SVG bar plot of per-layer SQNR, no scripts, no timestamps (the same numbers give the same
bytes).
"""

from __future__ import annotations

import html
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ..files import write_atomic  # re-exported for exporter.py until it imports burnedge.files
from .report_svg import _db, sqnr_svg

__all__ = ["AccuracyReport", "LayerError", "compare", "write_atomic"]


@dataclass(frozen=True)
class LayerError:
    """One tensor's error: which layer (node) and op made it, and the three measures."""

    tensor: str
    layer: str
    op: str
    sqnr_db: float
    cosine: float
    max_abs_error: float
    size: int
    note: str = ""


class _Sums:
    __slots__ = ("ff", "qq", "fq", "ee", "max_err", "size")

    def __init__(self) -> None:
        self.ff = self.qq = self.fq = self.ee = self.max_err = 0.0
        self.size = 0

    def add(self, f: np.ndarray, q: np.ndarray) -> None:
        f, q = f.astype(np.float64).ravel(), q.astype(np.float64).ravel()
        keep = np.isfinite(f)
        f, q = f[keep], q[keep]
        if not f.size:
            return
        with np.errstate(invalid="ignore", over="ignore"):
            e = f - q
            self.ff += float(f @ f)
            self.qq += float(q @ q)
            self.fq += float(f @ q)
            self.ee += float(e @ e)
            self.max_err = max(self.max_err, float(np.max(np.abs(e))))
        if not np.all(np.isfinite(q)):
            self.ee = self.max_err = math.inf
        self.size += int(f.size)

    def sqnr(self) -> float:
        if self.ee == 0:
            return math.inf
        if self.ff == 0 or math.isinf(self.ee):
            return -math.inf
        return 10.0 * math.log10(self.ff / self.ee)

    def cosine(self) -> float:
        if self.ff == 0 and self.qq == 0:
            return 1.0
        if self.ff == 0 or self.qq == 0 or not math.isfinite(self.qq):
            return 0.0
        return max(-1.0, min(1.0, self.fq / math.sqrt(self.ff * self.qq)))


class AccuracyReport:
    """Accumulates float vs int8 tensors over batches; `rows` gives the layers worst first.

    `layers` maps a tensor name to (layer name, op type) (by default the tensor names itself, op "");
    `notes` adds a remark per tensor ("kept in float", say).
    """

    def __init__(
        self,
        layers: Mapping[str, tuple[str, str]] | None = None,
        notes: Mapping[str, str] | None = None,
        title: str = "int8 accuracy",
    ):
        self.layers = dict(layers or {})
        self.notes = dict(notes or {})
        self.title = title
        self._sums: dict[str, _Sums] = {}

    def add(self, reference: Mapping[str, np.ndarray], quantized: Mapping[str, np.ndarray]) -> None:
        """Adds one batch: float tensors and their int8 counterparts (dequantized), matched by name.

        Tensors present on one side only are skipped (a fused int8 graph lacks some intermediates).
        """
        for name, f in reference.items():
            if name not in quantized:
                continue
            f, q = np.asarray(f), np.asarray(quantized[name])
            if f.shape != q.shape:
                raise ValueError(f"tensor {name!r}: float shape {list(f.shape)} vs int8 shape {list(q.shape)}")
            self._sums.setdefault(name, _Sums()).add(f, q)

    @property
    def rows(self) -> list[LayerError]:
        out = []
        for name, s in self._sums.items():
            layer, op = self.layers.get(name, (name, ""))
            out.append(LayerError(name, layer, op, s.sqnr(), s.cosine(), s.max_err, s.size, self.notes.get(name, "")))
        return sorted(out, key=lambda r: (r.sqnr_db, r.cosine, r.layer, r.tensor))

    def worst(self, n: int = 1) -> list[LayerError]:
        return self.rows[:n]

    def _table(self, limit: int | None) -> tuple[list[str], list[list[str]]]:
        head = ["#", "layer", "op", "tensor", "SQNR dB", "cosine", "max |err|", "note"]
        body = [
            [str(i + 1), r.layer, r.op, r.tensor, _db(r.sqnr_db), f"{r.cosine:.6f}", f"{r.max_abs_error:.4g}", r.note]
            for i, r in enumerate(self.rows[:limit])
        ]
        return head, body

    def to_text(self, limit: int | None = None) -> str:
        """A plain, aligned table (numbers right-aligned), worst layer first."""
        head, body = self._table(limit)
        widths = [max(len(row[c]) for row in [head, *body]) for c in range(len(head))]
        numeric = {0, 4, 5, 6}

        def line(row: list[str]) -> str:
            cells = [v.rjust(w) if c in numeric else v.ljust(w) for c, (v, w) in enumerate(zip(row, widths))]
            return "  ".join(cells).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(head), rule, *(line(r) for r in body)]) + "\n"

    def print(self, file: IO[str] | None = None, limit: int | None = None) -> None:
        """Prints the table: with rich on a terminal when rich is installed, plain text otherwise."""
        file = file or sys.stdout
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:  # rich is optional
            file.write(self.to_text(limit))
            return
        if not file.isatty():
            file.write(self.to_text(limit))
            return
        head, body = self._table(limit)
        table = Table(title=self.title)
        for c, name in enumerate(head):
            table.add_column(name, justify="right" if c in (0, 4, 5, 6) else "left")
        for row in body:
            table.add_row(*row)
        Console(file=file).print(table)

    def headline(
        self,
        threshold_db: float = 20.0,
        outputs: Sequence[str] | None = None,
        target_cosine: float | None = None,
        target_db: float | None = None,
    ) -> tuple[str, str]:
        """Two sentences: the end-to-end verdict (the model outputs against the target) and the per-layer count."""
        rows = self.rows
        outs = [r for r in rows if outputs is not None and r.tensor in outputs]
        if not outs:
            end = "End-to-end: not judged by this chart (the model-output line, where there is one, gives the verdict)."
        else:
            cos, db = min(r.cosine for r in outs), min(r.sqnr_db for r in outs)
            end = f"End-to-end (model output{'s' if len(outs) > 1 else ''}): cosine {cos:.6f}, SQNR {_db(db)} dB"
            want = [f"cosine >= {target_cosine:g}"] if target_cosine is not None else []
            want += [f"SQNR >= {target_db:g} dB"] if target_db is not None else []
            met = (target_cosine is None or cos >= target_cosine) and (target_db is None or db >= target_db)
            end += f"; target {' and '.join(want)}: {'met' if met else 'NOT met'}." if want else "; no target set."
        below = [r for r in rows if not r.sqnr_db >= threshold_db]
        per = f"Per-layer error: {len(below)} of {len(rows)} tensors under {threshold_db:g} dB SQNR (the red bars)"
        if below:
            per += f"; worst {below[0].layer} at {_db(below[0].sqnr_db)} dB"
        per += ". A red intermediate layer alone does not decide the end-to-end verdict."
        return end, per

    def to_html(
        self,
        threshold_db: float = 20.0,
        outputs: Sequence[str] | None = None,
        target_cosine: float | None = None,
        target_db: float | None = None,
    ) -> str:
        """A self-contained HTML page: the headline, an SVG bar plot of per-layer SQNR, and the table.

        `outputs` (the model's output tensors) and the targets give the headline its end-to-end verdict.
        """
        rows = self.rows
        head, body = self._table(None)
        esc = html.escape
        end, per = self.headline(threshold_db, outputs, target_cosine, target_db)
        summary = f'<p class="end-to-end"><b>{esc(end)}</b></p>\n<p class="per-layer">{esc(per)}'
        table = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>\n" for row in body)
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{esc(self.title)}</h1>\n{summary} {len(rows)} tensors compared.</p>\n"
            f"{sqnr_svg(rows, threshold_db, outputs or ())}\n"
            "<table>\n<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>\n"
            f"{table}</table>\n</body>\n</html>\n"
        )

    def write_html(self, path: str | os.PathLike[str], threshold_db: float = 20.0) -> Path:
        """Writes `to_html()` to `path` atomically; returns the path."""
        return write_atomic(path, self.to_html(threshold_db).encode())


def compare(
    reference: Mapping[str, np.ndarray],
    quantized: Mapping[str, np.ndarray],
    layers: Mapping[str, tuple[str, str]] | None = None,
    notes: Mapping[str, str] | None = None,
) -> AccuracyReport:
    """A report over one batch of tensors (call `add` on the result for more batches)."""
    report = AccuracyReport(layers, notes)
    report.add(reference, quantized)
    return report


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
    "td:nth-child(1),td:nth-child(5),td:nth-child(6),td:nth-child(7){text-align:right;font-family:monospace}"
    "svg{display:block;margin:1em 0}"
)
