"""burnedge's OpenCL backend against PyTorch on CUDA (eager and CUDA graphs), side by side in one process.

Models: the suite's ResNet-18, MobileNetV2, transformer encoder and KWS net (DS-CNN), each at batch 1 and 32.
The PyTorch modules are the suite's own (tests/models/<name>/gen.py, same seed and weights); the ONNX file
burnedge compiles is exported from the same module at the same batch. Both run IEEE float32 (TF32 off).

Columns, all per run, medians of REPEATS blocks of RUNS back-to-back runs with inputs already on the device:
- torch eager / torch graph: the module, and its CUDA-graph replay;
- opencl: burnedge's kernels replayed on its in-order queue over its arena (`CLModel.replay`);
- opencl run(): one synchronous `Session.run` from host arrays to host arrays (writes, kernels, reads, wait);
- TFLOP/s: the GEMM and convolution flops of a run over the opencl time;
- async: N `run_async` calls queued then collected, against N synchronous `run` calls (ms for all N; medians of
  ASYNC_ROUNDS alternating rounds of each, which one goes first alternating too: on a small net the two differ by
  a few percent, less than the shared host's noise between rounds).

    mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && export OCL_ICD_VENDORS=/tmp/icd
    python benchmarks/bench_gpu.py [--models resnet18,mobilenet_v2,transformer,ds_cnn] [--batches 1,32]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.models import suite  # noqa: E402

MODELS = ("resnet18", "mobilenet_v2", "transformer", "ds_cnn")
RUNS, REPEATS, ASYNC_N, ASYNC_ROUNDS = 50, 5, 20, 21


def _icd() -> None:
    """Points the OpenCL loader at NVIDIA's driver when nothing else says where platforms are."""
    if "OCL_ICD_VENDORS" not in os.environ:
        icd = Path(tempfile.gettempdir()) / "icd"
        icd.mkdir(exist_ok=True)
        (icd / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
        os.environ["OCL_ICD_VENDORS"] = str(icd)


def _module_and_inputs(name: str):
    """The suite's torch module of `name` and its example inputs, as its gen.py exports them."""
    import torch

    gen = suite._load_gen(suite.ROOT / name / "gen.py")
    seen = {}
    real = torch.onnx.export

    def capture(model, args, f=None, **kwargs):
        seen.update(model=model, args=args, kwargs=kwargs)

    torch.onnx.export = capture
    try:
        gen.build(Path(os.devnull))
    finally:
        torch.onnx.export = real
    return seen["model"].eval(), tuple(seen["args"]), seen["kwargs"]


def _batched(args, batch: int):
    return tuple(a.repeat(batch, *([1] * (a.dim() - 1))) for a in args)


def _export(model, args, kwargs, folder: Path) -> Path:
    import torch

    path = folder / "model.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), **kwargs)
    return path


def _timed(fn, sync) -> float:
    """Median ms per run of REPEATS blocks of RUNS calls of `fn`, `sync()` closing each block."""
    fn()
    sync()
    blocks = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(RUNS):
            fn()
        sync()
        blocks.append((time.perf_counter() - t0) / RUNS * 1e3)
    return statistics.median(blocks)


def _replayed(exe) -> float:
    """Median ms per run of REPEATS blocks of RUNS runs queued back to back with one wait (as torch's blocks)."""
    exe.replay(3)
    blocks = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        exe.replay(RUNS)
        blocks.append((time.perf_counter() - t0) / RUNS * 1e3)
    return statistics.median(blocks)


def _graph_ms(model, args) -> float:
    """ms per replay of `model(*args)` captured as one CUDA graph (after warm-up on a side stream)."""
    import torch

    with torch.no_grad():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model(*args)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model(*args)
    return _timed(graph.replay, torch.cuda.synchronize)


def bench(name: str, batch: int, device: str = "cuda") -> dict[str, object]:
    import torch

    import burnedge

    model, args, kwargs = _module_and_inputs(name)
    args = _batched(args, batch)
    with tempfile.TemporaryDirectory() as tmp:
        path = _export(model, args, kwargs, Path(tmp))
        t0 = time.perf_counter()
        session = burnedge.Session(burnedge.load(path), backend="opencl")
        build_s = time.perf_counter() - t0
    names = [i.name for i in session.inputs]
    feeds = {n: a.numpy() for n, a in zip(names, args)}
    exe = session.executable

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    cuda_model = model.to(dev)
    cuda_args = tuple(a.to(dev) for a in args)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    with torch.no_grad():
        want = cuda_model(*cuda_args)
        want = (want[0] if isinstance(want, (tuple, list)) else want).float().cpu().numpy()
        got = next(iter(session.run(feeds).values()))
        err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))

        eager = _timed(lambda: cuda_model(*cuda_args), sync)
    graphed = _graph_ms(cuda_model, cuda_args) if cuda else float("nan")

    ours = _timed(lambda: exe.replay(1), lambda: None)  # replay waits itself: per-run latency, no overlap
    ours_queued = _replayed(exe)
    ours_run = _timed(lambda: session.run(feeds), lambda: None)

    sync_rounds, async_rounds, queued_rounds, outs = [], [], [], []

    def synchronous() -> None:
        t0 = time.perf_counter()
        for _ in range(ASYNC_N):
            session.run(feeds)
        sync_rounds.append((time.perf_counter() - t0) * 1e3)

    def queued() -> None:
        t0 = time.perf_counter()
        futures = [session.run_async(feeds) for _ in range(ASYNC_N)]
        queued_rounds.append((time.perf_counter() - t0) * 1e3)  # the host's share: queueing, waiting for a slot
        outs.extend(f.result() for f in futures)
        async_rounds.append((time.perf_counter() - t0) * 1e3)

    for i in range(ASYNC_ROUNDS):  # alternating rounds: the host's noise falls on both alike
        for one in (synchronous, queued) if i % 2 == 0 else (queued, synchronous):
            one()
    sync_ms, async_ms = statistics.median(sync_rounds), statistics.median(async_rounds)
    queued_ms = statistics.median(queued_rounds)
    same = all(np.array_equal(next(iter(o.values())), got) for o in outs)
    return {
        "model": name,
        "batch": batch,
        "eager": eager,
        "graph": graphed,
        "opencl": ours_queued,
        "opencl_1": ours,
        "opencl_run": ours_run,
        "tflops": exe.flops / (ours_queued * 1e-3) / 1e12,
        "graph_tflops": exe.flops / (graphed * 1e-3) / 1e12,
        "kernels": exe.kernel_count,
        "sync_ms": sync_ms,
        "async_ms": async_ms,
        "queued_ms": queued_ms,
        "same": same,
        "err": err,
        "build_s": build_s,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--torch-device", default="cuda", help="cpu: a smoke test without CUDA (no graph column)")
    a = ap.parse_args()
    _icd()
    os.environ.setdefault("BURNEDGE_HOME", str(Path(tempfile.gettempdir()) / "burnedge-home"))
    import torch

    from burnedge.backends.opencl import runtime

    _, cl_dev = runtime.device()
    rows = []
    for name in a.models.split(","):
        for batch in (int(b) for b in a.batches.split(",")):
            r = bench(name, batch, a.torch_device)
            rows.append(r)
            print(
                f"{name} b{batch}: eager {r['eager']:.3f} graph {r['graph']:.3f} opencl {r['opencl']:.3f} "
                f"(one {r['opencl_1']:.3f}, run() {r['opencl_run']:.3f}) ms, {r['kernels']} kernels, "
                f"{ASYNC_N} run_async queued in {r['queued_ms']:.2f} ms, done in {r['async_ms']:.2f} (same bits: "
                f"{r['same']}), err {r['err']:.2g}, build {r['build_s']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    gpu = torch.cuda.get_device_name() if a.torch_device == "cuda" else "torch on the CPU"
    print(
        f"\n{datetime.date.today().isoformat()}, {gpu} (CUDA {torch.version.cuda}, "
        f"torch {torch.__version__}); OpenCL: {cl_dev.name}, {cl_dev.platform.version}, driver "
        f"{cl_dev.driver_version}; float32, TF32 off; ms per run, median of {REPEATS} x {RUNS} runs; "
        f"run_async / run: medians of {ASYNC_ROUNDS} alternating rounds of {ASYNC_N} runs each\n"
    )
    print(
        "| model | batch | torch eager | torch CUDA graph | burnedge OpenCL | OpenCL / graph | OpenCL run() "
        "| OpenCL TFLOP/s | graph TFLOP/s | kernels | " + f"{ASYNC_N} run_async / {ASYNC_N} run (ms) | async / sync | max rel err |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['model']} | {r['batch']} | {r['eager']:.3f} | {r['graph']:.3f} | {r['opencl']:.3f} "
            f"| {r['opencl'] / r['graph']:.2f}x | {r['opencl_run']:.3f} | {r['tflops']:.2f} | "
            f"{r['graph_tflops']:.2f} | {r['kernels']} | {r['async_ms']:.2f} / {r['sync_ms']:.2f}"
            f"{'' if r['same'] else ' (DIFFERENT)'} | {r['async_ms'] / r['sync_ms']:.3f} | {r['err']:.1e} |"
        )


if __name__ == "__main__":
    main()
