"""Calibration runs: evaluate a graph node by node on each batch and feed every float tensor to a calibrator.

The graph runs value by value on the numpy references (``burnedge.ops.interpreter.interpret`` with an observer),
not on the arena executor: calibration needs every intermediate tensor, and the arena reuses their bytes. Memory: a
tensor is dropped right after its last reader runs, so at most the live set of one batch is held. Values computed
inside subgraphs (If / Loop / Scan bodies) are not observed; the node's outputs are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from typing import Any

import numpy as np

from ..dtypes import is_float
from ..errors import InputError
from ..feeds import check_feeds as check_inputs
from ..ir import Graph, Node
from ..model import Model
from ..ops.interpreter import interpret
from .calibrate import Calibrator

__all__ = ["check_feeds", "collect", "layers", "observe_floats", "trace"]


def check_feeds(graph: Graph, feeds: Any, where: str = "") -> dict[str, np.ndarray]:
    """The feeds of one batch as arrays, checked against the graph's inputs (burnedge.feeds, the one feed check);
    `where` says which batch for the message."""
    return check_inputs([graph.values[n] for n in graph.inputs], feeds, where)


def observe_floats(
    graph: Graph | Model, feeds: Mapping[str, np.ndarray], see: Callable[[str, np.ndarray], None], where: str = ""
) -> None:
    """Runs the graph once, calling ``see(name, array)`` for every float tensor: the float inputs, then node outputs
    in order. Constants are not seen (weights are quantized from their values, not calibrated).

    Memory: each value leaves the store once its last reader has run (graph outputs stay to the end).
    """
    g = graph.graph if isinstance(graph, Model) else graph
    store: dict[str, Any] = dict(check_feeds(g, feeds, where))
    last: dict[str, int] = {}  # value -> index of the last node that reads it
    for i, node in enumerate(g.nodes):
        for n in node.uses():
            last[n] = i
    for n in g.outputs:
        last[n] = len(g.nodes)
    index = {id(node): i for i, node in enumerate(g.nodes)}
    for name in g.inputs:
        if is_float(store[name].dtype):
            see(name, store[name])

    def observe(node: Node, outs: list[Any]) -> None:
        i = index[id(node)]
        for name, arr in zip(node.outputs, outs):
            if not name:
                continue
            if isinstance(arr, np.ndarray) and is_float(arr.dtype):
                see(name, arr)
            if last.get(name, -1) <= i:
                store.pop(name, None)  # nobody reads it later
        for n in set(node.uses()):
            if last.get(n) == i:
                store.pop(n, None)  # its last reader has run

    interpret(g, store, store=store, observe=observe)


def trace(graph: Graph | Model, feeds: Mapping[str, np.ndarray], where: str = "") -> Iterator[tuple[str, np.ndarray]]:
    """(name, array) for every float tensor of one run: the float inputs, then node outputs in order (constants are
    not yielded). The arrays of the whole run are held; `observe_floats` streams them instead."""
    seen: list[tuple[str, np.ndarray]] = []
    observe_floats(graph, feeds, lambda name, arr: seen.append((name, arr)), where)
    return iter(seen)


def layers(graph: Graph | Model) -> dict[str, tuple[str, str]]:
    """Tensor name -> (layer, op type) for the accuracy report: node outputs name their node, inputs "input"."""
    g = graph.graph if isinstance(graph, Model) else graph
    out = {name: (name, "input") for name in g.inputs}
    out.update({o: (node.name, node.op_type) for node in g.nodes for o in node.outputs if o})
    return out


def collect(
    graph: Graph | Model,
    batches: Iterable[Mapping[str, np.ndarray]],
    calibrator: Calibrator,
    progress: bool = True,
) -> Calibrator:
    """Feeds every float tensor of every batch to `calibrator`; returns it (call ``.compute()`` next).

    A progress bar (rich, or a plain counter without it) shows when `progress` is true and stdout is a terminal.
    Bad feeds raise InputError naming the input and the batch index (0-based); no batch at all is an error too.
    """
    g = graph.graph if isinstance(graph, Model) else graph
    if isinstance(batches, Mapping):
        raise InputError("calibration data is one dict of arrays; pass an iterable of them, e.g. [feeds]")
    total = len(batches) if isinstance(batches, Sized) else None
    seen = 0
    for index, feeds in _progress(batches, total, progress and sys.stdout.isatty()):
        observe_floats(g, feeds, calibrator.observe, where=f"calibration batch {index}")
        seen += 1
    if not seen:
        raise InputError("calibration data is empty: no batch to observe")
    return calibrator


def _progress(items: Iterable[Any], total: int | None, show: bool) -> Iterator[tuple[int, Any]]:
    """(index, item) pairs, with a progress bar on the terminal when `show`."""
    if not show:
        yield from enumerate(items)
        return
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:  # rich is optional: a plain counter on the same line
        for index, item in enumerate(items):
            sys.stdout.write(f"\rcalibrating: batch {index + 1}" + (f"/{total}" if total else ""))
            sys.stdout.flush()
            yield index, item
        sys.stdout.write("\n")
        return
    columns = (TextColumn("calibrating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("calibrating", total=total)
        for index, item in enumerate(items):
            yield index, item
            bar.advance(task)
