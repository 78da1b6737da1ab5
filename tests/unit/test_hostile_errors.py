"""Hostile inputs that gave raw Python tracebacks where a burnedge error is promised: each is now a one-line
BundleError / ModelError / InputError naming what is wrong (and the CLI's status 2).

The bundles are the fuzz seed (tests/fuzz/corpus/bundle/mlp.bedge) with one edit, the manifest's hashes kept
consistent, so only the new checks can refuse them."""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import BundleError, InputError, ModelError, bundle

from .helpers import mlp

SEED = Path(__file__).parents[1] / "fuzz" / "corpus" / "bundle" / "mlp.bedge"
# the edited bundles are signed by nobody: opened with the explicit opt-in where bundles are signed
TRUST = {"trust": "any"} if "trust" in inspect.signature(burnedge.Session).parameters else {}
pytestmark = pytest.mark.filterwarnings("ignore:.*untrusted bundle")


def _members() -> tuple[dict, dict[str, bytes]]:
    with zipfile.ZipFile(SEED) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    return json.loads(members.pop("manifest.json")), members


def _write(path: Path, manifest, members: dict[str, bytes], raw: bytes | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("manifest.json", raw if raw is not None else json.dumps(manifest))
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _rehashed(manifest: dict, members: dict[str, bytes]) -> dict:
    manifest["files"] = {n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in members.items()}
    return manifest


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text, text
    return text


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda m: m.update(arena_bytes="128"), "arena_bytes"),
        (lambda m: m["inputs"][0].update(shape=[1.5, 4]), "inputs[0].shape[0]"),
        (lambda m: m["inputs"][0].update(dtype="object"), "inputs[0].dtype"),
        (lambda m: m["outputs"][0].update(name=7), "outputs[0].name"),
        (lambda m: m.update(weights={"key": "w"}), "weights"),
        (lambda m: m["weights"][0].update(offset=-8), "weights[0].offset"),
        (lambda m: m["libraries"]["host"].update(path=None), "libraries['host'].path"),
        (lambda m: m.update(vectors=[3]), "vectors[0]"),
        (lambda m: m["model"].pop("name"), "model"),
        (lambda m: m.update(weight_bytes=True), "weight_bytes"),
    ],
)
def test_a_manifest_field_of_the_wrong_type_is_a_bundle_error_naming_it(tmp_path, edit, named):
    manifest, members = _members()
    edit(manifest)
    path = _write(tmp_path / "m.bedge", manifest, members)
    for call in (
        lambda: bundle.read(path, **TRUST).weights(),
        lambda: burnedge.Session(path, backend="numpy", **TRUST),
    ):
        with pytest.raises(BundleError) as info:
            call()
        assert named in _one_line(info.value)


def test_a_deeply_nested_manifest_is_a_bundle_error(tmp_path):
    manifest, members = _members()
    raw = json.dumps({**manifest, "model": "NEST"}).replace('"NEST"', "[" * 100_000 + "]" * 100_000).encode()
    with pytest.raises(BundleError) as info:
        bundle.read(_write(tmp_path / "m.bedge", None, members, raw), **TRUST)
    assert "manifest.json" in _one_line(info.value)


@pytest.mark.parametrize(
    ("member", "data", "named"),
    [
        ("plan.json", b"{not json", "plan.json"),
        ("plan.json", json.dumps({"steps": [{"index": "0"}], "buffers": []}).encode(), "plan.json"),
        ("vectors/0.npz", b"PK\x03\x04 not an npz", "test vector"),
        ("model.onnx", b"\xff\xff\xff garbage", "model.onnx"),
    ],
)
def test_a_damaged_member_behind_consistent_hashes_is_a_bundle_error(tmp_path, member, data, named):
    manifest, members = _members()
    members[member] = data
    path = _write(tmp_path / "m.bedge", _rehashed(manifest, members), members)
    with pytest.raises(BundleError) as info:
        b = bundle.read(path, **TRUST)
        b.plan, b.vectors()  # noqa: B018 (parsed on demand)
        burnedge.Session(path, backend="numpy", **TRUST)
    assert named in _one_line(info.value)


def test_a_bundled_model_with_relative_external_data_does_not_read_the_current_directory(tmp_path, monkeypatch):
    manifest, members = _members()
    proto = onnx.load_from_string(members["model.onnx"])
    w = proto.graph.initializer[0]
    secret = np.arange(w.dims[0] * w.dims[1], dtype=np.float32)
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="secret.bin")
    members["model.onnx"] = proto.SerializeToString()
    path = _write(tmp_path / "m.bedge", _rehashed(manifest, members), members)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "secret.bin").write_bytes(secret.tobytes())
    monkeypatch.chdir(cwd)
    with pytest.raises(ModelError) as info:
        burnedge.Session(path, backend="numpy", **TRUST)
    assert "secret.bin" in _one_line(info.value) and "external" in str(info.value)


def _conv(**attrs) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    w = numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)], "g", [x], [y], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("op", ["Conv", "MaxPool", "AveragePool"])
def test_strides_of_zero_are_a_model_error_naming_the_node(op):
    model = _conv(strides=[0, 0])
    model.graph.node[0].op_type = op
    if op != "Conv":
        del model.graph.node[0].input[1:]
        model.graph.node[0].attribute.append(helper.make_attribute("kernel_shape", [2, 2]))
    with pytest.raises(ModelError) as info:
        burnedge.load(model)
    assert "'conv'" in _one_line(info.value) and "strides" in str(info.value)


def test_raw_data_that_disagrees_with_dims_is_a_model_error_naming_the_initializer():
    model = mlp()
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:-4]
    with pytest.raises(ModelError) as info:
        burnedge.load(model)
    assert "'w'" in _one_line(info.value) and "44 bytes" in str(info.value) and "48" in str(info.value)


def test_an_unknown_initializer_type_is_a_model_error():
    model = mlp()
    model.graph.initializer[0].data_type = 999
    with pytest.raises(ModelError) as info:
        burnedge.load(model)
    assert "999" in _one_line(info.value)


@pytest.mark.parametrize("feeds", [None, 3, "x", [np.zeros((1, 4), np.float32)], {"x": None}, {"x": object()}])
def test_bad_feeds_are_input_errors(feeds):
    sess = burnedge.Session(burnedge.load(mlp()), backend="numpy")
    with pytest.raises(InputError) as info:
        sess.run(feeds)
    _one_line(info.value)


def test_the_cli_says_one_line_and_exits_2_on_a_hostile_manifest(tmp_path):
    manifest, members = _members()
    manifest["inputs"][0]["shape"] = "1,4"
    path = _write(tmp_path / "m.bedge", manifest, members)
    for cmd in ("inspect", "verify"):
        proc = subprocess.run([sys.executable, "-m", "burnedge", cmd, str(path)], capture_output=True, text=True)
        assert proc.returncode == 2, (cmd, proc.returncode, proc.stderr[-800:])
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_the_seed_bundle_itself_is_accepted():
    """The edits above are what is refused: the unedited seed reads, and its vector runs on numpy."""
    b = bundle.read(SEED, **TRUST)
    feeds, refs = b.vectors()[0]
    got = burnedge.Session(SEED, backend="numpy", **TRUST).run(feeds)
    np.testing.assert_allclose(got["y"], refs["y"], rtol=1e-5)
    assert io.BytesIO(SEED.read_bytes()).getbuffer().nbytes < 16 << 10


def test_an_archive_needing_a_newer_zip_version_is_a_bundle_error(tmp_path):
    """Found by the fuzz target: zipfile raised NotImplementedError ("zip file version 23.5")."""
    data = bytearray(SEED.read_bytes())
    end = data.rindex(b"PK\x05\x06")  # the end record gives the central directory's offset at +16
    at = int.from_bytes(data[end + 16 : end + 20], "little")  # its first record: "version needed" at +6
    data[at + 6 : at + 8] = (235).to_bytes(2, "little")
    path = tmp_path / "m.bedge"
    path.write_bytes(bytes(data))
    with pytest.raises(BundleError) as info:
        bundle.read(path, **TRUST)
    assert "23.5" in _one_line(info.value)


def test_a_name_with_a_newline_stays_on_one_line():
    """Found by the fuzz target: an input name holding a newline broke the one-line message."""
    model = mlp(batch="n")
    model.graph.input[0].name = "x\nrm -rf /"
    model.graph.node[0].input[0] = "x\nrm -rf /"
    with pytest.raises(burnedge.NotStaticError) as info:
        burnedge.load(model)
    assert "rm -rf" in _one_line(info.value)


def test_shape_inference_zeros_are_bounded_before_they_are_allocated():
    """Found by the fuzz target: an input declared gigabytes wide was allocated and filled by shape inference."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node("Softsign", ["x"], ["y"], name="s")], "g", [x], [y])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with burnedge.limits.raised(max_folded_bytes=1 << 20), pytest.raises(burnedge.limits.LimitError) as info:
        burnedge.load(model)
    assert "'x'" in _one_line(info.value) and "max_folded_bytes" in str(info.value)


def test_an_unknown_op_named_with_a_newline_stays_on_one_line():
    """Found by the fuzz target: a mutated op type holding a newline split UnsupportedOpError's message."""
    model = mlp()
    model.graph.node[1].op_type = "\ndd"
    with pytest.raises(burnedge.UnsupportedOpError) as info:
        burnedge.load(model)
    assert "dd" in _one_line(info.value)
