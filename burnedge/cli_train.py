"""`burnedge train`: an ONNX model or a fresh zoo architecture trained on a dataset file, written back as a
safetensors checkpoint and an edge bundle. Parsing, checking and printing only; burnedge.train does the work.

    burnedge train model.onnx --data train.npz [--valid valid.npz] --epochs 10 --batch 64 --out trained/
    burnedge train --zoo ds_cnn --data kws/ --loss cross_entropy --metric accuracy --precision bf16

A dataset is an .npz with arrays ``x`` (inputs, batch first) and ``y`` (targets), or a folder with x.npy and
y.npy. The outputs, in --out: NAME.safetensors (the trained weights under PyTorch's names), NAME.bedge (the
trained model exported for --target; a dynamic batch is 1 there), metrics.jsonl (the history) and checkpoints/
(what --resume continues from).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from .cli_inputs import UsageError, fmt_shape
from .files import require_regular

__all__ = ["add_command", "cmd_train", "read_dataset"]


def read_dataset(path: Path, option: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of an .npz with arrays x and y, or of a folder holding x.npy and y.npy; one-line errors otherwise."""
    path = Path(path)
    if path.is_dir():
        missing = [n for n in ("x.npy", "y.npy") if not (path / n).is_file()]
        if missing:
            held = sorted(p.name for p in path.iterdir())[:8]
            raise UsageError(f"{option} {path}: no {' or '.join(missing)} in the folder (it holds {held})")
        arrays = {}
        for n in ("x", "y"):
            file = require_regular(path / f"{n}.npy", UsageError, f"{option} file")
            try:
                arrays[n] = np.load(file, allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise UsageError(f"{option} {file}: cannot read it as a .npy array ({exc})") from None
    elif not path.exists():
        raise UsageError(f"{option} {path}: no such file or folder (an .npz with arrays x and y, or a folder)")
    else:
        require_regular(path, UsageError, f"{option} file")
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except (OSError, ValueError) as exc:
            raise UsageError(f"{option} {path}: cannot read it as an .npz archive ({exc})") from None
        missing = [n for n in ("x", "y") if n not in arrays]
        if missing:
            raise UsageError(
                f"{option} {path}: no array {' or '.join(map(repr, missing))}; it holds {sorted(arrays)} "
                "(expected x: the inputs, y: the targets)"
            )
    x, y = arrays["x"], arrays["y"]
    if x.ndim == 0 or y.ndim == 0 or len(x) != len(y):
        raise UsageError(
            f"{option} {path}: x has shape {fmt_shape(x.shape)} and y {fmt_shape(y.shape)}; "
            "expected the same number of samples first"
        )
    if len(x) == 0:
        raise UsageError(f"{option} {path}: the dataset is empty")
    return x, y


def _zoo_model(name: str, sample: tuple[int, ...], seed: int):
    """A fresh (randomly initialised) zoo architecture traced for batches of `sample`-shaped inputs."""
    from .nn import init, trace
    from .zoo import ARCHITECTURES
    from .zoo.registry import resolve_shapes

    arch = ARCHITECTURES.get(name)
    if arch is None:
        raise UsageError(f"--zoo {name!r}: no such architecture; the zoo has: {', '.join(sorted(ARCHITECTURES))}")
    if arch.needs_config or len(arch.inputs({})) != 1:
        raise UsageError(f"--zoo {name}: train takes the zoo's one-input architectures without a config.json")
    (given,) = arch.inputs({})
    shapes = resolve_shapes(arch, {}, {given.name: (1, *sample)})
    init.manual_seed(seed)
    module = arch.build({}, {}, dict(arch.options))
    model = trace(module.eval(), {n: np.zeros(s, given.dtype) for n, s in shapes.items()})
    model.name = name
    return model


def _onnx_model(path: Path, sample: tuple[int, ...]):
    """The ONNX model at `path`; one with a dynamic batch (or other dimensions) takes the data's sample shape."""
    import onnx

    from .errors import NotStaticError
    from .importers import load

    if not path.is_file():
        raise UsageError(f"{path}: no such model file")
    try:
        return load(path)
    except NotStaticError:
        proto = onnx.load(str(path), load_external_data=False)
        inits = {i.name for i in proto.graph.initializer}
        inputs = [i for i in proto.graph.input if i.name not in inits]
        if len(inputs) != 1:
            raise
        dims = inputs[0].type.tensor_type.shape.dim
        shape = [  # the declared sizes, the open ones from the data (batch 1)
            d.dim_value if d.dim_value > 0 else 1 if k == 0 else sample[k - 1] if k - 1 < len(sample) else 1
            for k, d in enumerate(dims)
        ]
        return load(path, input_shapes={inputs[0].name: tuple(shape)})


def _check_fits(model: Any, x: np.ndarray, option: str) -> None:
    if len(model.inputs) != 1:
        names = [i.name for i in model.inputs]
        raise UsageError(f"burnedge train feeds one input (the dataset's x); model {model.name!r} takes {names}")
    want = model.inputs[0]
    if tuple(x.shape[1:]) != tuple(want.shape[1:]):
        raise UsageError(
            f"{option}: x holds samples of shape {fmt_shape(x.shape[1:])}; the model's input {want.name!r} takes "
            f"{fmt_shape(want.shape)} (batch first), so samples of {fmt_shape(want.shape[1:])}"
        )
    if want.dtype.kind == "f" and x.dtype.kind not in "fiu":
        raise UsageError(f"{option}: x is {x.dtype}; the model's input {want.name!r} takes {want.dtype}")


def cmd_train(a: argparse.Namespace) -> int:
    from .train import LOSSES, METRICS

    if a.loss not in LOSSES:
        raise UsageError(f"--loss {a.loss!r}: unknown; known: {', '.join(sorted(LOSSES))}")
    if a.metric is None:  # accuracy for a classifier, mae for a regression
        a.metric = ["accuracy"] if a.loss in ("cross_entropy", "bce") else ["mae"]
    for m in a.metric:
        if m not in METRICS:
            raise UsageError(f"--metric {m!r}: unknown; known: {', '.join(sorted(METRICS))}")
    if (a.model is None) == (a.zoo is None):
        raise UsageError("give a model: an .onnx file or --zoo NAME (burnedge zoo lists them), not both")
    x, y = read_dataset(a.data, "--data")
    valid = read_dataset(a.valid, "--valid") if a.valid is not None else None
    model = _zoo_model(a.zoo, x.shape[1:], a.seed) if a.zoo else _onnx_model(a.model, x.shape[1:])
    _check_fits(model, x, "--data")
    if valid is not None:
        _check_fits(model, valid[0], "--valid")
    return _train(a, model, (x, y), valid)


def _train(a: argparse.Namespace, model: Any, data: tuple, valid: tuple | None) -> int:
    import torch

    from .exporter import export
    from .train import ArrayLoader, Learner, from_torch, to_torch

    torch.manual_seed(a.seed)
    dtype = model.inputs[0].dtype
    x = data[0].astype(dtype, copy=False)
    out = Path(a.out)
    module = to_torch(model)
    learner = Learner(
        module,
        ArrayLoader(x, data[1], a.batch, shuffle=True, seed=a.seed),
        ArrayLoader(valid[0].astype(dtype, copy=False), valid[1], a.batch) if valid is not None else None,
        loss=a.loss,
        optimizer=a.optimizer,
        lr=a.lr,
        metrics=a.metric,
        device=a.device,
        precision=a.precision,
        checkpoint_dir=out / "checkpoints",
        dashboard=None if a.dashboard == "none" else a.dashboard,
        log_file=out / "metrics.jsonl",
    )
    history = learner.fit(a.epochs, resume=a.resume)
    if not learner.group.main:
        return 0
    module.cpu()
    trained = from_torch(module, model, checkpoint=out / f"{model.name}.safetensors")
    wrote = [out / f"{model.name}.safetensors", out / "metrics.jsonl"]
    if not a.no_bundle:
        wrote.insert(1, export(trained, out / f"{model.name}.bedge", target=a.target, test_vectors=a.test_vectors))
    last = history[-1] if history else {}
    summary = "  ".join(f"{k} {v:.4f}" for k, v in last.items() if k.startswith(("train_", "valid_")))
    print(f"trained {model.name} for {len(history)} epoch(s): {summary}")
    print("wrote " + ", ".join(str(p) for p in wrote))
    return 0


def add_command(sub: Any, count: Any) -> None:
    s = sub.add_parser("train", help="train an ONNX or zoo model on an .npz / .npy dataset; write weights and bundle")
    s.add_argument("model", type=Path, nargs="?", help="an .onnx model (or give --zoo NAME)")
    s.add_argument("--zoo", metavar="NAME", help="a fresh zoo architecture (burnedge zoo lists them)")
    s.add_argument("--data", type=Path, required=True, metavar="DATA.npz|DIR", help="arrays x, y (or x.npy, y.npy)")
    s.add_argument("--valid", type=Path, metavar="DATA.npz|DIR", help="validation data, as --data")
    s.add_argument("--loss", default="cross_entropy", help="cross_entropy (default), mse, l1, smooth_l1, bce")
    s.add_argument(
        "--metric",
        action="append",
        default=None,
        metavar="NAME",
        help="accuracy, mae, mse; repeatable (default: accuracy; mae for a regression loss)",
    )
    s.add_argument("--epochs", type=count("--epochs"), default=10, metavar="N")
    s.add_argument("--batch", type=count("--batch"), default=32, metavar="N")
    s.add_argument("--lr", type=float, default=1e-3)
    s.add_argument("--optimizer", default="adamw", choices=["adamw", "adam", "sgd"])
    s.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="bf16: autocast and TF32 (CUDA)")
    s.add_argument("--device", help="default: cuda when available, else cpu")
    s.add_argument("--seed", type=int, default=0, help="weights of a --zoo model and the shuffling")
    s.add_argument("--dashboard", default="auto", choices=["auto", "tui", "plain", "none"])
    s.add_argument("--out", type=Path, default=Path("trained"), metavar="DIR", help="default ./trained")
    s.add_argument("--resume", action="store_true", help="continue from DIR/checkpoints")
    s.add_argument("--target", default="host", help="the bundle's target (default host)")
    s.add_argument("--test-vectors", type=count("--test-vectors", 0), default=2, metavar="N")
    s.add_argument("--no-bundle", action="store_true", help="write the weights only")
    s.set_defaults(fn=cmd_train)
