"""Small BERT/MiniLM-style encoder: input_ids and attention_mask (1x32 int64) to last hidden state."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import torch
from torch import nn

SEQ_LEN = 32
VOCAB = 1000


class _Layer(nn.Module):
    """Post-LN encoder layer: multi-head self-attention, then a GELU feed-forward block."""

    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.act = nn.GELU()  # exact (Erf) form
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        return x.reshape(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + mask_bias
        ctx = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ffn_out(self.act(self.ffn_in(x))))


class Encoder(nn.Module):
    """Token + position embeddings, LayerNorm, stacked encoder layers."""

    def __init__(
        self,
        vocab: int = VOCAB,
        max_pos: int = 64,
        hidden: int = 128,
        heads: int = 4,
        layers: int = 2,
        ffn: int = 512,
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_pos, hidden)
        self.register_buffer("position_ids", torch.arange(max_pos)[None], persistent=False)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(_Layer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        seq = input_ids.shape[1]
        x = self.tokens(input_ids) + self.positions(self.position_ids[:, :seq])
        x = self.ln(x)
        # Padding keys (mask == 0) get a large negative additive bias.
        keep = attention_mask[:, None, None, :].to(torch.bool).expand(-1, 1, seq, -1)
        mask_bias = torch.where(keep, 0.0, torch.finfo(torch.float32).min)
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def build(out_path: Path) -> None:
    """Write the model to out_path as ONNX (opset 17)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Encoder().eval()
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.25, 0.25)
        input_ids = torch.randint(0, VOCAB, (1, SEQ_LEN))
        attention_mask = torch.ones(1, SEQ_LEN, dtype=torch.int64)
        attention_mask[:, SEQ_LEN * 3 // 4 :] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (input_ids, attention_mask),
            str(out_path),
            dynamo=False,
            opset_version=17,
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
        )


if __name__ == "__main__":
    build(Path(sys.argv[1]))
