"""Instructions per inference on the Raspberry Pi 4 and 5 without a board: each suite model, fp32 and int8, as a
bare-metal AArch64 image run by QEMU system mode under -icount (benchmarks/arm_icount: exact and deterministic),
with the portable C kernels, the NEON set and, on the rpi5 for int8, the sdot set; every run's outputs are
checked against the bundle's references (int8: bit for bit).

Efficiency is against the ISA's MAC limit: the model's multiply-adds (Conv/Gemm/MatMul/recurrent, of the float
graph) / (instructions x the multiply-adds of the ISA's widest instruction: fp32 `fmla .4s` 4; int8 `smlal .8h`
(int8 x int8 into int16 lanes) 8 on armv8.0 (rpi4), `sdot .4s` 16 with dotprod (rpi5)). It is an instruction
count, not time: a load, an address increment or a requantisation step counts as much as an sdot.

    python benchmarks/bench_arm_icount.py [--models ds_cnn,resnet8] [--precisions fp32,int8] [--json out.json]
                                          [--profile N]   (each run's N costliest plan steps, in instructions)

Default models: the suite without ResNet-18 and MobileNetV2 (each adds minutes of emulation; name them to get
them). Prints the markdown table of the README.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import burnedge  # noqa: E402
from benchmarks.arm_icount.image import VARIANTS, measure, step_profile  # noqa: E402
from burnedge.analysis import macs  # noqa: E402
from tests.emulation.matrix import model_cache  # noqa: E402
from tests.models import suite  # noqa: E402

PEAK = {("fp32", "rpi4"): 4, ("fp32", "rpi5"): 4, ("int8", "rpi4"): 8, ("int8", "rpi5"): 16}
BEST_INSN = {"fp32": "fmla", ("int8", "rpi4"): "smlal", ("int8", "rpi5"): "sdot"}
DEFAULT_MODELS = ("ds_cnn", "fc_autoencoder", "lstm", "mobilenet_v1_025", "resnet8", "transformer")


def model_macs(onnx_path: Path) -> int:
    """Multiply-adds of one inference of the float model."""
    g = burnedge.load(onnx_path).graph
    return sum(macs(g, n) for n in g.nodes)


def bundle(name: str, precision: str, folder: Path) -> tuple[burnedge.bundle.Bundle, Path]:
    """Suite model `name` exported for the rpi4 (the plan and weight layout of an ARM board), fp32 or int8
    (calibrated on 8 of the suite's example inputs), with one test vector."""
    onnx = suite.build_model(name, model_cache())
    out = folder / f"{name}-{precision}.bedge"
    if precision == "int8":
        cal = [suite.example_feeds(onnx, seed=i) for i in range(1, 9)]
        burnedge.export(onnx, out, target="rpi4", quantize="int8", calibration=cal, test_vectors=1,
                        allow_below_target=True, progress=False)  # fmt: skip
    else:
        burnedge.export(onnx, out, target="rpi4", test_vectors=1)
    return burnedge.bundle.read(out), onnx


def bench(names: list[str], precisions: list[str], folder: Path, log=print, profile: int = 0) -> list[dict]:
    """One row per model, precision and board: instructions of each kernel variant, and the efficiency of the
    best against the ISA's MAC limit; `profile`: also log each run's costliest plan steps (that many)."""
    rows = []
    for name in names:
        for precision in precisions:
            b, onnx = bundle(name, precision, folder)
            n_macs = model_macs(onnx)
            for board in ("rpi4", "rpi5"):
                row = {"model": name, "precision": precision, "board": board, "macs": n_macs}
                for bd, kernels in VARIANTS:
                    if bd != board or (precision == "fp32" and kernels == "dotprod"):
                        continue  # sdot is integer only: fp32 runs the NEON image's code
                    t0 = time.perf_counter()
                    where = folder / f"{name}-{precision}-{board}-{kernels}"
                    r = measure(b, board, kernels, where, profile=profile > 0)
                    if not r.ok:
                        raise SystemExit(f"{name} {precision} on {board} ({kernels}): {r.verdict}")
                    row[kernels] = r.instructions[0]
                    log(f"{name:18s} {precision} {board} {kernels:8s} {r.instructions[0]:>14,} instructions "
                        f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
                    for step, node, ops, n in step_profile(b, r)[:profile]:
                        log(f"    step {step:4d} {n:>12,} {100 * n / r.instructions[0]:5.1f}%  {ops}  {node}")
                best = min(v for k, v in row.items() if k in ("portable", "neon", "dotprod"))
                row["efficiency"] = n_macs / (best * PEAK[(precision, board)])
                rows.append(row)
    return rows


def markdown(rows: list[dict]) -> list[str]:
    head = [
        "| model | MMACs | precision | board | portable C | NEON | dotprod | best vs portable | "
        "efficiency (MACs / instructions x ISA limit) |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    out = []
    for r in rows:
        best = min(r.get("neon", r["portable"]), r.get("dotprod", r["portable"]))
        limit = PEAK[(r["precision"], r["board"])]
        insn = BEST_INSN.get(r["precision"]) or BEST_INSN[(r["precision"], r["board"])]
        cell = {k: f"{r[k]:,}" if k in r else "-" for k in ("portable", "neon", "dotprod")}
        out.append(f"| {r['model']} | {r['macs'] / 1e6:.2f} | {r['precision']} | {r['board']} | {cell['portable']} | "
                   f"{cell['neon']} | {cell['dotprod']} | {r['portable'] / best:.2f}x | "
                   f"{100 * r['efficiency']:.1f}% of {limit} ({insn}) |")  # fmt: skip
    return head + out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated suite models")
    p.add_argument("--precisions", default="fp32,int8")
    p.add_argument("--json", type=Path, help="also write the rows here")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="log each run's N costliest plan steps")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = bench(args.models.split(","), args.precisions.split(","), Path(tmp),
                     log=lambda s: print(s, file=sys.stderr, flush=True), profile=args.profile)  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("\n".join(markdown(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
