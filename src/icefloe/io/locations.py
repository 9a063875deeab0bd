"""Where new data and metadata files go, matching Java's ``LocationProviders``.

Two layouts, chosen by table properties:

* Default: ``<data>/<partition path>/<file>``, where ``<data>`` is ``write.data.path`` or
  ``<table>/data``.
* Object storage (``write.object-storage.enabled=true``), Java 1.7+'s layout: 20 bits of the
  Murmur3 hash of the file name (partition path included when partitioned) spread a
  table's files over prefixes, as directories of 4 + 4 + 4 + 8 binary digits:
  ``<data>/0101/0110/1001/10110010/<partition path>/<file>``. When the data location lies
  outside the table location, ``<namespace>/<table>`` follows the hash directories. With
  ``write.object-storage.partitioned-paths=false`` the partition path is left out and, when
  no namespace/table context is added, the last 8 digits join the file name with a ``-``.

The deprecated ``write.object-storage.path`` and ``write.folder-storage.path`` are honoured
as fallbacks for ``write.data.path``, as Java 1.7 - 1.9 do (newer Java rejects them).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe._util.murmur3 import hash32
from icefloe.errors import ValidationError
from icefloe.spec.properties import (
    OBJECT_STORE_ENABLED,
    OBJECT_STORE_PATH,
    WRITE_DATA_LOCATION,
    WRITE_FOLDER_STORAGE_LOCATION,
    WRITE_LOCATION_PROVIDER_IMPL,
    WRITE_METADATA_LOCATION,
    WRITE_OBJECT_STORE_PARTITIONED_PATHS,
    lenient_bool,
)

__all__ = [
    "DefaultLocationProvider",
    "LocationProvider",
    "ObjectStoreLocationProvider",
    "entropy_dirs",
    "load_location_provider",
    "metadata_location",
    "strip_trailing_slash",
]


# Java's ObjectStoreLocationProvider constants: 20 hash bits, as 3 directories of 4 binary
# digits followed by one of the remaining 8.
_HASH_BITS = 20
_DIR_LENGTH = 4
_DIR_DEPTH = 3


def strip_trailing_slash(path: str) -> str:
    """``path`` without trailing slashes, keeping the ``//`` of a bare ``scheme://``.

    Raises:
        ValidationError: ``path`` is empty.
    """
    if not path:
        raise ValidationError("A location must not be empty")
    result = path
    while result.endswith("/") and not result.endswith("://"):
        result = result[:-1]
    return result


class LocationProvider(ABC):
    """Chooses the location of each new data file of a table. Implementations pickle."""

    @abstractmethod
    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        """The full location for a new data file.

        Args:
            filename: the file's name (unique, e.g. ``00000-0-<uuid>.parquet``).
            partition_path: the partition's path as the spec renders it
                (``country=US/day=2024-01-01``, already URL-encoded); None or "" when the
                table is unpartitioned.
        """


@dataclass(frozen=True, slots=True)
class DefaultLocationProvider(LocationProvider):
    """``<data_location>/<partition path>/<filename>``.

    Attributes:
        data_location: the data directory, without trailing slash.
    """

    data_location: str

    @classmethod
    def for_table(cls, table_location: str, properties: Mapping[str, str]) -> DefaultLocationProvider:
        """The provider for a table at ``table_location`` with ``properties``."""
        data = (
            properties.get(WRITE_DATA_LOCATION)
            or properties.get(WRITE_FOLDER_STORAGE_LOCATION)
            or f"{strip_trailing_slash(table_location)}/data"
        )
        return cls(strip_trailing_slash(data))

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        if partition_path:
            return f"{self.data_location}/{partition_path}/{filename}"
        return f"{self.data_location}/{filename}"


@dataclass(frozen=True, slots=True)
class ObjectStoreLocationProvider(LocationProvider):
    """Java's object-storage layout: hash directories first, to spread request load.

    Attributes:
        storage_location: where data files go, without trailing slash.
        context: ``<namespace>/<table>`` added after the hash directories when the storage
            location is outside the table location; None otherwise.
        include_partition_paths: ``write.object-storage.partitioned-paths``.
    """

    storage_location: str
    context: str | None = None
    include_partition_paths: bool = True

    @classmethod
    def for_table(cls, table_location: str, properties: Mapping[str, str]) -> ObjectStoreLocationProvider:
        """The provider for a table at ``table_location`` with ``properties``."""
        table = strip_trailing_slash(table_location)
        storage = strip_trailing_slash(
            properties.get(WRITE_DATA_LOCATION)
            or properties.get(OBJECT_STORE_PATH)
            or properties.get(WRITE_FOLDER_STORAGE_LOCATION)
            or f"{table}/data"
        )
        # Java compares plain strings here, so a sibling "<table>2/..." also counts as inside.
        context = None if storage.startswith(table) else _path_context(table)
        return cls(
            storage_location=storage,
            context=context,
            include_partition_paths=lenient_bool(properties, WRITE_OBJECT_STORE_PARTITIONED_PATHS, True),
        )

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        if partition_path and self.include_partition_paths:
            filename = f"{partition_path}/{filename}"
        hashed = entropy_dirs(filename)
        if self.context is not None:
            return f"{self.storage_location}/{hashed}/{self.context}/{filename}"
        if self.include_partition_paths:
            return f"{self.storage_location}/{hashed}/{filename}"
        # Without partition directories, the last hash part prefixes the file name instead.
        return f"{self.storage_location}/{hashed}-{filename}"


def entropy_dirs(name: str) -> str:
    """The hash directories for ``name``: its Murmur3 hash's low 20 bits as binary digits,
    grouped 4/4/4/8 (``0101/0110/1001/10110010``), as Java's ``computeHash`` does."""
    low_bits = hash32(name.encode("utf-8")) & ((1 << _HASH_BITS) - 1)
    digits = format(low_bits, f"0{_HASH_BITS}b")
    split = _DIR_DEPTH * _DIR_LENGTH
    groups = [digits[i : i + _DIR_LENGTH] for i in range(0, split, _DIR_LENGTH)]
    return "/".join([*groups, digits[split:]])


def _path_context(table_location: str) -> str:
    """``<parent name>/<name>`` of the table location, like Java's Hadoop ``Path`` gives."""
    path = _uri_path(table_location)
    name = path.rsplit("/", 1)[-1]
    if path in ("", "/"):
        return name  # a root has no parent
    last_slash = path.rfind("/")
    if last_slash == -1:
        parent_name = "."  # Hadoop's parent of a bare relative name
    elif last_slash == 0:
        parent_name = ""  # the root's name is empty
    else:
        parent_name = path[:last_slash].rsplit("/", 1)[-1]
    return f"{parent_name}/{name}"


def _uri_path(location: str) -> str:
    # The path part of scheme://authority/path, scheme:/path or a plain path.
    scheme, sep, rest = location.partition("://")
    if sep and "/" not in scheme:
        _, slash, path = rest.partition("/")
        return slash + path
    if location.startswith("file:"):
        return location[len("file:") :]
    return location


def load_location_provider(table_location: str, properties: Mapping[str, str]) -> LocationProvider:
    """The LocationProvider a table's properties ask for.

    ``write.py-location-provider.impl`` names a Python class (``package.module.ClassName``)
    constructed as ``cls(table_location, properties)``; Java's ``write.location-provider.impl``
    names a Java class and is ignored. Otherwise ``write.object-storage.enabled`` picks the
    object-storage layout or the default one.

    Raises:
        ValidationError: the table location is empty, or the custom provider cannot be loaded.
    """
    location = strip_trailing_slash(table_location)
    impl = properties.get(WRITE_LOCATION_PROVIDER_IMPL)
    if impl:
        return _custom_provider(impl, location, properties)
    if lenient_bool(properties, OBJECT_STORE_ENABLED, False):
        return ObjectStoreLocationProvider.for_table(location, properties)
    return DefaultLocationProvider.for_table(location, properties)


def _custom_provider(impl: str, location: str, properties: Mapping[str, str]) -> LocationProvider:
    module_name, _, class_name = impl.rpartition(".")
    try:
        cls: Any = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValidationError(
            f"Cannot load the location provider '{impl}' named by '{WRITE_LOCATION_PROVIDER_IMPL}': {exc}"
        ) from exc
    provider = cls(location, dict(properties))
    if not isinstance(provider, LocationProvider):
        raise ValidationError(f"'{impl}' named by '{WRITE_LOCATION_PROVIDER_IMPL}' is not a LocationProvider")
    return provider


def metadata_location(table_location: str, properties: Mapping[str, str], filename: str) -> str:
    """Where the metadata file ``filename`` of a table goes.

    ``<write.metadata.path>/<filename>`` when that property is set, else
    ``<table>/metadata/<filename>``.
    """
    custom = properties.get(WRITE_METADATA_LOCATION)
    if custom:
        return f"{strip_trailing_slash(custom)}/{filename}"
    return f"{strip_trailing_slash(table_location)}/metadata/{filename}"
