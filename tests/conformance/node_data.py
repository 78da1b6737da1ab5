"""Finds the ONNX backend node tests: extracted from the onnx==1.22.0 wheel, fetched with pip on first use.

The data is not committed. Newer onnx wheels dropped it, so the installed onnx is not relied on: the wheel is
downloaded once into a cache folder (BURNEDGE_CACHE, default <repo>/.cache) and the node folder unpacked there.
BURNEDGE_NODE_TESTS may point at an existing `.../backend/test/data/node` folder instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "onnx==1.22.0"
PREFIX = "onnx/backend/test/data/node/"
REPO = Path(__file__).resolve().parents[2]


def node_test_root() -> Path:
    """The folder holding one sub-folder per node test (1,765 in onnx 1.22.0)."""
    if os.environ.get("BURNEDGE_NODE_TESTS"):
        return Path(os.environ["BURNEDGE_NODE_TESTS"])
    cache = Path(os.environ.get("BURNEDGE_CACHE", REPO / ".cache"))
    root = cache / "onnx-1.22.0-node-tests"
    if root.exists():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:  # unpack aside, then rename: never a half-filled root
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", tmp, WHEEL],
            check=True,
        )
        wheel = next(Path(tmp).glob("onnx-1.22.0-*.whl"))
        staged = Path(tmp) / "node"
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.namelist():
                if member.startswith(PREFIX) and not member.endswith("/"):
                    target = staged / member[len(PREFIX) :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(zf.read(member))
        try:
            staged.rename(root)
        except OSError:  # another process (a pytest-xdist worker) got there first
            if not root.exists():
                raise
    return root
