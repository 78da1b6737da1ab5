"""The kernel library and the generated C of a few models built with -fsanitize=address,undefined and run on their
test vectors by the (equally sanitized) standalone runner: any out-of-bounds access, use after free, signed
overflow, misaligned load or shift out of range aborts with a report instead of passing silently.

The models cover the kernel families the fuzz seeds and the integer rules use: a dense layer with its fused
epilogue, a padded convolution and a pool, shape arithmetic folded into a reshape, integer Div / Mod and an
out-of-range Gather (burnedge/ops/_intmath.py), a float -> int Cast of NaN. The generated C comes from each bundle
(src/model.c), the kernel library from the package (the portable reference set, built once for all models).
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge import bundle
from burnedge.backends.c.standalone import RUNNER_SOURCE
from burnedge.emulate import stage
from burnedge.targets import get
from tests.backends.test_runner_hardening import CC

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")
SANITIZE = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
CORPUS = Path(__file__).parents[1] / "fuzz" / "corpus" / "onnx"
KERNELS = Path(burnedge.__file__).parent / "backends" / "c" / "kernels"


def _integer_model():
    i32 = TensorProto.INT32
    nodes = [
        helper.make_node("Div", ["a", "b"], ["q"]),
        helper.make_node("Mod", ["a", "b"], ["r"], fmod=1),
        helper.make_node("Gather", ["t", "i"], ["g"], axis=0),
        helper.make_node("Cast", ["f"], ["c"], to=i32),
    ]
    ins = [
        helper.make_tensor_value_info("a", i32, [8]),
        helper.make_tensor_value_info("b", i32, [8]),
        helper.make_tensor_value_info("t", TensorProto.FLOAT, [3, 2]),
        helper.make_tensor_value_info("i", TensorProto.INT64, [4]),
        helper.make_tensor_value_info("f", TensorProto.FLOAT, [5]),
    ]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in (("q", i32), ("r", i32), ("g", 1), ("c", i32))]
    return helper.make_model(helper.make_graph(nodes, "ints", ins, outs), opset_imports=[helper.make_opsetid("", 17)])


MODELS = {
    "mlp": lambda: burnedge.load(CORPUS / "mlp.onnx"),
    "conv": lambda: burnedge.load(CORPUS / "conv.onnx"),
    "shape": lambda: burnedge.load(CORPUS / "shape.onnx"),
    "ints": lambda: burnedge.load(_integer_model()),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("asan") / "runner"
    subprocess.run([CC, *SANITIZE, "-std=c11", str(RUNNER_SOURCE), "-o", str(out), "-ldl", "-lm"], check=True)
    return out


@pytest.fixture(scope="module")
def kernels(tmp_path_factory) -> list[Path]:
    """The portable kernel library (kernels/reference, the C spec of every kernel) compiled once, sanitized, at
    -O0 (three times faster to build than -O1; the sanitizers check the same accesses), on every core."""
    folder = tmp_path_factory.mktemp("kernels")
    sources = sorted((KERNELS / "reference").glob("*.c"))
    cmd = [CC, *SANITIZE, "-O0", "-std=c11", "-fPIC", "-Wno-unknown-pragmas", "-I", str(KERNELS), "-I"]

    def build(src: Path) -> Path:
        obj = folder / (src.stem + ".o")
        subprocess.run([*cmd, str(KERNELS / "reference"), "-c", str(src), "-o", str(obj)], check=True)
        return obj

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return list(pool.map(build, sources))


def _sanitized_library(b, kernels: list[Path], folder: Path) -> Path:
    """The bundle's generated C compiled with the sanitizers and linked with the sanitized kernels into model.so."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.c").write_bytes(b.member("src/model.c"))
    out = folder / "model.so"
    cmd = [CC, *SANITIZE, "-std=c11", "-shared", "-fPIC", "-Wno-unknown-pragmas", "-I", str(KERNELS)]
    subprocess.run([*cmd, str(folder / "model.c"), *map(str, kernels), "-o", str(out), "-lm"], check=True)
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_generated_c_and_kernels_run_clean_under_asan_and_ubsan(runner, kernels, name, tmp_path):
    path = burnedge.export(MODELS[name](), tmp_path / f"{name}.bedge", test_vectors=2)
    b = bundle.read(path)
    job = stage(b, get("host"), tmp_path / "job")
    (tmp_path / "job" / "runner").unlink()
    (tmp_path / "job" / "model.so").unlink()
    _sanitized_library(b, kernels, tmp_path / "build").replace(tmp_path / "job" / "model.so")
    if name == "ints":
        _edge_vector(tmp_path / "job")
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
    r = subprocess.run([str(runner), str(job)], capture_output=True, text=True, timeout=120, env=env)
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0 and "PASS" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


def _edge_vector(job: Path) -> None:
    """Vector 0 of the integer model rewritten with INT_MIN / -1, x / 0, an index out of range and NaN, and the
    references burnedge's rule gives (computed by the numpy reference)."""
    a = np.array([-(2**31), 7, -7, 5, 0, 1, 2**31 - 1, -1], np.int32)
    b = np.array([-1, 0, 0, -3, 0, -1, -1, 2], np.int32)
    t = np.arange(6, dtype=np.float32).reshape(3, 2)
    i = np.array([0, 5, -4, 2], np.int64)
    f = np.array([np.nan, np.inf, -3.7, 1e10, 2.5], np.float32)
    feeds = {"a": a, "b": b, "t": t, "i": i, "f": f}
    sess = burnedge.Session(MODELS["ints"](), backend="numpy")
    refs = sess.run(feeds)
    vec = job / "vectors" / "0"
    for k, n in enumerate(("a", "b", "t", "i", "f")):
        (vec / f"in_{k}.bin").write_bytes(feeds[n].tobytes())
    for k, n in enumerate(("q", "r", "g", "c")):
        (vec / f"ref_{k}.bin").write_bytes(np.ascontiguousarray(refs[n]).tobytes())
