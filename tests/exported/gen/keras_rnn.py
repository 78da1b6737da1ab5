"""Small Keras sequence model (LSTM -> GRU -> Dense) converted with tf2onnx.from_keras.

Run in an exporter venv (NOT the main environment):
    /tmp/venv-tf/bin/python tests/exported/gen/keras_rnn.py
(venv: tensorflow-cpu==2.15.1 tf2onnx==1.16.1 onnx==1.16.2)
tf2onnx rewrites the Keras while-loops into ONNX LSTM / GRU ops.
"""

import numpy as np
import tensorflow as tf
import tf2onnx
from _meta import out_path, write_meta

NAME = "keras_rnn"
T, F = 12, 8

tf.keras.utils.set_random_seed(0)
L = tf.keras.layers
inp = tf.keras.Input(shape=(T, F), name="seq")
x = L.LSTM(16, return_sequences=True, name="lstm")(inp)
x = L.GRU(12, name="gru")(x)  # Keras default reset_after=True -> ONNX GRU linear_before_reset=1
x = L.Dense(4, activation="softmax", name="probs")(x)
model = tf.keras.Model(inp, x, name=NAME)

rng = np.random.default_rng(1)
for layer in model.layers:
    ws = layer.get_weights()
    if ws:  # make zero-initialised biases non-zero
        layer.set_weights(
            [w if w.ndim > 1 and not np.all(w == 0) else rng.normal(0, 0.2, w.shape).astype(np.float32) for w in ws]
        )

spec = (tf.TensorSpec((None, T, F), tf.float32, name="seq"),)
tf2onnx.convert.from_keras(model, input_signature=spec, opset=13, output_path=out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="tf2onnx",
    exporter_version=tf2onnx.__version__,
    framework="tensorflow/keras",
    framework_version=tf.__version__,
    features=[
        "LSTM op (tf2onnx rewrite of keras while-loop)",
        "GRU op, linear_before_reset=1",
        "Transpose/Squeeze around RNN ops (batch-major keras vs time-major ONNX)",
        "dynamic batch dim",
    ],
    input_shapes={"seq": (1, T, F)},
    generator_env="venv: tensorflow-cpu==2.15.1 tf2onnx==1.16.1 onnx==1.16.2",
)
print("wrote", out_path(f"{NAME}.onnx"))
