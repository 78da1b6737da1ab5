"""The report chart and the arena timeline are readable: a finite axis, ticks apart, labels that tell names apart."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import numpy as np

from burnedge import timeline
from burnedge.quantize.report import compare

NS = "{http://www.w3.org/2000/svg}"
CHAR_W = 6.0  # px per character at font-size 11, a lower estimate


def _svg(page: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*?</svg>", page, re.S).group(0))


def _report():
    rng = np.random.default_rng(0)
    ref, quant, layers = {}, {}, {}
    prefix = "/model/encoder/layers.0/self_attn/"
    for i, (end, noise) in enumerate([("q_proj/MatMul", 0.5), ("k_proj/MatMul", 0.01), ("v_proj/MatMul", 0.0)]):
        f = rng.standard_normal(64).astype(np.float32)
        ref[f"t{i}"], quant[f"t{i}"] = f, f + noise * rng.standard_normal(64).astype(np.float32)
        layers[f"t{i}"] = (prefix + end + "_output_0_and_a_long_tail_that_does_not_fit", "MatMul")
    f = rng.standard_normal(64)  # float64: about 260 dB
    ref["y"], quant["y"] = f, f * (1 + 1e-13)  # a huge but finite SQNR: the axis still stops
    layers["y"] = ("/model/encoder/head/Gemm", "Gemm")
    return compare(ref, quant, layers)


def _axis_ticks(svg: ET.Element) -> list[tuple[float, str]]:
    """The axis labels: the numbers written along the bottom line of the chart."""
    texts = [t for t in svg.iter(NS + "text") if re.fullmatch(r"-?[\d.]+", t.text or "")]
    bottom = max(float(t.get("y")) for t in texts)
    return [(float(t.get("x")), t.text) for t in texts if float(t.get("y")) == bottom]


def test_the_axis_is_finite_and_bounded_when_a_layer_is_exact():
    report = _report()
    assert any(r.sqnr_db == float("inf") for r in report.rows) and any(200 < r.sqnr_db < 1e9 for r in report.rows)
    svg = _svg(report.to_html())
    values = [float(v) for _, v in _axis_ticks(svg)]
    assert values and all(np.isfinite(values)) and max(values) <= 60
    width = float(svg.get("width"))
    assert all(
        0 <= float(r.get("x")) and float(r.get("x")) + float(r.get("width")) <= width for r in svg.iter(NS + "rect")
    )
    assert "inf" in [t.text for t in svg.iter(NS + "text")]  # the true value is still written beside the bar


def test_no_two_tick_labels_overlap():
    for report in (_report(), compare({"a": np.ones(4)}, {"a": np.ones(4) * 1.0001})):
        ticks = sorted(_axis_ticks(_svg(report.to_html())))
        assert len(ticks) >= 2
        for (x0, t0), (x1, t1) in zip(ticks, ticks[1:]):
            assert x1 - x0 > CHAR_W * (len(t0) + len(t1)) / 2 + 4, (t0, t1)


def test_bar_labels_differ_when_the_names_differ_only_at_the_end():
    svg = _svg(_report().to_html())
    labels = [t.text for t in svg.iter(NS + "text") if t.get("class") == "bar-label"]
    assert len(labels) == 4 and len(set(labels)) == 4
    assert all(not label.startswith("/model/encoder") for label in labels)  # the shared prefix is gone
    titles = [t.text for t in svg.iter(NS + "title")]
    assert any("/model/encoder/layers.0/self_attn/q_proj/MatMul_output_0_and_a_long_tail" in t for t in titles)


def test_the_headline_names_the_end_to_end_verdict_and_the_per_layer_count():
    page = _report().to_html(outputs=["y"], target_cosine=0.99)
    head = html.unescape(page[page.index("</h1>") : page.index("<svg")])
    assert "End-to-end" in head and "target cosine >= 0.99: met" in head
    assert re.search(r"Per-layer error: 1 of 4 tensors under 20 dB", head)
    missed = _report().to_html(outputs=["t0"], target_cosine=0.999)
    assert "NOT met" in missed[: missed.index("<svg")]


def test_timeline_labels_are_the_distinguishing_ends():
    names = [f"/model/decoder/block.{i}/mlp/fc{i % 2}/MatMul_output_0" for i in range(4)]
    rows = [
        {"name": n, "tensors": [n], "offset": i * 256, "bytes": 256, "first": i, "last": i + 2}
        for i, n in enumerate(names)
    ]
    svg = ET.fromstring(timeline.svg(rows, steps=8, arena_bytes=1024))
    labels = [t.text for g in svg.iter(NS + "g") for t in g.iter(NS + "text")]
    assert len(labels) == 4 and len(set(labels)) == 4
    assert not any(label.lstrip("\u2026").startswith(("/model", "odel", "decoder")) for label in labels)
    assert [label[0] for label in labels] == ["0", "1", "2", "3"]  # the block number that tells them apart shows
    tips = [t.text for t in svg.iter(NS + "title")]
    assert all(any(n in tip for tip in tips) for n in names)  # the full name stays in the tooltip
