"""The manifest's schema: every field burnedge reads, with its type, checked before the manifest is used.

A manifest whose hashes are consistent can still carry a string where a size belongs, a shape of floats, an
unknown dtype or a list nested a thousand deep; without this check each became a raw TypeError, KeyError or
RecursionError somewhere in a backend. `check` walks the fields burnedge knows (unknown extra keys are allowed,
for bundles of later minor versions) and raises a one-line BundleError naming the field, what it must be and
what it is.

A schema is written with the small vocabulary below: `Count` (an int >= 0, not a bool), `Int`, `Text`, `Number`,
`Dtype`, `Any_`, `Opt(s)` (may be absent or null), `List(s, cap)`, `Table(s, cap)` ({str: s}), `Either(a, b)`,
and a dict {key: schema} for a JSON object with those keys (a key's schema `Opt(...)` makes it optional).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BundleError

__all__ = ["MANIFEST_SCHEMA", "PLAN_SCHEMA", "check"]

# element types a bundle's tensors may have: fixed-size numbers and booleans (no objects, strings or records)
DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bfloat16 float8_e4m3fn "
    "float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn int4 uint4 int2 uint2".split()
)  # the last ten: ml_dtypes types, one element per byte (the C backend's storage types)
MAX_ITEMS = 1 << 20  # entries in any one list or table of a manifest (a real one has thousands at most)


class _Schema:
    def check(self, value: Any, where: str) -> None:
        raise NotImplementedError


def _fail(where: str, expected: str, value: Any) -> None:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise BundleError(f"{where} must be {expected}, not {shown} ({type(value).__name__})")


class _Count(_Schema):
    def check(self, value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            _fail(where, "a non-negative integer", value)


class _Text(_Schema):
    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, str):
            _fail(where, "a string", value)


class _Number(_Schema):
    def check(self, value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(where, "a number", value)


class _Int(_Schema):
    def check(self, value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(where, "an integer", value)


class _Any(_Schema):
    def check(self, value: Any, where: str) -> None:
        pass


class _Dtype(_Schema):
    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, str) or value not in DTYPES:
            _fail(where, f"an element type ({', '.join(sorted(DTYPES))})", value)


@dataclass(frozen=True)
class Opt(_Schema):
    inner: Any

    def check(self, value: Any, where: str) -> None:
        if value is not None:
            _check(self.inner, value, where)


@dataclass(frozen=True)
class List(_Schema):
    inner: Any
    cap: int = MAX_ITEMS

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, list):
            _fail(where, "a list", value)
        if len(value) > self.cap:
            raise BundleError(f"{where} has {len(value)} entries, more than the {self.cap} a bundle may have")
        for i, item in enumerate(value):
            _check(self.inner, item, f"{where}[{i}]")


@dataclass(frozen=True)
class Table(_Schema):
    inner: Any
    cap: int = MAX_ITEMS

    def check(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            _fail(where, "an object", value)
        if len(value) > self.cap:
            raise BundleError(f"{where} has {len(value)} entries, more than the {self.cap} a bundle may have")
        for key, item in value.items():
            _check(self.inner, item, f"{where}[{key!r}]")


@dataclass(frozen=True)
class Either(_Schema):
    first: Any
    second: Any

    def check(self, value: Any, where: str) -> None:
        try:
            _check(self.first, value, where)
        except BundleError:
            _check(self.second, value, where)


Count, Text, Number, Int, Dtype, Any_ = _Count(), _Text(), _Number(), _Int(), _Dtype(), _Any()


def _check(schema: Any, value: Any, where: str) -> None:
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            _fail(where, "an object", value)
        for key, inner in schema.items():
            if key not in value and not isinstance(inner, Opt):
                raise BundleError(f"{where} lacks {key!r}")
            _check(inner, value.get(key), f"{where}.{key}")
    else:
        schema.check(value, where)


SHAPE = List(Count, 64)
QUANTIZATION = {
    "scale": Either(Number, List(Number)),
    "zero_point": Either(Int, List(Int)),
    "dtype": Opt(Dtype),
    "axis": Opt(Int),
    "qmin": Opt(Int),
    "qmax": Opt(Int),
}
TENSOR = {
    "name": Text,
    "shape": SHAPE,
    "dtype": Dtype,
    "offset": Opt(Count),
    "constant": Opt(Text),
    "quantization": Opt(QUANTIZATION),
    "step": Opt(Number),
    "rounding": Opt(Number),
}
LIBRARY = {
    "path": Text,
    "system": Opt(Text),
    "machine": Opt(Text),
    "cpu": Opt(Text),
    "triple": Opt(Text),
    "cc": Opt(Text),
    "cflags": Opt(List(Text)),
    "requires": Opt(List(Text)),
}
MANIFEST_SCHEMA = {
    "format": Text,
    "format_version": Int,
    "burnedge_version": Opt(Text),
    "backend": Opt(Text),
    "model": {"name": Text, "producer": Opt(Text), "opset": Opt(Int), "source": Opt(Text)},
    "target": Opt(Text),
    "inputs": List(TENSOR),
    "outputs": List(TENSOR),
    "steps": Opt(Count),
    "arena_bytes": Count,
    "arena_lower_bound_bytes": Opt(Count),
    "planner": Opt(Text),
    "weight_bytes": Count,
    "weights": List({"key": Text, "offset": Count, "bytes": Count, "dtype": Opt(Dtype), "shape": Opt(SHAPE)}),
    "libraries": Table(LIBRARY),
    "vectors": List(Text),
    "files": Table({"sha256": Text, "bytes": Count}),
    "quantization": Opt(Table(Any_)),  # the int8 report: read by `inspect`, as printed
}

# plan.json, as `inspect` and the profiled backend read it
PLAN_SCHEMA = {
    "steps": List(
        {
            "index": Int,
            "name": Text,
            "op": Text,
            "ops": List(Text),
            "outputs": List({"name": Text, "offset": Opt(Int)}),
        }
    ),
    "buffers": List(
        {"name": Text, "tensors": Opt(List(Text)), "offset": Int, "bytes": Count, "first": Int, "last": Int}
    ),
}


def check(where: str, value: Any, schema: Any = MANIFEST_SCHEMA) -> None:
    """Raises a BundleError naming the first field of `value` that does not fit `schema` (the manifest's)."""
    _check(schema, value, where)
