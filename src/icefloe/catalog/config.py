"""``load_catalog()``: catalogs from arguments, environment variables and ``~/.icefloe.yaml``.

Precedence, highest first: keyword arguments, ``ICEFLOE_CATALOG__<NAME>__<KEY>`` environment
variables, the ``catalog: {<name>: {...}}`` section of the YAML file (``$ICEFLOE_CONFIG`` or
``~/.icefloe.yaml``). In environment variable keys, ``__`` stands for ``.`` and ``_`` for
``-`` (``ICEFLOE_CATALOG__PROD__S3__ENDPOINT`` is ``s3.endpoint``).

With nothing configured, ``load_catalog()`` is the embedded default: a SQL catalog on SQLite in
``./warehouse`` (``./warehouse/catalog.db``, tables under ``./warehouse/<namespace>/<table>``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from icefloe.backends import load_catalog_backend
from icefloe.catalog.catalog import Catalog
from icefloe.errors import ValidationError

__all__ = ["DEFAULT_CATALOG_NAME", "catalog_config", "load_catalog"]

DEFAULT_CATALOG_NAME = "default"
_ENV_PREFIX = "ICEFLOE_CATALOG__"


def load_catalog(name: str | None = None, **properties: Any) -> Catalog:
    """A catalog by name, configured from keyword arguments, the environment and the YAML file.

    Examples:
        ``load_catalog()`` (the embedded SQLite catalog in ./warehouse),
        ``load_catalog("lake", type="hadoop", warehouse="/data/warehouse")``.

    Raises:
        ValidationError: when the configuration names an unknown catalog type or lacks a
            required setting (the message names it).
    """
    catalog_name = name or DEFAULT_CATALOG_NAME
    config = catalog_config(catalog_name)
    # Keyword arguments are taken as given: pass dotted keys as **{"s3.endpoint": ...}.
    config.update({key: str(value) for key, value in properties.items()})
    if "type" not in config:
        if name is not None and name != DEFAULT_CATALOG_NAME and not config:
            raise ValidationError(
                f"catalog '{name}' is not configured: pass type=... (sql, hadoop, memory, rest) or "
                f"define it in ~/.icefloe.yaml or {_ENV_PREFIX}{name.upper()}__TYPE"
            )
        config.setdefault("type", "sql")
    if config["type"] == "sql" and "uri" not in config:
        # The embedded default: ./warehouse. The SQL backend itself puts catalog.db in a local
        # warehouse, and refuses a remote one without a uri (building a local path from
        # "s3://..." here would silently put the whole catalog on local disk).
        config.setdefault("warehouse", "warehouse")
    if (
        "warehouse" in config
        and "://" not in config["warehouse"]
        and not config["warehouse"].startswith("file:")
    ):
        config["warehouse"] = str(Path(config["warehouse"]).absolute())
    backend = load_catalog_backend(catalog_name, **config)
    return Catalog(catalog_name, backend)


def catalog_config(name: str) -> dict[str, str]:
    """The configuration of catalog ``name`` from the YAML file and the environment."""
    config: dict[str, str] = {}
    config.update(_from_yaml(name))
    config.update(_from_env(name, os.environ))
    return config


def _config_path() -> Path:
    return Path(os.environ.get("ICEFLOE_CONFIG", Path.home() / ".icefloe.yaml"))


def _from_yaml(name: str) -> dict[str, str]:
    path = _config_path()
    if not path.is_file():
        return {}
    import yaml  # lazy: only when there is a file to parse

    try:
        document = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValidationError(f"cannot parse icefloe configuration {path}: {exc}") from None
    catalogs = document.get("catalog", document.get("catalogs", {})) if isinstance(document, dict) else {}
    entry = catalogs.get(name) if isinstance(catalogs, dict) else None
    if entry is None:
        return {}
    if not isinstance(entry, dict):
        raise ValidationError(f"{path}: catalog '{name}' must be a mapping of settings")
    return {str(k): str(v) for k, v in entry.items()}


def _from_env(name: str, environ: Mapping[str, str]) -> dict[str, str]:
    prefix = f"{_ENV_PREFIX}{name.upper()}__"
    result: dict[str, str] = {}
    for key, value in environ.items():
        if key.startswith(prefix):
            setting = key[len(prefix) :].lower().replace("__", ".").replace("_", "-")
            result[setting] = value
    return result
