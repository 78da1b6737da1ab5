"""Train in the cloud, deploy to the edge: a digit classifier trained in torch, quantization-aware trained, exported
as an int8 bundle, and scored on the host's C backend, a Raspberry Pi 4 (QEMU user mode) and a Cortex-M4 (firmware
under qemu-system-arm), with the accuracy printed at each step.

    python -m burnedge.examples.qat_digits [--device cuda] [--epochs 30] [--quick]

Data: scikit-learn's 8x8 handwritten digits (1,797 images, shipped with scikit-learn), the split of
`train_digits` (seed 0: 1,258 to train, the held-out 539 to score). Steps:

1. the net is a `burnedge.nn` module, traced to a Model, trained in float with a plain torch loop (`fit`) on the
   module `burnedge.train.to_torch` makes (CUDA when asked, else the CPU);
2. post-training int8 (`burnedge.quantize.quantize_model`, the best calibrator measured) scored by the int8
   numpy reference (`evaluate_int8`);
3. QAT: `prepare_qat` (observers from a burnedge calibration), a few epochs at a lower rate, scored by the same
   integer path; `convert` gives the int8 Model, `burnedge.export` the bundle;
4. the bundle is run on the C backend on every held-out image, and, as a copy carrying those images as its test
   vectors (with the train side's int8 outputs as the reference), on rpi4 under QEMU and as Cortex-M4 firmware.

Each step prints its accuracy and count of correct samples; the run fails (status 1) when an emulated or C count
differs from the train side's. `--quick` trains briefly and emulates the first 64 held-out images (the test).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from .. import bundle, emulate, firmware, nn, quantize
from ..exporter import export
from ..model import Model
from ..nn.trace import trace
from ..session import Session
from ..train import from_torch, to_torch
from ..train.qat import convert, evaluate_int8, prepare_qat
from .train_digits import _split

__all__ = ["DigitsNet", "data", "fit", "main", "run"]

BOARD, MCU = "rpi4", "cortex-m4"


class DigitsNet(nn.Module):
    """image [1, 1, 8, 8] (pixels / 16) -> Conv 3x3 (16) + ReLU -> MaxPool 2 -> Conv 3x3 (32) + ReLU -> MaxPool 2
    -> flatten -> Linear (10): class scores."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, image):
        x = self.pool(nn.relu(self.conv1(image)))
        x = self.pool(nn.relu(self.conv2(x)))
        return self.fc(nn.flatten(x, 1))


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train images, labels, held-out images, labels); images float32 [N, 1, 8, 8] in [0, 1]."""
    xtr, ytr, xte, yte = _split(seed)
    shaped = lambda x: (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)  # noqa: E731
    return shaped(xtr), ytr.astype(np.int64), shaped(xte), yte.astype(np.int64)


def fit(module: torch.nn.Module, x: np.ndarray, y: np.ndarray, epochs: int, lr: float, device: str, seed: int = 0):
    """The plain torch training loop: Adam, cross-entropy, shuffled batches of 64, `epochs` passes; in place."""
    gen = torch.Generator().manual_seed(seed)
    xs, ys = torch.tensor(x, device=device), torch.tensor(y, device=device)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    module.train()
    for _ in range(epochs):
        for idx in torch.randperm(len(xs), generator=gen).split(64):
            idx = idx.to(device)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(module(xs[idx]), ys[idx]).backward()
            opt.step()
    module.eval()
    return module


def with_vectors(path: Path, images: np.ndarray, refs: Sequence[dict[str, np.ndarray]], dest: Path) -> Path:
    """A copy of the bundle at `path` whose test vectors are `images` (one per vector) with `refs` as their
    reference outputs, signed by this machine's key: what the emulators then run and check."""
    b = bundle.read(path)
    (inp,) = b.manifest["inputs"]
    outs = [o["name"] for o in b.manifest["outputs"]]
    members = {n: b.member(n) for n in b.manifest["files"] if not n.startswith("vectors/")}
    names = []
    for i, (img, ref) in enumerate(zip(images, refs)):
        arrays = {"in_0": np.ascontiguousarray(img.reshape(inp["shape"]), np.dtype(inp["dtype"]))}
        arrays.update({f"out_{k}": np.asarray(ref[n]) for k, n in enumerate(outs)})
        names.append(f"vectors/{i}.npz")
        members[names[-1]] = bundle.encode_npz(arrays)
    manifest = {k: v for k, v in b.manifest.items() if k != "files"} | {"vectors": names}
    return bundle.write(dest, manifest, members)


def _count(outputs: Sequence[dict[str, np.ndarray]], name: str, labels: np.ndarray) -> int:
    return int(sum(int(np.asarray(o[name]).argmax() == lab) for o, lab in zip(outputs, labels)))


def _line(step: str, correct: int, total: int, extra: str = "") -> None:
    print(f"{step:<28} {correct / total:8.2%}  ({correct}/{total}){'  ' + extra if extra else ''}", flush=True)


def run(device: str = "cpu", epochs: int = 30, qat_epochs: int = 10, emulated: int | None = None,
        boards: bool = True, folder: Path | None = None, seed: int = 0) -> dict[str, int]:  # fmt: skip
    """The whole example (module docstring); returns the count of correct held-out samples at each step.
    `emulated` limits the emulators to the first N held-out images (None: all of them); `boards=False` builds for
    the host alone and emulates nothing (a machine without the cross compilers and QEMU)."""
    torch.manual_seed(seed)
    xtr, ytr, xte, yte = data(seed)
    n = len(yte)
    model = trace(DigitsNet(), {"image": (1, 1, 8, 8)}, name="digits_qat")
    t0 = time.perf_counter()
    net = fit(to_torch(model, device), xtr, ytr, epochs, 1e-2, device, seed)
    trained = from_torch(net, model)
    counts: dict[str, int] = {}
    with torch.no_grad():
        counts["float"] = int((net(torch.tensor(xte, device=device)).argmax(1).cpu().numpy() == yte).sum())
    _line(f"float ({device}, {epochs} epochs)", counts["float"], n, f"{time.perf_counter() - t0:.1f} s")

    calibration = [{"image": xtr[i : i + 1]} for i in range(0, 256)]
    ptq, _ = quantize.quantize_model(trained, calibration, keep_float=(), progress=False)
    counts["ptq_int8"] = evaluate_int8(Model(ptq, name="digits_ptq"), xte, yte)
    _line("PTQ int8 (numpy int8 path)", counts["ptq_int8"], n)

    qat = prepare_qat(trained, calibration, device=device)
    counts["qat_start_int8"] = evaluate_int8(qat, xte, yte)
    _line("QAT start int8 (minmax)", counts["qat_start_int8"], n)
    t0 = time.perf_counter()
    fit(qat, xtr, ytr, qat_epochs, 1e-3, device, seed + 1)
    counts["qat_int8"] = evaluate_int8(qat, xte, yte)
    _line(f"QAT int8 ({qat_epochs} epochs)", counts["qat_int8"], n, f"{time.perf_counter() - t0:.1f} s")
    with torch.no_grad():  # the torch int8 forward (eval mode): the same integers, batched
        side = qat(torch.tensor(xte)).cpu().numpy()
    counts["qat_int8_torch"] = int((side.argmax(1) == yte).sum())

    int8 = convert(qat, trained)
    name = int8.graph.outputs[0]
    with tempfile.TemporaryDirectory(prefix="burnedge-qat-") as tmp:
        out = Path(folder or tmp)
        path = export(int8, out / "digits_qat.bedge", target=["host", BOARD, MCU] if boards else "host")
        sess = Session(path, backend="c")
        host = [sess.run({"image": x[None]}) for x in xte]
        counts["bundle_c"] = _count(host, name, yte)
        counts["bundle_c_exact"] = _same(host, side, name)
        _line(f"bundle on C ({path.stat().st_size:,} B)", counts["bundle_c"], n,
              f"{counts['bundle_c_exact']}/{n} outputs equal to the train side's")  # fmt: skip
        if not boards:
            return counts
        k = n if emulated is None else min(emulated, n)
        held = with_vectors(path, xte[:k], [{name: s[None]} for s in side[:k]], out / "digits_qat_heldout.bedge")
        counts["train_side_subset"] = int((side[:k].argmax(1) == yte[:k]).sum())
        res, fw = emulate.emulate(held, BOARD), firmware.emulate(held, MCU)
        sub = counts["train_side_subset"]
        for key, how, outputs, wall in ((BOARD, "QEMU user", res.outputs, res.wall_s),
                                        (MCU, "qemu-system-arm", fw.run.outputs, fw.run.wall_s)):  # fmt: skip
            counts[key], counts[f"{key}_exact"] = _count(outputs, name, yte[:k]), _same(outputs, side, name)
            same = counts[f"{key}_exact"]
            _line(f"{key} ({how})", counts[key], k, f"train side {sub}; {same}/{k} outputs equal; {wall:.1f} s")
        counts["emulated"] = k
    return counts


def _same(outputs: Sequence[dict[str, np.ndarray]], side: np.ndarray, name: str) -> int:
    """How many of `outputs` equal the train side's int8 outputs bit for bit."""
    return sum(int(np.array_equal(np.asarray(o[name]).reshape(-1), s.reshape(-1))) for o, s in zip(outputs, side))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m burnedge.examples.qat_digits", description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="torch device")
    p.add_argument("--epochs", type=int, default=30, help="float training epochs (QAT: a third of them)")
    p.add_argument("--quick", action="store_true", help="3 float epochs, 2 QAT, the first 64 images emulated")
    p.add_argument("--boards", action=argparse.BooleanOptionalAction, default=True,
                   help=f"build for {BOARD} and {MCU} and emulate them (needs tests/system-packages.txt)")  # fmt: skip
    a = p.parse_args(argv)
    if a.device == "cpu":
        torch.set_num_threads(1)  # a net this small: one thread is fastest, and the same on every machine
    epochs = 3 if a.quick else a.epochs
    qat_epochs = 2 if a.quick else max(1, a.epochs // 3)
    c = run(a.device, epochs, qat_epochs, 64 if a.quick else None, a.boards)
    n = len(data()[3])
    print(f"QAT int8 minus float: {(c['qat_int8'] - c['float']) / n * 100:+.2f} points")
    agree = c["qat_int8"] == c["qat_int8_torch"] == c["bundle_c"] and c["bundle_c_exact"] == n
    where = "the bundle on C"
    if a.boards:
        k = c["emulated"]
        agree = agree and c[BOARD] == c[MCU] == c["train_side_subset"] and c[f"{BOARD}_exact"] == c[f"{MCU}_exact"] == k
        where += f", {BOARD} and {MCU}"
    print(f"train side == {where}, bit for bit:", "yes" if agree else "NO")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
