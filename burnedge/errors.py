"""The errors burnedge raises: one base class, so callers and the CLI can catch them all."""

from __future__ import annotations

__all__ = [
    "BundleError",
    "BurnedgeError",
    "InputError",
    "ModelError",
    "NotStaticError",
    "QuantizationTargetError",
    "StaticPlanError",
    "TraceError",
    "UnsupportedOpError",
    "WeightsError",
]


class BurnedgeError(Exception):
    """Base class: a problem with the user's model, input or options (not a bug in burnedge)."""


class ModelError(BurnedgeError):
    """The model file or graph is malformed: unreadable, cyclic, a missing initializer, a bad attribute."""


class UnsupportedOpError(BurnedgeError):
    """The model uses ops burnedge (or one backend) lacks. `missing` maps (domain, op_type, opset) to node names."""

    def __init__(self, missing: dict[tuple[str, str, int], list[str]], backend: str | None = None):
        self.missing = missing
        self.backend = backend
        parts = []
        for (domain, op_type, opset), nodes in sorted(missing.items()):
            shown = ", ".join(repr(n) for n in nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
            name = f"{domain + '.' if domain else ''}{op_type}"
            name = name if name.isprintable() else repr(name)  # a name holding a newline stays on the line
            parts.append(f"{name} (opset {opset}; nodes {shown})")
        where = f" on the {backend} backend" if backend else ""
        super().__init__(f"{len(missing)} unsupported op(s){where}: " + "; ".join(parts))


class NotStaticError(ModelError):
    """A shape depends on a value only known at run time; `inputs` names the graph inputs to bind."""

    def __init__(self, message: str, inputs: tuple[str, ...] = ()):
        self.inputs = inputs
        super().__init__(message)


class StaticPlanError(ModelError):
    """The model needs what no static plan can hold, by design rather than for want of a kernel: sequences, maps
    and optional values (no fixed size), strings on a backend whose arena holds only numbers, an output whose
    shape depends on a file's contents (ImageDecoder)."""


class InputError(BurnedgeError):
    """A feed given to Session.run has the wrong name, shape or dtype."""


class BundleError(BurnedgeError):
    """A bundle that cannot be written or trusted: not a bundle, an unknown format, a damaged or tampered member."""


class QuantizationTargetError(BurnedgeError):
    """int8 quantization missed its accuracy target, so no bundle was written. `report` is the QuantizationReport
    (what was measured, layer by layer); `report_path` the report file written anyway, when one was asked for."""

    def __init__(self, message: str, report: object, report_path: object = None):
        self.report = report
        self.report_path = report_path
        super().__init__(message)


class TraceError(BurnedgeError):
    """A burnedge.nn module cannot be traced: a shape that does not fit, a branch on a tensor's values, an
    unsupported Python operation on a traced tensor. The message names the module path (``features.3 (Conv2d)``)."""


class WeightsError(BurnedgeError):
    """A checkpoint does not fit a module: every missing key, unexpected key and shape mismatch, in one message;
    or a weights file that cannot be read."""
