"""Graph -> Graph passes. Each pass is a module here with `run(graph) -> Graph`; DEFAULT_PIPELINE orders them.

Every pass keeps the graph's meaning: the numpy reference gives the same outputs before and after (checked on
the model suite), and `verify()` holds after each pass. Passes are float Graph -> Graph; turning an ONNX QDQ graph
into int8 ops is not a pass but quantization's QDQ import (`burnedge.quantize.qdq.import_qdq`), run before them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from ..errors import BurnedgeError
from ..ir import Graph

__all__ = ["DEFAULT_PIPELINE", "optimize"]

DEFAULT_PIPELINE: tuple[str, ...] = (
    "fold_constants",
    "einsum",
    "dce",
    "fold_batchnorm",
    "fuse_layernorm",
    "fuse_epilogue",
    "fuse_elementwise",
    "dce",
)


def optimize(graph: Graph, pipeline: Sequence[str] = DEFAULT_PIPELINE) -> Graph:
    """Runs the passes in order on a copy-free pipeline (passes may rewrite `graph` in place) and verifies."""
    for name in pipeline:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError:
            moved = " (QDQ import is burnedge.quantize.qdq.import_qdq now)" if name == "fold_qdq" else ""
            raise BurnedgeError(f"unknown pass {name!r}{moved}; passes: {', '.join(DEFAULT_PIPELINE)}") from None
        graph = module.run(graph)
        graph.verify()
    return graph
