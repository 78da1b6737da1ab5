"""burnedge.load(..., arch=) and the CLI (`burnedge export --arch`, `burnedge zoo`): what loads, and the one-line
errors for an unknown architecture, a missing or extra config, unknown options and input shapes the model cannot
take. A tiny BERT (2 layers, 8 wide) keeps it quick; the real checkpoint is test_bert.py's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import burnedge
from burnedge.cli import main
from burnedge.errors import BurnedgeError, ModelError
from burnedge.zoo import ARCHITECTURES
from burnedge.zoo.bert import BertModel

TINY = {
    "model_type": "bert",
    "vocab_size": 50,
    "hidden_size": 8,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 16,
    "max_position_embeddings": 32,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}


@pytest.fixture
def tiny(tmp_path):
    """A BertForMaskedLM-style checkpoint: BertModel's keys under `bert.`, plus a head that the zoo leaves out."""
    rng = np.random.default_rng(0)
    state = {
        f"bert.{k}": (rng.standard_normal(np.shape(v)) * 0.2).astype(np.float32)
        for k, v in BertModel(TINY).state_dict().items()
        if k != "embeddings.position_ids"
    }
    state["cls.predictions.bias"] = np.zeros(50, np.float32)
    save_file(state, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    return tmp_path / "model.safetensors", tmp_path / "config.json"


def test_a_prefixed_checkpoint_with_a_head_loads(tiny):
    weights, config = tiny
    model = burnedge.load(weights, arch="bert", config=config, input_shapes={"input_ids": (2, 8)})
    assert {i.name: i.shape for i in model.inputs} == dict.fromkeys(
        ["input_ids", "attention_mask", "token_type_ids"], (2, 8)
    )
    out = burnedge.Session(model).run(
        {"input_ids": np.arange(16).reshape(2, 8), "attention_mask": np.ones((2, 8), np.int64),
         "token_type_ids": np.zeros((2, 8), np.int64)}
    )  # fmt: skip
    assert out["last_hidden_state"].shape == (2, 8, 8) and np.isfinite(out["last_hidden_state"]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"arch": "gpt9"}, "unknown architecture 'gpt9'; the zoo has: bert, ds_cnn"),
        ({"arch": "bert"}, "needs config="),
        ({"arch": "bert", "config": "CONFIG", "input_shapes": {"ids": (1, 8)}}, "no input named 'ids'"),
        ({"arch": "bert", "config": "CONFIG", "input_shapes": {"input_ids": (8,)}}, r"shape \[8\]; expected 2"),
        ({"arch": "bert", "config": "CONFIG", "input_shapes": {"input_ids": (1, 64)}}, "exceeds max_position"),
        (
            {"arch": "bert", "config": "CONFIG", "input_shapes": {"input_ids": (1, 8), "attention_mask": (1, 9)}},
            "'attention_mask' has shape",
        ),
        ({"arch": "bert", "config": "CONFIG", "pooling": "max"}, "pooling 'max'"),
        ({"arch": "bert", "config": "CONFIG", "colour": "red"}, "no option colour; its options: pooling='none'"),
        ({"arch": "resnet18", "config": "CONFIG"}, "takes no config"),
        ({}, "holds weights, not an architecture: give arch="),
    ],
)
def test_clear_errors(tiny, kwargs, message):
    weights, config = tiny
    if kwargs.get("config") == "CONFIG":
        kwargs["config"] = config
    with pytest.raises(ModelError, match=message):
        burnedge.load(weights, **kwargs)


def test_a_missing_config_file_and_a_missing_checkpoint(tiny, tmp_path):
    weights, _ = tiny
    with pytest.raises(ModelError, match="nope.json: no such config file"):
        burnedge.load(weights, arch="bert", config=tmp_path / "nope.json")
    with pytest.raises(BurnedgeError, match="gone.safetensors: no such file"):
        burnedge.load(tmp_path / "gone.safetensors", arch="resnet8")


def test_cli_export_arch_and_verify(tiny, tmp_path, capsys):
    weights, config = tiny
    out = tmp_path / "tiny.bedge"
    argv = ["export", str(weights), "--arch", "bert", "--config", str(config), "--input-shape", "input_ids=1,8"]
    assert main([*argv, "--arch-option", "pooling=mean", "-o", str(out), "--test-vectors", "1"]) == 0
    assert "exported" in capsys.readouterr().out
    assert [o.name for o in burnedge.Session(out).outputs] == ["last_hidden_state", "sentence_embedding"]
    assert main(["verify", str(out)]) == 0


def test_cli_errors_are_one_line_with_status_2(tiny, capsys):
    weights, config = tiny
    assert main(["export", str(weights), "--arch", "nope"]) == 2
    assert "unknown architecture 'nope'" in capsys.readouterr().err
    assert main(["export", str(weights), "--config", str(config)]) == 2
    assert "--config and --arch-option need --arch" in capsys.readouterr().err
    assert main(["export", str(weights), "--arch", "bert", "--config", str(config), "--arch-option", "x"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    for command in ("export", "run", "inspect", "quantize"):
        extra = ["--calibration", str(weights)] if command == "quantize" else []
        assert main([command, str(weights), *extra]) == 2, command
        assert "holds weights, not an architecture: give --arch NAME" in capsys.readouterr().err, command


def test_cli_zoo_lists_every_architecture(capsys):
    assert main(["zoo"]) == 0
    text = capsys.readouterr().out
    for name in ARCHITECTURES:
        assert f"\n{name} " in text
    assert "input_ids int64[1, 128]" in text
    assert main(["zoo", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(ARCHITECTURES) >= {"bert", "resnet18", "resnet50", "mobilenet_v2", "ds_cnn", "resnet8"}
    assert rows["bert"]["needs_config"] and rows["resnet18"]["inputs"] == [
        {"name": "x", "dtype": "float32", "shape": [1, 3, 224, 224]}
    ]


def test_cli_inspect_and_run_arch(tiny, tmp_path, capsys):
    weights, config = tiny
    flags = ["--arch", "bert", "--config", str(config), "--input-shape", "input_ids=1,8"]
    assert main(["inspect", str(weights), *flags]) == 0
    assert "input_ids                int64    [1, 8]" in capsys.readouterr().out
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        np.save(tmp_path / f"{name}.npy", np.ones((1, 8), np.int64))
    inputs = [f"--input={n}={tmp_path / n}.npy" for n in ("input_ids", "attention_mask", "token_type_ids")]
    assert main(["run", str(weights), *flags, *inputs, "--output-dir", str(tmp_path / "out")]) == 0
    assert np.load(tmp_path / "out" / "last_hidden_state.npy").shape == (1, 8, 8)


def test_a_float16_checkpoint_loads_as_float32(tiny, tmp_path):
    weights, config = tiny
    half = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in load_file(str(weights)).items()}
    save_file(half, str(tmp_path / "half.safetensors"))
    shapes = {"input_ids": (1, 8)}
    full = burnedge.load(weights, arch="bert", config=config, input_shapes=shapes)
    model = burnedge.load(tmp_path / "half.safetensors", arch="bert", config=config, input_shapes=shapes)
    floats = {v.dtype for v in model.graph.values.values() if v.data is not None and v.dtype.kind == "f"}
    assert floats == {np.dtype(np.float32)}
    feeds = {"input_ids": np.arange(8)[None], "attention_mask": np.ones((1, 8), np.int64)}
    feeds["token_type_ids"] = np.zeros((1, 8), np.int64)
    a, b = (burnedge.Session(m).run(feeds)["last_hidden_state"] for m in (model, full))
    assert 0 < np.abs(a - b).max() < 1e-2  # the float16 rounding of the weights, no more
