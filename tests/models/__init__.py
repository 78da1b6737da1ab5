"""Model suite: ONNX networks like those users deploy, each built by its gen.py."""
