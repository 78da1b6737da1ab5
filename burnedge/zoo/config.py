"""Reading a Hugging Face config.json for the zoo (the checkpoint itself is read by burnedge.nn.read_checkpoint)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ModelError

__all__ = ["read_config"]


def read_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """A Hugging Face config.json (a path) or an already-read dict, as a dict."""
    if isinstance(config, Mapping):
        return dict(config)
    path = Path(config)
    if not path.is_file():
        raise ModelError(f"{path}: no such config file")
    try:
        out = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not a JSON config ({exc})") from None
    if not isinstance(out, dict):
        raise ModelError(f"{path}: a config is a JSON object; this file holds a {type(out).__name__}")
    return out
