#!/usr/bin/env bash
# Regenerate every model in tests/exported/ and rebuild MANIFEST.json + the .npz files.
# The heavy exporters live in throw-away venvs, never in the project's environment:
#   python -m venv /tmp/venv-tf     && /tmp/venv-tf/bin/pip install tensorflow-cpu==2.15.1 tf2onnx==1.16.1 onnx==1.16.2
#   python -m venv /tmp/venv-paddle && /tmp/venv-paddle/bin/pip install paddlepaddle==3.0.0 paddle2onnx==2.0.1
#   python -m venv --system-site-packages /tmp/venv-torch && /tmp/venv-torch/bin/pip install onnxscript==0.7.2
# The plain-torch scripts and finalize.py use the main environment (torch 2.13.0 CPU, onnx, onnxruntime).
set -euo pipefail
cd "$(dirname "$0")"
TF=${VENV_TF:-/tmp/venv-tf}/bin/python
PD=${VENV_PADDLE:-/tmp/venv-paddle}/bin/python
TS=${VENV_TORCH:-/tmp/venv-torch}/bin/python
PY=${PYTHON:-python}

"$TF" keras_cnn.py
"$TF" keras_rnn.py
"$PD" paddle_cnn.py
"$PD" paddle_mlp.py
"$PY" torch_constant_weights.py
"$PY" torch_dynamic_cnn.py
"$PY" torch_local_functions.py
"$PY" torch_external_data.py
"$PY" torch_opset9.py
"$PY" vc_opset9_to_21.py          # needs torch_opset9.onnx
"$TS" torch_dynamic_seq.py
"$TS" torch_opset21.py
"$TS" onnxscript_functions.py
"$PY" finalize.py
