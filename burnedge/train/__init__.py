"""Training on the cloud side: a burnedge Model as a `torch.nn.Module` and back (torch, the `train` extra).

    Model --to_torch--> GraphModule (torch.nn.Module; the torch backend's) --train with PyTorch--> from_torch
          --> Model with the trained weights --> burnedge.export (any backend, any target)

`prepare_qat` makes a fake-quantized twin whose evaluation is burnedge's int8 integer path bit for bit;
`convert` gives the int8 Model to export. `Learner` trains such a module (or any torch module): epochs,
validation, safetensors checkpoints, resume, early stopping, LR schedules, gradient clipping, bf16 autocast and
TF32 on CUDA, torch.compile, DDP under torchrun, and a terminal dashboard (burnedge.train.dashboard).

Names are PyTorch's: a Model traced from `burnedge.nn` or loaded from the zoo has ``features.0.weight``; an
imported ONNX model keeps its initializer names as `state_dict()` keys. Uses only the public API and the torch
backend.
"""

from __future__ import annotations

from typing import Any

from ..errors import BurnedgeError
from .bridge import from_torch, to_torch

try:  # the train extra (torch, textual); without it to_torch and the Learner say how to install it
    from .data import ArrayLoader
    from .learner import EarlyStopping, Learner
    from .metrics import LOSSES, METRICS
    from .qat import QATModule, convert, evaluate_int8, prepare_qat
except ImportError as exc:
    _MISSING = f"pip install 'burnedge[train]' ({exc})"

    def _needs_extra(*_: Any, **__: Any) -> Any:
        raise BurnedgeError(f"burnedge.train needs the train extra: {_MISSING}")

    ArrayLoader = EarlyStopping = Learner = _needs_extra  # type: ignore[assignment,misc]
    QATModule = convert = evaluate_int8 = prepare_qat = _needs_extra  # type: ignore[assignment,misc]
    LOSSES = METRICS = {}  # type: ignore[assignment]

__all__ = ["LOSSES", "METRICS", "ArrayLoader", "EarlyStopping", "Learner", "QATModule", "convert", "evaluate_int8",
           "from_torch", "prepare_qat", "to_torch"]  # fmt: skip
