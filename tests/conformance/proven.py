"""Writes burnedge/ops/proven.tsv: per op, backend and dtype, how many node tests that backend passes with it.

    python -m tests.conformance.proven        (update.py also runs it after rewriting an expectations file)

A node test proves an (op, dtype) on a backend when the backend passes it and one of the test's nodes (in a
subgraph too) is that op with a tensor of that dtype among its inputs or outputs (types from ONNX shape inference).
An `_expanded` test proves the ops of the function body it holds, not the op it expands.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import onnx

from burnedge.ops.proven import PATH

from . import expectations
from .node_data import REPO, node_test_root

CACHE = Path(os.environ.get("BURNEDGE_CACHE", REPO / ".cache")) / "node-test-op-dtypes.json"


def _key(domain: str, op: str) -> str:
    return op if domain in ("", "ai.onnx") else f"{domain}.{op}"


def _walk(graph: onnx.GraphProto, types: dict[str, str], found: set[tuple[str, str]]) -> None:
    types = dict(types)
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type).lower()
    for init in graph.initializer:
        types[init.name] = onnx.TensorProto.DataType.Name(init.data_type).lower()
    for node in graph.node:
        key = _key(node.domain, node.op_type)
        seen = [types[n] for n in [*node.input, *node.output] if n and n in types]
        for dtype in seen or ["(untyped)"]:
            found.add((key, dtype))
        for attr in node.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
                _walk(sub, types, found)


def op_dtypes(folder: Path) -> list[tuple[str, str]]:
    """The (op key, dtype) pairs of one node test's model."""
    model = onnx.load(str(folder / "model.onnx"), load_external_data=False)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # a test of an op newer than the installed onnx: the declared types still count
        pass
    found: set[tuple[str, str]] = set()
    _walk(model.graph, {}, found)
    return sorted(found)


def _all_op_dtypes(root: Path) -> dict[str, list[tuple[str, str]]]:
    cached = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    if set(cached) != set(names):
        cached = {n: op_dtypes(root / n) for n in names}
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        tmp = CACHE.with_suffix(".tmp")
        tmp.write_text(json.dumps(cached))
        tmp.replace(CACHE)
    return {n: [tuple(p) for p in pairs] for n, pairs in cached.items()}


def compute() -> str:
    """The text of proven.tsv, from the expectations files and the node tests."""
    per_test = _all_op_dtypes(node_test_root())
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    backends = sorted(p.stem.removeprefix("expected_") for p in expectations.HERE.glob("expected_*.tsv"))
    for backend in backends:
        for name, (status, _) in expectations.read(backend).items():
            if status == "pass":
                for op, dtype in per_test.get(name, []):
                    counts[(op, backend, dtype)] += 1
    lines = [
        "# op, backend, dtype, node tests passed with that op at that dtype (onnx 1.22.0's node tests). Written by",
        "#   python -m tests.conformance.proven  (from tests/conformance/expected_*.tsv); read by `burnedge ops`",
    ]
    lines += [f"{op}\t{b}\t{d}\t{n}" for (op, b, d), n in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def write() -> None:
    text = compute()
    tmp = PATH.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(PATH)


if __name__ == "__main__":
    write()
    print(f"wrote {PATH}")
