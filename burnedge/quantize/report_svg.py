"""Pictures of the report: short labels that keep the distinguishing end of a name, and the per-layer SQNR chart.

The chart's dB axis is clipped to a readable range (0 .. 60 dB at most, wider below 0 only down to -20 dB): a
value past an edge (an exact layer's +inf, a broken one's -inf, a NaN) is drawn at that edge with a marker, and
its true value is printed beside the bar and in the tooltip. Tick steps grow until the tick labels cannot touch.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["AXIS_MAX_DB", "AXIS_MIN_DB", "CHAR_W", "ellipsize_left", "short_labels", "sqnr_svg"]

AXIS_MAX_DB = 60.0  # past this, more dB tells a reader nothing: the bar ends at the edge with a marker
AXIS_MIN_DB = -20.0
_SEPARATORS = "/._:-> "
CHAR_W = 6.2  # px per character at font-size 11 (sans-serif, a little generous)


def _common_prefix(names: Sequence[str]) -> str:
    """The longest prefix that ends at a separator and that nine in ten of the names share (a graph's input
    "images" or "images/q" does not stop "/model/..." from being found); where it holds a "/" it ends at one, so
    "/model.4/..." and "/model.22/..." lose "/", not "/model."."""
    distinct = set(names)
    if len(distinct) < 2:
        return ""
    counts: Counter[str] = Counter()
    for n in distinct:
        ends = [i for i, c in enumerate(n[:-1]) if c == "/" or (c in _SEPARATORS and "/" not in n[:i])]
        counts.update({n[: i + 1] for i in ends})
    need = max(2, -(-9 * len(distinct) // 10))
    return max((head for head, k in counts.items() if k >= need), key=len, default="")


def _endings(names: Sequence[str], share: float) -> set[str]:
    """The endings, each starting at a separator, that at least `share` of the names (and two) have."""
    distinct = set(names)
    counts: Counter[str] = Counter()
    for n in distinct:
        counts.update({n[i:] for i in range(1, len(n)) if n[i] in _SEPARATORS})
    need = max(2, math.ceil(share * len(distinct)))
    return {end for end, k in counts.items() if k >= need}


def _common_suffix(names: Sequence[str]) -> str:
    """The longest ending, starting at a separator, that all names share."""
    return max(_endings(names, 1.0), key=len, default="") if len(set(names)) > 1 else ""


def ellipsize_left(s: str, room: int) -> str:
    """`s` if it fits in `room` characters, else "…" and its last room - 1 characters."""
    return s if len(s) <= room else "\u2026" + s[-max(room - 1, 1) :]


def short_labels(names: Sequence[str], room: int | Sequence[int] = 40) -> list[str]:
    """Each name without the prefix the names share, fitted to `room` characters keeping the end that tells it apart.

    The prefix is the one nine in ten names share (a graph's input "images" does not stop "/model/" from being
    cut). A name that does not fit first loses its longest ending that a quarter of the names have too (an
    exporter's "_output_0", an int8 graph's "/q"), shown cut at a separator and "…"; then its leading path
    segments ("…conv/Conv"). A label that would show under MIN_LABEL characters of the name is ""
    (the picture's tooltip has the full name). Names that still collide are refitted against the ending only
    they share: "q_proj/MatMul_output_0" and "k_proj/..." do not both become "…output_0".
    """
    head = _common_prefix(names)
    rest = [n[len(head) :] if head and n.startswith(head) and len(n) > len(head) else n for n in names]
    rooms = [room] * len(rest) if isinstance(room, int) else list(room)
    frequent = _endings(rest, 0.25)
    suffixes = [max((e for e in frequent if n.endswith(e) and n != e), key=len, default="") for n in rest]
    out = _fit(rest, rooms, suffixes, frequent)
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(out):
        groups.setdefault(label, []).append(i)
    for same in groups.values():  # labels that still collide: cut the ending those names share
        if out[same[0]] and len({rest[i] for i in same}) > 1:
            shared = _common_suffix([rest[i] for i in same])
            fixed = _fit([rest[i] for i in same], [rooms[i] for i in same], [shared] * len(same), frequent)
            for i, label in zip(same, fixed):
                out[i] = label or out[i]  # a readable duplicate rather than none
    return out


MIN_LABEL = 3  # fewer characters of a name than this tell a reader nothing: no label


def _fit(names: Sequence[str], rooms: Sequence[int], suffixes: Sequence[str], frequent: set[str]) -> list[str]:
    return [_fit_one(n, room, suffix, frequent) for n, room, suffix in zip(names, rooms, suffixes)]


def _fit_one(name: str, room: int, suffix: str, frequent: set[str]) -> str:
    """The name in `room` characters, cut only at separators (never inside a word), or "" when too little fits or
    what fits is an ending many names have (`frequent`: "…output_0" tells a reader nothing)."""
    if len(name) <= room:
        return name
    core = name[: -len(suffix)] if suffix and name.endswith(suffix) and len(name) > len(suffix) else name
    if core is not name and len(core) + 1 <= room:  # the whole core, and as much of the ending as fits
        tail = suffix[: room - len(core) - 1]
        cuts = [i for i, c in enumerate(tail) if c in _SEPARATORS]
        return core + (tail[: cuts[-1]] if cuts else "") + "\u2026"
    if len(core) <= room:
        return core
    for i in range(1, len(core) - MIN_LABEL + 1):  # the longest ending that fits, from a word after a separator
        if core[i - 1] in _SEPARATORS and core[i].isalpha() and len(core) - i + 1 <= room:  # not "…0.2"
            return "" if core[i - 1 :] in frequent else "\u2026" + core[i:]
    return ""


def _db(v: float) -> str:
    return "nan" if math.isnan(v) else "inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:.2f}"


def _axis(values: Sequence[float], threshold_db: float) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    lo = max(AXIS_MIN_DB, 10.0 * math.floor(min([0.0, *finite]) / 10.0))
    hi = max([threshold_db, *finite]) if finite else max(threshold_db, 10.0)
    hi = min(AXIS_MAX_DB, max(10.0, 10.0 * math.ceil(hi / 10.0)))
    return lo, max(hi, lo + 10.0)


def _ticks(lo: float, hi: float, plot_w: float) -> list[float]:
    """Round tick values, spaced so that labels (up to 4 characters) stay at least 12 px apart."""
    for step in (5.0, 10.0, 20.0, 50.0, 100.0):
        if step / (hi - lo) * plot_w >= 4 * CHAR_W + 12:
            break
    first = step * math.ceil(lo / step)
    return [first + i * step for i in range(int((hi - first) // step) + 1)]


def sqnr_svg(rows: Sequence[Any], threshold_db: float, outputs: Sequence[str] = ()) -> str:
    """Horizontal bars, one per layer in report order, from 0 dB to its SQNR, clipped to the axis."""
    bar_h, gap, label_w, plot_w, top = 16, 4, 300, 480, 40
    lo, hi = _axis([r.sqnr_db for r in rows], threshold_db)
    span = hi - lo

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / span * plot_w

    height = top + len(rows) * (bar_h + gap) + 24
    width = label_w + plot_w + 90
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<text x="{label_w}" y="12">per-layer SQNR (dB), worst first; red: under {threshold_db:g} dB; '
        f"\u25b6 past {hi:g} dB (true value beside the bar)</text>",
    ]
    axis_y = height - 6
    for tick in _ticks(lo, hi, plot_w):
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{height - 18}" stroke="#ddd"/>')
        parts.append(f'<text class="tick" x="{tx:.1f}" y="{axis_y}" text-anchor="middle">{tick:g}</text>')
        if len(rows) > 20 and abs(tx - x(threshold_db)) > 6 * CHAR_W:  # a long chart: the axis on top too
            parts.append(f'<text class="tick" x="{tx:.1f}" y="{top - 8}" text-anchor="middle">{tick:g}</text>')
    tx = x(threshold_db)
    parts.append(f'<text x="{tx:.1f}" y="{top - 8}" text-anchor="middle" fill="#c00">{threshold_db:g}</text>')
    parts.append(
        f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{height - 18}" stroke="#c00" stroke-dasharray="4 3"/>'
    )
    room = int((label_w - 12) / CHAR_W)
    labels = short_labels([r.layer for r in rows], room)
    outs = set(outputs)
    for i, (r, label) in enumerate(zip(rows, labels)):
        y = top + i * (bar_h + gap)
        v = r.sqnr_db
        clipped = math.isnan(v) or not lo <= v <= hi
        end = lo if math.isnan(v) else v
        x0, x1 = sorted((x(0.0), x(end)))
        colour = "#d9534f" if math.isnan(v) or v < threshold_db else "#4a90d9"
        tip = html.escape(f"{r.layer} ({r.op or 'tensor'} {r.tensor}): SQNR {_db(v)} dB, cosine {r.cosine:.6f}")
        weight = ' font-weight="bold"' if r.tensor in outs else ""
        label = ("output " if r.tensor in outs else "") + label
        parts.append(
            f'<g><title>{tip}</title><text class="bar-label" x="{label_w - 6}" y="{y + bar_h - 4}" '
            f'text-anchor="end"{weight}>{html.escape(label)}</text>'
            f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1.0):.1f}" height="{bar_h}" fill="{colour}"/>'
        )
        value_x = max(x1, x(0.0)) + 4
        if clipped:
            edge = x(end)
            side = 1 if end >= 0 else -1
            parts.append(
                f'<path d="M{edge:.1f},{y + 2} l{6 * side},{bar_h / 2 - 2:g} l{-6 * side},{bar_h / 2 - 2:g} z" '
                'fill="#333"/>'
            )
            value_x = max(x1, x(0.0)) + 10
        parts.append(f'<text x="{value_x:.1f}" y="{y + bar_h - 4}">{_db(v)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
