"""Trains the demo model: an MLP on scikit-learn's handwritten digits (8x8 images), exported to ONNX.

Kept beside the files it makes (digits_mlp.onnx, digits_test.npz). Deterministic: fixed seed, full-batch Adam in
numpy. The held-out 30% of the digits is saved as uint8 pixels (0..16) with labels for the demo to score.

    pip install scikit-learn && python -m burnedge.examples.train_digits
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import DIGITS_MODEL, DIGITS_TEST


def _split(seed: int = 0):
    from sklearn.datasets import load_digits

    d = load_digits()
    order = np.random.default_rng(seed).permutation(len(d.target))
    n_test = int(0.3 * len(order))
    test, train = order[:n_test], order[n_test:]
    return d.data[train], d.target[train], d.data[test], d.target[test]


def train(epochs: int = 400, hidden: int = 64, seed: int = 0) -> tuple[list[np.ndarray], float, np.ndarray, np.ndarray]:
    xtr, ytr, xte, yte = _split(seed)
    rng = np.random.default_rng(seed)
    x = (xtr / 16.0).astype(np.float32)
    onehot = np.eye(10, dtype=np.float32)[ytr]
    params = [
        (rng.standard_normal((64, hidden)) * np.sqrt(2 / 64)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, 10)) * np.sqrt(2 / hidden)).astype(np.float32),
        np.zeros(10, np.float32),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, b1, b2 = 0.01, 0.9, 0.999
    for t in range(1, epochs + 1):
        w1, c1, w2, c2 = params
        h = np.maximum(x @ w1 + c1, 0)
        logits = h @ w2 + c2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g_logits = (p - onehot) / len(x)
        g_h = (g_logits @ w2.T) * (h > 0)
        grads = [x.T @ g_h, g_h.sum(0), h.T @ g_logits, g_logits.sum(0)]
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            params[i] -= (lr * (m[i] / (1 - b1**t)) / (np.sqrt(v[i] / (1 - b2**t)) + 1e-8)).astype(np.float32)
    w1, c1, w2, c2 = params
    pred = (np.maximum((xte / 16.0).astype(np.float32) @ w1 + c1, 0) @ w2 + c2).argmax(1)
    return params, float((pred == yte).mean()), xte, yte


def to_onnx(params: list[np.ndarray]) -> onnx.ModelProto:
    """image[1,64] (pixels 0..16) -> scale -> Gemm -> Relu -> Gemm -> Softmax -> probabilities[1,10]."""
    w1, c1, w2, c2 = params
    inits = [
        numpy_helper.from_array(a, n)
        for a, n in [
            (np.array(1 / 16, np.float32), "scale"),
            (w1, "fc1.weight"),
            (c1, "fc1.bias"),
            (w2, "fc2.weight"),
            (c2, "fc2.bias"),
        ]
    ]
    nodes = [
        helper.make_node("Mul", ["image", "scale"], ["x"], name="normalize"),
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu1"),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(
        nodes,
        "digits_mlp",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="burnedge-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    params, acc, xte, yte = train()
    onnx.save(to_onnx(params), str(DIGITS_MODEL))
    np.savez_compressed(DIGITS_TEST, images=xte.astype(np.uint8), labels=yte.astype(np.uint8))
    print(f"held-out accuracy {acc:.4f} on {len(yte)} digits; wrote {DIGITS_MODEL.name}, {DIGITS_TEST.name}")
