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
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["REQUIRED", "OpDef", "Spec", "all_ops", "for_onnx", "register"]

REQUIRED = inspect.Parameter.empty
MAX_OPSET = 10_000


class Spec(NamedTuple):
    """Type of a tensor known only by shape and dtype (what infer functions see and return)."""

    shape: tuple[int, ...]
    dtype: Any


@dataclass(frozen=True)
class OpDef:
    """One version range of one op: its numpy reference and what the importer needs to know about it."""

    name: str
    domain: str
    since: int
    until: int
    ref: Callable[..., Any]
    attrs: dict[str, Any]
    n_inputs: int
    variadic: bool
    context: frozenset[str]
    static: tuple[int, ...] = ()
    dynamic_shape: bool = False
    random: bool = False
    infer: Callable[..., Any] | None = None
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def key(self) -> str:
        return f"{self.domain + '.' if self.domain else ''}{self.name}"

    def __repr__(self) -> str:
        until = "" if self.until >= MAX_OPSET else str(self.until)
        return f"OpDef({self.key} opset {self.since}..{until})"


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
