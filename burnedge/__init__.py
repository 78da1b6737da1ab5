"""burnedge: import a trained network, plan it over one static arena, and run it on the edge."""

from .bundle import Bundle, BundleError
from .errors import (
    BurnedgeError,
    InputError,
    ModelError,
    NotStaticError,
    StaticPlanError,
    TraceError,
    UnsupportedOpError,
    WeightsError,
)
from .exporter import export
from .model import Model, TensorInfo
from .nn import trace
from .session import Session
from .verifier import verify
from .version import __version__
from .zoo import load

__all__ = [
    "Bundle",
    "BundleError",
    "BurnedgeError",
    "InputError",
    "Model",
    "ModelError",
    "NotStaticError",
    "Session",
    "StaticPlanError",
    "TensorInfo",
    "TraceError",
    "UnsupportedOpError",
    "WeightsError",
    "__version__",
    "export",
    "load",
    "trace",
    "verify",
]
