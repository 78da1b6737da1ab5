"""Small Keras CNN (NHWC) converted with tf2onnx.from_keras.

Run in an exporter venv (NOT the main environment):
    python -m venv /tmp/venv-tf
    /tmp/venv-tf/bin/pip install tensorflow-cpu==2.15.1 tf2onnx==1.16.1 onnx==1.16.2
    /tmp/venv-tf/bin/python tests/exported/gen/keras_cnn.py
(TF 2.15 is the last release whose tf.keras is Keras 2, which tf2onnx.from_keras supports.)
"""

import numpy as np
import tensorflow as tf
import tf2onnx
from _meta import out_path, write_meta

NAME = "keras_cnn"

tf.keras.utils.set_random_seed(0)
L = tf.keras.layers
inp = tf.keras.Input(shape=(32, 32, 3), name="image")  # batch dim is None -> dynamic
x = L.Conv2D(8, 3, strides=2, padding="same", use_bias=False, name="stem_conv")(inp)
x = L.BatchNormalization(name="stem_bn")(x)
x = L.ReLU(name="stem_relu")(x)
x = L.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw")(x)
x = L.BatchNormalization(name="dw_bn")(x)
x = L.ReLU(max_value=6.0, name="dw_relu6")(x)
x = L.Conv2D(16, 1, padding="valid", name="pw")(x)
x = L.BatchNormalization(name="pw_bn")(x)
x = L.ReLU(name="pw_relu")(x)
x = L.MaxPooling2D(2, name="pool")(x)
x = L.Conv2D(16, 3, padding="valid", activation="relu", name="conv2")(x)
x = L.GlobalAveragePooling2D(name="gap")(x)
x = L.Dense(10, activation="softmax", name="probs")(x)
model = tf.keras.Model(inp, x, name=NAME)

# Give BatchNorm non-trivial statistics so folding/unfolding bugs are visible.
rng = np.random.default_rng(0)
for layer in model.layers:
    if isinstance(layer, (L.Conv2D, L.Dense)) and layer.use_bias:
        kernel, bias = layer.get_weights()  # Keras zero-inits biases; make them non-zero
        layer.set_weights([kernel, rng.normal(0, 0.1, bias.shape).astype(np.float32)])
    if isinstance(layer, L.BatchNormalization):
        gamma, beta, mean, var = layer.get_weights()
        layer.set_weights(
            [
                rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                rng.normal(0, 0.1, beta.shape).astype(np.float32),
                rng.normal(0, 0.1, mean.shape).astype(np.float32),
                rng.uniform(0.5, 1.5, var.shape).astype(np.float32),
            ]
        )

spec = (tf.TensorSpec((None, 32, 32, 3), tf.float32, name="image"),)
model_proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=13, output_path=out_path(f"{NAME}.onnx"))

write_meta(
    NAME,
    exporter="tf2onnx",
    exporter_version=tf2onnx.__version__,
    framework="tensorflow/keras",
    framework_version=tf.__version__,
    features=[
        "NHWC input with Transpose ops inserted by tf2onnx",
        "Conv (BN folded)",
        "depthwise Conv (group=C)",
        "Clip (ReLU6)",
        "MaxPool",
        "GlobalAveragePool/ReduceMean",
        "MatMul+Add dense",
        "Softmax",
        "dynamic batch dim (unk__ dim_param)",
    ],
    input_shapes={"image": (1, 32, 32, 3)},
    generator_env="venv: tensorflow-cpu==2.15.1 tf2onnx==1.16.1 onnx==1.16.2",
)
print("wrote", out_path(f"{NAME}.onnx"))
