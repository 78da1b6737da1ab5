"""The edge bundle: export, open, run, verify; refusing tampered, truncated and foreign files; atomic writes."""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import bundle, host
from burnedge.backends.c import build
from burnedge.backends.c import loader as c_load
from burnedge.backends.c import runtime as c_runtime
from burnedge.bundle import keys, signing
from burnedge.bundle import writer as bundle_writer
from burnedge.exporter import example_inputs, export
from burnedge.verifier import verify

_vi = helper.make_tensor_value_info
X = np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)


def chain_model() -> onnx.ModelProto:
    """x[4,6] -> Sigmoid, Mul, Add(bias), Exp, Reshape -> y[24]; Neg -> z; Shape(x) -> s (a constant output)."""
    bias = numpy_helper.from_array(np.linspace(-1, 1, 6).astype(np.float32), "bias")
    shape = numpy_helper.from_array(np.array([24], np.int64), "shape")
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["a"], name="sig"),
        helper.make_node("Mul", ["a", "x"], ["b"], name="mul"),
        helper.make_node("Add", ["b", "bias"], ["c"], name="add"),
        helper.make_node("Exp", ["c"], ["e"], name="exp"),
        helper.make_node("Reshape", ["e", "shape"], ["y"], name="flat"),
        helper.make_node("Neg", ["a"], ["z"], name="neg"),
        helper.make_node("Shape", ["x"], ["s"], name="shape_of_x"),
    ]
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [24]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 6]),
        helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])
    g = helper.make_graph(nodes, "chain", [x], outputs, [bias, shape])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests")


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "chain.onnx"
    onnx.save(chain_model(), str(path))
    return path


@pytest.fixture(scope="module")
def bedge(onnx_path) -> Path:
    return export(onnx_path, onnx_path.parent / "chain.bedge", input_shapes={"x": (4, 6)}, include_source=True)


def reference(onnx_path) -> dict[str, np.ndarray]:
    return burnedge.Session(burnedge.load(onnx_path, input_shapes={"x": (4, 6)})).run({"x": X})


def test_bundle_runs_like_the_reference(bedge, onnx_path):
    want = reference(onnx_path)
    for threads in (1, 2):
        got = burnedge.Session(bedge, backend="c", threads=threads).run({"x": X})
        assert set(got) == {"y", "z", "s"}
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5)
        np.testing.assert_allclose(got["z"], want["z"], rtol=1e-5)
        np.testing.assert_array_equal(got["s"], [4, 6])
    sess = burnedge.Session(bedge)  # a bundle runs on C by default
    assert sess.backend.name == "c" and sess.model is None and sess.arena_bytes > 0
    assert [(i.name, i.shape, i.dtype) for i in sess.inputs] == [("x", (4, 6), np.dtype(np.float32))]
    numpy_run = burnedge.Session(bedge, backend="numpy").run({"x": X})  # the bundled source model, same shapes
    np.testing.assert_allclose(numpy_run["y"], want["y"], rtol=1e-6)


def test_manifest_and_members(bedge):
    b = bundle.read(bedge)
    m = b.manifest
    assert (m["format"], m["format_version"], m["burnedge_version"]) == ("burnedge-bundle", 1, burnedge.__version__)
    assert m["model"]["name"] == "chain" and m["target"] == "host"
    assert m["inputs"] == [{"name": "x", "shape": [4, 6], "dtype": "float32", "offset": m["inputs"][0]["offset"]}]
    assert [o["name"] for o in m["outputs"]] == ["y", "z", "s"] and "constant" in m["outputs"][2]
    assert m["arena_bytes"] >= m["arena_lower_bound_bytes"] > 0
    assert set(b.members) == set(m["files"])
    assert {"plan.json", "weights.safetensors", "src/model.c", "lib/host/model.so", "model.onnx"} <= set(b.members)
    assert "src/kernels/burnedge.h" in b.members and "vectors/0.npz" in b.members and "vectors/1.npz" in b.members
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(bedge).infolist())
    steps = b.plan["steps"]
    assert all(s["ops"] for s in steps) and sum(len(s["ops"]) for s in steps) >= 5
    assert b.plan["buffers"] and b.plan["arena_bytes"] == m["arena_bytes"]
    # the weight blob holds the bias at its offset
    w = {e["key"]: e for e in m["weights"]}
    blob = b.weights()
    assert blob.nbytes == m["weight_bytes"] and not blob.flags.writeable
    off = w["bias"]["offset"]
    np.testing.assert_array_equal(blob[off : off + 24].view(np.float32), np.linspace(-1, 1, 6).astype(np.float32))


def test_export_is_reproducible_and_replaces_a_bundle(onnx_path, tmp_path):
    a = export(onnx_path, tmp_path / "a.bedge", input_shapes={"x": (4, 6)})
    b = export(onnx_path, tmp_path / "b.bedge", input_shapes={"x": (4, 6)})
    assert a.read_bytes() == b.read_bytes()
    export(onnx_path, a, input_shapes={"x": (4, 6)}, test_vectors=1)  # over an existing bundle: replaced
    assert len(bundle.read(a).vectors()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bedge", "b.bedge"]


def test_unpacked_folder_and_folder_destination(onnx_path, tmp_path):
    folder = export(onnx_path, tmp_path / "u.bedge", input_shapes={"x": (4, 6)}, unpacked=True)
    assert (folder / "manifest.json").is_file() and (folder / "lib" / "host" / "model.so").is_file()
    assert all(c.ok for c in verify(folder))
    export(onnx_path, folder, input_shapes={"x": (4, 6)}, unpacked=True, test_vectors=0)  # replaces the folder
    assert not (folder / "vectors").exists()
    (folder / "weights.safetensors").write_bytes(_flip((folder / "weights.safetensors").read_bytes(), 0))
    with pytest.raises(bundle.BundleError, match="member 'weights.safetensors' fails its SHA-256 check"):
        bundle.read(folder)
    (folder / "extra.txt").write_text("slipped in")
    with pytest.raises(bundle.BundleError, match="member 'extra.txt' is not listed in the manifest"):
        burnedge.Session(folder)
    inside = export(chain_model(), tmp_path, input_shapes={"x": (4, 6)}, include_source=True)  # NAME.bedge in it
    assert inside == tmp_path / "chain.bedge" and bundle.read(inside).onnx is not None


def test_verify_passes_and_catches_a_wrong_reference(bedge, tmp_path):
    checks = verify(bedge)
    assert len(checks) == 2 * 3 and all(c.ok for c in checks)
    # a bundle whose reference output is wrong, with the manifest rehashed to match: verify must fail
    b = bundle.read(bedge)
    z = zipfile.ZipFile(bedge)
    members = {n: z.read(n) for n in z.namelist() if n != "manifest.json"}
    arrays = bundle.decode_npz(members["vectors/0.npz"])
    arrays["out_0"] = arrays["out_0"] + 1

    members["vectors/0.npz"] = bundle.encode_npz(arrays)
    manifest = {k: v for k, v in b.manifest.items() if k != "files"}
    bad = bundle_writer.write(tmp_path / "bad.bedge", manifest, members)
    checks = verify(bad)
    assert [c.ok for c in checks if c.vector == 0 and c.output == "y"] == [False]
    assert all(c.ok for c in checks if c.vector == 1)


def _rewrite(src: Path, dst: Path, change) -> Path:
    """Copies a bundle archive member by member, letting `change(name, data)` alter each (manifest untouched), and
    signs the manifest that results with this machine's key: the checks after the signature's must refuse it."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info))
            if info.filename == "manifest.json":
                head = data
            elif info.filename == bundle.SIGNATURE:
                data = signing.signature(head, keys.local_key())
            if data is not None:
                zout.writestr(info, data)
    return dst


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize("member", ["lib/host/model.so", "weights.safetensors", "plan.json", "vectors/0.npz"])
def test_tampered_member_is_refused_before_loading(bedge, tmp_path, member, monkeypatch):
    bad = _rewrite(bedge, tmp_path / "bad.bedge", lambda n, d: _flip(d, len(d) // 2) if n == member else d)
    loaded = []
    monkeypatch.setattr(c_runtime._FFI, "dlopen", lambda *a: loaded.append(a))
    with pytest.raises(bundle.BundleError, match=f"bad.bedge: member '{member}' fails its SHA-256 check"):
        burnedge.Session(bad, backend="c")
    assert loaded == []


def test_a_byte_flipped_in_the_file_is_refused(bedge, tmp_path):
    data = bedge.read_bytes()
    with zipfile.ZipFile(bedge) as z:
        info = z.getinfo("lib/host/model.so")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    bad = tmp_path / "flipped.bedge"
    bad.write_bytes(_flip(data, start + info.file_size // 2))
    with pytest.raises(bundle.BundleError, match="member 'lib/host/model.so'"):
        bundle.read(bad)


@pytest.mark.parametrize("keep", [0.5, 0.99, 10])
def test_truncated_file_is_refused(bedge, tmp_path, keep):
    data = bedge.read_bytes()
    bad = tmp_path / "cut.bedge"
    bad.write_bytes(data[: int(len(data) * keep)] if keep < 1 else data[:keep])
    with pytest.raises(bundle.BundleError, match="cut.bedge: not a readable edge bundle"):
        burnedge.Session(bad)


def test_foreign_files_are_refused(onnx_path, tmp_path):
    renamed = tmp_path / "model.bedge"
    renamed.write_bytes(onnx_path.read_bytes())
    with pytest.raises(bundle.BundleError, match="model.bedge: not a readable edge bundle \\(not a zip archive\\)"):
        bundle.read(renamed)
    foreign = tmp_path / "foreign.bedge"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("hello.txt", "not a bundle")
    with pytest.raises(bundle.BundleError, match="no manifest.json; a foreign zip archive"):
        burnedge.Session(foreign)
    with pytest.raises(bundle.BundleError, match="no such file"):
        bundle.read(tmp_path / "absent.bedge")
    with pytest.raises(bundle.BundleError, match="no manifest.json in the folder"):
        bundle.read(tmp_path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: b"{not json", "manifest.json is not valid JSON"),
        (lambda m: json.dumps({**m, "format": "zip"}).encode(), "not an edge bundle"),
        (lambda m: json.dumps({**m, "format_version": 99}).encode(), "format version 99 is not known"),
        (lambda m: json.dumps({**m, "files": []}).encode(), "no valid `files` table"),
        (lambda m: json.dumps({**m, "files": {**m["files"], "extra.bin": m["files"]["plan.json"]}}).encode(),
         "member 'extra.bin' listed in the manifest is missing"),
        (lambda m: json.dumps({**m, "files": {k: v for k, v in m["files"].items() if k != "model.onnx"}}).encode(),
         "member 'model.onnx' is not listed in the manifest"),
        (lambda m: json.dumps({**m, "files": {**m["files"], "plan.json": {**m["files"]["plan.json"], "bytes": 1}}})
         .encode(), "member 'plan.json' has .* bytes, the manifest says 1"),
    ],
)  # fmt: skip
def test_bad_manifests_are_refused(bedge, tmp_path, edit, message):
    manifest = json.loads(zipfile.ZipFile(bedge).read("manifest.json"))
    bad = _rewrite(bedge, tmp_path / "bad.bedge", lambda n, d: edit(manifest) if n == "manifest.json" else d)
    with pytest.raises(bundle.BundleError, match=message):
        bundle.read(bad)


@pytest.mark.parametrize("unpacked", [False, True])
@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, RuntimeError])
def test_interrupted_export_leaves_nothing(onnx_path, tmp_path, monkeypatch, unpacked, interrupt):
    out = tmp_path / "out"
    out.mkdir()
    done = export(onnx_path, out / "m.bedge", input_shapes={"x": (4, 6)}, unpacked=unpacked)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    real, calls = bundle_writer._put, []

    def flaky(target, name, data):
        calls.append(name)
        if len(calls) == 4:
            raise interrupt("stop")
        real(target, name, data)

    monkeypatch.setattr(bundle_writer, "_put", flaky)
    with pytest.raises(interrupt):
        export(onnx_path, out / "m.bedge", input_shapes={"x": (4, 6)}, unpacked=unpacked, test_vectors=1)
    calls.clear()
    with pytest.raises(interrupt):
        export(onnx_path, out / "new.bedge", input_shapes={"x": (4, 6)}, unpacked=unpacked)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # no temporary, no partial bundle
    assert len(bundle.read(done).vectors()) == 2  # the old bundle is untouched


def test_export_refuses_to_overwrite_other_files(onnx_path, tmp_path):
    precious = tmp_path / "notes.bedge"
    precious.write_text("my notes")
    with pytest.raises(bundle.BundleError, match="exists and is not an edge bundle"):
        export(onnx_path, precious, input_shapes={"x": (4, 6)})
    assert precious.read_text() == "my notes"


def test_export_errors(onnx_path, tmp_path):
    with pytest.raises(burnedge.BurnedgeError, match="unknown target 'mars'; known targets: .*host, jetson"):
        export(onnx_path, tmp_path / "m.bedge", target="mars")
    with pytest.raises(bundle.BundleError, match="test_vectors must be a count"):
        export(onnx_path, tmp_path / "m.bedge", test_vectors=-1)
    model = burnedge.load(onnx_path, input_shapes={"x": (4, 6)})
    with pytest.raises(bundle.BundleError, match="input_shapes applies to a model path"):
        export(model, tmp_path / "m.bedge", input_shapes={"x": (4, 6)})
    lp = helper.make_graph(  # an op the C backend has no kernel for
        [helper.make_node("GlobalLpPool", ["x"], ["y"], name="lp")],
        "lp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 1, 1])],
    )
    with pytest.raises(burnedge.UnsupportedOpError, match="GlobalLpPool .*'lp'"):
        export(helper.make_model(lp, opset_imports=[helper.make_opsetid("", 22)]), tmp_path / "d.bedge")
    assert list(tmp_path.iterdir()) == []


def test_library_cache_and_rebuild(bedge, monkeypatch, tmp_path):
    b = bundle.read(bedge)
    lib = c_load.library(b)
    assert lib.parent.name == "bundles" and lib.read_bytes() == b.members["lib/host/model.so"]
    lib.unlink()  # NOTE: a new file, never a write into the loaded one (its pages are mapped in this process)
    lib.write_bytes(b"garbage")  # a damaged cache entry is replaced, never loaded
    assert c_load.library(b).read_bytes() == b.members["lib/host/model.so"]
    monkeypatch.setattr(host, "fingerprint", lambda: {"system": "Linux", "machine": "x86_64", "cpu": "other"})
    rebuilt = c_load.library(b)  # built for another CPU: rebuilt here from the bundle's source
    assert rebuilt.parent == build.cache_dir()
    np.testing.assert_allclose(burnedge.Session(b).run({"x": X})["z"], -1 / (1 + np.exp(-X)), rtol=1e-5)
    b.members["src/kernels/burnedge.h"] = b"/* other kernels */"
    with pytest.raises(bundle.BundleError, match="no library in the bundle runs on this host"):
        c_load.library(b)


def test_two_threads_share_one_bundle_session(bedge, onnx_path):
    sess = burnedge.Session(bedge, backend="c")
    want = reference(onnx_path)["y"]
    errors = []

    def work():
        for _ in range(50):
            if not np.allclose(sess.run({"x": X})["y"], want, rtol=1e-5):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_session_errors(bedge, tmp_path):
    with pytest.raises(burnedge.BurnedgeError, match="unknown backend 'tpu'"):
        burnedge.Session(bedge, backend="tpu")
    with pytest.raises(burnedge.BurnedgeError, match="threads must be"):
        burnedge.Session(bedge, threads=0)
    with pytest.raises(burnedge.InputError, match="expected shape \\[4, 6\\]"):
        burnedge.Session(bedge).run({"x": np.zeros((2, 6), np.float32)})
    b = bundle.read(bedge)
    del b.members["model.onnx"]
    with pytest.raises(burnedge.BurnedgeError, match="carries no source model"):
        burnedge.Session(b, backend="numpy")


def test_example_inputs_respect_dtypes_and_gather_ranges():
    table = numpy_helper.from_array(np.zeros((7, 3), np.float32), "table")
    g = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["e"]), helper.make_node("Not", ["flag"], ["nf"])],
        "g",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, [50]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, [4]),
            helper.make_tensor_value_info("n", TensorProto.INT32, [30]),
        ],
        [
            helper.make_tensor_value_info("e", TensorProto.FLOAT, [50, 3]),
            helper.make_tensor_value_info("nf", TensorProto.BOOL, [4]),
        ],
        [table],
    )
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    feeds = example_inputs(model.graph, seed=1)
    assert feeds["ids"].dtype == np.int64 and 0 <= feeds["ids"].min() and feeds["ids"].max() < 7
    assert feeds["ids"].max() > 1  # the whole table is used, not only [0, 2)
    assert feeds["flag"].dtype == np.bool_ and feeds["n"].dtype == np.int32 and set(np.unique(feeds["n"])) <= {0, 1}
    np.testing.assert_array_equal(example_inputs(model.graph, seed=1)["ids"], feeds["ids"])
