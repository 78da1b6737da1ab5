"""burnedge int8 against onnxruntime int8 and burnedge float on the model suite, side by side in one process.

For each model: onnxruntime's `quantize_static` makes a QDQ model (per-channel int8 weights, int8 activations,
calibrated on a few example feeds); onnxruntime runs it (its optimizer turns the QDQ pairs into its int8 kernels),
and burnedge imports the same file (its QDQ import, burnedge.quantize.qdq, turns the islands into int8 ops) and runs
it on the C backend; burnedge float runs the float model. All engines warm up, then their runs alternate so machine
noise hits them alike; the table gives median latencies, the ratios burnedge int8 / onnxruntime int8 and burnedge
int8 / burnedge float (below 1: the first is faster), the int8 GOP/s of each (2 x the multiply-adds of the float
model's Conv/Gemm/MatMul nodes per run), and how far burnedge's int8 output is from onnxruntime's (max abs
difference over max |output|) with how many ops stayed in float.

    python benchmarks/bench_int8.py [--models ds_cnn,resnet8] [--threads 1] [--runs 50] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.models import suite  # noqa: E402

INT8_OPS = {"QConv", "QMatMul", "QAdd", "QMul", "QLut", "QSoftmax", "QAvgPool", "QGlobalAvgPool", "QRequant"}
MOVING = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Concat", "Transpose", "MaxPool", "Slice",
          "GlobalMaxPool", "QuantizeLinear", "DequantizeLinear"}  # fmt: skip


def _ort_session(path: Path, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def qdq_model(name: str, cache: Path, batches: int = 8) -> Path:
    """onnxruntime's QDQ int8 model of suite model `name` (per-channel weights), cached beside the float model."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    path = suite.build_model(name, cache)
    out = path.with_suffix(".qdq.onnx")
    if out.exists():
        return out

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([suite.example_feeds(path, seed=s) for s in range(1, batches + 1)])

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre, q = Path(tmp) / "pre.onnx", Path(tmp) / "q.onnx"
        quant_pre_process(str(path), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(q), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)  # fmt: skip
        os.replace(q, out)
    return out


def macs(graph) -> int:
    """Multiply-adds of the Conv / Gemm / MatMul nodes of a float graph (static shapes)."""
    total = 0
    for node in graph.nodes:
        if node.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        out = graph.values[node.outputs[0]].shape
        w = graph.values[node.inputs[1]].shape
        if node.op_type == "Conv":
            total += math.prod(out) * math.prod(w[1:])
        elif node.op_type == "Gemm":
            a = graph.values[node.inputs[0]].shape
            total += math.prod(out) * (a[0] if node.attrs.get("transA", 0) else a[1])
        else:
            total += math.prod(out) * graph.values[node.inputs[0]].shape[-1]
    return total


def bench(name: str, threads: int, runs: int, cache: Path) -> dict[str, object]:
    import burnedge

    path = suite.build_model(name, cache)
    qpath = qdq_model(name, cache)
    feeds = suite.example_feeds(path, seed=0)
    fmodel = burnedge.load(path)
    engines = {
        "be_int8": burnedge.Session(burnedge.load(qpath), backend="c", threads=threads),
        "ort_int8": _ort_session(qpath, threads),
        "be_f32": burnedge.Session(fmodel, backend="c", threads=threads),
        "ort_f32": _ort_session(path, threads),
    }
    names = [o.name for o in engines["ort_int8"].get_outputs()]
    calls = {
        k: (lambda e=e: e.run(feeds)) if k.startswith("be") else (lambda e=e: e.run(names, feeds))
        for k, e in engines.items()
    }
    got, want = calls["be_int8"](), calls["ort_int8"]()
    err = max(float(np.max(np.abs(got[n] - w)) / max(float(np.max(np.abs(w))), 1e-30)) for n, w in zip(names, want))
    steps = engines["be_int8"]._exe.plan.steps
    ops = Counter(s.op_type for s in steps)
    float_ops = sum(c for op, c in ops.items() if op not in INT8_OPS and op not in MOVING)
    for _ in range(3):
        for f in calls.values():
            f()
    times: dict[str, list[float]] = {k: [] for k in calls}
    for _ in range(runs):
        for k, f in calls.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    gops = 2 * macs(fmodel.graph) / 1e9
    return {
        "model": name,
        "threads": threads,
        **{f"{k}_ms": v * 1e3 for k, v in med.items()},
        "int8_vs_ort_int8": med["be_int8"] / med["ort_int8"],
        "int8_vs_be_f32": med["be_int8"] / med["be_f32"],
        "be_int8_gops": gops / med["be_int8"],
        "ort_int8_gops": gops / med["ort_int8"],
        "int8_ops": sum(c for op, c in ops.items() if op in INT8_OPS),
        "float_ops": float_ops,
        "max_rel_diff_vs_ort": err,
    }


COLS = ["model", "threads", "be_int8_ms", "ort_int8_ms", "be_f32_ms", "ort_f32_ms", "int8_vs_ort_int8",
        "int8_vs_be_f32", "be_int8_gops", "ort_int8_gops", "int8_ops", "float_ops", "max_rel_diff_vs_ort"]  # fmt: skip


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e-2 else f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="ds_cnn,mobilenet_v1_025,resnet8,fc_autoencoder,mobilenet_v2,resnet18")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    cache = Path(os.environ.get("BURNEDGE_MODEL_CACHE") or tempfile.gettempdir() + "/burnedge-models")
    rows = []
    for name in args.models.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            try:
                rows.append(bench(name, threads, args.runs, cache))
            except Exception as e:  # one model's failure should not hide the others
                print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            if not args.markdown:
                print("  ".join(f"{c}={_fmt(rows[-1][c])}" for c in COLS), flush=True)
    if args.markdown:
        print("| " + " | ".join(COLS) + " |")
        print("|" + "---|" * len(COLS))
        for r in rows:
            print("| " + " | ".join(_fmt(r[c]) for c in COLS) + " |")


if __name__ == "__main__":
    main()
