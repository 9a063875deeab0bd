"""``table.add_files(paths)``: register existing Parquet files as data files, in one append.

The files stay where they are and become the table's (its snapshots reference them; expiring
snapshots or dropping the table with purge may delete them). What is checked, and how each
file is described (metrics from the footer, partition values from the data, field ids from
the file or the name mapping), is in ``table/rows/parquet_import.py``; every file that cannot be
added is named in one ``ValidationError`` and nothing is committed.

As Java's ``add_files`` procedure and PyIceberg do, files without field ids resolve their
columns by name through ``schema.name-mapping.default``, or, when the table has none, through
a mapping of the current schema, which the same commit then stores in that property so that
every reader (Java, PyIceberg, DuckDB, icefloe) resolves them the same way.

With ``check_duplicate_files`` (the default), a path the current snapshot already references
is refused; the check runs again whenever the commit is retried on a newer table state.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from icefloe.errors import ValidationError, ValidationException
from icefloe.io import FileIO, split_scheme
from icefloe.manifests import read_manifest
from icefloe.serde.name_mapping_json import dumps_name_mapping, loads_name_mapping
from icefloe.spec.encryption import is_encrypted
from icefloe.spec.manifest import DataFile, ManifestEntryStatus
from icefloe.spec.name_mapping import create_mapping_from_schema
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import SetProperties
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.rows.parquet_import import ImportProblem, ImportTarget, describe_parquet_file
from icefloe.table.snapshots.append import MergeAppend
from icefloe.write import MetricsConfig

__all__ = ["add_files", "stage_add_files"]

#: Footers read at once (the work is mostly waiting for storage).
_MAX_READERS = 8


class _TableLike(Protocol):
    """A Table: what ``add_files`` needs of it."""

    @property
    def metadata(self) -> TableMetadata: ...

    def new_transaction(self) -> TableOperations: ...


def add_files(
    table: _TableLike,
    paths: Iterable[str],
    *,
    snapshot_properties: Mapping[str, str] | None = None,
    check_duplicate_files: bool = True,
) -> Snapshot:
    """Register the Parquet files at ``paths`` as data files of ``table`` and commit them as one
    append snapshot; returns it (see ``stage_add_files``)."""
    txn = table.new_transaction()
    staged = stage_add_files(
        txn, paths, snapshot_properties=snapshot_properties, check_duplicate_files=check_duplicate_files
    )
    txn.commit_transaction()
    committed = table.metadata.snapshot_by_id(staged.snapshot_id)
    assert committed is not None  # the commit succeeded, so the table has the snapshot
    return committed


def stage_add_files(
    txn: TableOperations,
    paths: Iterable[str],
    *,
    snapshot_properties: Mapping[str, str] | None = None,
    check_duplicate_files: bool = True,
) -> Snapshot:
    """Stage, in ``txn``, one append of the Parquet files at ``paths``; returns the staged snapshot.

    Args:
        txn: the transaction (``table.new_transaction()``, or a create / replace transaction).
        paths: the files' locations (plain local paths are made absolute).
        snapshot_properties: extra snapshot summary properties.
        check_duplicate_files: refuse a path the current snapshot already references.

    Raises:
        ValidationError: naming every file that cannot be added (missing, not Parquet, a schema
            that does not read as the table's, rows of several partitions, already in the
            table, listed twice) and why.
    """
    if isinstance(paths, (str, bytes)):
        raise ValidationError("add_files takes a list of paths, not a single string")
    locations = [_absolute(p) for p in paths]
    if not locations:
        raise ValidationError("add_files needs at least one path")
    twice = sorted({p for p in locations if locations.count(p) > 1})
    if twice:
        raise ValidationError(f"cannot add files listed more than once: {', '.join(twice)}")

    metadata = txn.metadata
    if is_encrypted(metadata.properties):
        # Existing files are plaintext: adding them would put readable data in a table whose
        # files are all meant to be encrypted (Java allows it; icefloe refuses).
        raise ValidationError(
            f"cannot add existing files to encrypted table {txn.table_name()}: they are not "
            "encrypted; append their rows instead"
        )
    mapping_text = metadata.properties.get(DEFAULT_NAME_MAPPING)
    schema = metadata.schema()
    target = ImportTarget(
        schema=schema,
        spec=metadata.spec(),
        format_version=metadata.format_version,
        name_mapping=loads_name_mapping(mapping_text) if mapping_text else create_mapping_from_schema(schema),
        metrics=MetricsConfig.from_properties(metadata.properties, schema, sort_order=metadata.sort_order()),
    )
    files, mapped = _describe_all(txn.io(), locations, target)

    append = _AddFilesAppend(
        txn,
        schema_id=metadata.current_schema_id,
        mapping_text=mapping_text,
        check_duplicates=check_duplicate_files,
    )
    for file in files:
        append.append_file(file)
    for key, value in (snapshot_properties or {}).items():
        append.set(key, value)
    append.commit()
    if mapped and mapping_text is None:
        _EnsureNameMapping(txn, autocommit=False).commit()
    staged = txn.metadata.snapshot_by_id(append.snapshot_id)
    assert staged is not None  # staging added it
    return staged


def _absolute(path: str) -> str:
    if not isinstance(path, str) or not path:
        raise ValidationError(f"add_files takes paths as non-empty strings, not {path!r}")
    scheme, _ = split_scheme(path)
    return os.path.abspath(path) if scheme is None else path


def _describe_all(io: FileIO, paths: list[str], target: ImportTarget) -> tuple[list[DataFile], bool]:
    """Describe every file (footers read in parallel); raise one error naming all bad files."""

    def describe(path: str) -> tuple[DataFile, bool] | str:
        try:
            return describe_parquet_file(io, path, target)
        except ImportProblem as problem:
            return f"{path} {problem}"

    with ThreadPoolExecutor(max_workers=min(_MAX_READERS, len(paths))) as pool:
        results = list(pool.map(describe, paths))
    problems = [r for r in results if isinstance(r, str)]
    if problems:
        raise ValidationError(f"cannot add {len(problems)} of {len(paths)} files: " + "; ".join(problems))
    described = [r for r in results if not isinstance(r, str)]
    return [f for f, _ in described], any(m for _, m in described)


class _AddFilesAppend(MergeAppend):
    """The append of ``add_files``: re-checks, on every attempt, that the files are not in the
    table yet and that the schema and name mapping they were checked against still hold."""

    def __init__(
        self, txn: TableOperations, *, schema_id: int, mapping_text: str | None, check_duplicates: bool
    ):
        super().__init__(txn, autocommit=False)
        self._checked_schema_id = schema_id
        self._checked_mapping = mapping_text
        self._check_duplicates = check_duplicates

    def _validate(self, base: TableMetadata, parent: Snapshot | None) -> None:
        super()._validate(base, parent)
        if (
            base.current_schema_id != self._checked_schema_id
            or base.properties.get(DEFAULT_NAME_MAPPING) != self._checked_mapping
        ):
            raise ValidationException(
                "the table's schema or name mapping changed since the files were checked; add them again"
            )
        if self._check_duplicates and parent is not None:
            present = _referenced(self._io, parent, self._file_paths)
            if present:
                raise ValidationError(
                    f"cannot add files the table already references: {', '.join(sorted(present))}"
                )


def _referenced(io: FileIO, snapshot: Snapshot, paths: set[str]) -> set[str]:
    """The ``paths`` that are live data files of ``snapshot``."""
    found: set[str] = set()
    for manifest in snapshot.data_manifests(io):
        if manifest.added_files_count == 0 and manifest.existing_files_count == 0:
            continue  # only deleted entries (counts known to be 0)
        for entry in read_manifest(io, manifest):
            if entry.status != ManifestEntryStatus.DELETED and entry.data_file.file_path in paths:
                found.add(entry.data_file.file_path)
    return found


class _EnsureNameMapping(PendingUpdate[dict[str, str]]):
    """Store a name mapping of the current schema, unless the table has one by then (files
    without field ids are read through it)."""

    def _produce(self, base: TableMetadata) -> Changes:
        if DEFAULT_NAME_MAPPING in base.properties:
            return Changes()
        mapping = dumps_name_mapping(create_mapping_from_schema(base.schema()))
        return Changes([SetProperties({DEFAULT_NAME_MAPPING: mapping})])

    def _result(self, base: TableMetadata, changes: Changes) -> dict[str, str]:
        return dict(changes.apply_to(base).properties)
