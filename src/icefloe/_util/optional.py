"""Optional engines (pandas, polars, duckdb, pyspark, datafusion) and native modules (polars-avro's Avro
reader) are imported here and only here."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

from icefloe.errors import MissingDependencyError

__all__ = ["extension_module", "import_optional", "installed_module"]


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


def installed_module(module: str) -> ModuleType | None:
    """``module`` imported, or None when it is not installed or does not load (for what
    icefloe uses only when it is there, e.g. DataFusion's page-index reads)."""
    try:
        return importlib.import_module(module)
    except (ImportError, OSError):  # (OSError: a native library it needs is missing)
        return None


def extension_module(package: str, name: str) -> ModuleType | None:
    """The compiled submodule ``package.name`` of an installed package, loaded without running
    the package's ``__init__``; None when the package is not installed or the module does not
    load.

    Some packages wrap a small native module in a heavy Python package: polars-avro's reader
    (``polars_avro._avro_rs``) sits behind an ``__init__`` that imports polars (about 0.3 s and
    40 MB). The module is registered under its real name, so that a later ``import package``
    reuses it (a PyO3 module may be initialized only once per process).
    """
    qualified = f"{package}.{name}"
    found = sys.modules.get(qualified)
    if found is not None:
        return found
    try:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            return None
        for directory in spec.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(directory, name + suffix)
                if os.path.isfile(path):
                    loader = importlib.machinery.ExtensionFileLoader(qualified, path)
                    module_spec = importlib.util.spec_from_file_location(qualified, path, loader=loader)
                    if module_spec is None:
                        return None
                    module = importlib.util.module_from_spec(module_spec)
                    loader.exec_module(module)
                    sys.modules[qualified] = module
                    return module
    except (ImportError, OSError, ValueError):
        return None
    return None
