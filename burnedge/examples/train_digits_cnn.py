"""Trains the second real-data classifier: a small CNN on scikit-learn's 8x8 digits, exported to ONNX.

It checks int8 on convolutions the way the demo MLP checks it on Gemms. Same split as `train_digits` (seed 0: the
held-out 30% is digits_test.npz, shared), so both models are scored on the same images. Also writes
digits_calibration.npz: the first 256 images of the training split (uint8 pixels 0..16, shape [256, 1, 64]),
the calibration data of the int8 tests (one .npz, leading batch axis: see the README's int8 section).

    image[1,64] -> /16 -> [1,1,8,8] -> Conv 3x3 (16) + Relu -> MaxPool 2 -> Conv 3x3 (32) + Relu
                -> GlobalAveragePool -> Flatten -> Gemm (10) -> Softmax -> probabilities[1,10]

Deterministic: fixed seeds, full-batch Adam on the CPU with deterministic algorithms.

    pip install scikit-learn torch && python -m burnedge.examples.train_digits_cnn
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from . import HERE
from .train_digits import _split

CNN_MODEL = HERE / "digits_cnn.onnx"
CALIBRATION = HERE / "digits_calibration.npz"


def _net():
    import torch
    from torch import nn

    class DigitsCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.fc = nn.Linear(32, 10)

        def forward(self, image: torch.Tensor) -> torch.Tensor:
            x = (image * (1.0 / 16.0)).reshape(-1, 1, 8, 8)
            x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.conv2(x)), 1), 1)
            return torch.softmax(self.fc(x), dim=-1)

    return DigitsCNN()


def train(epochs: int = 300, seed: int = 0):
    """(model, held-out accuracy, test images, test labels, train images)."""
    import torch

    xtr, ytr, xte, yte = _split(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    model = _net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.tensor(xtr, dtype=torch.float32), torch.tensor(ytr, dtype=torch.int64)
    for _ in range(epochs):
        opt.zero_grad()
        loss = torch.nn.functional.nll_loss(torch.log(model(x) + 1e-9), y)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor(xte, dtype=torch.float32)).argmax(1).numpy()
    return model, float((pred == yte).mean()), xte, yte, xtr


def export(model, path: Path) -> None:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (torch.zeros(1, 64),),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["image"],
            output_names=["probabilities"],
        )


if __name__ == "__main__":
    net, acc, xte, yte, xtr = train()
    export(net, CNN_MODEL)
    cal = xtr[:256].astype(np.uint8).reshape(256, 1, 64)
    np.savez_compressed(CALIBRATION, image=cal)
    print(f"held-out accuracy {acc:.4f} on {len(yte)} digits; wrote {CNN_MODEL.name}, {CALIBRATION.name}")
