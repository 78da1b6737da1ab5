"""The BERT encoder (Hugging Face's BertModel) from a config.json + model.safetensors: MiniLM, BERT-base, ...

Module names are BertModel's (`embeddings.word_embeddings.weight`, `encoder.layer.3.attention.self.query.bias`,
`pooler.dense.weight`), so its checkpoints load as they are; a task model's (BertForSequenceClassification ...)
loads too: its `bert.` prefix is dropped, its head (`cls.`, `classifier.`, ...) left out. The forward is
BertModel's with absolute position embeddings: embeddings (word + position + token type, LayerNorm), then per layer
self-attention with the additive mask (1 - attention_mask) * float32-min, residual + LayerNorm, the feed-forward
(hidden_act), residual + LayerNorm. Outputs: `last_hidden_state` [B, S, hidden]; with pooling="mean" also
`sentence_embedding` [B, hidden], the mean over the tokens attention_mask keeps (sentence-transformers' pooling).
"""

from __future__ import annotations

import math
import re

import numpy as np

from .. import nn
from ..errors import ModelError
from ..nn import functional as F
from .registry import Architecture, Config, Input, Shapes, Tensors, register

__all__ = ["BertModel"]

_ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": lambda x: F.relu(x),
    "silu": lambda x: F.silu(x),
}
_PARTS = ("embeddings.", "encoder.", "pooler.")
_RENAMES = [(re.compile(r"^bert\."), ""), (re.compile(r"\.gamma$"), ".weight"), (re.compile(r"\.beta$"), ".bias")]
_OPTIONAL = ("embeddings.token_type_ids",)  # buffers newer transformers versions no longer save (or save)


class BertEmbeddings(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = nn.Embedding(c.get("type_vocab_size", 2), c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c.get("layer_norm_eps", 1e-12))
        positions = np.arange(c["max_position_embeddings"], dtype=np.int64)[None]
        self.register_buffer("position_ids", positions)

    def forward(self, input_ids, token_type_ids):
        positions = self.position_ids[:, : input_ids.shape[1]]
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        return self.LayerNorm(x + self.token_type_embeddings(token_type_ids))


class BertSelfAttention(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        hidden, self.heads = c["hidden_size"], c["num_attention_heads"]
        self.head_size = hidden // self.heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))

    def _split(self, x):
        return x.reshape(x.shape[0], x.shape[1], self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_size)) + mask
        context = F.softmax(scores, dim=-1) @ v
        return context.permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], self.heads * self.head_size)


class BertResidual(nn.Module):
    """BertSelfOutput / BertOutput: dense, then LayerNorm of it plus the block's input."""

    def __init__(self, c: Config, width: int) -> None:
        super().__init__()
        self.dense = nn.Linear(width, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c.get("layer_norm_eps", 1e-12))

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertResidual(c, c["hidden_size"])

    def forward(self, x, mask):
        return self.output(self.self(x, mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.act = _ACTIVATIONS[c.get("hidden_act", "gelu")]

    def forward(self, x):
        return self.act(self.dense(x))


class BertLayer(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertResidual(c, c["intermediate_size"])

    def forward(self, x, mask):
        x = self.attention(x, mask)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, x, mask):
        for layer in self.layer:
            x = layer(x, mask)
        return x


class BertPooler(nn.Module):
    """Kept for its weights (`pooler.dense`); the outputs do not use it."""

    def __init__(self, c: Config) -> None:
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])


class BertModel(nn.Module):
    """BertModel.forward(input_ids, attention_mask, token_type_ids) -> {"last_hidden_state"[, "sentence_embedding"]}."""

    def __init__(self, config: Config, pooler: bool = True, pooling: str = "none") -> None:
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        if pooler:
            self.pooler = BertPooler(config)
        self.pooling = pooling

    def forward(self, input_ids, attention_mask, token_type_ids):
        keep = attention_mask.float()
        mask = (1.0 - keep[:, None, None, :]) * float(np.finfo(np.float32).min)
        hidden = self.encoder(self.embeddings(input_ids, token_type_ids), mask)
        out = {"last_hidden_state": hidden}
        if self.pooling == "mean":
            weights = keep.unsqueeze(-1)
            out["sentence_embedding"] = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        return out


# -- the zoo entry -------------------------------------------------------------------------------------------------
_NEEDED = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")


def _checked_config(c: Config) -> Config:
    missing = [k for k in _NEEDED if k not in c]
    if missing:
        raise ModelError(f"bert: the config lacks {', '.join(missing)} (is it a BERT config.json?)")
    if c.get("model_type", "bert") != "bert":
        raise ModelError(f"bert: the config's model_type is {c['model_type']!r}; this architecture loads 'bert'")
    if c.get("position_embedding_type", "absolute") != "absolute":
        raise ModelError(
            f"bert: position_embedding_type {c['position_embedding_type']!r}; only 'absolute' is supported"
        )
    if c.get("hidden_act", "gelu") not in _ACTIVATIONS:
        raise ModelError(f"bert: hidden_act {c['hidden_act']!r}; supported: {', '.join(_ACTIVATIONS)}")
    if c["hidden_size"] % c["num_attention_heads"]:
        raise ModelError(f"bert: hidden_size {c['hidden_size']} is not a multiple of {c['num_attention_heads']} heads")
    return {"max_position_embeddings": 512, **c}


def _prepare(tensors: Tensors) -> Tensors:
    """BertModel's keys: the `bert.` prefix and TF-era gamma/beta renamed, task heads and optional buffers dropped."""
    out = {}
    for key, value in tensors.items():
        for pattern, repl in _RENAMES:
            key = pattern.sub(repl, key)
        if key.startswith(_PARTS) and key not in _OPTIONAL:
            out[key] = value
    return out


def _build(config: Config, tensors: Tensors, options: dict) -> nn.Module:
    c = _checked_config(config)
    if options["pooling"] not in ("none", "mean"):
        raise ModelError(f"bert: pooling {options['pooling']!r}; expected 'none' or 'mean'")
    if "embeddings.position_ids" not in tensors:  # newer checkpoints leave the buffer out
        tensors["embeddings.position_ids"] = np.arange(c["max_position_embeddings"], dtype=np.int64)[None]
    pooler = any(k.startswith("pooler.") for k in tensors)
    return BertModel(c, pooler=pooler, pooling=options["pooling"])


def _inputs(config: Config) -> tuple[Input, ...]:
    """[1, 128] by default (a shorter max_position_embeddings: that)."""
    shape = (1, min(128, config.get("max_position_embeddings", 512)))
    return tuple(Input(n, np.int64, shape) for n in ("input_ids", "attention_mask", "token_type_ids"))


def _check(config: Config, shapes: Shapes, given: set[str]) -> Shapes:
    """All three inputs take one [batch, sequence] shape: those not given take that of the given ones."""
    first = shapes[next((n for n in shapes if n in given), "input_ids")]
    for name, shape in shapes.items():
        if name in given and shape != first:
            raise ModelError(f"bert: input {name!r} has shape {list(shape)}; the others {list(first)} (all alike)")
    longest = config.get("max_position_embeddings", 512)
    if first[1] > longest:
        raise ModelError(f"bert: sequence length {first[1]} exceeds max_position_embeddings {longest}")
    return dict.fromkeys(shapes, first)


register(
    Architecture(
        name="bert",
        summary="BERT encoder (BertModel: MiniLM, BERT-base, sentence-transformers)",
        checkpoint="Hugging Face model.safetensors + config.json (BertModel or BertFor*, `bert.` prefix)",
        build=_build,
        inputs=_inputs,
        needs_config=True,
        prepare=_prepare,
        check=_check,
        options={"pooling": "none"},
    )
)
