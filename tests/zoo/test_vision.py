"""The zoo's image and audio classifiers against their upstream definitions.

torchvision (ResNet-18/50, MobileNetV2): torchvision-0.28.0.json, recorded from torchvision 0.28.0 itself by
record_torchvision.py (its PyPI wheel does not import with the CPU torch, so it is not a test dependency): the zoo's
state-dict keys, shapes and dtypes must be torchvision's, in its order, and the logits for the same stand-in
weights (weights.fill) on the same input must match. MLPerf Tiny: the PyTorch models of tests/models/*/gen.py,
saved as safetensors and loaded through burnedge.load(arch=...), must match torch's outputs.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file
from safetensors.torch import save_file as save_torch

import burnedge
from burnedge.errors import WeightsError
from burnedge.zoo import ARCHITECTURES

from .common import randn, run, worst
from .record_torchvision import reference_input
from .weights import fill

RECORD = json.loads(Path(__file__).with_name("torchvision-0.28.0.json").read_text())


def _torchvision_checkpoint(name: str, folder: Path) -> Path:
    layout = {k: (shape, dtype) for k, (shape, dtype) in RECORD["models"][name]["state_dict"].items()}
    path = folder / f"{name}.safetensors"
    save_file(fill(layout), str(path))
    return path


@pytest.mark.parametrize("name", sorted(RECORD["models"]))
def test_state_dict_is_torchvisions(name):
    module = ARCHITECTURES[name].build({}, {}, {})
    layout = {k: [list(np.shape(v)), np.asarray(v).dtype.name] for k, v in module.state_dict().items()}
    assert layout == RECORD["models"][name]["state_dict"]  # keys, order, shapes, dtypes
    assert list(layout) == list(RECORD["models"][name]["state_dict"])


@pytest.mark.parametrize("name", sorted(RECORD["models"]))
def test_logits_match_torchvision(name, tmp_path):
    x = reference_input()
    model = burnedge.load(_torchvision_checkpoint(name, tmp_path), arch=name, input_shapes={"x": x.shape})
    logits = run(model, {"x": x})["output"][0]
    want = np.asarray(RECORD["models"][name]["logits"], np.float32)
    assert worst(logits, want) < 1e-4 * max(1.0, np.abs(want).max())


def test_class_count_follows_the_checkpoint(tmp_path):
    layout = dict(RECORD["models"]["resnet18"]["state_dict"])
    layout["fc.weight"], layout["fc.bias"] = [[10, 512], "float32"], [[10], "float32"]
    save_file(fill(layout), str(tmp_path / "r.safetensors"))
    model = burnedge.load(tmp_path / "r.safetensors", arch="resnet18", input_shapes={"x": (1, 3, 64, 64)})
    assert model.outputs[0].shape == (1, 10)


MLPERF = {"ds_cnn": "DSCNN", "mobilenet_v1_025": "MobileNetV1", "resnet8": "ResNet8", "fc_autoencoder": "FCAutoencoder"}


@pytest.mark.parametrize("name", sorted(MLPERF))
def test_mlperf_tiny_matches_the_suites_torch_model(name, tmp_path):
    gen = importlib.import_module(f"tests.models.{name}.gen")
    torch.manual_seed(0)
    ref = getattr(gen, MLPERF[name])()
    gen._randomize_batchnorm(ref, batch=8, steps=1)  # BN statistics that are not the defaults
    ref.eval()
    save_torch(ref.state_dict(), str(tmp_path / f"{name}.safetensors"))
    model = burnedge.load(tmp_path / f"{name}.safetensors", arch=name)
    x = randn(*gen.INPUT_SHAPE, seed=4)
    assert model.inputs[0].shape == gen.INPUT_SHAPE
    with torch.no_grad():
        want = ref(torch.from_numpy(x)).numpy()
    assert worst(run(model, {"input": x})["output"], want) < 1e-5


def test_a_mismatched_checkpoint_is_one_error_naming_every_key(tmp_path):
    """A renamed key (its old name missing, its new one unexpected), a missing key and a wrong shape: one error."""
    layout = dict(RECORD["models"]["resnet18"]["state_dict"])
    layout["layer1.0.conv1.weights"] = layout.pop("layer1.0.conv1.weight")
    layout["layer2.0.bn1.bias"] = [[7], "float32"]
    del layout["fc.bias"]
    save_file(fill(layout), str(tmp_path / "r.safetensors"))
    with pytest.raises(WeightsError) as info:
        burnedge.load(tmp_path / "r.safetensors", arch="resnet18")
    message = str(info.value)
    for part in (
        "r.safetensors",
        "layer1.0.conv1.weight",
        "layer1.0.conv1.weights",
        "layer2.0.bn1.bias",
        "[7]",
        "[128]",
        "fc.bias",
    ):
        assert part in message, part
