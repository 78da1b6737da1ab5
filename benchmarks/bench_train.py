"""Training throughput: a zoo network through burnedge (to_torch + Learner) against the same network written in
plain PyTorch, with the same settings, side by side in one process.

Both start from the same weights and train on the same synthetic batch, already on the device (the loader is not
what is measured), with AdamW, the same batch size and, on CUDA by default, bf16 autocast with TF32 matmuls.
Warm-up steps are run and left out; then the two alternate in rounds of --steps steps (burnedge, PyTorch,
burnedge, ...) so machine noise hits both alike, and the table gives each one's median samples/s and the ratio
burnedge / PyTorch (1.0: as fast; the target is >= 0.9).

    python benchmarks/bench_train.py                                  # CUDA when there is one, else a tiny CPU run
    python benchmarks/bench_train.py --model resnet8 --batch 512 --precision bf16 --compile
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import burnedge  # noqa: E402
from burnedge import nn as bnn  # noqa: E402
from burnedge.examples.qat_digits import DigitsNet  # noqa: E402
from burnedge.nn import init  # noqa: E402
from burnedge.train import Learner, to_torch  # noqa: E402
from burnedge.zoo import ARCHITECTURES  # noqa: E402

nn = torch.nn


def _bn_relu(c: int) -> list[nn.Module]:
    return [nn.BatchNorm2d(c), nn.ReLU()]


class DSCNN(nn.Module):  # burnedge.zoo.mlperf_tiny.DSCNN in PyTorch; dropout is off (the traced graph has none)
    def __init__(self, filters: int = 64, classes: int = 12):
        super().__init__()
        layers = [nn.Conv2d(1, filters, (10, 4), stride=2, padding=(5, 1)), *_bn_relu(filters), nn.Identity()]
        for _ in range(4):
            layers += [nn.Conv2d(filters, filters, 3, padding=1, groups=filters), *_bn_relu(filters)]
            layers += [nn.Conv2d(filters, filters, 1), *_bn_relu(filters)]
        layers += [nn.Identity(), nn.AvgPool2d((25, 5)), nn.Flatten(), nn.Linear(filters, classes)]
        self.layers = nn.Sequential(*layers, nn.Softmax(dim=1))

    def forward(self, x):
        return self.layers(x)


class _Stack(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if stride != 1 else nn.Identity()

    def forward(self, x):
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + self.shortcut(x))


class ResNet8(nn.Module):  # burnedge.zoo.mlperf_tiny.ResNet8 in PyTorch
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.stacks = nn.Sequential(_Stack(16, 16, 1), _Stack(16, 32, 2), _Stack(32, 64, 2))
        self.head = nn.Sequential(nn.AvgPool2d(8), nn.Flatten(), nn.Linear(64, classes), nn.Softmax(dim=1))

    def forward(self, x):
        return self.head(self.stacks(self.stem(x)))


class _DigitsBody(nn.Module):  # burnedge.examples.qat_digits.DigitsNet (the README example's net) in PyTorch
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
        self.pool, self.fc = nn.MaxPool2d(2), nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        return self.fc(torch.flatten(self.pool(F.relu(self.conv2(x))), 1))


class Digits(nn.Module):  # DigitsHead below, in PyTorch
    def __init__(self):
        super().__init__()
        self.net = _DigitsBody()

    def forward(self, x):
        return torch.softmax(self.net(x), 1)


TWINS = {"ds_cnn": (DSCNN, 12), "resnet8": (ResNet8, 10), "digits": (Digits, 10)}


def _burnedge_model(name: str) -> tuple[burnedge.Model, tuple[int, ...]]:
    """The network as burnedge traces it (a zoo architecture, or the example's DigitsNet with a softmax head, so
    both sides train the same -log p loss), and its input shape."""
    init.manual_seed(0)
    if name == "digits":
        head = DigitsHead()
        return burnedge.trace(head, {"image": np.zeros((1, 1, 8, 8), np.float32)}), (1, 1, 8, 8)
    arch = ARCHITECTURES[name]
    (inp,) = arch.inputs({})
    model = burnedge.trace(arch.build({}, {}, dict(arch.options)).eval(), {"input": np.zeros(inp.shape, np.float32)})
    return model, inp.shape


class DigitsHead(bnn.Module):
    """DigitsNet, then softmax (its own forward gives logits)."""

    def __init__(self):
        super().__init__()
        self.net = DigitsNet()

    def forward(self, image):
        return bnn.softmax(self.net(image), 1)


def _nll(p: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # what the Learner trains a softmax output with
    return F.nll_loss(torch.log(p.float().clamp_min(1e-12)), y)


class Plain:
    """The hand-written loop: zero_grad, forward under autocast, loss, backward, AdamW step, a running loss."""

    def __init__(self, module: nn.Module, batch: tuple, precision: str, device: torch.device, compile: bool):
        self.module, (self.x, self.y), self.device = module.train(), batch, device
        self.forward = torch.compile(module) if compile else module
        self.opt = torch.optim.AdamW(module.parameters(), lr=1e-3)
        self.precision = precision

    def run(self, steps: int) -> float:
        total = torch.zeros((), device=self.device)
        start = time.perf_counter()
        for _ in range(steps):
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
                loss = _nll(self.forward(self.x), self.y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            total += loss.detach()
        float(total)  # waits for the device
        return steps * self.x.shape[0] / (time.perf_counter() - start)


class Ours:
    """to_torch + Learner: one fit() epoch of `steps` batches per round; its history has the samples/s."""

    def __init__(self, module: nn.Module, batch: tuple, precision: str, device: torch.device, compile: bool):
        self.batch, self.steps = batch, 0
        loader = _Repeat(batch, lambda: self.steps)
        self.learner = Learner(
            module, loader, metrics=(), device=device, precision=precision, compile=compile, dashboard=None
        )

    def run(self, steps: int) -> float:
        self.steps = steps
        history = self.learner.fit(len(self.learner.history) + 1)
        return history[-1]["samples_per_s"]


class _Repeat:
    """The same (x, y) batch, `count()` times per pass."""

    def __init__(self, batch: tuple, count):
        self.batch, self.count = batch, count

    def __len__(self) -> int:
        return self.count()

    def __iter__(self):
        return iter([self.batch] * self.count())


def main() -> None:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=sorted(TWINS), default="ds_cnn")
    p.add_argument("--batch", type=int, default=256 if cuda else 8)
    p.add_argument("--steps", type=int, default=50 if cuda else 5, help="steps per timed round")
    p.add_argument("--rounds", type=int, default=5 if cuda else 3)
    p.add_argument("--warmup", type=int, default=20 if cuda else 2)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="bf16" if cuda else "fp32")
    p.add_argument("--compile", action="store_true", help="torch.compile both")
    p.add_argument("--device", default="cuda" if cuda else "cpu")
    p.add_argument("--threads", type=int, help="torch's CPU threads (default: torch's own)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    device = torch.device(a.device)

    model, shape = _burnedge_model(a.model)
    ours_module = to_torch(model)
    twin_cls, classes = TWINS[a.model]
    twin = twin_cls()
    missing = twin.load_state_dict(ours_module.state_dict(), strict=False)
    assert not missing.unexpected_keys and all(k.endswith("num_batches_tracked") for k in missing.missing_keys)
    twin.to(device)

    gen = torch.Generator().manual_seed(0)
    x = torch.randn((a.batch, *shape[1:]), generator=gen).to(device)
    y = torch.randint(0, classes, (a.batch,), generator=gen).to(device)
    # the same function before any step (in IEEE float32: cuDNN convolutions default to TF32): a faithful copy
    with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        ref = twin.eval()(x)
        got = ours_module.to(device).eval()(x)
        assert torch.allclose(ref, got, atol=1e-4), float((ref - got).abs().max())
    if a.precision == "bf16" and device.type == "cuda":  # what the Learner sets: TF32 for what stays float32
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    ours = Ours(ours_module, (x, y), a.precision, device, a.compile)
    plain = Plain(twin, (x, y), a.precision, device, a.compile)
    ours.run(a.warmup)
    plain.run(a.warmup)
    rates: dict[str, list[float]] = {"burnedge": [], "pytorch": []}
    for _ in range(a.rounds):
        rates["burnedge"].append(ours.run(a.steps))
        rates["pytorch"].append(plain.run(a.steps))
    med = {k: statistics.median(v) for k, v in rates.items()}
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"{a.model}  batch {a.batch}  {a.precision}  compile={a.compile}  on {name} (torch {torch.__version__})")
    for k in ("burnedge", "pytorch"):
        print(f"  {k:9s} {med[k]:12,.0f} samples/s   rounds: {', '.join(f'{r:,.0f}' for r in rates[k])}")
    print(f"  ratio burnedge / pytorch: {med['burnedge'] / med['pytorch']:.3f}")


if __name__ == "__main__":
    main()
