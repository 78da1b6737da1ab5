"""torch.nn.MultiheadAttention: its constructor, parameter names (in_proj_weight / in_proj_bias / out_proj, or
q_proj_weight / k_proj_weight / v_proj_weight when kdim / vdim differ) and forward, traced to matmuls and a softmax.

forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights) follows torch:
1. project: q, k, v = linear(query / key / value) with the three row blocks of in_proj_weight and in_proj_bias;
2. split heads: [B, L, E] -> [B, heads, L, E / heads];
3. scores = q @ k^T / sqrt(E / heads), plus attn_mask ([L, S] or [B * heads, L, S]) and key_padding_mask ([B, S]);
   a boolean mask marks the places *not* to attend (they get -inf), a float mask is added;
4. softmax over the keys, times v, heads joined, out_proj; the weights, averaged over the heads unless
   average_attn_weights=False, are the second result when need_weights (else None).
"""

from __future__ import annotations

import math

import numpy as np

from . import functional as F
from ._math import where
from ._state import current
from .layers.linear import Linear
from .module import Module
from .tensor import Parameter, Tensor

__all__ = ["MultiheadAttention"]

_RNG = np.random.default_rng(0)


def _xavier(rows: int, cols: int) -> Parameter:
    bound = math.sqrt(6 / (rows + cols))
    return Parameter(_RNG.uniform(-bound, bound, size=(rows, cols)).astype(np.float32))


class MultiheadAttention(Module):
    """Attention over `num_heads` heads of `embed_dim / num_heads` features (dropout: training only)."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn:
            raise ValueError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _xavier(3 * embed_dim, embed_dim)
        else:
            self.q_proj_weight = _xavier(embed_dim, embed_dim)
            self.k_proj_weight = _xavier(embed_dim, self.kdim)
            self.v_proj_weight = _xavier(embed_dim, self.vdim)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)

    def _projection_weights(self) -> list[Tensor]:
        if self._qkv_same_embed_dim:
            return F.chunk(self.in_proj_weight, 3, 0)
        return [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]

    def _heads(self, x: Tensor) -> Tensor:
        """[B, L, E] -> [B, heads, L, head_dim]."""
        return x.reshape(x.shape[0], x.shape[1], self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _additive(self, mask: Tensor) -> Tensor:
        """A mask as the amount added to the scores: True -> -inf (not attended), a float mask as it is."""
        if np.dtype(mask.dtype) == np.bool_:
            return where(mask, np.float32(-np.inf), np.float32(0))
        return mask

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        if is_causal and attn_mask is None:  # torch's rule: the flag is a hint about the mask given
            raise current().error("is_causal=True needs attn_mask (the causal mask it describes), as in torch")
        unbatched = query.dim() == 2
        if unbatched:  # [L, E]: one sequence
            query, key, value = (t.unsqueeze(0) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:  # [L, B, E] -> [B, L, E]
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        batch, length, src = query.shape[0], query.shape[1], key.shape[1]
        biases = F.chunk(self.in_proj_bias, 3, 0) if self.in_proj_bias is not None else [None] * 3
        weights = self._projection_weights()
        q, k, v = (self._heads(F.linear(t, w, b)) for t, w, b in zip((query, key, value), weights, biases))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        if attn_mask is not None:
            mask = self._additive(attn_mask)
            if mask.dim() == 3:  # [B * heads, L, S]
                mask = mask.reshape(batch, self.num_heads, length, src)
            scores = scores + mask
        if key_padding_mask is not None:
            scores = scores + self._additive(key_padding_mask).reshape(batch, 1, 1, src)
        probs = F.softmax(scores, dim=-1)
        out = (probs @ v).permute(0, 2, 1, 3).reshape(batch, length, self.embed_dim)
        out = self.out_proj(out)
        if unbatched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        attn = probs.mean(dim=1) if average_attn_weights else probs
        return out, (attn.squeeze(0) if unbatched else attn)
