"""THE op registry: every op is one decorated numpy function, found by ONNX name, domain and opset.

An op file declares an op like this::

    @register("LeakyRelu", since=6)
    def leaky_relu(x, *, alpha=0.01):
        return np.where(x >= 0, x, x * x.dtype.type(alpha))

- positional parameters are the ONNX inputs, in order (``*xs`` for a variadic tail); an omitted optional
  input arrives as ``None``;
- keyword-only parameters are the ONNX attributes, with their defaults; one without a default is required;
- keyword-only parameters whose names start with ``_`` ask for context from the executor: ``_n_outputs`` (how
  many outputs the node has) and ``_run`` (runs a subgraph attribute: ``_run(graph, *inputs) -> list``);
- the function returns one array, or a tuple for several outputs.

``static`` names the inputs that must be known at compile time (a Reshape's shape, a Slice's starts ...); the
importer folds them or asks the user to bind them. ``dynamic_shape`` marks ops whose output shape depends on the
input data (NonZero): they must fold to constants. Output shapes and dtypes are inferred by running ``ref`` on
zeros of the input shapes, unless the op gives ``infer`` (cheaper for big ops): ``infer(*specs, **attrs)``
with ``specs`` of type ``Spec`` for tensors (and arrays for constant inputs) returns a list of ``Spec``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

from ..ir import MAX_OPSET, REQUIRED, OpDef, Spec
from ._common import accumulating

__all__ = [
    "MAX_OPSET",
    "REQUIRED",
    "TAGS",
    "OpDef",
    "Spec",
    "accumulating",
    "all_ops",
    "for_onnx",
    "register",
    "tagged",
]

# The facts other stages ask about an op, given where the op is registered (never as a list of op names elsewhere).
TAGS: dict[str, str] = {
    "elementwise": "out[i] depends on in[i] only (operands broadcast): the planner may run it in place",
    "view": "the output is the input's bytes reinterpreted: the planner lets them share memory",
    "shape_only": "reads only its input's shape, never its values (the importer folds it)",
    "fusable": "may join a generated elementwise loop (passes/fuse_elementwise.py); a backend that runs fused "
    "chains has an expression for it",
    "int8_passthrough": "runs unchanged on the int8 bytes of input 0 (a copy, a selection, a max): its outputs keep "
    "that input's qparams (quantize/rules/movement.py)",
    "qdq_movement": "QDQ import runs it on int8 inside a DequantizeLinear -> op -> QuantizeLinear island, each "
    "input requantised to the output's qparams (quantize/qdq/); int8_passthrough ops and Concat",
    "int8_lut": "a function of one tensor elementwise (other operands one-element constants): int8 runs it as a "
    "256-entry table (quantize/rules/elementwise.py)",
}

_REGISTRY: dict[tuple[str, str], list[OpDef]] = {}
_loaded = False


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def register(
    name: str,
    since: int = 1,
    until: int = MAX_OPSET,
    *,
    domain: str = "",
    static: tuple[int, ...] = (),
    dynamic_shape: bool = False,
    random: bool = False,
    infer: Callable[..., Any] | None = None,
    tags: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: registers a numpy function as the reference of ONNX op `name` for opsets since..until."""

    unknown = sorted(set(tags) - set(TAGS))
    if unknown:
        raise RuntimeError(f"op {name!r}: unknown tag(s) {unknown}; tags: {', '.join(TAGS)}")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        attrs: dict[str, Any] = {}
        context: set[str] = set()
        n_inputs, variadic = 0, False
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                n_inputs += 1
            elif p.kind == p.VAR_POSITIONAL:
                variadic = True
            elif p.kind == p.KEYWORD_ONLY:
                if p.name.startswith("_"):
                    context.add(p.name)
                else:
                    attrs[p.name] = p.default
        opdef = OpDef(
            name=name,
            domain=_norm_domain(domain),
            since=since,
            until=until,
            ref=fn,
            attrs=attrs,
            n_inputs=n_inputs,
            variadic=variadic,
            context=frozenset(context),
            static=static,
            dynamic_shape=dynamic_shape,
            random=random,
            infer=infer,
            tags=frozenset(tags),
        )
        versions = _REGISTRY.setdefault((opdef.domain, name), [])
        if any(other.since == since for other in versions):
            raise RuntimeError(f"{opdef!r} is registered twice")
        versions.append(opdef)
        versions.sort(key=lambda d: d.since)
        return fn

    return deco


def _load_all() -> None:
    """Imports every module of this package once: an op file registers itself by existing (no list to edit)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def for_onnx(op_type: str, opset: int, domain: str = "") -> OpDef | None:
    """The OpDef implementing `op_type` at `opset`, or None when burnedge lacks it.

    The newest version whose `since` is at most the model's opset wins, as in ONNX itself; `until` only marks
    an op that ONNX removed (Upsample after opset 9, say).
    """
    _load_all()
    for opdef in reversed(_REGISTRY.get((_norm_domain(domain), op_type), [])):
        if opdef.since <= opset:
            return opdef if opset <= opdef.until else None
    return None


def all_ops() -> list[OpDef]:
    """Every registered op version, sorted by name then opset."""
    _load_all()
    return sorted((d for ds in _REGISTRY.values() for d in ds), key=lambda d: (d.domain, d.name, d.since))


def tagged(tag: str, domain: str = "") -> frozenset[str]:
    """Names of the ops of `domain` carrying `tag` (in any of their versions; op files tag every version alike)."""
    if tag not in TAGS:
        raise KeyError(f"unknown op tag {tag!r}; tags: {', '.join(TAGS)}")
    _load_all()
    dom = _norm_domain(domain)
    return frozenset(name for (d, name), ds in _REGISTRY.items() if d == dom and any(tag in o.tags for o in ds))
