"""`burnedge ops`: the support matrix, op x backend x dtype, as the ONNX node tests prove it.

Each op's line says whether a backend runs it (`yes`, `fn`: through its ONNX function body, `-`: no, with the
reason in --json). Under it, one line per dtype: how many node tests pass on each backend with the op at that
dtype (burnedge/ops/proven.tsv, written from the conformance expectations), then the dtypes ONNX allows that no
node test covers on any backend. A claim without a passing test shows as `yes` with no number under it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from typing import Any

_TENSOR = re.compile(r"tensor\(([^()]*)\)")
_COMMON = ["float", "float16", "bfloat16", "double"] + [f"{s}int{b}" for b in (8, 16, 32, 64) for s in ("", "u")]
_RANK = {t: i for i, t in enumerate([*_COMMON, "bool"])}


def _order(types: Sequence[str]) -> list[str]:
    return sorted(types, key=lambda t: (_RANK.get(t, len(_RANK)), t))


def _dtype_cell(types: Sequence[str], width: int = 80) -> str:
    """Dtypes, the common ones first, cut to `width` characters with a count of the rest (--json lists all)."""
    plain = _order([t for t in types if "(" not in t])
    nested = len(types) - len(plain)
    shown: list[str] = []
    for t in plain:
        if len(" ".join([*shown, t])) > width:
            break
        shown.append(t)
    rest = len(plain) - len(shown)
    return " ".join(shown) + (f" +{rest} more" if rest else "") + (f" +{nested} seq/optional" if nested else "")


def rows() -> tuple[list[str], dict[str, dict[str, Any]]]:
    """(backend names, {op key: row}); a row has versions, backends that run it, why_not, via, the schema's
    dtypes, and `proven`: {backend: {dtype: passing node tests}}."""
    import onnx

    from .backends import available, get
    from .ir import Node
    from .ops import all_ops, proven

    backends = {name: get(name) for name in available()}
    table: dict[str, dict[str, Any]] = {}
    newest = {}
    for d in all_ops():  # sorted by opset: the last version of each op is its newest
        row = table.setdefault(d.key, {"op": d.key, "versions": [], "backends": [], "why_not": {}, "via": {},
                                       "dtypes": [], "proven": {}})  # fmt: skip
        row["versions"].append(d.since)
        newest[d.key] = d
        try:
            schema = onnx.defs.get_schema(d.name, onnx.defs.onnx_opset_version(), d.domain)
            types = {_TENSOR.sub(r"\1", t) for c in schema.type_constraints for t in c.allowed_type_strs}
            row["dtypes"] = sorted(types)  # "float", "seq(float)", "optional(seq(float))"
        except onnx.defs.SchemaError:
            pass
    measured = proven.load()
    for key, row in table.items():  # each backend says itself whether it runs the op's newest version, or why not
        probe = Node(op=newest[key], name=key, inputs=[], outputs=[])
        for name, backend in backends.items():
            why = backend.supports(probe)
            if why is None:
                row["backends"].append(name)
                if backend.via(probe):
                    row["via"][name] = backend.via(probe)
            else:
                row["why_not"][name] = why
            if (key, name) in measured:
                row["proven"][name] = measured[(key, name)]
    return list(backends), table


def cmd_ops(a: argparse.Namespace) -> int:
    names, table = rows()
    wanted = [r for r in table.values() if not a.op or a.op.lower() in r["op"].lower()]
    if a.json:
        print(json.dumps(wanted, indent=2))
        return 0
    print(f"{len(wanted)} ops; backends: {', '.join(names)}. Under each op: node tests passed per dtype "
          f"(fn: runs the op's ONNX function body)")  # fmt: skip
    print(f"{'op / dtype':30s} {'opset versions':18s} " + " ".join(f"{b:6s}" for b in names))
    for r in wanted:
        marks = " ".join(f"{('fn' if b in r['via'] else 'yes') if b in r['backends'] else '-':6s}" for b in names)
        print(f"{r['op']:30s} {','.join(map(str, r['versions'])):18s} {marks}")
        seen = {d for by_dtype in r["proven"].values() for d in by_dtype}
        for d in _order(seen):
            cells = " ".join(f"{r['proven'].get(b, {}).get(d, '.')!s:6s}" for b in names)
            print(f"  {d:28s} {'':18s} {cells}")
        untested = [t for t in r["dtypes"] if t not in seen]
        if untested:
            print(f"  no node test: {_dtype_cell(untested)}")
    return 0


def add_command(sub: Any) -> None:
    s = sub.add_parser("ops", help="the support matrix: op x backend x dtype, as the node tests prove it")
    s.add_argument("--op", default="", help="only ops whose name contains this (case-insensitive)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_ops)
