"""Optional engines (pandas, polars, duckdb, pyspark) are imported here and only here."""

from __future__ import annotations

import importlib
from types import ModuleType

from icefloe.errors import MissingDependencyError

__all__ = ["import_optional"]


def import_optional(module: str, *, extra: str) -> ModuleType:
    """Import ``module`` or raise MissingDependencyError saying what to install.

    Args:
        module: the module to import, e.g. ``"polars"``.
        extra: the icefloe extra that installs it, e.g. ``"polars"`` for ``icefloe[polars]``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"this needs the '{module}' package: pip install 'icefloe[{extra}]' (or pip install {module})"
        ) from exc
