"""If on a condition computed at run time: both branches lowered into the If's step, one chosen by the condition.

    case 7: { /* If 'if0' */
      if (cond[0]) { <then's steps, over the If step's scratch> ; copy then's outputs to the If's outputs }
      else         { <else's steps, over the same scratch bytes> ; copy else's outputs to the If's outputs }
    } break;

burnedge.plan.branches plans each branch as a graph of its own over the If step's scratch (the two branches share
those bytes: only one runs); the tensors a branch reads from the enclosing graph stay where that plan put them. A
branch's steps are the same lowerings as the main graph's, through a Ctx over the placed branch plan, so If nests.
Its constants join the one weights blob under names prefixed by the branch (two branches may reuse a name).
Loop and Scan stay on the numpy backend: their bodies carry state from one iteration to the next, which this
plan of straight-line steps does not have.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....ir import Graph, Node
from ....plan import Plan
from ....plan.branches import BRANCHES, placed, plan_if
from . import Ctx, find, label, lower, step_scratch

__all__ = ["branch_problem"]


def branch_problem(node: Node) -> str | None:
    """Why the C backend cannot run the subgraphs of `node` (a node without a C lowering inside), or None.

    Nodes that only read constants (Constant, shape arithmetic) are folded when the branch is planned: they need
    no lowering."""
    for attr, sub in node.attrs.items():
        graphs = sub if isinstance(sub, list) else [sub]
        for g in graphs:
            if not isinstance(g, Graph):
                continue
            consts = {n for n, v in g.values.items() if v.is_const}
            for inner in g.nodes:
                if not inner.op.random and all(n in consts for n in inner.uses()):
                    consts.update(inner.outputs)
                    continue
                if find(inner) is None:
                    return f"its {attr} has {inner.op.key} {inner.name!r}, which has no C kernel"
                why = branch_problem(inner)
                if why:
                    return f"its {attr}: {why}"
    return None


def _if_scratch(graph: Graph, node: Node) -> int:
    return plan_if(graph, node, step_scratch).arena_bytes


@dataclass
class _BranchCtx(Ctx):
    """A Ctx over a placed branch plan. Its constants go into the one weights blob under `keys`: a constant the
    branch reads from an enclosing graph keeps that graph's key (one copy); one of its own gets `prefix` (two
    branches may each have a constant of the same name)."""

    prefix: str = ""
    keys: dict[str, str] = field(default_factory=dict)

    def _add_weight(self, key: str, arr) -> int:
        return super()._add_weight(self.keys.get(key, self.prefix + key), arr)


def _weight_key(ctx: Ctx, name: str) -> str:
    return ctx.keys.get(name, ctx.prefix + name) if isinstance(ctx, _BranchCtx) else name


def _branch(ctx: Ctx, node: Node, attr: str, plan: Plan) -> str:
    """The C of one branch: its steps, then copies of its outputs to the If's outputs."""
    base = ctx.plan.scratch[ctx.step][0] if ctx.step in ctx.plan.scratch else 0
    outer = ctx.graph.values
    keys = {n: _weight_key(ctx, n) for n, v in plan.graph.values.items() if v.is_const and outer.get(n) is v}
    sub = _BranchCtx(
        placed(plan, base, ctx.plan.offsets),
        ctx.weights,
        weight_bytes=ctx.weight_bytes,
        packed=ctx.packed,
        prefix=f"{_weight_key(ctx, node.name)}/{attr}/",
        keys=keys,
    )
    lines = []
    for step, inner in enumerate(sub.plan.steps):
        sub.step, sub.node = step, inner
        lowering = find(inner)
        sub.require(lowering is not None, f"no C kernel for {inner.op.key} (in the {attr} of If {node.name!r})")
        lines.append(f"{{ /* {label(inner)} */")
        lines.extend("  " + line for line in lowering.fn(sub, inner).splitlines())
        lines.append("}")
    for out, y in zip(sub.graph.outputs, node.outputs):
        nbytes = ctx.graph.values[y].nbytes if y else 0
        if nbytes:
            lines.append(f"memcpy({ctx.tensor(y, 'uint8_t')}, {sub.tensor(out, 'uint8_t')}, {nbytes});")
    ctx.weight_bytes = sub.weight_bytes
    return "\n".join(lines)


@lower("If", scratch=_if_scratch)
def if_(ctx: Ctx, node: Node) -> str:
    why = branch_problem(node)
    ctx.require(why is None, why or "")
    cond = node.inputs[0]
    ctx.require(ctx.size(cond) == 1, f"the condition has {ctx.size(cond)} elements, not 1")
    plans = plan_if(ctx.graph, node, step_scratch)
    then, other = [_branch(ctx, node, attr, p) for attr, p in zip(BRANCHES, (plans.then, plans.other))]
    test = f"{ctx.tensor(cond)}[0]"
    body = ["  " + line for line in then.splitlines()], ["  " + line for line in other.splitlines()]
    return "\n".join([f"if ({test}) {{", *body[0], "} else {", *body[1], "}"])
