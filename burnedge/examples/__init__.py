"""Built-in examples shipped inside the package (a trained model and held-out data), used by `burnedge demo`."""

from pathlib import Path

HERE = Path(__file__).parent
DIGITS_MODEL = HERE / "digits_mlp.onnx"
DIGITS_TEST = HERE / "digits_test.npz"
