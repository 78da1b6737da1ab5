"""The OpenCL backend on this machine's OpenCL device (PoCL in CI): fusion into single kernels, run_async against
run, bundles whose program is built once per device, and the one-line error without a platform.

References: numpy (erf) and the numpy backend, which nobody here wrote as OpenCL."""

from __future__ import annotations

import concurrent.futures
import math
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.backends import lookup
from burnedge.errors import BurnedgeError

pytest.importorskip("pyopencl", reason="the OpenCL backend needs the opencl extra")
opencl = lookup("opencl")
if opencl.unavailable_reason():
    pytest.skip(f"no OpenCL device: {opencl.unavailable_reason()}", allow_module_level=True)

from burnedge.backends.opencl import native, runtime  # noqa: E402
from burnedge.backends.opencl.emit import OpenCLError  # noqa: E402
from burnedge.backends.opencl.staging import PendingRun  # noqa: E402


def _model(nodes, inits, shape=(2, 3, 8)) -> burnedge.Model:
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _gelu_model() -> burnedge.Model:
    """GELU as written in the tensor API: x * (erf(x / sqrt(2)) + 1) / 2, five ONNX nodes."""
    c = [
        helper.make_tensor("s2", TensorProto.FLOAT, [], [math.sqrt(2.0)]),
        helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
    ]
    nodes = [
        helper.make_node("Div", ["x", "s2"], ["a"]),
        helper.make_node("Erf", ["a"], ["b"]),
        helper.make_node("Add", ["b", "one"], ["c"]),
        helper.make_node("Mul", ["x", "c"], ["d"]),
        helper.make_node("Div", ["d", "two"], ["y"]),
    ]
    return _model(nodes, c)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x.astype(np.float64))


def test_gelu_chain_runs_as_one_kernel():
    s = burnedge.Session(_gelu_model(), backend="opencl")
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    exe = s.executable
    assert exe.kernel_count == 1
    _, ran = exe.kernel_times({"x": x})  # what the device ran: one kernel, timed by the profiling queue
    assert len(ran) == 1 and ran[0][1] >= 0
    want = x * (_erf(x / math.sqrt(2.0)) + 1) / 2
    np.testing.assert_allclose(s.run({"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def _conv_model() -> burnedge.Model:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    fc = rng.standard_normal((10, 8 * 4 * 4)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"]),
    ]
    inits = [onnx.numpy_helper.from_array(a, n) for a, n in ((w, "w"), (b, "b"), (fc, "fc"))]
    return _model(nodes, inits, shape=(2, 3, 8, 8))


def test_conv_epilogue_is_fused_and_matches_numpy():
    model = _conv_model()
    s = burnedge.Session(model, backend="opencl")
    assert s.executable.kernel_count == 3  # conv+bias+relu, gemm, softmax (flatten is a view)
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = burnedge.Session(model, backend="numpy").run({"x": x})["y"]
    np.testing.assert_allclose(s.run({"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_run_async_queues_and_matches_run():
    model = _conv_model()
    a, b = burnedge.Session(model, backend="opencl"), burnedge.Session(model, backend="opencl")
    assert a.executable.context is b.executable.context  # sessions share the process's context
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 3, 8, 8)).astype(np.float32) for _ in range(6)]
    sync = [a.run({"x": x})["y"] for x in xs]
    futures = [a.run_async({"x": x}) for x in xs] + [b.run_async({"x": x}) for x in xs]
    assert all(isinstance(f, concurrent.futures.Future) for f in futures)
    results = [f.result(timeout=60)["y"] for f in futures]
    for got, want in zip(results, sync + sync):
        assert np.array_equal(got, want)  # the same kernels on the same inputs: identical bits
    assert all(f.done() for f in futures)


def test_runs_enqueue_through_the_c_api_with_the_bits_of_pyopencl_calls(monkeypatch):
    """A run's launches go straight to the OpenCL library pyopencl loaded: recorded once as a command buffer where
    the device has cl_khr_command_buffer (PoCL has), else one C call per kernel; the outputs equal those of the
    same run enqueued through pyopencl, with more runs queued than there are pinned slots, and numpy's within 1e-4."""
    model = _conv_model()
    x = np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype(np.float32)
    xs = [x, -x, 2 * x, x + 1, x - 1, 0.5 * x]  # six runs in flight: more than the four pinned slots
    got = {}
    for mode in ("1", "calls", "0"):
        monkeypatch.setenv("BURNEDGE_OPENCL_NATIVE", mode)
        monkeypatch.setattr(native, "_lib", {})
        s = burnedge.Session(model, backend="opencl")
        exe = s.executable
        assert exe.native == (mode != "0")
        if mode == "1" and "cl_khr_command_buffer" in exe.device.extensions.split():
            assert exe._native.recorded, "the device has command buffers but the run was not recorded as one"
        if mode == "calls":
            assert not exe._native.recorded
        futures = [s.run_async({"x": v}) for v in xs]
        got[mode] = [f.result(timeout=60)["y"] for f in futures]
    for mode in ("1", "calls"):
        for a, b in zip(got[mode], got["0"]):
            assert np.array_equal(a, b)
    assert not np.array_equal(got["1"][0], got["1"][1])  # each queued run read its own input
    ref = burnedge.Session(model, backend="numpy")
    for v, y in zip(xs, got["1"]):
        np.testing.assert_allclose(y, ref.run({"x": v})["y"], rtol=1e-4, atol=1e-4)


def test_a_run_the_device_failed_is_a_future_with_its_error():
    """A run whose completion event reports a failure: its future raises the error (once, to every caller), and
    the slot it held is free for the next run."""

    class Failed:
        def wait(self):
            raise OpenCLError("OpenCL run failed on the device (status -5)")

        def complete(self):
            return True

    run = PendingRun(Failed(), lambda: pytest.fail("outputs collected from a failed run"))
    assert run.done()
    for _ in range(2):
        with pytest.raises(OpenCLError, match="status -5"):
            run.result()


def test_run_async_checks_feeds():
    s = burnedge.Session(_conv_model(), backend="opencl")
    with pytest.raises(BurnedgeError, match="x"):
        s.run_async({"x": np.zeros((1, 3, 8, 8), np.float32)})


def test_bundle_program_is_built_once_per_device(tmp_path, monkeypatch):
    monkeypatch.setenv("BURNEDGE_HOME", str(tmp_path / "home"))
    path = burnedge.export(_conv_model(), tmp_path / "m.bedge", backend="opencl", test_vectors=1)
    bundle = burnedge.bundle.read(path)
    assert "opencl/model.cl" in bundle.manifest["files"] and "__kernel" in bundle.member("opencl/model.cl").decode()
    runtime._state.pop("programs", None)  # forget built programs: only the disk cache may help
    before = runtime.builds()
    first = burnedge.Session(path, backend="opencl")
    assert runtime.builds() == before + 1
    runtime._state.pop("programs", None)
    second = burnedge.Session(path, backend="opencl")
    assert runtime.builds() == before + 1  # the second load read the device binary from the cache
    ((feeds, outs),) = bundle.vectors()
    for s in (first, second):
        got = s.run(feeds)
        for name, want in outs.items():
            np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6)


def test_no_platform_is_one_line_naming_what_to_install(monkeypatch):
    monkeypatch.setattr(runtime, "_state", {"builds": 0})
    monkeypatch.setattr(runtime.cl, "get_platforms", lambda: [])
    why = opencl.unavailable_reason()
    assert "\n" not in why and "pocl-opencl-icd" in why
    with pytest.raises(BurnedgeError, match="pocl-opencl-icd"):
        burnedge.Session(_gelu_model(), backend="opencl")


def test_checked_and_profiled_run_step_by_step():
    x = np.random.default_rng(4).standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = burnedge.Session(_conv_model(), backend="numpy").run({"x": x})["y"]
    for name in ("checked<opencl>", "profiled<opencl>"):
        got = burnedge.Session(_conv_model(), backend=name).run({"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_tuning_is_measured_once_per_device(tmp_path, monkeypatch):
    from burnedge.backends.opencl import OpenCLBackend
    from burnedge.backends.opencl.tune import Tuner
    from burnedge.compiler import compile  # noqa: A004

    monkeypatch.setenv("BURNEDGE_HOME", str(tmp_path))
    monkeypatch.setenv("BURNEDGE_OPENCL_OPTIONS", "-cl-std=CL1.2 -cl-opt-disable")  # quick builds of candidates
    measured = []
    real = Tuner.choose

    def counting(self, key, variants, weight_bytes):
        pick = real(self, key, variants, weight_bytes)
        measured.append((key, pick, len(variants)))
        return pick

    monkeypatch.setattr(Tuner, "choose", counting)
    monkeypatch.setattr(
        sys.modules["burnedge.backends.opencl.emit"], "TUNE_FLOPS", 0
    )  # this model's GEMMs are small enough to skip otherwise
    backend = OpenCLBackend(tune=True)
    first = compile(_conv_model(), backend).executable
    assert [k for k, _, _ in measured] == ["gemm:8x32x27x1", "gemm:2x10x128x1"]  # conv, then the dense layer
    assert all(n > 1 for _, _, n in measured)
    table = next((tmp_path / "cache" / "opencl" / "tune").glob("*.json")).read_text()
    assert all(f'"{k}": "{p}"' in table for k, p, _ in measured)
    measured.clear()
    second = compile(_conv_model(), backend).executable  # the table answers: nothing measured again
    assert measured == [] and second.source == first.source


def test_gemm_split_over_k_matches_numpy(monkeypatch):
    """A layer whose 32 x 16 outputs would leave a GPU's compute units idle sums 4 slices of K = 1152 (scratch in
    the arena, a second kernel adds them); PoCL reaches that path when told the device has 64 compute units."""
    monkeypatch.setenv("BURNEDGE_OPENCL_COMPUTE_UNITS", "64")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((32, 128, 3, 3)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    inits = [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")]
    model = _model(nodes, inits, shape=(1, 128, 4, 4))
    s = burnedge.Session(model, backend="opencl")
    assert s.executable.kernel_count == 2 and s.plan.scratch  # slices, then their sum with the epilogue
    x = rng.standard_normal((1, 128, 4, 4)).astype(np.float32)
    want = burnedge.Session(model, backend="numpy").run({"x": x})["y"]
    np.testing.assert_allclose(s.run({"x": x})["y"], want, rtol=1e-5, atol=1e-4)
