"""burnedge's integer semantics (burnedge/ops/_intmath.py) on numpy and C alike: Div / Mod by zero and INT_MIN / -1
never trap, out-of-range indices read zeros or skip their update, NaN casts to 0 and the rest saturates; export's
own test vectors ask for no undefined result, so Div and Mod bundles pass their verify.

The expected values come from Python's exact integers (the rule written out once more, independently), and where
ONNX defines the result, from onnxruntime. The C runs go through a subprocess: a SIGFPE kills only it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import burnedge
from burnedge import bundle

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint32", "uint64")


def _model(nodes, inputs: dict, outputs: dict):
    """A model of `nodes` over inputs and outputs given as {name: (numpy dtype name, shape)}."""

    def info(name, spec):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(spec[0])), spec[1])

    graph = helper.make_graph(
        nodes, "g", [info(k, v) for k, v in inputs.items()], [info(k, v) for k, v in outputs.items()]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


DIV_MOD = [("Div", 0), ("Mod", 0), ("Mod", 1)]


def _div_mod_model(feeds: dict):
    """One node per (op, fmod, dtype): y_<op>_<fmod>_<dtype> of a_<dtype>, b_<dtype>."""
    nodes, outs = [], {}
    for dtype in INTS:
        for op, fmod in DIV_MOD:
            y = f"y_{op}_{fmod}_{dtype}"
            attrs = {"fmod": fmod} if op == "Mod" else {}
            nodes.append(helper.make_node(op, [f"a_{dtype}", f"b_{dtype}"], [y], **attrs))
            outs[y] = (dtype, list(feeds[f"a_{dtype}"].shape))
    return _model(nodes, {k: (v.dtype.name, list(v.shape)) for k, v in feeds.items()}, outs)


def _wrap(v: int, dtype: str) -> int:
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (v - int(info.min)) % span + int(info.min)


def _expected(op: str, fmod: int, a: int, b: int, dtype: str) -> int:
    """The documented rule in Python integers: truncating division, x / 0 = 0, x % 0 = x, wrapping."""
    if b == 0:
        return 0 if op == "Div" else a
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    if op == "Div":
        return _wrap(q, dtype)
    r = a - q * b  # sign of a (C's %)
    if not fmod and r != 0 and (r < 0) != (b < 0):
        r += b  # sign of b (Python's %)
    return _wrap(r, dtype)


def _edge_operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    xs = [x for x in (lo, lo + 1, -7, -1, 0, 1, 7, hi - 1, hi) if lo <= x <= hi]
    ys = [y for y in (lo, -3, -1, 0, 1, 3, hi) if lo <= y <= hi]
    a, b = np.meshgrid(np.array(xs, dtype), np.array(ys, dtype))
    return a.reshape(-1), b.reshape(-1)


def _run_c_subprocess(model, feeds: dict) -> dict[str, np.ndarray]:
    """Runs `model` on the C backend in a child process (a SIGFPE kills only it, and fails the test)."""
    payload = {
        "model": model.SerializeToString().hex(),
        "feeds": {k: [v.dtype.name, v.tolist()] for k, v in feeds.items()},
    }
    code = (
        "import json, sys, numpy as np, onnx, burnedge\n"
        "p = json.load(sys.stdin)\n"
        "m = onnx.load_from_string(bytes.fromhex(p['model']))\n"
        "f = {k: np.array(v, dtype=t) for k, (t, v) in p['feeds'].items()}\n"
        "out = burnedge.Session(burnedge.load(m), backend='c').run(f)\n"
        "print(json.dumps({k: [v.dtype.name, v.tolist()] for k, v in out.items()}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True)
    assert proc.returncode == 0, f"the C run died (status {proc.returncode}): {proc.stderr[-800:]}"
    return {k: np.array(v, dtype=t) for k, (t, v) in json.loads(proc.stdout).items()}


def test_div_mod_edges_never_trap_and_agree():
    feeds = {}
    for dtype in INTS:
        feeds[f"a_{dtype}"], feeds[f"b_{dtype}"] = _edge_operands(dtype)
    model = _div_mod_model(feeds)
    got_np = burnedge.Session(burnedge.load(model), backend="numpy").run(feeds)
    got_c = _run_c_subprocess(model, feeds)
    for dtype in INTS:
        a, b = feeds[f"a_{dtype}"], feeds[f"b_{dtype}"]
        for op, fmod in DIV_MOD:
            y = f"y_{op}_{fmod}_{dtype}"
            want = np.array([_expected(op, fmod, int(x), int(d), dtype) for x, d in zip(a, b)], dtype)
            np.testing.assert_array_equal(got_np[y], want, err_msg=f"numpy {y}: {a} by {b}")
            np.testing.assert_array_equal(got_c[y], want, err_msg=f"C {y}: {a} by {b}")


def test_div_mod_match_onnxruntime_where_defined():
    rng = np.random.default_rng(11)
    a = rng.integers(-1000, 1000, 257).astype(np.int32)
    b = rng.integers(-40, 40, 257).astype(np.int32)
    b[b == 0] = 5
    nodes = [
        helper.make_node(op, ["a", "b"], [f"y{k}"], **({"fmod": f} if op == "Mod" else {}))
        for k, (op, f) in enumerate(DIV_MOD)
    ]
    model = _model(nodes, {"a": ("int32", [257]), "b": ("int32", [257])}, {f"y{k}": ("int32", [257]) for k in range(3)})
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = dict(zip([f"y{k}" for k in range(3)], sess.run(None, {"a": a, "b": b})))
    for backend in ("numpy", "c"):
        got = burnedge.Session(burnedge.load(model), backend=backend).run({"a": a, "b": b})
        for y in want:
            np.testing.assert_array_equal(got[y], want[y], err_msg=f"{backend} {y}")


CAST_TO = ("int8", "int32", "int64", "uint8", "uint16", "uint64")


def test_float_to_int_cast_nan_zero_and_saturating():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, -1e20, 2.9, -2.9, 0.5, -0.5, 127.5, 255.9], np.float32)
    nodes = [
        helper.make_node("Cast", ["x"], [f"y_{to}"], to=helper.np_dtype_to_tensor_dtype(np.dtype(to))) for to in CAST_TO
    ]
    model = _model(nodes, {"x": ("float32", [x.size])}, {f"y_{to}": (to, [x.size]) for to in CAST_TO})
    for backend in ("numpy", "c"):
        got = burnedge.Session(burnedge.load(model), backend=backend).run({"x": x})
        for to in CAST_TO:
            info = np.iinfo(to)
            want = [0 if np.isnan(v) else int(min(max(np.trunc(float(v)), info.min), info.max)) for v in x.tolist()]
            assert got[f"y_{to}"].dtype == np.dtype(to)
            assert got[f"y_{to}"].tolist() == want, (backend, to)


D = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
CASES = {  # op: (its feeds, expected); the indices 5, 7, 3 and -4 are out of range: zeros read, updates skipped
    "Gather": ({"i": np.array([1, 5, -4])}, [[3, 4], [0, 0], [0, 0]]),
    "GatherElements": ({"i": np.array([[0, 5], [-1, -4]])}, [[1, 0], [5, 0]]),
    "GatherND": ({"i": np.array([[0, 1], [3, 0], [2, -3]])}, [2, 0, 0]),
    "ScatterElements": ({"i": np.array([[2, 7]]), "u": np.array([[9, 9]], np.float32)}, [[1, 2], [3, 4], [9, 6]]),
    "ScatterND": ({"i": np.array([[1], [-4]]), "u": np.full((2, 2), 9, np.float32)}, [[1, 2], [9, 9], [5, 6]]),
}


def test_out_of_range_runtime_indices_read_zero_or_skip():
    feeds, nodes, ins, outs = {"d": D}, [], {"d": ("float32", [3, 2])}, {}
    for op, (extra, want) in CASES.items():
        names = ["d"] + [f"{k}_{op}" for k in extra]
        for k, v in extra.items():
            feeds[f"{k}_{op}"] = v
            ins[f"{k}_{op}"] = (v.dtype.name, list(v.shape))
        nodes.append(helper.make_node(op, names, [f"y_{op}"]))
        outs[f"y_{op}"] = ("float32", list(np.shape(want)))
    model = _model(nodes, ins, outs)
    for backend in ("numpy", "c"):
        got = burnedge.Session(burnedge.load(model), backend=backend).run(feeds)
        for op, (_, want) in CASES.items():
            np.testing.assert_array_equal(got[f"y_{op}"], np.array(want, np.float32), err_msg=f"{backend} {op}")


def test_exported_integer_div_mod_bundle_passes_its_own_verify(tmp_path):
    nodes = [
        helper.make_node(op, ["a", "b"], [f"y{k}"], **({"fmod": f} if op == "Mod" else {}))
        for k, (op, f) in enumerate(DIV_MOD)
    ]
    model = _model(nodes, {"a": ("int32", [64]), "b": ("int32", [64])}, {f"y{k}": ("int32", [64]) for k in range(3)})
    path = burnedge.export(burnedge.load(model), tmp_path / "m.bedge", test_vectors=2)
    code = "import sys, burnedge; sys.exit(0 if all(c.ok for c in burnedge.verify(sys.argv[1])) else 3)"
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, f"verify of the Div / Mod bundle: status {proc.returncode} {proc.stderr[-600:]}"
    vectors = bundle.read(path).vectors()
    assert vectors and all((ins["b"] != 0).all() for ins, _ in vectors)


@pytest.mark.parametrize(
    ("op", "indices"),
    [("Gather", [0, 3]), ("Gather", [-4]), ("GatherElements", [[0, 0], [3, 0]]), ("GatherND", [[0, 2]])],
)
def test_constant_indices_out_of_range_are_refused_at_import(op, indices):
    idx = numpy_helper.from_array(np.array(indices, np.int64), "i")
    node = helper.make_node(op, ["d", "i"], ["y"], name="pick")
    model = _model([node], {"d": ("float32", [3, 2])}, {"y": ("float32", None)})
    model.graph.initializer.append(idx)
    with pytest.raises(burnedge.ModelError, match=r"'pick'.*constant index -?\d+ is outside its axis"):
        burnedge.load(model)
