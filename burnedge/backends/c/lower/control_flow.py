"""If on a condition computed at run time: both branches lowered into the If's step, one chosen by the condition.

    case 7: { /* If 'if0' */
      if (cond[0]) { <then's steps, over the If step's scratch> ; copy then's outputs to the If's outputs }
      else         { <else's steps, over the same scratch bytes> ; copy else's outputs to the If's outputs }
    } break;

burnedge.plan.branches plans each branch as a graph of its own over the If step's scratch (the two branches share
those bytes: only one runs); the tensors a branch reads from the enclosing graph stay where that plan put them. A
branch's steps are the same lowerings as the main graph's, through a Ctx over the placed branch plan, so If nests.
Its constants join the one weights blob under names prefixed by the branch (two branches may reuse a name).

Scan (opset 9+) runs its body's steps in a C loop over the scan length, the body planned over the Scan step's
scratch (plan.branches.plan_scan). The Scan's state outputs carry the state: they start as copies of the initial
states; each iteration copies them into the body's state inputs and the step's slice of every scan input (along
its axis, reversed where its direction says so) into the body's scan inputs, runs the body, then copies the body's
state outputs back and its scan outputs into their slice of the Scan's outputs. Loop stays on the numpy backend
unless the importer unrolls it. Opset-8 Scan (a batch axis, sequence_lens) runs the same loop once per batch entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....ir import Graph, Node
from ....plan import Plan
from ....plan.branches import BRANCHES, placed, plan_if, plan_scan
from . import Ctx, find, label, lower, step_scratch
from .movement import copy_code, dense_strides
from .views import share_or_copy

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


def _sub_ctx(ctx: Ctx, node: Node, attr: str, plan: Plan) -> _BranchCtx:
    """A Ctx over subgraph `attr`'s plan placed in the step's scratch; its own constants get the node's prefix."""
    base = ctx.plan.scratch[ctx.step][0] if ctx.step in ctx.plan.scratch else 0
    outer = ctx.graph.values
    keys = {n: _weight_key(ctx, n) for n, v in plan.graph.values.items() if v.is_const and outer.get(n) is v}
    return _BranchCtx(
        placed(plan, base, ctx.plan.offsets),
        ctx.weights,
        weight_bytes=ctx.weight_bytes,
        packed=ctx.packed,
        prefix=f"{_weight_key(ctx, node.name)}/{attr}/",
        keys=keys,
    )


def _steps(sub: _BranchCtx, node: Node, attr: str) -> list[str]:
    """The C of every step of a subgraph's plan, each in its own block."""
    lines = []
    for step, inner in enumerate(sub.plan.steps):
        sub.step, sub.node = step, inner
        lowering = find(inner)
        sub.require(
            lowering is not None, f"no C kernel for {inner.op.key} (in the {attr} of {node.op_type} {node.name!r})"
        )
        lines.append(f"{{ /* {label(inner)} */")
        lines.extend("  " + line for line in lowering.fn(sub, inner).splitlines())
        lines.append("}")
    return lines


def _branch(ctx: Ctx, node: Node, attr: str, plan: Plan) -> str:
    """The C of one branch: its steps, then copies of its outputs to the If's outputs."""
    sub = _sub_ctx(ctx, node, attr, plan)
    lines = _steps(sub, node, attr)
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


def _scan_scratch(graph: Graph, node: Node) -> int:
    return plan_scan(graph, node, step_scratch).arena_bytes


def _slice_copy(ctx: Ctx, whole: str, shape: tuple[int, ...], axis: int, at: str, part: str, into_whole: bool) -> str:
    """C copying slice `at` (a C expression) along `axis` of tensor `whole` (of `shape`, in ctx's arena) to or from
    the dense tensor pointer `part`."""
    st = dense_strides(shape)
    sub_shape = [d for a, d in enumerate(shape) if a != axis]
    sub_st = [s for a, s in enumerate(st) if a != axis]
    isz = ctx.dtype(whole).itemsize
    base = f"({ctx.tensor(whole, 'uint8_t')} + ({at}) * {st[axis] * isz})"
    if into_whole:
        return copy_code(base, part, isz, sub_shape, sub_st, dense_strides(sub_shape))
    return copy_code(part, base, isz, sub_shape, dense_strides(sub_shape), sub_st)


@lower("Scan", scratch=_scan_scratch)
def scan(ctx: Ctx, node: Node) -> str:
    why = branch_problem(node)
    ctx.require(why is None, why or "")
    if node.op.since < 9:
        return _scan_batched(ctx, node)
    n_scan = int(node.attrs["num_scan_inputs"])
    n_states = len(node.inputs) - n_scan
    states, seqs = node.inputs[:n_states], node.inputs[n_states:]
    ctx.require(all(node.outputs[:n_states]), "every final state must be an output (it carries the state)")
    in_axes = [int(a) for a in node.attrs.get("scan_input_axes") or [0] * n_scan]
    in_dirs = [int(d) for d in node.attrs.get("scan_input_directions") or [0] * n_scan]
    n_out = len(node.outputs) - n_states
    out_axes = [int(a) for a in node.attrs.get("scan_output_axes") or [0] * n_out]
    out_dirs = [int(d) for d in node.attrs.get("scan_output_directions") or [0] * n_out]
    in_axes = [a % len(ctx.shape(x)) for a, x in zip(in_axes, seqs)]
    lengths = {ctx.shape(x)[a] for a, x in zip(in_axes, seqs)}
    ctx.require(len(lengths) == 1, f"the scan inputs have lengths {sorted(lengths)}, expected one")
    steps = lengths.pop()
    plan = plan_scan(ctx.graph, node, step_scratch)
    lines = [share_or_copy(ctx, x, y) for x, y in zip(states, node.outputs)]
    for x in seqs:  # constant scan inputs join the weights now: the body's Ctx continues the blob from here
        ctx.tensor(x, "uint8_t")
    sub = _sub_ctx(ctx, node, "body", plan)
    body_in, body_out = plan.graph.inputs, plan.graph.outputs
    if steps == 0:
        return "\n".join(lines)
    loop = [f"for (long t = 0; t < {steps}; t++) {{"]
    for b, y in zip(body_in, node.outputs[:n_states]):
        if b in sub.plan.offsets:
            loop.append(
                f"  memcpy({sub.tensor(b, 'uint8_t')}, {ctx.tensor(y, 'uint8_t')}, {ctx.graph.values[y].nbytes});"
            )
    for j, (b, x) in enumerate(zip(body_in[n_states:], seqs)):
        if b in sub.plan.offsets:
            at = f"{steps - 1} - t" if in_dirs[j] else "t"
            code = _slice_copy(ctx, x, ctx.shape(x), in_axes[j], at, sub.tensor(b, "uint8_t"), False)
            loop += ["  " + line for line in code.splitlines()]
    loop += ["  " + line for line in _steps(sub, node, "body")]
    for o, y in zip(body_out, node.outputs[:n_states]):
        loop.append(f"  memcpy({ctx.tensor(y, 'uint8_t')}, {sub.tensor(o, 'uint8_t')}, {ctx.graph.values[y].nbytes});")
    for k, (o, y) in enumerate(zip(body_out[n_states:], node.outputs[n_states:])):
        if not y:
            continue
        shape = ctx.shape(y)
        at = f"{steps - 1} - t" if out_dirs[k] else "t"
        code = _slice_copy(ctx, y, shape, out_axes[k] % len(shape), at, sub.tensor(o, "uint8_t"), True)
        loop += ["  " + line for line in code.splitlines()]
    ctx.weight_bytes = sub.weight_bytes
    return "\n".join([*lines, *loop, "}"])


def _scan_batched(ctx: Ctx, node: Node) -> str:
    """Opset-8 Scan: one scan per batch entry b (axis 0 of every input), over axis 1 of the scan inputs, for
    min(sequence_lens[b], length) steps (sequence_lens may arrive at run time; absent: every step); the scan
    outputs are zero past a sequence's end, as the reference pads them."""
    n_scan = int(node.attrs["num_scan_inputs"])
    lens, ins = node.inputs[0], node.inputs[1:]
    n_states = len(ins) - n_scan
    states, seqs = ins[:n_states], ins[n_states:]
    ctx.require(all(node.outputs[:n_states]), "every final state must be an output (it carries the state)")
    dirs = [int(d) for d in node.attrs.get("directions") or [0] * n_scan]
    batch = ctx.shape(ins[0])[0]
    lengths = {ctx.shape(x)[1] for x in seqs}
    ctx.require(len(lengths) == 1, f"the scan inputs have lengths {sorted(lengths)}, expected one")
    steps = lengths.pop()
    if lens:
        ctx.require(ctx.dtype(lens).kind in "iu", f"sequence_lens is {ctx.dtype(lens)}, expected an integer type")
        ctx.require(ctx.size(lens) == batch, f"sequence_lens has {ctx.size(lens)} values, expected {batch}")
    plan = plan_scan(ctx.graph, node, step_scratch)
    lines = [share_or_copy(ctx, x, y) for x, y in zip(states, node.outputs)]
    for x in seqs:  # constant scan inputs join the weights now: the body's Ctx continues the blob from here
        ctx.tensor(x, "uint8_t")
    for y in node.outputs[n_states:]:
        if y and ctx.size(y):
            lines.append(f"memset({ctx.tensor(y, 'uint8_t')}, 0, {ctx.graph.values[y].nbytes});")
    sub = _sub_ctx(ctx, node, "body", plan)
    body_in, body_out = plan.graph.inputs, plan.graph.outputs
    if steps == 0 or batch == 0:
        return "\n".join(lines)

    def part(name: str, index: str, count: int) -> str:  # element `index` of `count` equal parts of `name`
        return f"({ctx.tensor(name, 'uint8_t')} + ({index}) * {ctx.graph.values[name].nbytes // count})"

    n = f"(long){ctx.tensor(lens)}[b]" if lens else str(steps)
    loop = [f"for (long b = 0; b < {batch}; b++) {{", f"  long n = {n};",
            f"  if (n > {steps}) n = {steps};", "  for (long t = 0; t < n; t++) {"]  # fmt: skip
    for b, y in zip(body_in, node.outputs[:n_states]):
        if b in sub.plan.offsets:
            loop.append(
                f"    memcpy({sub.tensor(b, 'uint8_t')}, {part(y, 'b', batch)}, {plan.graph.values[b].nbytes});"
            )
    for j, (b, x) in enumerate(zip(body_in[n_states:], seqs)):
        if b in sub.plan.offsets:
            at = f"b * {steps} + (n - 1 - t)" if dirs[j] else f"b * {steps} + t"
            loop.append(f"    memcpy({sub.tensor(b, 'uint8_t')}, {part(x, at, batch * steps)}, "
                        f"{plan.graph.values[b].nbytes});")  # fmt: skip
    loop += ["    " + line for line in _steps(sub, node, "body")]
    for o, y in zip(body_out, node.outputs[:n_states]):
        loop.append(f"    memcpy({part(y, 'b', batch)}, {sub.tensor(o, 'uint8_t')}, {plan.graph.values[o].nbytes});")
    for o, y in zip(body_out[n_states:], node.outputs[n_states:]):
        if y:
            loop.append(f"    memcpy({part(y, f'b * {steps} + t', batch * steps)}, {sub.tensor(o, 'uint8_t')}, "
                        f"{plan.graph.values[o].nbytes});")  # fmt: skip
    ctx.weight_bytes = sub.weight_bytes
    return "\n".join([*lines, *loop, "  }", "}"])
