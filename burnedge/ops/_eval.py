"""Applying one node's numpy reference, and interpreting subgraphs (If / Loop / Scan bodies) by value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import BurnedgeError, ModelError
from ..ir import Graph, Node

__all__ = ["evaluate", "run_graph"]


def evaluate(node: Node, inputs: Sequence[np.ndarray | None], scope: Mapping[str, Any] | None = None) -> list[Any]:
    """Runs `node` on concrete arrays; returns one result per entry of `node.outputs`.

    `scope` holds the values the node's subgraphs capture from the enclosing graph.
    """
    op = node.op
    kwargs = dict(node.attrs)
    if "_n_outputs" in op.context:
        kwargs["_n_outputs"] = len(node.outputs)
    if "_run" in op.context:
        outer = dict(scope or {})

        def _run(graph: Graph, *args: Any) -> list[Any]:
            return run_graph(graph, args, outer)

        kwargs["_run"] = _run
    try:
        with np.errstate(all="ignore"):
            result = op.ref(*inputs, **kwargs)
    except BurnedgeError:
        raise
    except Exception as exc:  # a reference that rejects its inputs: say which node and why
        raise ModelError(f"node {node.name!r} ({node.op_type}) failed: {type(exc).__name__}: {exc}") from exc
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(results) < len([o for o in node.outputs if o]):
        raise ModelError(
            f"node {node.name!r} ({node.op_type}) asks for {len(node.outputs)} outputs; "
            f"burnedge computes {len(results)}"
        )
    return [
        r if r is None or isinstance(r, np.ndarray) or isinstance(r, list) else np.asarray(r)
        for r in results[: len(node.outputs)]
    ]


def run_graph(graph: Graph, args: Sequence[Any], outer: Mapping[str, Any]) -> list[Any]:
    """Interprets a (sub)graph value by value: inputs bound to `args`, free names looked up in `outer`."""
    env: dict[str, Any] = dict(outer)
    env.update(graph.constants())
    for name, arr in zip(graph.inputs, args):
        env[name] = arr
    for node in graph.nodes:
        ins = [env[n] if n else None for n in node.inputs]
        scope = {n: env[n] for n in node.captures}
        for name, arr in zip(node.outputs, evaluate(node, ins, scope)):
            if name:
                env[name] = arr
    return [env[n] for n in graph.outputs]
