"""The arena timeline: which tensor lives where in the arena, and when, as text for a terminal and as an SVG picture.

Both read the plan's buffer rows ({name, tensors, offset, bytes, first, last}; graph inputs are written at step -1
and outputs live until step `steps`), as `Plan.timeline()` and a bundle's plan.json give them::

    offset   bytes  steps    -1        5        10   tensor
         0    1024  -1..3    #####.......         x (+1 alias)
      1024     512   2..9    ...#########         conv0
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .quantize.report_svg import CHAR_W, short_labels

__all__ = ["svg", "text"]


def _label(row: dict[str, Any]) -> str:
    extra = len(row.get("tensors", ())) - 1
    return row["name"] + (f" (+{extra} alias{'es' if extra > 1 else ''})" if extra > 0 else "")


def text(rows: Sequence[dict[str, Any]], steps: int, width: int = 48) -> str:
    """One line per buffer, by offset: offset, bytes, live steps and a bar over the steps (-1 .. steps)."""
    span = steps + 2  # columns: step -1 (inputs) .. step `steps` (outputs leave)
    per = max(1, -(-span // width))  # steps per column
    cols = -(-span // per)
    axis = f"-1..{steps}"
    pad = max(cols, len(axis))
    lines = [f"{'offset':>10s} {'bytes':>10s} {'live':>9s}  {axis:{pad}s}  tensor"]
    for r in sorted(rows, key=lambda r: (r["offset"], r["first"])):
        a, b = (r["first"] + 1) // per, (r["last"] + 1) // per
        bar = "".join("#" if a <= c <= b else "." for c in range(cols)).ljust(pad)
        life = f"{r['first']}..{r['last']}"
        lines.append(f"{r['offset']:10d} {r['bytes']:10d} {life:>9s}  {bar}  {_label(r)}")
    if per > 1:
        lines.append(f"(one column is {per} steps)")
    return "\n".join(lines)


def _color(name: str) -> str:
    """A light colour fixed by the name, so a tensor keeps its colour from one picture to the next."""
    h = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)
    r, g, b = colorsys.hls_to_rgb((h % 360) / 360, 0.62 + (h >> 9) % 14 / 100, 0.55 + (h >> 4) % 25 / 100)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _si(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return ""


_PAD = 3.0  # px between a box's left edge and its label (and as much kept free on the right)


def _room(row: dict[str, Any], cw: float, scale: float) -> int:
    """How many characters of label fit in the row's box: 0 when it is lower than a line of text."""
    if max(row["bytes"] * scale, 1.0) < 11:
        return 0
    return max(0, int(((row["last"] - row["first"] + 1) * cw - 2 * _PAD) / CHAR_W))


def svg(rows: Sequence[dict[str, Any]], steps: int, arena_bytes: int, lower_bound: int = 0, title: str = "") -> str:
    """An SVG picture: x = step, y = arena offset, one labelled rectangle per buffer (hover for details)."""
    left, top, right, bottom = 80, 40, 20, 40
    cw = max(8.0, min(40.0, 900 / (steps + 2)))
    plot_w, plot_h = cw * (steps + 2), 560.0
    scale = plot_h / max(arena_bytes, 1)
    width, height = left + plot_w + right, top + plot_h + bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="13" font-weight="bold">'
        f"{escape(title or 'arena timeline')}: arena {_si(arena_bytes)}"
        f"{f', lower bound {_si(lower_bound)}' if lower_bound else ''}</text>",
        f'<rect x="{left}" y="{top}" width="{plot_w:.1f}" height="{plot_h:.1f}" fill="#f6f6f6" stroke="#999"/>',
    ]
    every = max(1, (steps + 2) // 20)
    for s in range(-1, steps + 1, every):  # x axis: steps
        x = left + (s + 1.5) * cw
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 15:.1f}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle">step</text>')
    for i in range(6):  # y axis: offsets
        off = arena_bytes * i / 5
        y = top + off * scale
        out.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#666"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_si(off)}</text>')
    ordered = sorted(rows, key=lambda r: (r["offset"], r["first"]))
    labelled = [r for r in ordered if not r["name"].startswith("scratch of step")]
    rooms = [_room(r, cw, scale) for r in labelled]
    short = dict(zip((r["name"] for r in labelled), short_labels([r["name"] for r in labelled], rooms)))
    for r in ordered:
        x, y = left + (r["first"] + 1) * cw, top + r["offset"] * scale
        w, h = (r["last"] - r["first"] + 1) * cw, max(r["bytes"] * scale, 1.0)
        fill = "#d0d0d0" if r["name"] not in short else _color(r["name"])
        tip = f"{_label(r)}\n{r['bytes']} bytes at offset {r['offset']}\nsteps {r['first']}..{r['last']}"
        if len(r.get("tensors", ())) > 1:
            tip += "\ntensors: " + ", ".join(r["tensors"])
        out.append(
            f'<g><title>{escape(tip)}</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill={quoteattr(fill)} stroke="#333" stroke-width="0.6"/>'
        )
        name = short.get(r["name"], "")
        if name:  # a box too small for a readable name has it in the tooltip only
            extra = len(r.get("tensors", ())) - 1
            if extra > 0 and len(name) + len(f" (+{extra})") <= _room(r, cw, scale):
                name += f" (+{extra})"
            out.append(f'<text x="{x + _PAD:.1f}" y="{y + min(h / 2 + 4, 13):.1f}">{escape(name)}</text>')
        out.append("</g>")
    if 0 < lower_bound < arena_bytes:
        y = top + lower_bound * scale
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="#c00" '
            'stroke-dasharray="5,4"><title>lower bound: the most bytes alive at one step</title></line>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
