"""The emulation matrix: models x {float, int8} x targets, each exported once for every target and emulated.

``python -m tests.emulation.matrix [MODEL ...] [--targets rpi4,rpi5] [--kinds float,int8]`` prints one row per
(model, kind, target): PASS or FAIL, the largest error against the host reference, whether the outputs equal the
host library's bit for bit, and the emulated run time. The slow tests run a part of it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import burnedge
from burnedge.emulate import emulate

CROSS = ("rpi3", "rpi4", "rpi5", "jetson-nano", "jetson-orin", "riscv64")
SUITE = ("ds_cnn", "mobilenet_v1_025", "resnet8", "fc_autoencoder", "mobilenet_v2")  # MLPerf Tiny + MobileNetV2


def suite():
    name = "burnedge_model_suite"
    if name not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "models" / "suite.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def model_cache() -> Path:
    return Path(os.environ.get("BURNEDGE_MODEL_CACHE") or Path(tempfile.gettempdir()) / "burnedge-models")


@dataclass
class Row:
    model: str
    kind: str
    target: str
    ok: bool
    exact: bool  # the rule applied: bit-exact (int8) or the float tolerance
    max_abs: float
    relative: float
    same_as_host: bool  # outputs equal to the host library's, bit for bit
    run_ms: float  # the runner's own time for the first vector, inside the emulator
    wall_s: float  # the emulated process, start to end


def export(model: str | Path, kind: str, out: Path, targets: tuple[str, ...], calibration=None) -> Path:
    """One bundle for the host and every target; int8 calibrates on `calibration` (feed dicts)."""
    options = {"quantize": "int8", "calibration": calibration} if kind == "int8" else {}
    return burnedge.export(model, out, target=("host", *targets), test_vectors=1, **options)


def check(bundle: Path, targets: tuple[str, ...], model: str, kind: str) -> list[Row]:
    """Emulates `bundle` for every target and compares its outputs with the host library's too."""
    b = burnedge.bundle.read(bundle)
    host = burnedge.Session(b)
    feeds = [f for f, _ in b.vectors()]
    want = [host.run(f) for f in feeds]
    rows = []
    for t in targets:
        r = emulate(b, t)
        same = all(np.array_equal(w[n], got[n]) for w, got in zip(want, r.outputs) for n in w)
        rows.append(Row(model, kind, t, r.ok, r.exact, r.max_abs, r.max_relative, same, r.run_us[0] / 1e3, r.wall_s))
    return rows


def run(models, kinds, targets) -> list[Row]:
    s = suite()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            path = s.build_model(name, model_cache())
            n_cal = 4 if name == "mobilenet_v2" else 16
            calibration = [s.example_feeds(path, seed=i) for i in range(n_cal)]
            for kind in kinds:
                t0 = time.perf_counter()
                bundle = export(path, kind, Path(tmp) / f"{name}-{kind}.bedge", targets, calibration)
                print(f"# exported {name} {kind} in {time.perf_counter() - t0:.1f} s", flush=True)
                for r in check(bundle, targets, name, kind):
                    rule = "exact" if r.exact else "tol"
                    print(f"{r.model:18s} {r.kind:5s} {r.target:12s} {'PASS' if r.ok else 'FAIL'} {rule:5s} "
                          f"max_abs {r.max_abs:9.3g} rel {r.relative:9.3g} same_as_host {str(r.same_as_host):5s} "
                          f"run {r.run_ms:9.1f} ms  wall {r.wall_s:6.1f} s", flush=True)  # fmt: skip
                    rows.append(r)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=list(SUITE))
    p.add_argument("--targets", default=",".join(CROSS))
    p.add_argument("--kinds", default="float,int8")
    a = p.parse_args(argv)
    rows = run(a.models, a.kinds.split(","), tuple(a.targets.split(",")))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
