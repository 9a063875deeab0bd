"""Helpers shared by the catalog tests (a module of its own: test modules cannot import conftest)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from icefloe.backends import CatalogBackend, HadoopCatalogBackend, InMemoryCatalogBackend, SqlCatalogBackend
from icefloe.io import FileInfo, FileIO, InputFile, OutputFile
from icefloe.spec.builder import new_table_metadata
from icefloe.spec.partitioning import UNPARTITIONED_SPEC
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import UNSORTED_SORT_ORDER
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()))

BACKEND_KINDS = ["sql", pytest.param("sql-postgres", marks=pytest.mark.postgres), "hadoop", "memory"]


def new_metadata(backend: CatalogBackend, identifier: Any, **properties: str) -> TableMetadata:
    """Metadata of a new two-column table at the backend's default location."""
    return new_table_metadata(
        SCHEMA,
        UNPARTITIONED_SPEC,
        UNSORTED_SORT_ORDER,
        backend.default_table_location(identifier),
        properties,
    )


def make_backend(kind: str, warehouse: Path, request: pytest.FixtureRequest) -> CatalogBackend:
    if kind == "sql":
        return SqlCatalogBackend("test", {"warehouse": str(warehouse)})
    if kind == "sql-postgres":
        url = request.getfixturevalue("postgres_url")
        # One server for the session: a fresh catalog name keeps each test's rows apart.
        return SqlCatalogBackend(f"test_{uuid.uuid4().hex[:12]}", {"warehouse": str(warehouse), "uri": url})
    if kind == "hadoop":
        return HadoopCatalogBackend("test", {"warehouse": str(warehouse)})
    if kind == "memory":
        return InMemoryCatalogBackend("test", {"warehouse": str(warehouse)})
    raise AssertionError(kind)


class HookedFileIO(FileIO):
    """A FileIO wrapper whose ``write_exclusive`` runs hooks around the real write.

    ``before(location)`` runs first (e.g. to let a concurrent writer commit); ``after(location)``
    runs once the file is published (e.g. to raise, as if the acknowledgement were lost).
    """

    def __init__(
        self,
        inner: FileIO,
        *,
        before: Callable[[str], None] | None = None,
        after: Callable[[str], None] | None = None,
    ):
        super().__init__(inner.properties)
        self.inner = inner
        self.before = before
        self.after = after

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.inner.new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        return self.inner.new_output(location)

    def delete(self, location: str) -> None:
        self.inner.delete(location)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.inner.list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        if self.before is not None:
            self.before(location)
        self.inner.write_exclusive(location, data)
        if self.after is not None:
            self.after(location)

    def arrow_filesystem(self, location: str) -> Any:
        return self.inner.arrow_filesystem(location)
