"""Runs one ONNX backend node test on a burnedge backend and says how it went.

A test passes when every output has the expected dtype and shape and its values are within rtol 1e-3, atol 1e-7
of the expected ones (NaNs in the same places; exact equality for integers, booleans and strings).

Static plans need shape-determining values at compile time. When a model cannot be made static because a
shape depends on a graph input (a Reshape's shape, a Resize's scales, a Loop's trip count...), the harness binds
exactly the inputs that the importer's error names to the test's values, as a user would with `bind=`, and
retries; the data inputs stay run-time feeds. The expectations file records what was bound. On the C backend
every test is exported to an edge bundle and run from it, as a user would.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

import burnedge
from burnedge.errors import NotStaticError


class Outcome:
    """ok, or why not; `impossible` when burnedge refused the test as something no static plan can hold
    (StaticPlanError: sequences, strings on a numeric arena...), apart from what it merely lacks."""

    def __init__(self, ok: bool, reason: str = "", bound: tuple[str, ...] = (), impossible: bool = False):
        self.ok, self.reason, self.bound, self.impossible = ok, reason, bound, impossible

    @property
    def status(self) -> str:
        return "pass" if self.ok else "impossible" if self.impossible else "fail"


def _refused(exc: Exception, bound: tuple[str, ...] = ()) -> Outcome:
    line = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return Outcome(False, line, bound, impossible=isinstance(exc, burnedge.StaticPlanError))


def _read_tensor(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def _compare(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    if got.dtype != want.dtype:
        return f"output {name}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype == object or want.dtype.kind in "biuSU":
        if not np.array_equal(got, want):
            return f"output {name}: values differ"
        return None
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.allclose(g, w, rtol=1e-3, atol=1e-7, equal_nan=True):
        with np.errstate(invalid="ignore"):
            err = np.nanmax(np.abs(g - w)) if g.size else 0.0
        return f"output {name}: values differ (max abs error {err:.3g})"
    return None


RANDOM_OPS = {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial"}


def _random_note(proto: onnx.ModelProto, name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    """A random op's test cannot match: onnx wrote its expected values with numpy's global generator right after
    drawing the inputs (even for a seeded node), a stream no run of the model is on. Its outputs are checked for
    dtype and shape; values are not compared (an unseeded draw could match by chance: a flaky test)."""
    random = [n for n in proto.graph.node if n.op_type in RANDOM_OPS]
    if not random:
        return None
    if got.dtype != want.dtype or got.shape != want.shape:
        return _compare(name, got, want)
    seeded = all(any(a.name == "seed" for a in n.attribute) for n in random)
    return (f"output {name}: random draws ({'seeded' if seeded else 'unseeded'}); the test's values came "
                       f"from numpy's global stream after its inputs, which no run of the model is on")  # fmt: skip


def _run(model: burnedge.Model, backend: str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """numpy runs the model directly; the C backend runs it as users do: exported to a bundle, then opened."""
    if backend != "c":
        return burnedge.Session(model, backend=backend).run(feeds)
    with tempfile.TemporaryDirectory() as tmp:
        path = burnedge.export(model, Path(tmp) / "model.bedge", test_vectors=0, include_source=False)
        return burnedge.Session(path, backend="c").run(feeds)


def run_node_test(folder: Path, backend: str = "numpy") -> Outcome:
    model_path = folder / "model.onnx"
    proto = onnx.load(str(model_path), load_external_data=False)
    tensor_inputs = {vi.name for vi in proto.graph.input if vi.type.HasField("tensor_type")} - {
        i.name for i in proto.graph.initializer
    }
    non_tensor = [vi.name for vi in proto.graph.input if not vi.type.HasField("tensor_type")]
    non_tensor += [vi.name for vi in proto.graph.output if not vi.type.HasField("tensor_type")]
    if non_tensor:  # its data files are not TensorProtos: the import alone must refuse it, saying why
        try:
            burnedge.load(model_path)
        except burnedge.BurnedgeError as exc:
            return _refused(exc)
        return Outcome(False, f"crash: non-tensor values {non_tensor} were not refused at import")
    datasets = sorted(folder.glob("test_data_set_*"))
    bound: tuple[str, ...] = ()
    for ds in datasets:
        names = [vi.name for vi in proto.graph.input if vi.name in tensor_inputs]
        feeds = {n: _read_tensor(ds / f"input_{i}.pb") for i, n in enumerate(names) if (ds / f"input_{i}.pb").exists()}
        try:
            while True:
                try:
                    model = burnedge.load(model_path, bind={n: feeds[n] for n in bound})
                    break
                except NotStaticError as exc:
                    more = tuple(n for n in exc.inputs if n in feeds and n not in bound)
                    if not more or set(exc.inputs) - set(feeds):
                        raise
                    bound += more
            outs = _run(model, backend, {n: a for n, a in feeds.items() if n not in bound})
        except burnedge.BurnedgeError as exc:
            return _refused(exc, bound)
        except Exception as exc:  # a bug in burnedge: still recorded, never hidden
            return Outcome(False, f"crash {type(exc).__name__}: {exc}".splitlines()[0][:300], bound)
        for i, out in enumerate(proto.graph.output):
            want = _read_tensor(ds / f"output_{i}.pb")
            problem = _random_note(proto, out.name, outs[out.name], want) or _compare(out.name, outs[out.name], want)
            if problem:
                return Outcome(False, problem, bound)
    return Outcome(True, "", bound)
