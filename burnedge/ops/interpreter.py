"""THE whole-graph numpy interpreter: runs every node's reference in order, with an observer hook and a pluggable store.

Every stage that evaluates a graph value by value goes through here: the numpy reference backend (its store writes
into arena views), calibration (`quantize/observe.py`, which observes every tensor and drops each one after its last
reader), the int8 accuracy report, and subgraph bodies (If / Loop / Scan) through `run_graph`. `evaluate` applies
one node.

Memory: values live in `store` (a dict by default, or the caller's mapping); constants are read from the graph and
never copied into it; `outer` holds the enclosing scope of a subgraph. Reads look in `store`, then the graph's
constants, then `outer`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ..errors import BurnedgeError, ModelError
from ..ir import Graph, Node

__all__ = ["Observer", "evaluate", "interpret", "run_graph"]

Observer = Callable[[Node, list[Any]], None]  # (node, its outputs: one entry per node.outputs) after it ran


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


def interpret(
    graph: Graph,
    feeds: Mapping[str, Any],
    *,
    store: MutableMapping[str, Any] | None = None,
    observe: Observer | None = None,
    outer: Mapping[str, Any] | None = None,
    check: bool = True,
) -> dict[str, Any]:
    """Runs `graph` on `feeds` (graph input name -> array); returns its outputs by name, as `store` holds them.

    Steps: write each feed into `store`; for each node in order, read its inputs and captures (store, constants,
    outer), `evaluate` it, check each array output's dtype and shape against the graph's Value when `check` (a
    wrong reference or inference is an error naming the node), write the outputs into `store`, then call
    `observe(node, outputs)`. The observer may read and drop values in `store` (not the graph outputs).
    """
    store = {} if store is None else store
    consts = graph.constants()
    scope = outer or {}

    def read(name: str) -> Any:
        if name in store:
            return store[name]
        if name in consts:
            return consts[name]
        return scope[name]

    for name in graph.inputs:
        if name in feeds:
            store[name] = feeds[name]
    for node in graph.nodes:
        ins = [read(n) if n else None for n in node.inputs]
        outs = evaluate(node, ins, {n: read(n) for n in node.captures})
        for name, arr in zip(node.outputs, outs):
            if not name:
                continue
            v = graph.values.get(name)
            if (
                check
                and v is not None
                and isinstance(arr, np.ndarray)
                and (arr.shape != v.shape or arr.dtype != v.dtype)
            ):
                raise BurnedgeError(
                    f"node {node.name!r} ({node.op_type}) produced {arr.dtype}{list(arr.shape)} for {name!r}; "
                    f"the plan expects {v.dtype}{list(v.shape)}"
                )
            store[name] = arr
        if observe is not None:
            observe(node, outs)
    return {n: read(n) for n in graph.outputs}


def run_graph(graph: Graph, args: Sequence[Any], outer: Mapping[str, Any]) -> list[Any]:
    """Interprets a (sub)graph by position: inputs bound to `args`, free names looked up in `outer`; the outputs in
    order. Subgraph bodies are not checked against their Values (a loop body's types are the importer's guess)."""
    out = interpret(graph, dict(zip(graph.inputs, args)), outer=outer, check=False)
    return [out[n] for n in graph.outputs]
