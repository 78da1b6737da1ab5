"""int8 quantization: qparams (the scheme), calibrators, calibration runs, the int8 rewrite (rules/), QDQ import
(qdq/: an already-quantized ONNX graph to burnedge int8 ops) and the accuracy report.

``quantize_model(model, calibration, method="auto", keep_float="auto", state="auto")`` is post-training static
quantization end to end (pipeline.py); ``quantize`` / ``dequantize`` are the element-wise float <-> int8 maps of
one QParams.

The scheme is DESIGN.md's int8 contract: symmetric per-channel int8 weights, asymmetric per-tensor int8
activations, int32 bias, and requantization by a fixed-point multiplier and shift with one rounding rule (written
once, in `burnedge.ops.fixedpoint`).
"""

from .calibrate import CALIBRATORS, MSE, Calibrator, Entropy, MinMax, Percentile, make_calibrator
from .data import load_calibration
from .observe import collect, layers, trace
from .pipeline import QuantizationReport, quantize_model
from .qparams import (
    QParams,
    activation_qparams,
    bias_qparams,
    dequantize,
    quantize,
    quantize_bias,
    quantize_multiplier,
    requant_multiplier,
    requantize,
    weight_qparams,
)
from .report import AccuracyReport, LayerError, compare

__all__ = [
    "AccuracyReport",
    "CALIBRATORS",
    "Calibrator",
    "Entropy",
    "LayerError",
    "MSE",
    "MinMax",
    "Percentile",
    "QParams",
    "QuantizationReport",
    "activation_qparams",
    "bias_qparams",
    "collect",
    "compare",
    "dequantize",
    "layers",
    "load_calibration",
    "make_calibrator",
    "quantize",
    "quantize_bias",
    "quantize_model",
    "quantize_multiplier",
    "requant_multiplier",
    "requantize",
    "trace",
    "weight_qparams",
]
