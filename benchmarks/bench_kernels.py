"""Micro-benchmark of the dense C kernels: single Conv / MatMul / Gemm nodes in burnedge (C backend) vs onnxruntime.

Both run on one thread (``--threads`` to change), interleaved run by run so that machine noise hits both alike;
prints the median time of each, the GFLOP/s burnedge reaches and the ratio burnedge / onnxruntime (below 1 is
faster). burnedge's time is the compiled model function alone (inputs already in the arena); its Session.run
time, with the Python-side copies, is shown beside it. ``--models`` also times whole models of the suite
(tests/models) the same way.

    python benchmarks/bench_kernels.py                 # every node case
    python benchmarks/bench_kernels.py -k dw -n 50     # cases whose name contains "dw", 50 runs each
    python benchmarks/bench_kernels.py --models resnet18 mobilenet_v2
    python benchmarks/bench_kernels.py --layers mobilenet_v2     # each Conv/Gemm/MatMul of a model on its own
    python benchmarks/bench_kernels.py --profile ds_cnn -n 500   # median time of each step of the generated code
    python benchmarks/bench_kernels.py --profile ds_cnn --cold   # the same with onnxruntime run between runs
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import burnedge

ROOT = Path(__file__).resolve().parent.parent


def conv_case(c, m, hw, k, stride=1, group=1, pad=None):
    """(name, model, flops) of one Conv on a 1 x c x hw x hw input."""
    pad = k // 2 if pad is None else pad
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((m, c // group, k, k)) * 0.1).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[pad] * 4, strides=[stride] * 2, group=group)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([node], "conv", [x], [y], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    out = (hw + 2 * pad - k) // stride + 1
    flops = 2 * m * (c // group) * k * k * out * out
    kind = "dw" if group == c and group > 1 else "conv"
    return f"{kind}{k}x{k}_s{stride}_{c}to{m}@{hw}", g, flops, {"x": (1, c, hw, hw)}


def matmul_case(m, k, n, batch=(), const_b=True):
    rng = np.random.default_rng(0)
    inits, inputs = [], [helper.make_tensor_value_info("a", TensorProto.FLOAT, [*batch, m, k])]
    shapes = {"a": (*batch, m, k)}
    if const_b:
        inits.append(numpy_helper.from_array((rng.standard_normal((k, n)) * 0.1).astype(np.float32), "b"))
    else:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [*batch, k, n]))
        shapes["b"] = (*batch, k, n)
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    g = helper.make_graph([node], "mm", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    nb = int(np.prod(batch)) if batch else 1
    name = f"matmul_{'x'.join(map(str, batch)) + 'x' if batch else ''}{m}x{k}x{n}{'' if const_b else '_rt'}"
    return name, g, 2 * nb * m * k * n, shapes


CASES = [
    conv_case(3, 64, 224, 7, stride=2),  # resnet18 stem
    conv_case(64, 64, 56, 3),
    conv_case(128, 128, 28, 3),
    conv_case(256, 256, 14, 3),
    conv_case(512, 512, 7, 3),
    conv_case(64, 128, 56, 1, stride=2, pad=0),
    conv_case(3, 32, 224, 3, stride=2),  # mobilenet_v2 stem
    conv_case(16, 96, 112, 1, pad=0),
    conv_case(96, 24, 56, 1, pad=0),
    conv_case(144, 144, 56, 3, group=144),
    conv_case(96, 96, 112, 3, stride=2, group=96),
    conv_case(960, 960, 7, 3, group=960),
    conv_case(320, 1280, 7, 1, pad=0),
    conv_case(64, 64, 25, 3, group=64),  # ds_cnn-like
    conv_case(64, 64, 25, 1, pad=0),
    matmul_case(1, 512, 1000),
    matmul_case(128, 256, 256),
    matmul_case(64, 64, 128, batch=(4,), const_b=False),
]


def time_interleaved(runs, n: int) -> list[float]:
    """Median seconds of each callable over n interleaved rounds (after warm-up)."""
    for _ in range(3):
        for r in runs:
            r()
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(n):
        for r, ts in zip(runs, times):
            t0 = time.perf_counter()
            r()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def raw_runner(session: burnedge.Session, feeds: dict):
    """Calls the compiled model function alone (inputs already in its arena): the kernels' time, no Python."""
    from burnedge.backends.c.runtime import _FFI, aligned_empty

    exe = session._exe
    arena = aligned_empty(exe.arena_bytes)
    for s in exe.inputs:
        arena[s.offset : s.offset + feeds[s.name].nbytes] = feeds[s.name].reshape(-1).view(np.uint8)
    ptr = _FFI.from_buffer("uint8_t[]", arena)
    return lambda: exe._lib.be_model_run(ptr, exe._wptr, exe.threads)


def sessions(path: Path, threads: int):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    ref = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    mine = burnedge.Session(burnedge.load(path), backend="c", threads=threads)
    return mine, ref


def bench_graph(name, graph, flops, shapes, n, threads, tmp: Path) -> None:
    path = tmp / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    rng = np.random.default_rng(1)
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    mine, ref = sessions(path, threads)
    got, want = mine.run(feeds)["y"], ref.run(None, feeds)[0]
    err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    raw, tm, tr = time_interleaved([raw_runner(mine, feeds), lambda: mine.run(feeds), lambda: ref.run(None, feeds)], n)
    print(
        f"{name:32s} burnedge {raw * 1e3:8.3f} ms {flops / raw / 1e9:6.1f} GF/s (session {tm * 1e3:8.3f}) | "
        f"ort {tr * 1e3:8.3f} ms {flops / tr / 1e9:6.1f} GF/s | ratio {raw / tr:5.2f} (session {tm / tr:5.2f}) | "
        f"err {err:.1e}",
        flush=True,
    )


def bench_model(name: str, n: int, threads: int) -> None:
    path = _suite_model(name)
    from suite import example_feeds

    feeds = example_feeds(path, 0)
    mine, ref = sessions(path, threads)
    want = ref.run(None, feeds)
    got = mine.run(feeds)
    err = max(
        float(np.abs(got[o.name] - w).max() / max(np.abs(w).max(), 1e-30)) for o, w in zip(ref.get_outputs(), want)
    )
    raw, tm, tr = time_interleaved([raw_runner(mine, feeds), lambda: mine.run(feeds), lambda: ref.run(None, feeds)], n)
    print(
        f"{name:20s} burnedge {raw * 1e3:9.3f} ms (session {tm * 1e3:9.3f}) | ort {tr * 1e3:9.3f} ms | "
        f"ratio {raw / tr:5.2f} (session {tm / tr:5.2f}) | err {err:.1e}",
        flush=True,
    )


def _suite_model(name: str) -> Path:
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    from suite import build_model

    return build_model(name, Path(os.environ.get("BURNEDGE_MODEL_CACHE") or tempfile.gettempdir() + "/burnedge-models"))


def profile_model(name: str, n: int, threads: int, interleave: bool = False) -> None:
    """Median time of every step of a suite model's generated code (profiled<c>: timed in C between steps); with
    `interleave`, onnxruntime runs the model between runs (caches as cold as in bench_models.py)."""
    path = _suite_model(name)
    from suite import example_feeds

    feeds = example_feeds(path, 0)
    sess = burnedge.Session(burnedge.load(path), backend="profiled<c>", threads=threads)
    ref = sessions(path, threads)[1] if interleave else None
    for _ in range(5):
        sess.run(feeds)
    sess.executable.times.clear()
    for _ in range(n):
        if ref is not None:
            ref.run(None, feeds)
        sess.run(feeds)
    rows = sess.executable.profile()
    for r in rows:
        print(f"step {r.step:>3d} {r.seconds * 1e6:8.2f} us {r.share:6.1%}  {r.label[:70]}")
    print(f"total    {sum(r.seconds for r in rows) * 1e6:8.2f} us  ({len(rows)} steps)")


def layer_cases(name: str):
    """Every Conv / Gemm / MatMul node of a suite model as its own one-node case (constant inputs kept)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(str(_suite_model(name))))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in [*g.input, *g.value_info]}
    cases = []
    for i, node in enumerate(g.node):
        known = all(x in inits or x in shapes for x in node.input)
        if node.op_type not in ("Conv", "Gemm", "MatMul") or not known:
            continue
        feeds = {x: shapes[x] for x in node.input if x and x not in inits}
        one = helper.make_node(node.op_type, list(node.input), ["y"], name=node.name)
        one.attribute.extend(node.attribute)
        ins = [helper.make_tensor_value_info(x, TensorProto.FLOAT, s) for x, s in feeds.items()]
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
        graph = helper.make_graph([one], f"l{i}", ins, [out], [inits[x] for x in node.input if x in inits])
        w = [shapes.get(x) or list(inits[x].dims) for x in node.input[:2]]
        if node.op_type == "Conv":
            o = shapes.get(node.output[0])
            flops = 2 * int(np.prod(o)) * int(np.prod(w[1][1:])) if o else 0
        else:
            flops = 2 * int(np.prod(w[0])) * (w[1][-1] if len(w[1]) > 1 else 1)
        tag = "x".join(map(str, w[1]))
        cases.append((f"{i:03d}_{node.op_type}_{tag}", graph, flops, {k: tuple(v) for k, v in feeds.items()}))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-n", type=int, default=20, help="timed runs per case")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", nargs="*", help="time these suite models (none given: the whole suite)")
    ap.add_argument("--layers", help="time each Conv/Gemm/MatMul of this suite model alone")
    ap.add_argument("--profile", help="time each step of this suite model's generated code")
    ap.add_argument("--cold", action="store_true", help="with --profile: run onnxruntime between runs")
    args = ap.parse_args()
    if args.profile:
        profile_model(args.profile, args.n, args.threads, args.cold)
        return
    if args.models is not None:
        sys.path.insert(0, str(ROOT / "tests" / "models"))
        from suite import MODELS

        for name in args.models or sorted(MODELS):
            bench_model(name, args.n, args.threads)
        return
    cases = layer_cases(args.layers) if args.layers else CASES
    with tempfile.TemporaryDirectory() as tmp:
        for name, graph, flops, shapes in cases:
            if args.k in name:
                bench_graph(name, graph, flops, shapes, args.n, args.threads, Path(tmp))


if __name__ == "__main__":
    main()
