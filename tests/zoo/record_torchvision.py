"""Records torchvision's ResNet-18/50 and MobileNetV2: their state-dict layouts and their outputs on fixed weights.

Writes tests/zoo/torchvision-0.28.0.json, which test_vision.py checks the zoo against: per model, every state-dict
key with its shape and dtype, in torchvision's order, and the logits for weights.fill(layout, seed 0) on a seeded
1x3x64x64 input. Run it by hand with torchvision 0.28.0 (the release for torch 2.13) importable, e.g.
`pip install --no-deps --target /tmp/tv torchvision==0.28.0` and `PYTHONPATH=/tmp/tv python -m
tests.zoo.record_torchvision`. PyPI's wheel is a CUDA build: with the CPU torch its C extension does not load and
`import torchvision` fails in `torchvision._meta_registrations` (fake kernels for its detection ops); that module
is stubbed out here, since the classifiers use none of those ops.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import torch

from .weights import fill

OUT = Path(__file__).with_name("torchvision-0.28.0.json")
MODELS = ("resnet18", "resnet50", "mobilenet_v2")
INPUT = (1, 3, 64, 64)


def reference_input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal(INPUT).astype(np.float32)


def _dumps(value, depth: int = 0) -> str:
    """JSON with one line per state-dict entry (and the logits on one line): small, and diffs read well."""
    if isinstance(value, dict) and depth < 4:
        pad = "  " * (depth + 1)
        items = ",\n".join(f"{pad}{json.dumps(k)}: {_dumps(v, depth + 1)}" for k, v in value.items())
        return "{\n" + items + "\n" + "  " * depth + "}"
    return json.dumps(value)


def main() -> None:
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
    import torchvision
    from torchvision import models

    record = {"torchvision": torchvision.__version__, "torch": torch.__version__, "input": list(INPUT), "models": {}}
    for name in MODELS:
        model = getattr(models, name)().eval()
        layout = {k: (list(v.shape), str(v.dtype).removeprefix("torch.")) for k, v in model.state_dict().items()}
        model.load_state_dict({k: torch.from_numpy(v) for k, v in fill(layout).items()})
        with torch.no_grad():
            logits = model(torch.from_numpy(reference_input()))[0].numpy()
        record["models"][name] = {"state_dict": layout, "logits": [float(f"{v:.8g}") for v in logits]}
    OUT.write_text(_dumps(record) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
