"""The version of burnedge (one place; bundles record it)."""

__version__ = "0.1.0"
