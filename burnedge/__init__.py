"""burnedge: import a trained network, plan it over one static arena, and run it on the edge."""

from .errors import BurnedgeError, InputError, ModelError, NotStaticError, UnsupportedOpError
from .importers import load
from .model import Model, TensorInfo
from .session import Session

__version__ = "0.1.0"

__all__ = [
    "BurnedgeError",
    "InputError",
    "Model",
    "ModelError",
    "NotStaticError",
    "Session",
    "TensorInfo",
    "UnsupportedOpError",
    "__version__",
    "load",
]
