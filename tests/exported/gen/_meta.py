"""Tiny helper shared by the generator scripts (stdlib only, so it works in every venv).

Each generator writes ``tests/exported/<name>.onnx`` and ``gen/<name>.meta.json``;
``gen/finalize.py`` (run in the main environment) then checks every model with
onnx.checker + onnxruntime, writes ``<name>.npz`` and builds ``MANIFEST.json``.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.dirname(HERE)


def out_path(filename):
    return os.path.join(OUT_DIR, filename)


def write_meta(
    name,
    *,
    exporter,
    exporter_version,
    framework,
    framework_version,
    features,
    input_shapes=None,
    external_data=None,
    generator_env,
    notes="",
):
    meta = {
        "name": name,
        "file": f"{name}.onnx",
        "exporter": exporter,
        "exporter_version": exporter_version,
        "framework": framework,
        "framework_version": framework_version,
        "features": features,
        "generator": f"gen/{name}.py",
        "generator_env": generator_env,
        "notes": notes,
    }
    if input_shapes:
        meta["input_shapes"] = {k: list(v) for k, v in input_shapes.items()}
    if external_data:
        meta["external_data"] = list(external_data)
    with open(os.path.join(HERE, f"{name}.meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
