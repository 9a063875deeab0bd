"""``table.inspect``: Java's sixteen metadata tables as ``pyarrow.Table``s."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import pyarrow as pa

from icefloe.errors import NoSuchSnapshotError, ValidationError
from icefloe.expressions import Expression, referenced_field_ids
from icefloe.io import FileIO
from icefloe.scan import decoded_manifests, manifest_list
from icefloe.scan._columnar import DecodedManifest
from icefloe.spec.manifest import ManifestContent, ManifestFile
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.inspect import history as _history
from icefloe.table.inspect import manifests as _manifests
from icefloe.table.inspect._select import bound_filter, filter_rows, select_columns
from icefloe.table.inspect.files import FileRows, chunks
from icefloe.table.inspect.partitions import partitions as _partitions
from icefloe.table.inspect.position_deletes import position_deletes as _position_deletes
from icefloe.table.inspect.schemas import (
    ALL_MANIFESTS_SCHEMA,
    HISTORY_SCHEMA,
    MANIFESTS_SCHEMA,
    METADATA_LOG_ENTRIES_SCHEMA,
    READABLE_METRICS,
    REFS_SCHEMA,
    SNAPSHOTS_SCHEMA,
    entries_schema,
    files_schema,
    partitions_schema,
    position_deletes_schema,
)

__all__ = ["METADATA_TABLES", "InspectedTable", "MetadataTables"]

#: Java's ``MetadataTableType`` names, in its order.
METADATA_TABLES = (
    "entries",
    "files",
    "data_files",
    "delete_files",
    "history",
    "metadata_log_entries",
    "snapshots",
    "refs",
    "manifests",
    "partitions",
    "all_data_files",
    "all_delete_files",
    "all_files",
    "all_manifests",
    "all_entries",
    "position_deletes",
)


class InspectedTable(Protocol):
    """What the metadata tables read of a ``Table`` (a protocol: ``table.py`` imports this)."""

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def metadata_location(self) -> str | None: ...

    def io(self) -> FileIO: ...

    def name(self) -> str: ...


Filter = Expression | str | None


class MetadataTables:
    """``table.inspect``: each method returns one of Java's metadata tables as a
    ``pyarrow.Table`` with Java's column names, order, types and nullability.

    Every method takes ``snapshot_id`` or ``ref`` (a branch or tag) to read the table as of
    that snapshot: ``files``, ``entries``, ``data_files``, ``delete_files``, ``manifests``,
    ``partitions`` and ``position_deletes`` list that snapshot's content; ``history``,
    ``snapshots``, ``refs`` and ``metadata_log_entries`` describe the whole table whatever the
    snapshot (as in Java); the ``all_*`` tables span every snapshot and refuse one (as Java).

    ``filter`` (icefloe's filter grammar or an expression, bound to the metadata table's
    columns: ``"partition.day = '2024-01-01'"``, ``"readable_metrics.id.lower_bound > 10"``,
    ``"content = 1"``) keeps the matching rows; ``columns`` selects columns (dotted names
    select nested fields). Both work on every metadata table.

    The files family is built from icefloe's columnar manifest decoding (the same cache and
    worker processes as scan planning), one Arrow batch per manifest; ``readable_metrics``
    is computed only when selected or filtered on.
    """

    def __init__(self, table: InspectedTable):
        self._table = table

    # ---- snapshots ----------------------------------------------------------------------------

    def _snapshot(self, snapshot_id: int | None, ref: str | None) -> Snapshot | None:
        metadata = self._table.metadata
        if snapshot_id is not None and ref is not None:
            raise ValidationError("pass snapshot_id or ref, not both")
        if snapshot_id is not None:
            found = metadata.snapshot_by_id(snapshot_id)
            if found is None:
                raise NoSuchSnapshotError(f"table {self._table.name()} has no snapshot {snapshot_id}")
            return found
        if ref is not None:
            return metadata.snapshot(ref, table_name=self._table.name())
        return metadata.current_snapshot()

    def _no_snapshot(self, name: str, snapshot_id: int | None, ref: str | None) -> None:
        if snapshot_id is not None or ref is not None:
            raise ValidationError(
                f"cannot select a snapshot in metadata table {name}: it spans every snapshot"
            )

    def _manifests(self, snapshot: Snapshot | None, content: ManifestContent | None) -> list[ManifestFile]:
        if snapshot is None:
            return []
        found = manifest_list(self._table.io(), snapshot)
        return found if content is None else [m for m in found if m.content == content]

    def _reachable(self, content: ManifestContent | None) -> list[ManifestFile]:
        """Every manifest of every snapshot, each once (by path), as Java's ``all_`` tables."""
        seen: dict[str, ManifestFile] = {}
        io = self._table.io()
        for snapshot in self._table.metadata.snapshots:
            for manifest in manifest_list(io, snapshot):
                if content is None or manifest.content == content:
                    seen.setdefault(manifest.manifest_path, manifest)
        return list(seen.values())

    def _decoded(self, manifests: list[ManifestFile], *, summary: bool = False) -> Iterator[DecodedManifest]:
        return decoded_manifests(self._table.io(), manifests, summary=summary)

    # ---- the files family ----------------------------------------------------------------------

    def _files(
        self,
        manifests: list[ManifestFile],
        *,
        entries: bool,
        filter: Filter,
        columns: Sequence[str] | None,
        case_sensitive: bool,
    ) -> pa.Table:
        metadata = self._table.metadata
        schema = entries_schema(metadata) if entries else files_schema(metadata)
        bound = bound_filter(filter, schema, case_sensitive=case_sensitive)
        metrics = _uses_metrics(schema, bound, columns, case_sensitive)
        rows = FileRows(metadata, entries=entries, readable_metrics=metrics)
        batches = []
        for chunk in chunks(self._decoded(manifests)):
            batch = pa.Table.from_batches([rows.batch(chunk, live_only=not entries)])
            batch = filter_rows(batch, bound, schema)
            if columns:
                batch = select_columns(batch, schema, columns, case_sensitive=case_sensitive)
            batches.append(batch)
        if not batches:
            return select_columns(rows.empty(), schema, columns, case_sensitive=case_sensitive)
        return pa.concat_tables(batches)

    def entries(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Every manifest entry of the snapshot (live and deleted), data and delete manifests."""
        manifests = self._manifests(self._snapshot(snapshot_id, ref), None)
        return self._files(
            manifests, entries=True, filter=filter, columns=columns, case_sensitive=case_sensitive
        )

    def files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The live data and delete files of the snapshot."""
        manifests = self._manifests(self._snapshot(snapshot_id, ref), None)
        return self._files(
            manifests, entries=False, filter=filter, columns=columns, case_sensitive=case_sensitive
        )

    def data_files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The live data files of the snapshot."""
        manifests = self._manifests(self._snapshot(snapshot_id, ref), ManifestContent.DATA)
        return self._files(
            manifests, entries=False, filter=filter, columns=columns, case_sensitive=case_sensitive
        )

    def delete_files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The live delete files (position, equality, deletion vectors) of the snapshot."""
        manifests = self._manifests(self._snapshot(snapshot_id, ref), ManifestContent.DELETES)
        return self._files(
            manifests, entries=False, filter=filter, columns=columns, case_sensitive=case_sensitive
        )

    def all_entries(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Every entry of every manifest any snapshot reaches (each manifest once)."""
        self._no_snapshot("all_entries", snapshot_id, ref)
        return self._files(
            self._reachable(None), entries=True, filter=filter, columns=columns, case_sensitive=case_sensitive
        )

    def all_files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The live files of every manifest any snapshot reaches (a file kept by several
        manifests appears once per manifest, as in Java)."""
        self._no_snapshot("all_files", snapshot_id, ref)
        return self._files(
            self._reachable(None),
            entries=False,
            filter=filter,
            columns=columns,
            case_sensitive=case_sensitive,
        )

    def all_data_files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """``all_files`` restricted to data manifests."""
        self._no_snapshot("all_data_files", snapshot_id, ref)
        return self._files(
            self._reachable(ManifestContent.DATA),
            entries=False,
            filter=filter,
            columns=columns,
            case_sensitive=case_sensitive,
        )

    def all_delete_files(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """``all_files`` restricted to delete manifests."""
        self._no_snapshot("all_delete_files", snapshot_id, ref)
        return self._files(
            self._reachable(ManifestContent.DELETES),
            entries=False,
            filter=filter,
            columns=columns,
            case_sensitive=case_sensitive,
        )

    # ---- aggregates and deletes --------------------------------------------------------------

    def partitions(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Per partition: record and file counts, data size, delete file counts, and the
        snapshot that last added a file (Java's ``partitions``)."""
        metadata = self._table.metadata
        manifests = self._manifests(self._snapshot(snapshot_id, ref), None)
        # Like Java's, without the files' paths and metrics: most of the manifests' bytes.
        result = _partitions(metadata, self._decoded(manifests, summary=True))
        return self._finish(result, partitions_schema(metadata), filter, columns, case_sensitive)

    def position_deletes(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """One row per deleted position of the snapshot's position delete files and deletion
        vectors (``row`` is always null)."""
        metadata = self._table.metadata
        manifests = self._manifests(self._snapshot(snapshot_id, ref), ManifestContent.DELETES)
        result = _position_deletes(metadata, self._table.io(), self._decoded(manifests))
        return self._finish(result, position_deletes_schema(metadata), filter, columns, case_sensitive)

    # ---- from the metadata and manifest lists --------------------------------------------------

    def history(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The snapshot log: when each snapshot became current, and whether it is an ancestor
        of the current snapshot."""
        self._snapshot(snapshot_id, ref)  # checked, as Java, though the table spans all
        result = _history.history(self._table.metadata)
        return self._finish(result, HISTORY_SCHEMA, filter, columns, case_sensitive)

    def metadata_log_entries(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The table's metadata files (the log and the current one)."""
        self._snapshot(snapshot_id, ref)
        table = self._table
        result = _history.metadata_log_entries(table.metadata, table.metadata_location)
        return self._finish(result, METADATA_LOG_ENTRIES_SCHEMA, filter, columns, case_sensitive)

    def snapshots(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Every snapshot the metadata keeps."""
        self._snapshot(snapshot_id, ref)
        result = _history.snapshots(self._table.metadata)
        return self._finish(result, SNAPSHOTS_SCHEMA, filter, columns, case_sensitive)

    def refs(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """Every branch and tag."""
        self._snapshot(snapshot_id, ref)
        result = _history.refs(self._table.metadata)
        return self._finish(result, REFS_SCHEMA, filter, columns, case_sensitive)

    def manifests(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The manifests of the snapshot, with their partition summaries."""
        snapshot = self._snapshot(snapshot_id, ref)
        result = _manifests.manifests(self._table.metadata, self._table.io(), snapshot)
        return self._finish(result, MANIFESTS_SCHEMA, filter, columns, case_sensitive)

    def all_manifests(
        self,
        snapshot_id: int | None = None,
        ref: str | None = None,
        *,
        filter: Filter = None,
        columns: Sequence[str] | None = None,
        case_sensitive: bool = True,
    ) -> pa.Table:
        """The manifests of every snapshot, a row per (snapshot, manifest)."""
        self._no_snapshot("all_manifests", snapshot_id, ref)
        result = _manifests.all_manifests(self._table.metadata, self._table.io())
        return self._finish(result, ALL_MANIFESTS_SCHEMA, filter, columns, case_sensitive)

    # ---- by name -----------------------------------------------------------------------------

    def table(self, name: str, **options: Any) -> pa.Table:
        """The metadata table called ``name`` (``"files"``, ``"all_entries"``, ...; any case).

        Raises:
            ValidationError: an unknown name (naming the known ones).
        """
        return self._method(name)(**options)

    def schema(self, name: str) -> Schema:
        """The icefloe schema of a metadata table (Java's ids, names, types and docs)."""
        metadata = self._table.metadata
        key = _check_name(name)
        fixed = {
            "history": HISTORY_SCHEMA,
            "metadata_log_entries": METADATA_LOG_ENTRIES_SCHEMA,
            "snapshots": SNAPSHOTS_SCHEMA,
            "refs": REFS_SCHEMA,
            "manifests": MANIFESTS_SCHEMA,
            "all_manifests": ALL_MANIFESTS_SCHEMA,
        }
        if key in fixed:
            return fixed[key]
        if key in ("entries", "all_entries"):
            return entries_schema(metadata)
        if key == "partitions":
            return partitions_schema(metadata)
        if key == "position_deletes":
            return position_deletes_schema(metadata)
        return files_schema(metadata)

    def _method(self, name: str) -> Callable[..., pa.Table]:
        method: Callable[..., pa.Table] = getattr(self, _check_name(name))
        return method

    def _finish(
        self,
        result: pa.Table,
        schema: Schema,
        filter: Filter,
        columns: Sequence[str] | None,
        case_sensitive: bool,
    ) -> pa.Table:
        bound = bound_filter(filter, schema, case_sensitive=case_sensitive)
        return select_columns(
            filter_rows(result, bound, schema), schema, columns, case_sensitive=case_sensitive
        )


def _check_name(name: str) -> str:
    key = name.strip().lower()
    if key not in METADATA_TABLES:
        raise ValidationError(
            f"unknown metadata table '{name}'; expected one of {', '.join(METADATA_TABLES)}"
        )
    return key


def _uses_metrics(
    schema: Schema, bound: Expression | None, columns: Sequence[str] | None, case_sensitive: bool
) -> bool:
    """Whether ``readable_metrics`` is selected (no selection: all columns) or filtered on."""
    if not columns:
        return True
    field = schema.find_field(READABLE_METRICS)
    assert field is not None
    if any(schema.select(c, case_sensitive=case_sensitive).find_field(field.field_id) for c in columns):
        return True
    if bound is None:
        return False
    under = set(schema.select(READABLE_METRICS).id_to_name()) - {field.field_id}
    return bool(referenced_field_ids(bound) & under)
