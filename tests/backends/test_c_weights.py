"""What a bundle's weight blob holds: only what the generated code reads (a Gemm's repacked weights without their
unpacked original), and the source model only on request (`include_source=True`, CLI ``--with-source``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import bundle
from burnedge.backends.c.lower.dense import pack_b
from burnedge.cli import main

RNG = np.random.default_rng(0)
N = helper.make_node


def _aligned(nbytes: int) -> int:
    return (nbytes + 63) // 64 * 64


def _rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _proto(nodes, x_shape, y, inits: dict):
    vi = helper.make_tensor_value_info
    g = helper.make_graph(
        nodes,
        "g",
        [vi("x", TensorProto.FLOAT, x_shape)],
        [vi(y, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


W_T = _rand(10, 200)  # Gemm transB=1: B is [N, K]
BIAS = _rand(10)


def gemm_model():
    return _proto([N("Gemm", ["x", "w", "b"], ["y"], transB=1)], [2, 200], "y", {"w": W_T, "b": BIAS})


def cnn_model():
    """MNIST-like: Conv -> Relu -> MaxPool -> Flatten -> Gemm(transB=1) -> Relu -> MatMul."""
    nodes = [
        N("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1]),
        N("Relu", ["c"], ["r"]),
        N("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        N("Flatten", ["p"], ["f"]),
        N("Gemm", ["f", "fw", "fb"], ["h"], transB=1),
        N("Relu", ["h"], ["hr"]),
        N("MatMul", ["hr", "mw"], ["y"]),
    ]
    inits = {
        "cw": _rand(8, 1, 3, 3),
        "cb": _rand(8),
        "fw": _rand(32, 8 * 14 * 14),
        "fb": _rand(32),
        "mw": _rand(32, 10),
    }
    return _proto(nodes, [1, 1, 28, 28], "y", inits)


def _layout_is_read(b: bundle.Bundle) -> None:
    """Every entry of the blob layout is addressed by the generated source, and the layout is the whole blob."""
    src = b.members["src/model.c"].decode()
    offsets = {int(o) for o in re.findall(r"weights \+ (\d+)\)", src)}
    layout = b.manifest["weights"]
    unread = [(e["key"], e["offset"]) for e in layout if e["offset"] not in offsets]
    assert unread == [], f"weights in the blob that src/model.c never reads: {unread}"
    assert sum(_aligned(e["bytes"]) for e in layout) == b.weight_bytes


def test_gemm_trans_b_keeps_only_the_packed_weights(tmp_path):
    out = burnedge.export(gemm_model(), tmp_path / "gemm.bedge")
    b = bundle.read(out)
    packed = _aligned(pack_b(W_T.T.copy()).nbytes) + _aligned(BIAS.nbytes)
    assert b.weight_bytes <= packed, (b.weight_bytes, packed)
    assert sorted(e["key"] for e in b.manifest["weights"]) == ["b", "dense:gemmB:y"]
    _layout_is_read(b)
    assert all(c.ok for c in burnedge.verify(out))
    x = _rand(2, 200)
    np.testing.assert_allclose(burnedge.Session(out).run({"x": x})["y"], x @ W_T.T + BIAS, rtol=1e-5, atol=1e-4)


def test_cnn_blob_holds_one_copy_of_the_weights(tmp_path):
    proto = cnn_model()
    out = burnedge.export(proto, tmp_path / "cnn.bedge")
    b = bundle.read(out)
    _layout_is_read(b)
    assert all(c.ok for c in burnedge.verify(out))
    keys = {e["key"] for e in b.manifest["weights"]}
    assert "fw" not in keys and "mw" not in keys, keys  # both read in their packed forms only
    # roughly one copy: no more than the source's weights plus the packing's padding
    source = sum(_aligned(numpy_helper.to_array(t).nbytes) for t in proto.graph.initializer)
    assert b.weight_bytes < 1.25 * source, (b.weight_bytes, source)


def test_gemm_with_a_constant_a_keeps_only_the_packed_a(tmp_path):
    a = _rand(6, 200)
    proto = _proto([N("Gemm", ["a", "x"], ["y"], transA=0)], [200, 3], "y", {"a": a})
    out = burnedge.export(proto, tmp_path / "gemm_a.bedge")
    b = bundle.read(out)
    assert [e["key"] for e in b.manifest["weights"]] == ["dense:gemmA:y"]
    _layout_is_read(b)
    assert all(c.ok for c in burnedge.verify(out))


# -- the source model only on request -------------------------------------------------------------------------------
def test_the_source_model_is_opt_in(tmp_path):
    bare = bundle.read(burnedge.export(gemm_model(), tmp_path / "bare.bedge"))
    assert "model.onnx" not in bare.members and bare.onnx is None
    full = bundle.read(burnedge.export(gemm_model(), tmp_path / "full.bedge", include_source=True))
    assert full.onnx is not None and full.members["model.onnx"] == full.onnx


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("weights") / "gemm.onnx"
    path.write_bytes(gemm_model().SerializeToString())
    return path


def test_cli_with_source_and_the_old_no_source(onnx_file, tmp_path, capsys):
    for flags, has in (([], False), (["--with-source"], True), (["--no-source"], False)):
        out = tmp_path / f"m{len(flags)}{has}.bedge"
        assert main(["export", str(onnx_file), "-o", str(out), "--test-vectors", "0", *flags]) == 0
        assert ("model.onnx" in bundle.read(out).members) is has, flags
    assert "no-source" not in capsys.readouterr().out  # the old flag is a silent no-op
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    helptext = capsys.readouterr().out
    assert "--with-source" in helptext and "--no-source" not in helptext


def test_bench_without_a_source_says_how_to_compare(onnx_file, tmp_path, capsys):
    out = tmp_path / "bare.bedge"
    assert main(["export", str(onnx_file), "-o", str(out), "--test-vectors", "1"]) == 0
    capsys.readouterr()
    assert main(["bench", str(out), "--runs", "3", "--warmup", "0"]) == 0
    text = capsys.readouterr().out
    assert "ratio" not in text and "--with-source" in text, text
    assert main(["bench", str(out), "--runs", "3", "--vs", "onnxruntime"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("burnedge: error:") and "--with-source" in err and err.count("\n") == 1, err
    assert "Traceback" not in err
