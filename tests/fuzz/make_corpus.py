"""Writes the seed corpora under tests/fuzz/corpus/ (run it again after a format change; the files are committed).

    python tests/fuzz/make_corpus.py

- bundle/mlp.bedge: a C bundle of a 3-op MLP with its source model and one test vector, trimmed to stay small
  (the kernel sources dropped, the library replaced by a stub: the reader target never loads native code);
- onnx/*.onnx: small models over the importer's paths (initializers, Conv/Pool attributes, shape arithmetic that
  folds, Gather, If, Loop, a local function);
- jobs/: not here (the runner target builds its job folder from tests/backends/test_runner_hardening.py's).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import helpers  # noqa: E402

import burnedge  # noqa: E402

CORPUS = Path(__file__).parent / "corpus"
F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=(), opset=17, functions=()):
    g = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], functions=list(functions))


def seeds() -> dict[str, onnx.ModelProto]:
    x4 = helper.make_tensor_value_info("x", F, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", F, None)
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    conv = _model(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
            helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        [x4],
        [y],
        [w],
    )
    shape = _model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "i"], ["d"], axis=0),
            helper.make_node("Concat", ["one", "d"], ["t"], axis=0),
            helper.make_node("Reshape", ["x", "t"], ["y"]),
        ],
        [x4],
        [y],
        [numpy_helper.from_array(np.array([2, 3]), "i"), numpy_helper.from_array(np.array([-1]), "one")],
    )
    then = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [], [helper.make_tensor_value_info("r", F, None)]
    )
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"])], "else", [], [helper.make_tensor_value_info("n", F, None)]
    )
    branch = _model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [x4],
        [y],
        [numpy_helper.from_array(np.array(True), "c")],
    )
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Add", ["acc", "acc"], ["acc_out"])],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, None),
        ],
    )
    loop = _model(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)],
        [x4],
        [y],
        [numpy_helper.from_array(np.array(3), "n")],
    )
    fn = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 17)]
    )
    func = helper.make_model(
        helper.make_graph([helper.make_node("Twice", ["x"], ["y"], domain="local")], "seed", [x4], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
        functions=[fn],
    )
    return {"mlp": helpers.mlp(), "conv": conv, "shape": shape, "if": branch, "loop": loop, "function": func}


def _trimmed_bundle(path: Path) -> bytes:
    """The bundle at `path` without src/kernels/*, its library a stub, the manifest's hashes made to fit."""
    b = burnedge.bundle.read(path)
    members = {n: d for n, d in b.members.items() if not n.startswith("src/kernels/")}
    for lib in b.manifest["libraries"].values():
        members[lib["path"]] = b"not a library: the reader target never loads one\n"
    manifest = dict(b.manifest)
    manifest["files"] = {
        n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in sorted(members.items())
    }
    return pack(manifest, members)


def pack(manifest: dict, members: dict[str, bytes]) -> bytes:
    """A bundle archive: the manifest first, then the members, stored, with fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in [("manifest.json", json.dumps(manifest, indent=1).encode()), *sorted(members.items())]:
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def main() -> None:
    (CORPUS / "onnx").mkdir(parents=True, exist_ok=True)
    (CORPUS / "bundle").mkdir(parents=True, exist_ok=True)
    for name, model in seeds().items():
        burnedge.load(model)  # each seed imports
        (CORPUS / "onnx" / f"{name}.onnx").write_bytes(model.SerializeToString())
    with tempfile.TemporaryDirectory() as tmp:
        path = burnedge.export(helpers.mlp(), Path(tmp) / "mlp.bedge", test_vectors=1, include_source=True)
        (CORPUS / "bundle" / "mlp.bedge").write_bytes(_trimmed_bundle(path))


if __name__ == "__main__":
    main()
