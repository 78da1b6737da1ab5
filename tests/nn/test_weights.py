"""Checkpoints: a torch CNN's safetensors loaded into the same CNN written in burnedge.nn, exported and run on C;
the one mismatch error; state dicts round-tripping with torch.nn both ways; remap, half types, .pt files."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

import burnedge
import burnedge.nn as bnn
import burnedge.nn.functional as BF

from .common import rand, randomize, run, torch_out


def small_cnn(nn, F):
    """The same source for both libraries: `nn`/`F` are torch.nn and its functional, or burnedge's."""

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1),
                nn.BatchNorm2d(8),
                nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding="same", groups=2, padding_mode="reflect"),
                nn.BatchNorm2d(16),
                nn.Hardswish(),
            )
            self.pool = nn.AdaptiveAvgPool2d((2, 2))
            self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 32), nn.GELU())
            self.head = nn.Linear(32, 10)

        def forward(self, image):
            x = self.pool(self.features(image))
            x = self.classifier(x)
            return F.log_softmax(self.head(x) + x.mean(dim=1, keepdim=True), dim=1)

    return SmallCNN()


def test_a_torch_cnn_checkpoint_runs_as_a_bundle_on_c(tmp_path):
    """Done-when 1: torch builds and saves the CNN; burnedge loads it, traces, exports and runs it on C."""
    torch.manual_seed(0)
    original = randomize(small_cnn(torch.nn, torch.nn.functional))
    save_file(original.state_dict(), tmp_path / "cnn.safetensors")

    ours = small_cnn(bnn, BF)
    ours.load_safetensors(tmp_path / "cnn.safetensors")
    model = burnedge.trace(ours, {"image": (2, 1, 16, 16)})
    bundle = burnedge.export(model, tmp_path / "cnn.bedge")
    session = burnedge.Session(bundle)
    assert session.backend.name == "c"
    x = rand((2, 1, 16, 16), seed=7)
    got, want = session.run({"image": x})["output"], torch_out(original, x)
    assert got.shape == (2, 10)
    assert np.abs(got - want).max() <= 1e-5
    checks = burnedge.verify(bundle)
    assert checks and all(c.ok for c in checks)


def test_a_mismatched_checkpoint_is_one_error_naming_every_problem(tmp_path):
    """Done-when 4: a renamed key, a missing key and a wrong shape, all in one WeightsError with the file name."""
    state = randomize(small_cnn(torch.nn, torch.nn.functional)).state_dict()
    state["head.wieght"] = state.pop("head.weight")  # renamed
    del state["features.1.running_var"]  # missing
    state["classifier.2.bias"] = torch.zeros(31)  # wrong shape
    path = tmp_path / "bad.safetensors"
    save_file(state, path)
    with pytest.raises(burnedge.WeightsError) as err:
        small_cnn(bnn, BF).load_safetensors(path)
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg
    assert "missing key(s): 'features.1.running_var', 'head.weight'" in msg
    assert "unexpected key(s): 'head.wieght' (renamed 'head.weight'?)" in msg
    assert "'classifier.2.bias' is [31] in the checkpoint, [32] in the module" in msg
    with pytest.raises(burnedge.WeightsError, match="shape mismatch"):  # non-strict still refuses wrong shapes
        small_cnn(bnn, BF).load_safetensors(path, strict=False)


def test_remap_rewrites_keys_and_strict_false_reports_the_rest(tmp_path):
    torch.manual_seed(1)
    original = randomize(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)))
    save_file(
        {f"model.{k}": v for k, v in original.state_dict().items()} | {"extra": torch.ones(1)},
        tmp_path / "w.safetensors",
    )
    ours = bnn.Sequential(bnn.Linear(3, 4), bnn.ReLU(), bnn.Linear(4, 2))
    keys = ours.load_safetensors(tmp_path / "w.safetensors", strict=False, remap=[(r"^model\.", "")])
    assert keys.missing_keys == [] and keys.unexpected_keys == ["extra"]
    x = rand((5, 3))
    np.testing.assert_allclose(run(burnedge.trace(ours, x), {"input": x})["output"], torch_out(original, x), 1e-6)
    ours.load_safetensors(tmp_path / "w.safetensors", strict=False, remap={r"^model\.(\d)": r"\1", "^extra$": "x"})
    with pytest.raises(burnedge.WeightsError, match="remap maps both"):
        ours.load_safetensors(tmp_path / "w.safetensors", remap={r"^model\.(\d)\.(weight|bias)": "same"})
    with pytest.raises(burnedge.WeightsError, match="bad remap rule"):
        ours.load_safetensors(tmp_path / "w.safetensors", remap=[("(", "")])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_load_as_float32(tmp_path, dtype):
    torch.manual_seed(2)
    original = randomize(torch.nn.Conv1d(2, 3, 3)).to(dtype)
    save_file(original.state_dict(), tmp_path / "h.safetensors")
    ours = bnn.Conv1d(2, 3, 3)
    ours.load_safetensors(tmp_path / "h.safetensors")
    assert ours.weight.dtype == np.float32
    np.testing.assert_array_equal(ours.weight.data, original.weight.float().detach().numpy())


def test_state_dict_round_trips_with_torch_both_ways(tmp_path):
    torch.manual_seed(3)
    tm = randomize(small_cnn(torch.nn, torch.nn.functional))
    ours = small_cnn(bnn, BF)
    # burnedge -> torch: our (random, untrained) weights, saved, load strictly into torch.nn
    ours.save_safetensors(tmp_path / "ours.safetensors")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # written atomically: no temp left
    tm.load_state_dict(load_file(tmp_path / "ours.safetensors"), strict=True)
    x = rand((1, 1, 16, 16), seed=8)
    model = burnedge.trace(ours, x)
    np.testing.assert_allclose(run(model, {"image": x})["output"], torch_out(tm.eval(), x), rtol=1e-5, atol=1e-5)
    assert list(ours.state_dict()) == list(tm.state_dict())
    assert ours.state_dict()["features.1.num_batches_tracked"].dtype == np.int64
    # torch -> burnedge: torch's tensors straight into load_state_dict, then back out equal
    tm2 = randomize(small_cnn(torch.nn, torch.nn.functional), seed=9)
    ours.load_state_dict(tm2.state_dict())
    for k, v in tm2.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k], v.numpy(), err_msg=k)


def test_pt_checkpoints_load_through_torch(tmp_path):
    torch.manual_seed(4)
    tm = randomize(torch.nn.Linear(3, 2))
    torch.save({"state_dict": tm.state_dict(), "epoch": 3}, tmp_path / "w.pt")
    ours = bnn.Linear(3, 2)
    ours.load_safetensors(tmp_path / "w.pt")
    np.testing.assert_array_equal(ours.weight.data, tm.weight.detach().numpy())


def test_pt_without_torch_says_to_install_it(tmp_path, monkeypatch):
    (tmp_path / "w.pt").write_bytes(b"not read")
    real = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("no torch here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(burnedge.WeightsError, match=r"w\.pt: .*read with torch, which is not installed"):
        bnn.Linear(3, 2).load_safetensors(tmp_path / "w.pt")


def test_unreadable_files_are_weights_errors(tmp_path):
    with pytest.raises(burnedge.WeightsError, match="no such file"):
        bnn.Linear(3, 2).load_safetensors(tmp_path / "absent.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{bad}")
    with pytest.raises(burnedge.WeightsError, match="junk.safetensors: not a safetensors file"):
        bnn.Linear(3, 2).load_safetensors(tmp_path / "junk.safetensors")
    good = tmp_path / "good.safetensors"
    bnn.Linear(3, 2).save_safetensors(good)
    (tmp_path / "cut.safetensors").write_bytes(good.read_bytes()[:-8])
    with pytest.raises(burnedge.WeightsError, match="truncated"):
        bnn.Linear(3, 2).load_safetensors(tmp_path / "cut.safetensors")
    (tmp_path / "bad.pt").write_bytes(b"not a zip")
    with pytest.raises(burnedge.WeightsError, match="bad.pt: torch cannot load it"):
        bnn.Linear(3, 2).load_safetensors(tmp_path / "bad.pt")


def tiny_encoder(nn, L):
    """A BERT-like block (token and position embeddings, masked self-attention, GELU MLP, LayerNorms), written
    once for both libraries: `L` is torch or burnedge.nn (their arange, softmax, ...)."""

    class Encoder(nn.Module):
        def __init__(self, vocab=11, dim=8, heads=2):
            super().__init__()
            self.heads = heads
            self.tokens, self.positions = nn.Embedding(vocab, dim), nn.Embedding(16, dim)
            self.query, self.key, self.value = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
            self.norm1, self.norm2 = nn.LayerNorm(dim, eps=1e-12), nn.LayerNorm(dim, eps=1e-12)
            self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))

        def split(self, x):
            b, t, d = x.shape
            return x.view(b, t, self.heads, d // self.heads).permute(0, 2, 1, 3)

        def forward(self, input_ids, attention_mask):
            b, t = input_ids.shape
            h = self.tokens(input_ids) + self.positions(L.arange(t)[None, :].expand(b, t))
            q, k, v = self.split(self.query(h)), self.split(self.key(h)), self.split(self.value(h))
            scores = q @ k.transpose(-1, -2) / (k.shape[-1] ** 0.5)
            scores = scores + (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
            ctx = L.softmax(scores, dim=-1) @ v
            h = self.norm1(h + ctx.permute(0, 2, 1, 3).reshape(b, t, -1))
            return {"last_hidden_state": self.norm2(h + self.mlp(h)), "pooled": h.mean(dim=1)}

    return Encoder()


def test_a_torch_encoder_state_dict_runs_on_c():
    torch.manual_seed(5)
    original = randomize(tiny_encoder(torch.nn, torch))
    ours = tiny_encoder(bnn, bnn)
    ours.load_state_dict(original.state_dict())
    ids = np.array([[1, 5, 7, 2, 0, 0], [3, 3, 9, 10, 4, 2]], np.int64)
    mask = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], np.int64)
    model = burnedge.trace(ours, {"input_ids": ids, "attention_mask": mask})
    assert [o.name for o in model.outputs] == ["last_hidden_state", "pooled"]
    with torch.no_grad():
        want = original(torch.from_numpy(ids), torch.from_numpy(mask))
    for backend in ("numpy", "c"):
        got = run(model, {"input_ids": ids, "attention_mask": mask}, backend)
        for name in ("last_hidden_state", "pooled"):
            np.testing.assert_allclose(got[name], want[name].numpy(), rtol=1e-5, atol=1e-5, err_msg=backend)
