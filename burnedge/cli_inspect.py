"""`burnedge inspect` of a model: I/O, ops, parameters, MACs and backend support; a dynamic model shows what it can."""

from __future__ import annotations

import argparse
import json
from typing import Any

from . import cli_bundle, cli_inputs, cli_zoo
from .analysis import stored, summarize, unsupported_ops
from .bundle import looks_like
from .cli_inputs import UsageError, fmt_shape, si
from .errors import NotStaticError

__all__ = ["cmd_inspect"]


def cmd_inspect(a: argparse.Namespace, shapes: dict[str, tuple[int, ...]]) -> int:
    if looks_like(a.model):
        if a.input_shape:
            raise UsageError("--input-shape does not apply to a bundle: its shapes were fixed at export")
        cli_inputs.no_bind_for_bundle(a)
        return cli_bundle.inspect_bundle(a)
    if a.timeline:
        raise UsageError("--timeline needs a bundle (export the model first: burnedge export MODEL)")
    from .importers.onnx import read

    zoo = getattr(a, "arch", None) is not None  # a zoo checkpoint: traced from burnedge.nn, no ONNX file to read
    if not zoo:
        cli_zoo.no_arch(a)
    proto = None if zoo else read(a.model)
    missing = {} if zoo else unsupported_ops(proto)
    info: dict[str, Any] = {"model": str(a.model), "unsupported_ops": missing}
    if not missing:
        try:
            model = cli_inputs.load_model(a, shapes, {})
        except NotStaticError as exc:
            return _dynamic(a, proto, info, shapes, exc)
        s = summarize(model.graph)
        info.update(
            name=model.name,
            producer=model.producer,
            opset=model.opset,
            inputs=[{"name": i.name, "shape": list(i.shape), "dtype": str(i.dtype)} for i in model.inputs],
            outputs=[{"name": o.name, "shape": list(o.shape), "dtype": str(o.dtype)} for o in model.outputs],
            nodes=len(model.graph.nodes),
            ops=s.ops,
            parameters=s.parameters,
            parameter_bytes=s.parameter_bytes,
            macs=s.macs,
            total_macs=sum(s.macs.values()),
            backends=_backend_support(model.graph),
        )
    if a.json:
        print(json.dumps(info, indent=2))
        return 0 if not missing else 1
    print(f"model      {a.model}")
    if missing:
        print(f"unsupported ops ({len(missing)}):")
        for op, nodes in sorted(missing.items()):
            print(f"  {op:24s} {len(nodes):4d} node(s): {', '.join(nodes[:4])}{' ...' if len(nodes) > 4 else ''}")
        return 1
    print(f"name       {info['name']}   producer {info['producer'] or '?'}   opset {info['opset']}")
    _print_io(info)
    print(f"parameters {si(info['parameters'])} ({si(info['parameter_bytes'])}B)   MACs {si(info['total_macs'])}")
    print(f"nodes      {info['nodes']}")
    for name, missing_here in info["backends"].items():
        lacks = "; ".join(f"{op} ({len(nodes)} node(s))" for op, nodes in missing_here.items())
        print(f"backend    {name:8s} {'runs every op' if not missing_here else 'lacks ' + lacks}")
    _print_ops(info["ops"], info["macs"])
    return 0


def _dynamic(
    a: argparse.Namespace, proto: Any, info: dict[str, Any], shapes: dict[str, Any], exc: NotStaticError
) -> int:
    """What the file says before its shapes are static: I/O with their symbolic dims, stored ops, parameters; then
    what makes them static: the --input-shape options still missing (the open dims named), or the importer's reason
    (a shape or a branch that depends on an input's value: --bind it)."""
    s = stored(proto)
    example = " ".join(
        f"--input-shape {name}={','.join(str(d) if isinstance(d, int) else f'<{_short(d)}>' for d in dims)}"
        for name, _, dims in s.inputs
        if name in s.dynamic and name not in shapes
    )
    info.update(
        name=proto.graph.name,
        producer=proto.producer_name,
        opset=max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=None),
        inputs=[{"name": n, "shape": dims, "dtype": dt} for n, dt, dims in s.inputs],
        outputs=[{"name": n, "shape": dims, "dtype": dt} for n, dt, dims in s.outputs],
        nodes=sum(s.ops.values()),
        ops=s.ops,
        parameters=s.parameters,
        parameter_bytes=s.parameter_bytes,
        dynamic=s.dynamic,
        needs=f"fixed shapes for MACs, folding and backend support: {example}" if example else str(exc),
    )
    if a.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"model      {a.model}")
    print(f"name       {info['name']}   producer {info['producer'] or '?'}   opset {info['opset']}")
    _print_io(info)
    print(f"parameters {si(s.parameters)} ({si(s.parameter_bytes)}B)")
    print(f"nodes      {info['nodes']} as stored (before shape folding)")
    dims = {n: d for n, _, d in s.inputs}
    open_dims = "; ".join(
        f"{n} axis " + ", ".join(f"{i} ({_short(dims[n][i])})" for i in axes)
        for n, axes in s.dynamic.items()
        if n not in shapes
    )
    if example:
        print(f"dynamic    {open_dims}")
        print(f"shapes     fix them to see MACs, fused ops and backend support: {example}")
    else:
        print(f"not static {exc}")
    _print_ops(s.ops, {})
    return 0


def _short(dim: int | str) -> int | str:
    """A stored dimension as a person reads it: exporters write whole formulas as dim names; those become '?'."""
    return dim if isinstance(dim, int) or len(dim) <= 16 else "?"


def _print_io(info: dict[str, Any]) -> None:
    for kind in ("inputs", "outputs"):
        for t in info[kind]:
            print(f"{kind[:-1]:10s} {t['name']:24s} {t['dtype']:8s} {fmt_shape([_short(d) for d in t['shape']])}")


def _print_ops(ops: dict[str, int], macs: dict[str, int]) -> None:
    width = max((len(k) for k in ops), default=4)
    print(f"  {'op':{width}s} {'count':>6s} {'MACs':>10s}" if macs else f"  {'op':{width}s} {'count':>6s}")
    for op, count in ops.items():
        print(f"  {op:{width}s} {count:6d} {si(macs.get(op, 0)):>10s}" if macs else f"  {op:{width}s} {count:6d}")


def _backend_support(graph: Any) -> dict[str, dict[str, list[str]]]:
    """Per available backend: the ops of `graph` it cannot run (asked of the backend's own `supports`)."""
    from .backends import available, get
    from .compiler import unsupported

    out = {}
    for name in available():
        missing = unsupported(graph, get(name))
        out[name] = {f"{d + '.' if d else ''}{op}": nodes for (d, op, _), nodes in sorted(missing.items())}
    return out
