"""Check every generated model and build MANIFEST.json + <name>.npz.

Run in the MAIN environment (onnx + onnxruntime) after the generator scripts:
    python tests/exported/gen/finalize.py

For each gen/<name>.meta.json:
  * onnx.checker.check_model(path, full_check=True)  (path-based, so external data resolves)
  * build deterministic example inputs (shape = suggested input_shapes or the static shape)
  * run onnxruntime (CPU) and store inputs/outputs in <name>.npz as input:<n> / output:<n>
  * collect opset, inputs/outputs (dim_param kept as strings), op histogram, sizes ...
"""

import collections
import glob
import json
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)


def dims(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [
        d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None)
        for d in t.shape.dim
    ]


def value_desc(vi):
    return {
        "name": vi.name,
        "dtype": str(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)),
        "shape": dims(vi),
    }


def make_inputs(name, inputs, input_shapes):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    feeds = {}
    for inp in inputs:
        shape = input_shapes.get(inp["name"]) if input_shapes else None
        if shape is None:
            shape = inp["shape"]
            assert all(isinstance(d, int) for d in shape), (name, inp)
        dt = np.dtype(inp["dtype"])
        if dt.kind == "f":
            feeds[inp["name"]] = rng.standard_normal(shape).astype(dt)
        elif dt.kind in "iu":
            feeds[inp["name"]] = rng.integers(0, 10, shape).astype(dt)
        elif dt.kind == "b":
            feeds[inp["name"]] = rng.integers(0, 2, shape).astype(dt)
        else:
            raise NotImplementedError(dt)
    return feeds


def main():
    manifest = {
        "description": "Small real-world ONNX models from the exporters users bring; see gen/ for the scripts.",
        "reference": {
            "onnxruntime": ort.__version__,
            "onnx": onnx.__version__,
            "tolerance": "max|burnedge-ort| / max|ort| <= 1e-4 per output",
        },
        "models": [],
    }
    for meta_path in sorted(glob.glob(os.path.join(HERE, "*.meta.json"))):
        meta = json.load(open(meta_path))
        name = meta["name"]
        path = os.path.join(OUT, meta["file"])
        onnx.checker.check_model(path, full_check=True)
        model = onnx.load(path)  # loads external data too
        g = model.graph
        init_names = {t.name for t in g.initializer}
        inputs = [value_desc(i) for i in g.input if i.name not in init_names]
        outputs = [value_desc(o) for o in g.output]
        dynamic = any(not isinstance(d, int) for i in inputs for d in (i["shape"] or [None]))
        input_shapes = meta.get("input_shapes")
        if dynamic:
            assert input_shapes, f"{name}: dynamic inputs need input_shapes in meta"

        feeds = make_inputs(name, inputs, input_shapes)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.log_severity_level = 3
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        outs = sess.run(None, feeds)
        arrays = {f"input:{k}": v for k, v in feeds.items()}
        for o, v in zip(outputs, outs):
            assert np.all(np.isfinite(v)), (name, o["name"])
            arrays[f"output:{o['name']}"] = v
        assert all("/" not in k for k in arrays), arrays.keys()
        np.savez_compressed(os.path.join(OUT, f"{name}.npz"), **arrays)

        ops = collections.Counter(n.op_type if not n.domain else f"{n.domain}::{n.op_type}" for n in g.node)
        fn_ops = {
            f"{f.domain}::{f.name}": dict(
                collections.Counter(n.op_type if not n.domain else f"{n.domain}::{n.op_type}" for n in f.node)
            )
            for f in model.functions
        }
        files = [meta["file"]] + meta.get("external_data", [])
        entry = {
            "name": name,
            "file": meta["file"],
            "external_data": meta.get("external_data", []),
            "size_bytes": {f: os.path.getsize(os.path.join(OUT, f)) for f in files},
            "exporter": meta["exporter"],
            "exporter_version": meta["exporter_version"],
            "framework": meta["framework"],
            "framework_version": meta["framework_version"],
            "producer": f"{model.producer_name} {model.producer_version}".strip(),
            "ir_version": model.ir_version,
            "opset": next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
            "opset_imports": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
            "inputs": inputs,
            "outputs": outputs,
            "dynamic": dynamic,
            "features": meta["features"],
            "op_histogram": dict(sorted(ops.items())),
            "function_op_histograms": fn_ops,
            "num_initializers": len(g.initializer),
            "npz": f"{name}.npz",
            "example_output_shapes": {o["name"]: list(v.shape) for o, v in zip(outputs, outs)},
            "generator": meta["generator"],
            "generator_env": meta["generator_env"],
        }
        if dynamic or input_shapes:
            entry["input_shapes"] = input_shapes
        if meta.get("notes"):
            entry["notes"] = meta["notes"]
        manifest["models"].append(entry)
        tot = sum(entry["size_bytes"].values())
        print(f"{name:24s} opset {entry['opset']:2d} {tot:7d} B  {dict(ops)}")
    with open(os.path.join(OUT, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
