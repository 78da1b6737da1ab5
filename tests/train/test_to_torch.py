"""burnedge.train.to_torch / from_torch: PyTorch's names kept, one SGD step, and the exported bundle agreeing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import nn

torch = pytest.importorskip("torch", reason="burnedge.train needs the train extra")
from burnedge.train import from_torch, to_torch  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class TorchNet(torch.nn.Module):  # the same architecture in PyTorch: its state dict names are the reference
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU()
        )
        self.fc = torch.nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def _traced() -> burnedge.Model:
    return burnedge.trace(Net(), {"x": (2, 3, 6, 6)})


def test_traced_model_keeps_pytorch_names():
    module = to_torch(_traced())
    ours = set(module.state_dict())
    ref = TorchNet()
    assert ours == {k for k, v in ref.state_dict().items() if v.is_floating_point()}
    assert {n for n, _ in module.named_parameters()} == {n for n, _ in ref.named_parameters()}
    assert {n for n, _ in module.named_buffers()} >= {"features.1.running_mean", "features.1.running_var"}
    assert tuple(module(torch.zeros(4, 3, 6, 6)).shape) == (4, 5)  # traced at batch 2; training may use another


def test_onnx_names_are_attribute_safe_and_state_dict_keeps_them():
    w = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "onnx::MatMul_7"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "onnx::MatMul_7")],
    )
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    module = to_torch(model)
    assert list(module.state_dict()) == ["onnx::MatMul_7"]
    assert all(name.isidentifier() for name, _ in module.named_parameters())
    module.load_state_dict({"onnx::MatMul_7": torch.zeros(3, 4)})
    assert float(module(torch.ones(2, 3)).detach().abs().sum()) == 0.0


def test_unsupported_op_is_refused_with_its_name():
    g = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="det0")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    with pytest.raises(burnedge.UnsupportedOpError, match=r"torch backend: Det .*'det0'"):
        to_torch(model)
    with pytest.raises(burnedge.UnsupportedOpError, match="Det"):
        burnedge.Session(model, backend="torch")


def test_one_sgd_step_then_export_matches_torch(tmp_path):
    model = _traced()
    module = to_torch(model)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    target = torch.from_numpy(rng.standard_normal((2, 5)).astype(np.float32))
    before = {k: v.detach().clone() for k, v in module.state_dict().items()}
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    loss = torch.nn.functional.mse_loss(module(x), target)
    loss.backward()
    opt.step()
    changed = [k for k, v in module.state_dict().items() if not torch.equal(v, before[k])]
    assert {"fc.weight", "features.0.weight", "features.1.running_mean"} <= set(changed)
    with torch.no_grad():
        want = module.eval()(x).numpy()
    trained = from_torch(module, model, checkpoint=tmp_path / "trained.safetensors")
    assert set(burnedge.nn.weights.read_safetensors(tmp_path / "trained.safetensors")) == set(before)
    path = burnedge.export(trained, tmp_path / "m.bedge", test_vectors=0)
    got = burnedge.Session(path, backend="c").run({"x": x.numpy()})["output"]
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, np.abs(want).max())
    old = burnedge.Session(model, backend="numpy").run({"x": x.numpy()})["output"]
    assert np.abs(old - want).max() > 1e-3  # the step did change what the bundle computes


def test_train_mode_batch_norm_is_torchs():
    """In train mode the module normalises with batch statistics and moves the running ones, as PyTorch does."""
    module = to_torch(_traced())
    ref = TorchNet()
    ref.load_state_dict(module.state_dict(), strict=False)  # torch's num_batches_tracked stays its own
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32) * 3 + 1)
    with torch.no_grad():
        assert torch.allclose(module.train()(x), ref.train()(x), atol=1e-5)
        for k in ("features.1.running_mean", "features.1.running_var"):
            assert torch.allclose(module.state_dict()[k], ref.state_dict()[k], atol=1e-6), k
        assert torch.allclose(module.eval()(x), ref.eval()(x), atol=1e-5)


def test_from_torch_names_what_does_not_fit():
    model = _traced()
    module = to_torch(model)
    state = module.state_dict()
    state["fc.weight"] = torch.zeros(5, 3)

    class Fake(torch.nn.Module):
        def state_dict(self, *a, **k):
            return state

    with pytest.raises(burnedge.BurnedgeError, match=r"'fc.weight': shape \[5, 3\], the model has \[5, 144\]"):
        from_torch(Fake(), model)


def test_without_torch_the_backend_says_to_install_the_train_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        import burnedge
        from burnedge.backends import available, get
        assert "torch" not in available()
        try:
            get("torch")
        except burnedge.BurnedgeError as exc:
            print(exc)
        from burnedge.examples import DIGITS_MODEL
        from burnedge.train import to_torch
        try:
            to_torch(burnedge.load(DIGITS_MODEL))
        except burnedge.BurnedgeError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert len(lines) == 2 and all("pip install 'burnedge[train]'" in line for line in lines), out


def test_zoo_model_is_its_pytorch_twin_both_ways(tmp_path):
    """ds_cnn from the zoo, loaded from the state dict of the suite's PyTorch model: to_torch has its names and
    computes what PyTorch computes; from_torch takes that PyTorch model's weights after an SGD step."""
    from safetensors.torch import save_file

    from tests.models.ds_cnn import gen

    torch.manual_seed(0)
    ref = gen.DSCNN()
    gen._randomize_batchnorm(ref, batch=8, steps=1)
    ref.eval()
    save_file(ref.state_dict(), str(tmp_path / "ds_cnn.safetensors"))
    model = burnedge.load(tmp_path / "ds_cnn.safetensors", arch="ds_cnn")
    module = to_torch(model).eval()
    floats = {k for k, v in ref.state_dict().items() if v.is_floating_point()}
    assert set(module.state_dict()) == floats
    x = torch.from_numpy(np.random.default_rng(4).standard_normal(gen.INPUT_SHAPE).astype(np.float32))
    with torch.no_grad():
        assert torch.allclose(module(x), ref(x), atol=1e-5, rtol=1e-4)
    opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    ref(x).square().mean().backward()
    opt.step()
    with torch.no_grad():
        want = ref(x).numpy()
    trained = from_torch(ref, model)  # a plain PyTorch module: matched by its state dict's names
    got = burnedge.Session(trained, backend="numpy").run({"input": x.numpy()})["output"]
    assert np.abs(got - want).max() <= 1e-5 * max(1.0, np.abs(want).max())
    old = burnedge.Session(model, backend="numpy").run({"input": x.numpy()})["output"]
    assert np.abs(old - want).max() > 1e-3  # the step changed the weights that came back


@pytest.mark.parametrize("order", [("a:b", "a_b", "a.w", "training"), ("a_b", "a:b", "training", "a.w")])
def test_names_that_collide_once_made_safe_stay_apart(order):
    """'a:b' and 'a_b' (and 'training', a Module attribute) are different weights, in either order."""
    values = {n: np.full((2, 2), i + 1, np.float32) for i, n in enumerate(order)}
    nodes, prev = [], "x"
    for i, n in enumerate(order):
        nodes.append(helper.make_node("Add", [prev, n], [f"t{i}"]))
        prev = f"t{i}"
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(a, n) for n, a in values.items()],
    )
    module = to_torch(burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])))
    state = module.state_dict()
    assert set(state) == set(order)
    for n, a in values.items():
        assert np.array_equal(state[n].numpy(), a), n
    assert module.training is True and isinstance(module.training, bool)
