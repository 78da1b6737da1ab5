"""The per-layer accuracy report: the measures, worst-first order, text and HTML renderings, atomic writes."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from burnedge.quantize import AccuracyReport, activation_qparams, compare, dequantize, quantize
from burnedge.quantize.report import write_atomic


def _tensors() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    ref = {n: rng.standard_normal((4, 64)).astype(np.float32) for n in ("conv1", "conv2", "fc", "exact")}
    noise = {"conv1": 0.01, "conv2": 0.3, "fc": 0.05, "exact": 0.0}
    quant = {n: ref[n] + noise[n] * rng.standard_normal(ref[n].shape).astype(np.float32) for n in ref}
    return ref, quant


def test_measures_match_their_definitions():
    ref, quant = _tensors()
    rows = {r.tensor: r for r in compare(ref, quant).rows}
    f, q = ref["conv2"].astype(np.float64), quant["conv2"].astype(np.float64)
    assert math.isclose(rows["conv2"].sqnr_db, 10 * np.log10(np.sum(f * f) / np.sum((f - q) ** 2)), rel_tol=1e-12)
    cos = np.sum(f * q) / np.sqrt(np.sum(f * f) * np.sum(q * q))
    assert math.isclose(rows["conv2"].cosine, cos, rel_tol=1e-12)
    assert rows["conv2"].max_abs_error == float(np.max(np.abs(f - q)))
    assert rows["exact"].sqnr_db == math.inf and rows["exact"].cosine == 1.0 and rows["exact"].max_abs_error == 0


def test_layers_sorted_worst_first():
    ref, quant = _tensors()
    layers = {"conv1": ("Conv_0", "Conv"), "conv2": ("Conv_1", "Conv"), "fc": ("Gemm_2", "Gemm")}
    report = compare(ref, quant, layers=layers, notes={"fc": "kept in float"})
    assert [r.tensor for r in report.rows] == ["conv2", "fc", "conv1", "exact"]
    assert report.worst()[0].layer == "Conv_1"
    text = report.to_text()
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["#", "layer", "op", "tensor"]
    assert lines[2].split()[1] == "Conv_1" and "kept in float" in text and "inf" in lines[-1]
    assert len(report.to_text(limit=2).splitlines()) == 4


def test_batches_accumulate_like_one_batch():
    ref, quant = _tensors()
    whole = compare(ref, quant)
    split = AccuracyReport()
    split.add({n: a[:2] for n, a in ref.items()}, {n: a[:2] for n, a in quant.items()})
    split.add({n: a[2:] for n, a in ref.items()}, {n: a[2:] for n, a in quant.items()})
    for a, b in zip(whole.rows, split.rows):
        assert a.tensor == b.tensor and a.size == b.size and a.max_abs_error == b.max_abs_error
        assert math.isclose(a.sqnr_db, b.sqnr_db, rel_tol=1e-12) or a.sqnr_db == b.sqnr_db == math.inf


def test_edge_cases():
    zeros = np.zeros(8, np.float32)
    ones = np.ones(8, np.float32)
    mask = np.array([0.0, -np.inf, 1.0, 2.0], np.float32)
    report = compare({"zz": zeros, "zo": zeros, "m": mask, "only_float": ones}, {"zz": zeros, "zo": ones, "m": mask})
    rows = {r.tensor: r for r in report.rows}
    assert "only_float" not in rows  # no int8 counterpart: skipped
    assert rows["zz"].sqnr_db == math.inf and rows["zz"].cosine == 1.0
    assert rows["zo"].sqnr_db == -math.inf and rows["zo"].cosine == 0.0
    assert rows["m"].sqnr_db == math.inf and rows["m"].size == 3  # the -inf position is left out
    with pytest.raises(ValueError, match="shape"):
        compare({"a": ones}, {"a": ones[:4]})


def test_real_int8_round_trip_is_reported():
    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    qp = activation_qparams(float(x.min()), float(x.max()))
    row = compare({"x": x}, {"x": dequantize(quantize(x, qp), qp)}).rows[0]
    assert 30 < row.sqnr_db < 50 and row.cosine > 0.999 and row.max_abs_error <= float(qp.scale) * 0.5001


def test_html_is_self_contained_with_an_svg_plot(tmp_path):
    ref, quant = _tensors()
    ref["<script>"] = quant["<script>"] = ref["fc"]
    report = compare(ref, quant)
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "</svg>" in page
    assert page.count("<rect") == len(report.rows)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.index("conv2") < page.index("conv1")  # worst first in the plot and the table
    path = report.write_html(tmp_path / "report.html")
    assert path.read_text() == page and page == compare(ref, quant).to_html()  # the same numbers, the same bytes
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_write_atomic_replaces_whole_file_and_cleans_up(tmp_path):
    target = tmp_path / "out.html"
    target.write_text("old")
    write_atomic(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    with pytest.raises(TypeError):
        write_atomic(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"new contents"
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]
    write_atomic(tmp_path / "missing" / "x.html", b"x")  # burnedge.files.write_atomic makes the folder
    assert (tmp_path / "missing" / "x.html").read_bytes() == b"x"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_print_plain_and_rich():
    ref, quant = _tensors()
    report = compare(ref, quant)
    plain = io.StringIO()
    report.print(plain)
    assert plain.getvalue() == report.to_text()
    tty = _Tty()
    report.print(tty)
    assert "conv2" in tty.getvalue() and "SQNR" in tty.getvalue()
