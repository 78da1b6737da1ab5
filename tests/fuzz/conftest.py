"""The fuzz targets' pytest setup: hypothesis's plugin reports a failure through mypy_extensions, which warns."""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line("filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")
