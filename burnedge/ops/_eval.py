"""Where `evaluate` and `run_graph` used to live: they are in `interpreter.py` now (kept for existing imports)."""

from __future__ import annotations

from .interpreter import evaluate, run_graph

__all__ = ["evaluate", "run_graph"]
