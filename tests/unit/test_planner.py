"""Planner invariants: buffers alive at the same step never overlap; the arena is never below the lower bound."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import burnedge
from burnedge.plan import PLANNERS, best_plan, lifetimes, make_plan
from burnedge.plan.planner import ALIGN


def random_buffers(seed: int, n: int = 60) -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        first = int(rng.integers(-1, 40))
        out.append((int(rng.integers(1, 5000)), first, first + int(rng.integers(0, 8))))
    return out


def lower_bound(bufs: list[tuple[int, int, int]]) -> int:
    steps = range(min(f for _, f, _ in bufs), max(last for _, _, last in bufs) + 1)
    aligned = [((s + ALIGN - 1) // ALIGN * ALIGN, f, last) for s, f, last in bufs]
    return max(sum(s for s, f, last in aligned if f <= t <= last) for t in steps)


@pytest.mark.parametrize("name", sorted(PLANNERS))
@pytest.mark.parametrize("seed", range(8))
def test_live_buffers_never_overlap(name, seed):
    bufs = random_buffers(seed)
    p = PLANNERS[name]()
    for b in bufs:
        p.add_buffer(*b)
    offs = [p.offset(i) for i in range(len(bufs))]
    for i, (si, fi, li) in enumerate(bufs):
        assert offs[i] % ALIGN == 0
        assert offs[i] + si <= p.arena_size()
        for j, (sj, fj, lj) in enumerate(bufs[:i]):
            if fi <= lj and fj <= li:
                assert offs[i] + si <= offs[j] or offs[j] + sj <= offs[i], (i, j)
    assert p.arena_size() >= lower_bound(bufs)


@pytest.mark.parametrize("seed", range(8))
def test_best_plan_beats_linear_and_stays_near_bound(seed):
    bufs = random_buffers(seed)
    name, offsets, size = best_plan(bufs)
    linear = PLANNERS["linear"]()
    for b in bufs:
        linear.add_buffer(*b)
    assert size <= linear.arena_size()
    assert size <= 1.5 * lower_bound(bufs), (name, size, lower_bound(bufs))


def test_chain_reuses_memory():
    # a -> b -> c -> d, each 1 KiB: two buffers are ever alive together, so two slots suffice
    bufs = [(1024, i, i + 1) for i in range(4)]
    assert best_plan(bufs)[2] == 2 * 1024


def test_extra_reads_keep_a_tensor_alive_until_that_step():
    """A backend's `reads` (a fused kernel reading a tensor past its node's last reader) extends its lifetime:
    in a chain a -> b -> c the planner puts c over a; with step 1 also reading a, c gets a place of its own."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["b"]),
        helper.make_node("Sqrt", ["b"], ["c"]),
        helper.make_node("Neg", ["c"], ["y"]),
    ]
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [256]) for n in ("x", "y")]
    graph = helper.make_graph(nodes, "g", info[:1], info[1:])
    g = burnedge.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])).graph

    def overlap(p, u: str, v: str) -> bool:
        a, b, n = p.offsets[u], p.offsets[v], 256 * 4
        return not (a + n <= b or b + n <= a)

    plain = make_plan(g, in_place=False)
    assert overlap(plain, "a", "c")
    kept = make_plan(g, in_place=False, reads={2: ["a"]})
    assert not overlap(kept, "a", "c")
    (buf,) = [b for b in lifetimes(g, in_place=False, reads={2: ["a"]}) if "a" in b.tensors]
    assert buf.last == 2
