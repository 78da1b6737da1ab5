"""`burnedge train`: an ONNX model (dynamic batch) and a fresh zoo model trained from .npz / .npy data, the
safetensors weights and the bundle it writes, and one-line errors (status 2) for bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge.cli import main

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
from burnedge.nn.weights import read_safetensors  # noqa: E402
from burnedge.train import to_torch  # noqa: E402


def _classifier(path):
    """x [N, 6] -> Gemm 6x3 -> logits, with a dynamic batch (the data decides it)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 3)).astype(np.float32) * 0.1
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["logits"])],
        "clf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.zeros(3, np.float32), "b")],
    )
    path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


def _data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 6)).astype(np.float32)
    return x, np.argmax(x[:, :3] + 0.1 * rng.standard_normal((n, 3)), axis=1)


def test_onnx_model_trains_and_its_bundle_computes_the_trained_weights(tmp_path, capsys):
    model_path = _classifier(tmp_path / "clf.onnx")
    x, y = _data()
    np.savez(tmp_path / "train.npz", x=x, y=y)
    (tmp_path / "valid").mkdir()
    np.save(tmp_path / "valid" / "x.npy", x[:16].astype(np.float64))  # float64 .npy: read as the input's float32
    np.save(tmp_path / "valid" / "y.npy", y[:16])
    out = tmp_path / "out"
    argv = ["train", str(model_path), "--data", str(tmp_path / "train.npz"), "--valid", str(tmp_path / "valid")]
    argv += ["--epochs", "3", "--batch", "16", "--lr", "0.05", "--out", str(out), "--dashboard", "plain"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.count("\nepoch ") + text.startswith("epoch ") == 3
    assert "valid loss" in text and f"wrote {out / 'clf.safetensors'}" in text
    weights = read_safetensors(out / "clf.safetensors")
    assert set(weights) == {"w", "b"} and np.abs(weights["b"]).max() > 0  # trained: the bias moved off zero
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 3
    module = to_torch(burnedge.load(model_path, input_shapes={"x": (16, 6)})).eval()
    module.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    with torch.no_grad():
        want = module(torch.from_numpy(x[:16])).numpy()
    bundle = burnedge.Session(out / "clf.bedge")  # the dynamic batch is 1 on the edge
    got = np.concatenate([bundle.run({"x": x[i : i + 1]})["logits"] for i in range(16)])
    assert np.abs(got - want).max() <= 1e-5


def test_fresh_zoo_model_trains_with_pytorch_names(tmp_path, capsys):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 640)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=x)
    argv = ["train", "--zoo", "fc_autoencoder", "--data", str(tmp_path / "d.npz"), "--loss", "mse", "--epochs", "2"]
    argv += ["--batch", "8", "--out", str(tmp_path / "o"), "--no-bundle", "--dashboard", "none"]
    assert main(argv) == 0
    assert "train_loss" in capsys.readouterr().out and "train_mae" in (tmp_path / "o" / "metrics.jsonl").read_text()
    weights = read_safetensors(tmp_path / "o" / "fc_autoencoder.safetensors")
    assert {"layers.0.weight", "layers.1.running_mean", "layers.27.bias"} <= set(weights)
    assert not (tmp_path / "o" / "fc_autoencoder.bedge").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--data", "nowhere.npz"], r"--data nowhere\.npz: no such file or folder"),
        (["--data", "{bad_names}"], r"no array 'x' or 'y'; it holds \['a', 'b'\] \(expected x: the inputs"),
        (["--data", "{wrong_shape}"], r"x holds samples of shape \[5\]; the model's input 'x' takes \[1, 6\]"),
        (["--data", "{uneven}"], r"x has shape \[4, 6\] and y \[3\]; expected the same number of samples"),
        (["--data", "{folder}"], r"no y\.npy in the folder"),
        (["--data", "{good}", "--loss", "hinge"], r"--loss 'hinge': unknown; known: bce, cross_entropy"),
        (["--data", "{good}", "--metric", "f1"], r"--metric 'f1': unknown; known: accuracy, mae, mse"),
        (["--data", "{good}", "--zoo", "ds_cnn"], r"give a model: an \.onnx file or --zoo NAME .*not both"),
        (["--data", "{good}", "--epochs", "0"], r"--epochs '0': expected a whole number >= 1"),
    ],
)
def test_bad_input_is_one_line_and_status_2(argv, message, tmp_path, capsys):
    model = _classifier(tmp_path / "m.onnx")
    files = {
        "bad_names": tmp_path / "names.npz",
        "wrong_shape": tmp_path / "shape.npz",
        "uneven": tmp_path / "uneven.npz",
        "folder": tmp_path / "folder",
        "good": tmp_path / "good.npz",
    }
    np.savez(files["bad_names"], a=np.zeros((4, 6)), b=np.zeros(4))
    np.savez(files["wrong_shape"], x=np.zeros((4, 5), np.float32), y=np.zeros(4, np.int64))
    np.savez(files["uneven"], x=np.zeros((4, 6), np.float32), y=np.zeros(3, np.int64))
    files["folder"].mkdir()
    np.save(files["folder"] / "x.npy", np.zeros((4, 6), np.float32))
    np.savez(files["good"], x=np.zeros((4, 6), np.float32), y=np.zeros(4, np.int64))
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    assert main(["train", str(model), *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("burnedge: error: "), err
    assert re.search(message, err), err
    assert not (tmp_path / "o").exists()


def test_zoo_errors(tmp_path, capsys):
    np.savez(tmp_path / "d.npz", x=np.zeros((4, 3, 8, 8), np.float32), y=np.zeros(4, np.int64))
    for name, message in [("nope", "no such architecture; the zoo has: "), ("resnet8", "only the batch may differ")]:
        assert main(["train", "--zoo", name, "--data", str(tmp_path / "d.npz"), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
    assert main(["train", str(tmp_path / "missing.onnx"), "--data", str(tmp_path / "d.npz")]) == 2
    assert "missing.onnx: no such model file" in capsys.readouterr().err
