"""A Loop's output shapes without running it: one body iteration gives every shape, the trip count the rest.

Running a Loop on zero-filled inputs to learn its shapes ran all of its iterations (a 254-byte model with a
constant trip count of 10**9 hung the import). Instead:

1. run the body once (iteration 0, condition true) on the loop-carried inputs: its outputs give the shape of each
   carried value and of each scan output's row;
2. a carried value must keep its shape from one iteration to the next (the plan holds one shape per tensor);
3. scan outputs stack one row per iteration, so their length is the trip count M: known only when the loop runs
   exactly M times (its condition absent or constant true, and passed through unchanged or made constant true by
   the body); otherwise the length depends on data and the model is refused, saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ModelError, NotStaticError
from ..ir import Graph, Node
from ..ops.interpreter import run_graph

__all__ = ["counts_trips", "loop_shapes"]


def counts_trips(body: Graph) -> bool:
    """True when the body never stops the loop: its condition output is its condition input (or an Identity of it)
    or a constant true."""
    if len(body.inputs) < 2 or not body.outputs:
        return False
    cond_out, cond_in = body.outputs[0], body.inputs[1]
    copies = {n.outputs[0]: n.inputs[0] for n in body.nodes if n.op_type == "Identity" and n.inputs and n.outputs}
    seen: set[str] = set()
    while cond_out in copies and cond_out not in seen:  # Identity(cond_in) -> cond_out passes it through too
        seen.add(cond_out)
        cond_out = copies[cond_out]
    out = body.values.get(cond_out)
    return cond_out == cond_in or (out is not None and out.is_const and bool(np.asarray(out.data).all()))


def loop_shapes(node: Node, args: list[Any], scope: Mapping[str, Any]) -> list[tuple[tuple[int, ...], np.dtype]]:
    """(shape, dtype) of each output of the Loop `node`, whose inputs are `args` (constants or zero-filled stand-ins
    of the right shapes; M and the condition are constants, checked before) and captures `scope`."""
    body: Graph = node.attrs["body"]
    m, cond, carried = (list(args) + [None, None])[0], (list(args) + [None, None])[1], list(args[2:])
    if len(body.inputs) != 2 + len(carried) or len(body.outputs) < 1 + len(carried):
        raise ModelError(
            f"node {node.name!r} (Loop): its body takes {len(body.inputs)} inputs and gives {len(body.outputs)} "
            f"outputs; with {len(carried)} loop-carried value(s) it must take {2 + len(carried)} and give at least "
            f"{1 + len(carried)}"
        )
    first = run_graph(body, [np.array(0, np.int64), np.array(True), *carried], scope)
    shapes: list[tuple[tuple[int, ...], np.dtype]] = []
    for k, (before, after) in enumerate(zip(carried, first[1 : 1 + len(carried)])):
        after = np.asarray(after)
        if before.shape != after.shape:
            raise NotStaticError(
                f"node {node.name!r} (Loop): loop-carried value {k} ({node.inputs[2 + k]!r}) changes shape from "
                f"{list(before.shape)} to {list(after.shape)} in one iteration; a plan holds one shape per tensor"
            )
        shapes.append((before.shape, before.dtype))
    rows = [np.asarray(s) for s in first[1 + len(carried) :]]
    if not rows:
        return shapes
    starts = cond is None or bool(np.asarray(cond).reshape(-1)[0])
    if m is None or not counts_trips(body):
        raise NotStaticError(
            f"node {node.name!r} (Loop): its {len(rows)} scan output(s) get one row per iteration, and the number "
            "of iterations depends on a condition its body computes (or on no trip count), so their length is "
            "not known before it runs; burnedge plans static shapes only"
        )
    trips = int(np.asarray(m).reshape(-1)[0]) if starts else 0
    return shapes + [((max(trips, 0), *r.shape), r.dtype) for r in rows]
