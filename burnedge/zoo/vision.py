"""What the image classifiers of the zoo share: the class count read off a checkpoint, the input-shape check."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ModelError
from .registry import Config, Shapes, Tensors

__all__ = ["check_image", "classes"]


def classes(tensors: Tensors, key: str) -> int:
    """The class count of a classifier: the rows of its last layer's weight (`fc.weight` ...) in the checkpoint;
    a checkpoint without that key keeps the default (the mismatch error then names the key)."""
    return int(tensors[key].shape[0]) if key in tensors and tensors[key].ndim == 2 else 1000


def check_image(name: str, channels: int, smallest: int) -> Callable[[Config, Shapes, set[str]], Shapes]:
    """A check for one NCHW image input: `channels` channels, at least `smallest` pixels high and wide."""

    def check(config: Config, shapes: Shapes, given: set[str]) -> Shapes:
        for input_name, (_, c, h, w) in shapes.items():
            if c != channels or min(h, w) < smallest:
                raise ModelError(
                    f"{name}: input {input_name!r} has shape {[_, c, h, w]}; expected {channels} channels and at "
                    f"least {smallest}x{smallest} pixels"
                )
        return shapes

    return check
