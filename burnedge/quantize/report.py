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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from ..files import write_atomic  # re-exported for exporter.py until it imports burnedge.files

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

    def to_html(self, threshold_db: float = 20.0) -> str:
        """A self-contained HTML page: a summary, an SVG bar plot of per-layer SQNR, and the table."""
        rows = self.rows
        head, body = self._table(None)
        esc = html.escape
        summary = f"{len(rows)} tensors compared."
        if rows:
            summary += f" Worst: {esc(rows[0].layer)} at {_db(rows[0].sqnr_db)} dB SQNR."
        table = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>\n" for row in body)
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{esc(self.title)}</h1>\n<p>{summary} Bars under {threshold_db:g} dB are red.</p>\n"
            f"{_svg(rows, threshold_db)}\n"
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


def _db(v: float) -> str:
    return "inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:.2f}"


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
    "td:nth-child(1),td:nth-child(5),td:nth-child(6),td:nth-child(7){text-align:right;font-family:monospace}"
    "svg{display:block;margin:1em 0}"
)


def _svg(rows: list[LayerError], threshold_db: float) -> str:
    """Horizontal bars, one per layer in report order, from 0 dB to its SQNR (infinite values drawn to the edge)."""
    bar_h, gap, label_w, plot_w, top = 16, 4, 260, 480, 24
    finite = [r.sqnr_db for r in rows if math.isfinite(r.sqnr_db)]
    lo = min([0.0, *finite])
    hi = max([threshold_db, *finite]) if finite else max(threshold_db, 1.0)
    hi = 10.0 * math.ceil(hi / 10.0) if hi > 0 else 10.0
    lo = 10.0 * math.floor(lo / 10.0)
    span = hi - lo

    def x(v: float) -> float:
        v = min(max(v, lo), hi)
        return label_w + (v - lo) / span * plot_w

    height = top + len(rows) * (bar_h + gap) + 20
    width = label_w + plot_w + 70
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<text x="{label_w}" y="12">per-layer SQNR (dB), worst first</text>',
    ]
    for tick in range(int(lo), int(hi) + 1, 10):
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{height - 16}" stroke="#ddd"/>')
        parts.append(f'<text x="{tx:.1f}" y="{height - 4}" text-anchor="middle">{tick}</text>')
    tx = x(threshold_db)
    parts.append(
        f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{height - 16}" stroke="#c00" stroke-dasharray="4 3"/>'
    )
    for i, r in enumerate(rows):
        y = top + i * (bar_h + gap)
        x0, x1 = sorted((x(0.0), x(r.sqnr_db)))
        colour = "#d9534f" if r.sqnr_db < threshold_db else "#4a90d9"
        label = r.layer if len(r.layer) <= 40 else r.layer[:39] + "\u2026"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + bar_h - 4}" text-anchor="end">{html.escape(label)}</text>'
            f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1.0):.1f}" height="{bar_h}" fill="{colour}">'
            f"<title>{html.escape(r.tensor)}: {_db(r.sqnr_db)} dB</title></rect>"
            f'<text x="{max(x1, x(0.0)) + 4:.1f}" y="{y + bar_h - 4}">{_db(r.sqnr_db)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
