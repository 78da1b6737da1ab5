"""burnedge.nn.MultiheadAttention against torch.nn.MultiheadAttention: parameter names, outputs, attention weights.

The masks are model inputs (a boolean key_padding_mask, a float or boolean attn_mask), as an exported model takes
them; torch runs the same module in eval mode on the same arrays.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import burnedge
import burnedge.nn as nn
from burnedge.errors import TraceError

from .common import randn, run, state_of, worst

TOL = 1e-5
E, HEADS, L, S, B = 8, 2, 4, 5, 2


class Attend(nn.Module):
    def __init__(self, mha: nn.Module, need_weights: bool, average: bool) -> None:
        super().__init__()
        self.mha, self.need_weights, self.average = mha, need_weights, average

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None):
        out, weights = self.mha(
            query,
            key,
            value,
            key_padding_mask=key_padding_mask,
            attn_mask=attn_mask,
            need_weights=self.need_weights,
            average_attn_weights=self.average,
        )
        return {"out": out, "weights": weights} if self.need_weights else {"out": out}


def _pair(**kwargs):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(E, HEADS, **kwargs).eval()
    with torch.no_grad():  # torch starts the biases at 0: make them count
        for name, p in ref.named_parameters():
            if "bias" in name:
                p.uniform_(-0.5, 0.5)
    ours = nn.MultiheadAttention(E, HEADS, **kwargs)
    ours.load_state_dict(state_of(ref))
    return ref, ours


MASKS = {
    "none": {},
    "padding": {"key_padding_mask": np.array([[False] * 4 + [True], [False] * 2 + [True] * 3])},
    "float-mask": {"attn_mask": randn(L, S, seed=5)},
    "bool-mask-and-padding": {
        "attn_mask": np.triu(np.ones((L, S), bool), 2),
        "key_padding_mask": np.array([[False] * 5, [False] * 4 + [True]]),
    },
    "per-head-mask": {"attn_mask": randn(B * HEADS, L, S, seed=6)},
}


@pytest.mark.parametrize("masks", sorted(MASKS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_matches_torch(masks, batch_first):
    ref, ours = _pair(batch_first=batch_first)
    shape = (B, L, E) if batch_first else (L, B, E)
    kv = (B, S, E) if batch_first else (S, B, E)
    feeds = {"query": randn(*shape, seed=1), "key": randn(*kv, seed=2), "value": randn(*kv, seed=3), **MASKS[masks]}
    got = run(burnedge.trace(Attend(ours, True, True), feeds), feeds)
    with torch.no_grad():
        t = {k: torch.from_numpy(v) for k, v in feeds.items()}
        out, weights = ref(t.pop("query"), t.pop("key"), t.pop("value"), **t)
    assert worst(got["out"], out.numpy()) < TOL
    assert worst(got["weights"], weights.numpy()) < TOL


def test_per_head_weights_and_self_attention_without_weights():
    ref, ours = _pair(batch_first=True)
    x = randn(B, L, E, seed=4)
    feeds = {"query": x, "key": x, "value": x}
    per_head = run(burnedge.trace(Attend(ours, True, False), feeds), feeds)
    only_out = run(burnedge.trace(Attend(ours, False, True), feeds), feeds)
    with torch.no_grad():
        t = torch.from_numpy(x)
        out, weights = ref(t, t, t, average_attn_weights=False)
    assert weights.shape == (B, HEADS, L, L)
    assert worst(per_head["weights"], weights.numpy()) < TOL
    assert set(only_out) == {"out"} and worst(only_out["out"], out.numpy()) < TOL


def test_kdim_vdim_use_separate_projections():
    ref, ours = _pair(kdim=3, vdim=6, batch_first=True)
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    assert "q_proj_weight" in ours.state_dict() and "in_proj_weight" not in ours.state_dict()
    feeds = {"query": randn(B, L, E, seed=1), "key": randn(B, S, 3, seed=2), "value": randn(B, S, 6, seed=3)}
    got = run(burnedge.trace(Attend(ours, True, True), feeds), feeds)
    with torch.no_grad():
        out, weights = ref(*(torch.from_numpy(feeds[k]) for k in ("query", "key", "value")))
    assert worst(got["out"], out.numpy()) < TOL and worst(got["weights"], weights.numpy()) < TOL


def test_parameter_names_are_torchs():
    ref, ours = _pair()
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    assert {k: v.shape for k, v in ours.state_dict().items()}["in_proj_weight"] == (3 * E, E)


def test_is_causal_needs_the_mask():
    _, ours = _pair()

    class Causal(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mha = ours

        def forward(self, x):
            return self.mha(x, x, x, is_causal=True)[0]

    with pytest.raises(TraceError, match=r"mha \(MultiheadAttention\): is_causal=True needs attn_mask"):
        burnedge.trace(Causal(), {"x": (L, B, E)})
