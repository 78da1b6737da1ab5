"""Optional values where they hold plain tensors: OptionalHasElement and OptionalGetElement (opsets 15, 18).

Spec: https://onnx.ai/onnx/operators/. An optional input that the node leaves out (name "") is an empty
optional; a tensor fed to it is a present one. Optional and sequence *types* as graph values are not tensors and
are refused at import; these ops cover the tensor forms that exporters write (opset 18 accepts plain tensors).
"""

from __future__ import annotations

import numpy as np

from . import register

__all__: list[str] = []


def _has_element(input=None):  # noqa: A002 (the ONNX input's name)
    """True when the optional input is given (a tensor), False when it is left out."""
    return np.array(input is not None)


def _get_element(input):  # noqa: A002
    """The tensor an optional holds (the tensor itself when given a tensor)."""
    return input.copy()


register("OptionalHasElement", since=15)(_has_element)
register("OptionalHasElement", since=18)(_has_element)
register("OptionalGetElement", since=15)(_get_element)
register("OptionalGetElement", since=18)(_get_element)
