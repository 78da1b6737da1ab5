"""burnedge: import a trained network, plan it over one static arena, and run it on the edge."""

from .bundle import Bundle, BundleError
from .errors import (
    BurnedgeError,
    InputError,
    ModelError,
    NotStaticError,
    TraceError,
    UnsupportedOpError,
    WeightsError,
)
from .exporter import export
from .importers import load
from .model import Model, TensorInfo
from .nn import trace
from .session import Session
from .verifier import verify
from .version import __version__

__all__ = [
    "Bundle",
    "BundleError",
    "BurnedgeError",
    "InputError",
    "Model",
    "ModelError",
    "NotStaticError",
    "Session",
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
