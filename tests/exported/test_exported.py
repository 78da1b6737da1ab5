"""Real exporter-produced ONNX models (tf2onnx, paddle2onnx, torch TorchScript/dynamo,
onnxscript, version_converter) run through burnedge's numpy backend and compared with
onnxruntime run live on the same feeds.

Models, example feeds and the generator scripts are described in MANIFEST.json
(regenerate with the scripts in gen/ and then ``python tests/exported/gen/finalize.py``).
"""

import json
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "MANIFEST.json")) as _f:
    MANIFEST = json.load(_f)
MODELS = MANIFEST["models"]
IDS = [m["name"] for m in MODELS]
RTOL = 1e-4  # max|got - ref| / max|ref|, per output
MAX_FILE_BYTES = 300 * 1024


def model_path(entry):
    return os.path.join(HERE, entry["file"])


def load_npz(entry):
    with np.load(os.path.join(HERE, entry["npz"])) as z:
        feeds = {k[len("input:") :]: z[k] for k in z.files if k.startswith("input:")}
        outputs = {k[len("output:") :]: z[k] for k in z.files if k.startswith("output:")}
    return feeds, outputs


def run_onnxruntime(entry, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3  # the opset-9 models warn about initializers listed as inputs
    sess = ort.InferenceSession(model_path(entry), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def rel_err(got, ref):
    got = np.asarray(got)
    ref = np.asarray(ref)
    if ref.size == 0:
        return 0.0
    denom = float(np.max(np.abs(ref.astype(np.float64))))
    diff = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
    return diff / denom if denom > 0 else diff


def outputs_by_name(result, entry):
    """Accept a dict name->array, a list/tuple in graph-output order, or one array."""
    names = [o["name"] for o in entry["outputs"]]
    if isinstance(result, dict):
        return result
    if isinstance(result, np.ndarray):
        assert len(names) == 1, f"single array returned for {len(names)} outputs"
        return {names[0]: result}
    result = list(result)
    assert len(result) == len(names), f"{len(result)} outputs returned, graph has {len(names)}"
    return dict(zip(names, result))


def input_shapes_kwargs(entry):
    shapes = entry.get("input_shapes")
    if not shapes:
        return {}
    return {"input_shapes": {k: tuple(v) for k, v in shapes.items()}}


@pytest.mark.parametrize("entry", MODELS, ids=IDS)
def test_fixture_is_valid_and_reference_matches(entry):
    """The stored model passes onnx.checker and onnxruntime still reproduces the stored outputs
    (guards the fixtures themselves; does not need burnedge)."""
    for f in [entry["file"]] + entry.get("external_data", []):
        size = os.path.getsize(os.path.join(HERE, f))
        assert size < MAX_FILE_BYTES, f"{f} is {size} bytes"
    onnx.checker.check_model(model_path(entry), full_check=True)
    feeds, stored = load_npz(entry)
    assert set(feeds) == {i["name"] for i in entry["inputs"]}
    if entry.get("input_shapes"):
        for name, shape in entry["input_shapes"].items():
            assert feeds[name].shape == tuple(shape)
    live = run_onnxruntime(entry, feeds)
    assert set(live) == set(stored)
    for name, ref in stored.items():
        assert live[name].shape == ref.shape, name
        assert rel_err(live[name], ref) <= 1e-5, name


@pytest.mark.parametrize("entry", MODELS, ids=IDS)
def test_burnedge_numpy_matches_onnxruntime(entry):
    import burnedge

    feeds, _ = load_npz(entry)
    ref = run_onnxruntime(entry, feeds)

    m = burnedge.load(model_path(entry), **input_shapes_kwargs(entry))
    out = burnedge.Session(m, backend="numpy").run(feeds)
    got = outputs_by_name(out, entry)

    assert set(got) == set(ref), f"outputs {sorted(got)} != {sorted(ref)}"
    errors = {}
    for name, r in ref.items():
        g = np.asarray(got[name])
        assert g.shape == r.shape, f"{name}: shape {g.shape} != onnxruntime {r.shape}"
        assert g.dtype == r.dtype, f"{name}: dtype {g.dtype} != onnxruntime {r.dtype}"
        errors[name] = rel_err(g, r)
    bad = {k: v for k, v in errors.items() if not v <= RTOL}
    assert not bad, f"max|err|/max|ref| above {RTOL}: {bad}"
