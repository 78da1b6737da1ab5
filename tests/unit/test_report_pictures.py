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
    assert [label[:8] for label in labels] == [f"block.{i}/" for i in range(4)]  # the segment that tells them apart
    tips = [t.text for t in svg.iter(NS + "title")]
    assert all(any(n in tip for tip in tips) for n in names)  # the full name stays in the tooltip


def _detector_rows() -> list[dict]:
    """Buffers named as an exporter names a detector's tensors, with the graph's own input and output among them,
    in boxes from 1 to 12 steps wide (a real YOLOv8n timeline has all of these)."""
    names = ["images", "output0"]
    for i in range(12):
        names += [f"/model.{i}/cv2/conv/Conv_output_0", f"/model.{i}/Split_output_1"]
    rows, step = [], 0
    for i, n in enumerate(names):
        width = 1 + i % 12
        rows.append({"name": n, "tensors": [n, n + "_alias"][: 1 + i % 2], "offset": (i % 8) * 512, "bytes": 512,
                     "first": step, "last": step + width - 1})  # fmt: skip
        step += 2
    return rows


def _box_labels(svg: ET.Element) -> list[tuple[str, str, float, float]]:
    """(full name from the tooltip, label, label's x, the box's right edge) for every labelled box."""
    out = []
    for g in svg.iter(NS + "g"):
        text, rect = g.find(NS + "text"), g.find(NS + "rect")
        if text is not None:
            name = g.find(NS + "title").text.split("\n")[0].split(" (+")[0]
            out.append((name, text.text, float(text.get("x")), float(rect.get("x")) + float(rect.get("width"))))
    return out


def test_timeline_labels_fit_their_boxes_and_keep_whole_words():
    rows = _detector_rows()
    svg = ET.fromstring(timeline.svg(rows, steps=2 * len(rows) + 12, arena_bytes=4096))
    labels = _box_labels(svg)
    assert len(labels) >= len(rows) // 2  # most boxes are wide enough for a label
    for name, label, x, right in labels:
        assert x + CHAR_W * len(label) <= right, f"{label!r} overflows its box"
        core = re.sub(r" \(\+\d+\)$", "", label).strip("\u2026")
        assert not core.startswith("/model"), label  # the prefix the tensors share (not "images") is gone
        assert len(core) >= 3 and core in name, (label, name)
        assert not re.fullmatch(r"(Conv_)?output_\d", core), label  # only the ending every tensor has: no help
        at = name.index(core)
        whole = (at == 0 or name[at - 1] in "/._") and (at + len(core) == len(name) or name[at + len(core)] in "/._")
        assert whole, f"{label!r} cuts a word of {name!r}"  # "…nv…" tells a reader nothing
    wide = [(n, label) for n, label, x, right in labels if right - x > 24 * CHAR_W]
    assert wide and all(re.search(r"model\.\d+/", label) for _, label in wide)  # the distinguishing part shows


def test_report_labels_drop_the_shared_prefix_at_a_path_segment():
    ref = {f"t{i}": np.ones(8) for i in range(3)}
    quant = {k: v * (1 + 0.01 * i) for i, (k, v) in enumerate(ref.items())}
    layers = {
        "t0": ("/model.22/Div_1", "Div"),
        "t1": ("/model.4/cv2/conv/Conv", "Conv"),
        "t2": ("/model.22/Sub", "Sub"),
    }
    svg = _svg(compare(ref, quant, layers).to_html())
    labels = sorted(t.text for t in svg.iter(NS + "text") if t.get("class") == "bar-label")
    assert labels == ["model.22/Div_1", "model.22/Sub", "model.4/cv2/conv/Conv"]  # not "22/Div_1": "model." stays
