"""int8 quantization: qparams (the scheme), calibrators, calibration runs and the per-layer accuracy report.

The scheme is DESIGN.md's int8 contract: symmetric per-channel int8 weights, asymmetric per-tensor int8
activations, int32 bias, and requantization by a fixed-point multiplier and shift with one rounding rule.
"""

from .calibrate import CALIBRATORS, MSE, Calibrator, Entropy, MinMax, Percentile, make_calibrator
from .observe import collect, layers, trace
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
    "activation_qparams",
    "bias_qparams",
    "collect",
    "compare",
    "dequantize",
    "layers",
    "make_calibrator",
    "quantize",
    "quantize_bias",
    "quantize_multiplier",
    "requant_multiplier",
    "requantize",
    "trace",
    "weight_qparams",
]
