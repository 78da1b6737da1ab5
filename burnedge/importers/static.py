"""What no static plan can hold, found before import: said as such, apart from ops burnedge lacks.

A burnedge plan is a fixed set of tensors at fixed offsets in one arena. Sequences, maps and optional values have
no fixed size (a sequence's length is a run-time value), and ImageDecoder's output shape is the picture's, known
only once the file is decoded: no kernel could change that, so these get a StaticPlanError that says why, where a
missing op gets an UnsupportedOpError.
"""

from __future__ import annotations

import onnx
from onnx import ModelProto

from ..errors import StaticPlanError

# op -> why its result cannot have a size fixed at compile time
_DATA_SHAPED = {
    "ImageDecoder": "its output has the decoded picture's height and width, known only from the file's bytes; "
    "decode images before the model and feed the pixels",
}


_KINDS = {"sequence_type": "a sequence", "map_type": "a map", "optional_type": "an optional value",
          "sparse_tensor_type": "a sparse tensor"}  # fmt: skip


def _kind(t: onnx.TypeProto) -> str | None:
    """What a type a plan cannot hold is ('a sequence', ...); None for a tensor."""
    which = t.WhichOneof("value")
    return None if which == "tensor_type" else _KINDS.get(which, str(which))


def check(model: ModelProto) -> None:
    """Raises StaticPlanError for the first graph input or output that is not a tensor, or an op whose output
    shape only the data decides."""
    g = model.graph
    for role, infos in (("input", g.input), ("output", g.output)):
        for vi in infos:
            kind = _kind(vi.type)
            if kind:
                raise StaticPlanError(
                    f"graph {role} {vi.name!r} is {kind}: a static plan holds only tensors of fixed size "
                    f"(sequences, maps and optional values have none)"
                )
    for i, node in enumerate(g.node):
        if node.op_type in _DATA_SHAPED and node.domain in ("", "ai.onnx"):
            name = repr(node.name) if node.name else f"#{i}"
            raise StaticPlanError(
                f"node {name} ({node.op_type}) cannot be in a static plan: {_DATA_SHAPED[node.op_type]}"
            )
