"""Checking that the native Avro decoder and fastavro read a manifest or manifest list alike.

``assert_manifest_decodes_alike`` decodes one manifest file twice, natively (whatever its size)
and with fastavro, and compares every entry field by field: status, snapshot id and sequence
numbers after inheritance, every ``DataFile`` / ``DeleteFile`` field (partition values with
their types: a Decimal's digits and exponent, a float's bits, a UUID), the six metrics maps,
and the same against ``read_manifest``, the entry reader every other part of icefloe uses.
It does so for several manifest list rows, so that each inheritance rule is exercised.
``assert_list_decodes_alike`` does the same for a manifest list.
"""

from __future__ import annotations

import dataclasses
import struct
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from icefloe.io import LocalFileIO
from icefloe.manifests import (
    ListSummaries,
    ManifestListColumns,
    _native,
    read_manifest,
    read_manifest_list,
    read_manifest_list_columns,
)
from icefloe.manifests._avro_file import read_blocks, read_header, schema_of
from icefloe.manifests.reader import entry_layout
from icefloe.scan._columnar import DecodedManifest
from icefloe.scan._columnar.decoder import CHUNK, ManifestBuilder, decode_manifest, decode_manifests
from icefloe.scan._columnar.metrics import EntryMetrics
from icefloe.scan._columnar.native import decoded_from_arrow
from icefloe.spec.manifest import DeleteFile, ManifestContent, ManifestEntry, ManifestFile

__all__ = [
    "assert_decode_together_alike",
    "assert_list_decodes_alike",
    "assert_manifest_decodes_alike",
    "native_threshold",
    "typed",
]


def typed(value: Any) -> Any:
    """A comparable form of a value that keeps what ``==`` forgets: its type, a Decimal's
    exponent, a float's bits (NaN payloads, -0.0), mappings and sequences element-wise."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, Decimal):
        return ("Decimal", value.as_tuple())
    if isinstance(value, uuid.UUID):
        return ("UUID", value.bytes)
    if hasattr(value, "items"):
        return ("map", tuple(sorted((k, typed(v)) for k, v in value.items())))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(typed(v) for v in value))
    return (type(value).__name__, value)


def _entry(entry: ManifestEntry) -> tuple[Any, ...]:
    file = entry.data_file
    fields = tuple((f.name, typed(getattr(file, f.name))) for f in dataclasses.fields(file))
    return (
        int(entry.status),
        entry.snapshot_id,
        entry.sequence_number,
        entry.file_sequence_number,
        "delete" if isinstance(file, DeleteFile) else "data",
        fields,
    )


def _all_entries(decoded: DecodedManifest, *, stats: bool) -> list[tuple[Any, ...]]:
    indices = list(range(decoded.count))
    return [_entry(e) for e in decoded.entries(indices, decoded.files(indices, stats=stats))]


def _rows(location: str, manifest: ManifestFile) -> list[ManifestFile]:
    """List rows to decode the file under: as committed, and variants that exercise every
    inheritance rule (v1's sequence number 0, a later sequence number, v3 first row ids)."""
    rows = [manifest]
    for sequence_number, first_row_id in ((0, None), (7, None), (9, 1000)):
        rows.append(
            dataclasses.replace(
                manifest,
                manifest_path=location,
                sequence_number=sequence_number,
                first_row_id=first_row_id if manifest.content == ManifestContent.DATA else None,
                added_snapshot_id=manifest.added_snapshot_id or 4242,
            )
        )
    return rows


def assert_manifest_decodes_alike(
    path: Path, manifest: ManifestFile | None = None, *, reference: Path | None = None
) -> int:
    """Decode the manifest at ``path`` natively and with fastavro, under its list row
    ``manifest`` (default: a data manifest added by snapshot 4242) and variants of it, and
    assert the same entries. ``reference``: the file fastavro reads instead (a repaired copy
    of a file it rejects). Returns the number of entries."""
    location = str(path)
    data = path.read_bytes()
    header = read_header(data, location)
    batch, reason = _native.decode(data, header, location, min_records=1)
    assert batch is not None, f"the native decoder did not read {location}: {reason}"
    layout = entry_layout(schema_of(header, location), None, location)
    if reference is not None:
        location = str(reference)
        data = reference.read_bytes()
        header = read_header(data, location)
        reference_layout = entry_layout(schema_of(header, location), None, location)
    else:
        reference_layout = layout
    content = ManifestContent.DELETES if header.text("content") == "deletes" else ManifestContent.DATA
    row = manifest or ManifestFile(location, len(data), 0, content=content, added_snapshot_id=4242)
    row = dataclasses.replace(row, manifest_path=location, manifest_length=len(data))
    count = 0
    for variant in _rows(location, row):
        native = decoded_from_arrow(batch, layout, variant)
        builder = ManifestBuilder(reference_layout, variant)
        builder.read(read_blocks(data, header, location, chunk=CHUNK))
        reference, _ = builder.finish()
        _assert_same_columns(native, reference, location)
        # Decoded for a summary (the partitions table): the same columns, the rest left out.
        summary = decoded_from_arrow(batch, layout, variant, summary=True)
        _assert_same_columns(summary, reference, location, summary=True)
        for stats in (True, False):
            assert _all_entries(native, stats=stats) == _all_entries(reference, stats=stats), location
        for decoded in (native, reference):
            assert_entry_metrics_alike(decoded, location)
        entries = [_entry(e) for e in read_manifest(LocalFileIO(), variant)]
        assert _all_entries(native, stats=True) == entries, location
        count = native.count
    return count


def assert_entry_metrics_alike(decoded: DecodedManifest, location: str) -> None:
    """Each entry's ``EntryMetrics`` (what small manifests' files are checked with) reads what
    the entry's file holds: the same record count, the same maps present, and each map the
    same value for every field id it has (and none for one it lacks)."""
    records = decoded.record_count.tolist()
    for i, file in enumerate(decoded.files(range(decoded.count))):
        view = EntryMetrics(decoded.metrics, i, records[i])
        assert view.record_count == file.record_count, location
        for name in ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds"):
            expected, got = getattr(file, name), getattr(view, name)
            assert (got is None) == (expected is None), (location, i, name)
            if expected is None:
                continue
            assert bool(got) == bool(expected) and dict(got) == dict(expected), (location, i, name)
            for field_id in [*expected, max(expected, default=0) + 1]:
                assert typed(got.get(field_id)) == typed(expected.get(field_id)), (location, i, name)


def _assert_same_columns(
    native: DecodedManifest, reference: DecodedManifest, location: str, *, summary: bool = False
) -> None:
    """The decoded columns themselves (what planning filters on), beyond the files; of a
    ``summary``, those it keeps (and that it left the others out)."""
    assert native.count == reference.count, location
    assert native.summary is summary, location
    for name in ("status", "content", "record_count", "file_size_in_bytes", "partition_codes"):
        assert np.array_equal(getattr(native, name), getattr(reference, name)), (location, name)
    for name in ("snapshot", "sequence", "file_sequence"):
        values = f"{name}_id" if name == "snapshot" else f"{name}_number"
        mask_a, mask_b = getattr(native, f"{name}_null"), getattr(reference, f"{name}_null")
        assert (mask_a is None) == (mask_b is None), (location, name)
        keep = np.ones(native.count, dtype=bool) if mask_a is None else ~mask_a
        assert mask_a is None or np.array_equal(mask_a, mask_b), (location, name)
        assert np.array_equal(getattr(native, values)[keep], getattr(reference, values)[keep]), (
            location,
            name,
        )
    assert [typed(p) for p in native.partitions] == [typed(p) for p in reference.partitions], location
    if summary:
        assert (native.file_path, native.format_values, native.metrics) == ([], [], {}), location
        assert set(native.extras.values()) == {None}, location
        with pytest.raises(AssertionError, match="summary"):
            native.files([0])
        return
    assert np.array_equal(native.formats, reference.formats), location
    assert native.format_values == reference.format_values, location
    assert native.file_path == reference.file_path, location
    assert {k: typed(v) for k, v in native.extras.items()} == {
        k: typed(v) for k, v in reference.extras.items()
    }, location
    for name, column in native.metrics.items():
        other = reference.metrics[name]
        assert (column.uniform, column.layouts) == (other.uniform, other.layouts), (location, name)


def assert_decode_together_alike(rows: list[ManifestFile], *, together: bool | None = True) -> None:
    """Decode the manifests of ``rows`` in one go (``decode_manifests``: one native call when
    they share their schema and codec; ``together``: assert that they do, or not; None: either)
    and assert each equal to the manifest decoded alone, completely and for a summary."""
    jobs = [(Path(row.manifest_path).read_bytes(), row) for row in rows]
    with native_threshold(1):
        files = [(data, read_header(data, row.manifest_path), row.manifest_path) for data, row in jobs]
        if together is None:
            together = _native.decode_together(files) is not None
        assert (_native.decode_together(files) is not None) is together
        for summary in (False, True):
            decoded = decode_manifests(jobs, summary=summary)
            assert len(decoded) == len(jobs)
            for (data, row), (one, _) in zip(jobs, decoded):
                alone, _ = decode_manifest(data, row)
                _assert_same_columns(one, alone, row.manifest_path, summary=one.summary)
                assert one.summary is summary or not together, row.manifest_path
                if not one.summary:
                    assert _all_entries(one, stats=True) == _all_entries(alone, stats=True), row.manifest_path


@contextmanager
def native_threshold(records: int) -> Iterator[None]:
    """Files of at least ``records`` records decode natively while this lasts (a huge number:
    none do)."""
    saved = _native.NATIVE_MIN_RECORDS
    _native.NATIVE_MIN_RECORDS = records
    try:
        yield
    finally:
        _native.NATIVE_MIN_RECORDS = saved


def assert_list_decodes_alike(path: Path) -> list[ManifestFile]:
    """Read the manifest list at ``path`` natively and with fastavro; assert equal rows."""
    location = str(path)
    data = path.read_bytes()
    batch, reason = _native.decode(data, read_header(data, location), location, min_records=1)
    assert batch is not None, f"the native decoder did not read {location}: {reason}"
    io = LocalFileIO()
    with native_threshold(1):
        native = read_manifest_list(io, location)
    with native_threshold(1 << 62):
        reference = read_manifest_list(io, location)
    assert [typed(dataclasses.astuple(m)) for m in native] == [
        typed(dataclasses.astuple(m)) for m in reference
    ]
    with native_threshold(1):
        columns = read_manifest_list_columns(io, location)
    _assert_columns_alike(columns, reference)
    return native


def _assert_columns_alike(columns: ManifestListColumns, reference: list[ManifestFile]) -> None:
    """The list as planning reads it: its arrays, and rows built a few at a time (the odd rows
    backwards first), equal the rows fastavro gives."""
    assert columns.spec_ids.tolist() == [m.partition_spec_id for m in reference]
    assert columns.contents.tolist() == [int(m.content) for m in reference]
    odd = list(range(len(reference)))[1::2][::-1]
    assert [typed(dataclasses.astuple(m)) for m in columns.manifests(odd)] == [
        typed(dataclasses.astuple(reference[i])) for i in odd
    ]
    assert [typed(dataclasses.astuple(m)) for m in columns.manifests()] == [
        typed(dataclasses.astuple(m)) for m in reference
    ]
    expected = ListSummaries.of_rows([m.partitions for m in reference])
    assert columns.summaries.without_summaries.tolist() == expected.without_summaries.tolist()
    positions = max((len(m.partitions or ()) for m in reference), default=0)
    for position in range(positions + 1):  # one past the last: unknown everywhere
        got, want = columns.summaries.field(position), expected.field(position)
        for name in ("unknown", "contains_null", "nan", "lower_present"):
            assert getattr(got, name).tolist() == getattr(want, name).tolist(), (position, name)
        for which in ("lower", "upper"):
            assert got.bounds(which) == want.bounds(which), (position, which)
            assert got.present(which).tolist() == want.present(which).tolist(), (position, which)
            for dtype in (np.dtype("<i4"), np.dtype("<f8")):  # the widths planning reads
                fixed = got.fixed(which, dtype)
                if fixed is not None:
                    usual, values = fixed
                    raws = want.bounds(which)
                    assert usual.tolist() == [b is not None and len(b) == dtype.itemsize for b in raws]
                    assert values[usual].tobytes() == b"".join(b for b, u in zip(raws, usual) if u)
    assert columns.summaries.rows() == expected.rows()
