"""Reading manifest lists (spec: "Manifest Lists"): as ``ManifestFile`` rows, or as columns.

Fields are found by field id; v1 lists (no ``content`` or sequence numbers) read as data
manifests with sequence numbers 0. A list of many rows is decoded natively when
``icefloe[fast]`` is installed (``_native``), by fastavro otherwise.

Planning reads a list as ``ManifestListColumns``: every row's partition spec id, content and
partition field summaries as arrays, and a ``ManifestFile`` built only for the rows the plan
keeps. A large table's list has thousands of rows and a one-day plan keeps a handful: building
a Python object (and its field summaries) for every row was a third of such a plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow.buffers import booleans, numpy_view, validity
from icefloe.errors import InvalidManifestError
from icefloe.io import FileIO
from icefloe.io.encryption import new_decrypted_input, new_manifest_list_input
from icefloe.manifests import _native as native
from icefloe.manifests._avro_file import AvroHeader, read_records
from icefloe.manifests.reader import parse_avro
from icefloe.serde.avro_schemas import FIELD_ID_PROP
from icefloe.spec.manifest import FieldSummary, ManifestContent, ManifestFile

__all__ = [
    "ListSummaries",
    "ManifestListColumns",
    "SummaryField",
    "read_manifest_list",
    "read_manifest_list_columns",
]

_REQUIRED = {500: "manifest_path", 501: "manifest_length", 502: "partition_spec_id", 503: "added_snapshot_id"}
_OPTIONAL = {
    517: "content",
    515: "sequence_number",
    516: "min_sequence_number",
    504: "added_files_count",
    505: "existing_files_count",
    506: "deleted_files_count",
    512: "added_rows_count",
    513: "existing_rows_count",
    514: "deleted_rows_count",
    507: "partitions",
    519: "key_metadata",
    520: "first_row_id",
}
_SUMMARY = {509: "contains_null", 518: "contains_nan", 510: "lower_bound", 511: "upper_bound"}
_MISSING = "\x00missing"
_CONTENT_VALUES = {int(c): c for c in ManifestContent}
#: ManifestFile's fields, in order.
_ORDER = (
    "manifest_path",
    "manifest_length",
    "partition_spec_id",
    "content",
    "sequence_number",
    "min_sequence_number",
    "added_snapshot_id",
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
    "partitions",
    "key_metadata",
    "first_row_id",
)
_PARTITIONS = _ORDER.index("partitions")


def read_manifest_list(
    io: FileIO, location: str, *, key_id: str | None = None, key_metadata: bytes | None = None
) -> list[ManifestFile]:
    """The manifest list rows of the file at ``location``, in file order.

    An encrypted table's list (``io`` is its ``EncryptingFileIO``) is decrypted with the key
    its snapshot's ``key-id`` names: ``key_id``, or the snapshot the table's metadata has for
    ``location``; or with ``key_metadata``, the list's key itself (already taken from the
    table's ``encryption-keys``, e.g. on the driver for a Spark task: no KMS needed).

    Raises:
        NoSuchFileError: the file does not exist.
        InvalidManifestError: the file is truncated, corrupt or lacks a required field.
        EncryptionError: an encrypted list's key is missing, or the list does not decrypt
            (``MissingKeyError``, ``KeyManagementError``, ``DecryptionError``; naming the file).
    """
    return read_manifest_list_columns(io, location, key_id=key_id, key_metadata=key_metadata).manifests()


def read_manifest_list_columns(
    io: FileIO, location: str, *, key_id: str | None = None, key_metadata: bytes | None = None
) -> ManifestListColumns:
    """The manifest list at ``location`` as columns (arguments and errors: ``read_manifest_list``).

    Every row is checked here, as ``read_manifest_list`` checks it: a row with no path, length or
    spec id, or an unknown content, raises even if no plan asks for that row."""
    data, header, schema, layout = _open(io, location, key_id, key_metadata)
    batch, reason = native.decode(data, header, location)
    if batch is not None:
        return _columns_of_batch(batch, layout)
    rows = (tuple(map(rec.get, layout.fields)) for rec in read_records(data, header, schema, location))
    manifests = _manifest_files(rows, layout, summaries_built=False)
    native.report_fallback(reason)
    return ManifestListColumns.of(manifests)


class ManifestListColumns:
    """A manifest list's rows as columns: ``spec_ids`` and ``contents`` (numpy arrays), the
    partition field ``summaries``, and the rows themselves as ``ManifestFile``, each built on
    first request (and kept: a cached list serves every later plan)."""

    __slots__ = ("_build", "_built", "contents", "n", "spec_ids", "summaries")

    def __init__(
        self,
        spec_ids: np.ndarray,
        contents: np.ndarray,
        summaries: ListSummaries,
        build: Callable[[list[int]], dict[int, ManifestFile]],
    ):
        self.n = len(spec_ids)
        self.spec_ids = spec_ids
        self.contents = contents
        self.summaries = summaries
        self._build = build
        self._built: list[ManifestFile | None] = [None] * self.n

    @classmethod
    def of(cls, manifests: Sequence[ManifestFile]) -> ManifestListColumns:
        """The columns of rows already built."""
        built = list(manifests)
        columns = cls(
            np.fromiter((m.partition_spec_id for m in built), dtype=np.int64, count=len(built)),
            np.fromiter((int(m.content) for m in built), dtype=np.int8, count=len(built)),
            ListSummaries.of_rows([m.partitions for m in built]),
            lambda indices: {i: built[i] for i in indices},
        )
        columns._built = list(built)
        return columns

    def weight(self) -> int:
        """About the bytes this holds once every row is built (for the manifest cache)."""
        return 256 + 640 * self.n

    def manifests(self, indices: Iterable[int] | None = None) -> list[ManifestFile]:
        """The rows at ``indices`` (default: every row), in the order given."""
        wanted = range(self.n) if indices is None else list(indices)
        built = self._built
        missing = [i for i in wanted if built[i] is None]
        if missing:
            for i, manifest in self._build(missing).items():  # at least the missing rows
                built[i] = manifest
        return [built[i] for i in wanted]  # type: ignore[misc]


# ---- partition field summaries ----------------------------------------------------------------


class SummaryField:
    """One partition field position's summaries over the rows of a manifest list: where a row
    has none (``unknown``: no summaries, or fewer fields, in a malformed list), contains-null,
    contains-NaN (-1 unknown, 0, 1), and the raw lower / upper bounds (``bounds``)."""

    __slots__ = ("_bounds", "_fixed", "_present", "contains_null", "lower_present", "nan", "unknown")

    def __init__(
        self,
        unknown: np.ndarray,
        contains_null: np.ndarray,
        nan: np.ndarray,
        present: dict[str, np.ndarray],
        bounds: Callable[[str], list[bytes | None]],
        fixed: Callable[[str, np.dtype[Any]], tuple[np.ndarray, np.ndarray] | None] | None = None,
    ):
        self.unknown = unknown
        self.contains_null = contains_null
        self.nan = nan
        self._present = present
        self.lower_present = present["lower"]
        self._bounds = bounds
        self._fixed = fixed

    def present(self, which: str) -> np.ndarray:
        """Per row, whether it has a ``which`` ("lower" / "upper") bound."""
        return self._present[which]

    def bounds(self, which: str) -> list[bytes | None]:
        """Each row's ``which`` bound, serialized (None where it has none)."""
        return self._bounds(which)

    def fixed(self, which: str, dtype: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """Per row, whether its ``which`` bound is ``dtype.itemsize`` bytes long, and the bound read
        as ``dtype`` (zero elsewhere); None when only ``bounds`` can say."""
        return None if self._fixed is None else self._fixed(which, dtype)


class ListSummaries:
    """The partition field summaries of a manifest list's rows, one ``SummaryField`` per field
    position on first use; ``rows()`` gives them as each row's ``FieldSummary`` tuple."""

    def __init__(self, n: int, without_summaries: np.ndarray):
        self.n = n
        #: Rows without summaries: their manifests may always match (``ManifestEvaluator.eval``).
        self.without_summaries = without_summaries
        self._fields: dict[int, SummaryField] = {}

    @staticmethod
    def of_rows(rows: list[tuple[FieldSummary, ...] | None]) -> ListSummaries:
        return _RowSummaries(rows)

    @staticmethod
    def of_arrow(
        array: pa.Array,
        names: tuple[str, str, str, str] = ("contains_null", "contains_nan", "lower_bound", "upper_bound"),
    ) -> ListSummaries | None:
        """The summaries of an Arrow list of summary records (their fields ``names``); None
        when it is not one (no ``contains_null`` field, a null record)."""
        return _arrow_summaries(array, names, len(array))

    def field(self, position: int) -> SummaryField:
        found = self._fields.get(position)
        if found is None:
            found = self._fields[position] = self._field(position)
        return found

    def _field(self, position: int) -> SummaryField:
        raise NotImplementedError

    def rows(self) -> list[tuple[FieldSummary, ...] | None]:
        raise NotImplementedError


class _RowSummaries(ListSummaries):
    def __init__(self, rows: list[tuple[FieldSummary, ...] | None]):
        super().__init__(len(rows), np.fromiter((r is None for r in rows), dtype=bool, count=len(rows)))
        self._rows = rows

    def _field(self, position: int) -> SummaryField:
        picked = [None if s is None or position >= len(s) else s[position] for s in self._rows]
        nans = [None if p is None else p.contains_nan for p in picked]
        bounds = {
            "lower": [None if p is None else p.lower_bound for p in picked],
            "upper": [None if p is None else p.upper_bound for p in picked],
        }
        return SummaryField(
            np.array([p is None for p in picked], dtype=bool),
            np.array([p is not None and bool(p.contains_null) for p in picked], dtype=bool),
            np.array([-1 if n is None else 1 if n else 0 for n in nans], dtype=np.int8),
            {which: np.array([b is not None for b in raws], dtype=bool) for which, raws in bounds.items()},
            bounds.__getitem__,
        )

    def rows(self) -> list[tuple[FieldSummary, ...] | None]:
        return self._rows


class _ArrowSummaries(ListSummaries):
    """The summaries of a natively decoded ``partitions`` column (a list of records), each
    field position picked from the records' columns with numpy.

    Read through their buffers (``arrow.buffers``: pyarrow's conversions import pandas)."""

    def __init__(self, array: pa.ListArray, items: pa.StructArray, indices: list[int]):
        super().__init__(len(array), ~validity(array))
        self._array = array
        self._items = items  # every non-null row's records, in order
        self._indices = indices  # contains_null, contains_nan, lower, upper (-1: absent)
        offsets = numpy_view(array.offsets)
        assert offsets is not None  # int32
        self._starts = offsets[:-1] - offsets[0]
        self._lengths = np.diff(offsets)
        self._rows: list[tuple[FieldSummary, ...] | None] | None = None

    def _child(self, which: int) -> pa.Array | None:
        index = self._indices[which]
        return None if index < 0 else self._items.field(index)

    def _field(self, position: int) -> SummaryField:
        has = ~self.without_summaries & (self._lengths > position)
        positions = self._starts[has] + position

        contains_null = np.zeros(self.n, dtype=bool)
        null = self._child(0)
        if null is not None:
            # A null contains_null reads as false, as ``bool(None)`` does on the row path.
            contains_null[has] = booleans(null)[0][positions]

        nan = np.full(self.n, -1, dtype=np.int8)
        found = self._child(1)
        if found is not None:
            values, valid = booleans(found)
            nan[has] = np.where(valid, values, -1).astype(np.int8)[positions]

        rows = np.flatnonzero(has)
        columns = {"lower": self._child(2), "upper": self._child(3)}
        present = {}
        for which, column in columns.items():
            present[which] = np.zeros(self.n, dtype=bool)
            if column is not None:
                present[which][rows] = validity(column)[positions]
        listed: dict[str, list[bytes | None]] = {}

        def bounds(which: str) -> list[bytes | None]:
            found = listed.get(which)
            if found is None:
                found = listed[which] = [None] * self.n
                column = columns[which]
                if column is not None:
                    raws = column.to_pylist()
                    for i, at in zip(rows.tolist(), positions.tolist()):
                        found[i] = raws[at]
            return found

        def fixed(which: str, dtype: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray] | None:
            column = columns[which]
            if column is None:  # the list has no such bound: no row has one
                return np.zeros(self.n, dtype=bool), np.zeros(self.n, dtype)
            if column.type != pa.binary():
                return None  # read from ``bounds``
            return _fixed_width(column, rows, positions, self.n, dtype)

        return SummaryField(~has, contains_null, nan, present, bounds, fixed)

    def rows(self) -> list[tuple[FieldSummary, ...] | None]:
        if self._rows is None:
            self._rows = _field_summaries(self._array, self._items, self._indices)
        return self._rows


def _fixed_width(
    column: pa.BinaryArray, rows: np.ndarray, positions: np.ndarray, n: int, dtype: np.dtype[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """``SummaryField.fixed`` of a binary column: the values at ``positions`` belong to ``rows``
    (of ``n``); the bytes are gathered from the column's data buffer in one numpy step."""
    width = dtype.itemsize
    _, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=len(column) + 1, offset=column.offset * 4)
    starts = offsets[positions]
    usual_at = validity(column)[positions] & (offsets[positions + 1] - starts == width)
    usual = np.zeros(n, dtype=bool)
    usual[rows[usual_at]] = True
    values = np.zeros(n, dtype=dtype)
    if usual_at.any():
        data = np.frombuffer(data_buffer, dtype=np.uint8)
        gathered = data[starts[usual_at][:, None] + np.arange(width)]
        values[rows[usual_at]] = gathered.reshape(-1).view(dtype)
    return usual, values


def _arrow_summaries(
    array: pa.Array | None, names: tuple[str, str, str, str], n: int
) -> ListSummaries | None:
    """The summaries of a natively decoded ``partitions`` column (of ``n`` rows); None when it
    is not the usual list of records with a ``contains_null`` (the row path reads it, or raises
    the error)."""
    if array is None:  # a list without summaries
        return ListSummaries.of_rows([None] * n)
    if not pa.types.is_list(array.type) or not pa.types.is_struct(array.type.value_type):
        return None
    kind = array.type.value_type
    indices = [kind.get_field_index(name) if name != _MISSING else -1 for name in names]
    if indices[0] < 0:
        return None
    items = array.flatten()  # the records of the non-null rows, in order
    if items.null_count:
        return None
    return _ArrowSummaries(array, items, indices)


def _field_summaries(
    array: pa.ListArray, items: pa.StructArray, indices: list[int]
) -> list[tuple[FieldSummary, ...] | None]:
    """Each row's ``FieldSummary`` tuple, built in a few C-level passes (one by one, 2,000 rows
    cost 10 ms)."""
    children = items.flatten()
    null, nan, lower, upper = (repeat(None) if i < 0 else children[i].to_pylist() for i in indices)
    flat = list(map(_new_field_summary, null, nan, lower, upper))
    lengths = array.value_lengths().to_pylist()  # None for a null row
    result: list[tuple[FieldSummary, ...] | None] = []
    start = 0
    for length in lengths:
        if length is None:
            result.append(None)
            continue
        result.append(tuple(flat[start : start + length]))
        start += length
    return result


# ---- opening a list and building its rows -----------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where our fields are in one list file: the file's field name for each of ``_ORDER``
    (``_MISSING`` for a field it lacks) and for the four fields of a partition summary."""

    location: str
    fields: tuple[str, ...]
    summary: tuple[str, str, str, str]


def _open(
    io: FileIO, location: str, key_id: str | None, key_metadata: bytes | None
) -> tuple[bytes, AvroHeader, dict[str, Any], _Layout]:
    if key_metadata is not None:
        data = new_decrypted_input(io, location, key_metadata).read()
    else:
        data = new_manifest_list_input(io, location, key_id).read()
    header, schema = parse_avro(data, location)
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise InvalidManifestError(
            f"{location} is not a manifest list (its Avro schema is not a record)", location=location
        )
    try:
        names = _names(list(schema.get("fields", ())), {**_REQUIRED, **_OPTIONAL})
        summary = _names(_summary_fields(schema, names["partitions"]), _SUMMARY)
    except (KeyError, TypeError, ValueError, StopIteration) as exc:
        raise InvalidManifestError(
            f"{location} has an unreadable Avro schema: {exc!r}", location=location
        ) from None
    for field_id, ours in _REQUIRED.items():
        if names[ours] == _MISSING:
            raise InvalidManifestError(
                f"{location} has no '{ours}' (field id {field_id})", location=location, field=ours
            )
    layout = _Layout(
        location,
        tuple(names[name] for name in _ORDER),
        (summary["contains_null"], summary["contains_nan"], summary["lower_bound"], summary["upper_bound"]),
    )
    return data, header, schema, layout


def _names(fields: list[dict[str, Any]], wanted: dict[int, str]) -> dict[str, str]:
    """Our field name -> the file's field name, by id (by name for fields without ids)."""
    by_id = {int(f[FIELD_ID_PROP]): f["name"] for f in fields if f.get(FIELD_ID_PROP) is not None}
    no_id = {f["name"] for f in fields if f.get(FIELD_ID_PROP) is None}
    return {
        ours: by_id.get(field_id) or (ours if ours in no_id else _MISSING)
        for field_id, ours in wanted.items()
    }


def _summary_fields(schema: Any, partitions_name: str) -> list[dict[str, Any]]:
    for f in schema.get("fields", ()):
        if f["name"] == partitions_name:
            array = f["type"]
            if isinstance(array, list):
                array = next(b for b in array if b != "null")
            items = array.get("items") if isinstance(array, dict) else None
            if isinstance(items, dict) and items.get("type") == "record":
                return list(items.get("fields", ()))
    return []


def _columns_of_batch(batch: pa.RecordBatch, layout: _Layout) -> ManifestListColumns:
    """The columns of a natively decoded list; every row built at once (and its error raised)
    when a row is invalid or the summaries are not the usual list of records."""
    present = set(batch.schema.names)
    columns = [batch.column(name) if name in present else None for name in layout.fields]
    path, length, spec_id, content = columns[:4]
    summaries = _arrow_summaries(columns[_PARTITIONS], layout.summary, batch.num_rows)
    spec_ids = _ints(spec_id)
    contents = np.zeros(batch.num_rows, dtype=np.int64) if content is None else _ints(content)
    usual = (
        summaries is not None
        and spec_ids is not None
        and contents is not None
        and all(c is not None and c.null_count == 0 for c in (path, length))
        and bool(((contents == ManifestContent.DATA) | (contents == ManifestContent.DELETES)).all())
    )
    if not usual:
        return ManifestListColumns.of(_files_of_batch(batch, layout))

    def build(indices: list[int]) -> dict[int, ManifestFile]:
        # Slices of the batch, not ``take``: its first call in a process costs 10 ms.
        runs = _runs(indices)
        if len(runs) > _FEW_RUNS:  # scattered rows: every row at once costs less
            return dict(enumerate(_files_of_batch(batch, layout)))
        found: dict[int, ManifestFile] = {}
        for start, stop in runs:
            found.update(zip(range(start, stop), _files_of_batch(batch.slice(start, stop - start), layout)))
        return found

    assert summaries is not None and spec_ids is not None and contents is not None
    return ManifestListColumns(spec_ids, contents.astype(np.int8), summaries, build)


#: Up to this many runs of consecutive rows are built run by run (a few to_pylist calls each);
#: for more, every row of the list is built at once.
_FEW_RUNS = 16


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """The distinct ``indices`` as runs of consecutive rows, (start, stop), in order."""
    runs: list[tuple[int, int]] = []
    for i in sorted(set(indices)):
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _ints(column: pa.Array | None) -> np.ndarray | None:
    """An integer column without nulls as int64; None if it is not one."""
    if column is None or column.null_count:
        return None
    values = numpy_view(column)
    return None if values is None else values.astype(np.int64)


def _files_of_batch(batch: pa.RecordBatch, layout: _Layout) -> list[ManifestFile]:
    """Every row of a natively decoded list, as ``ManifestFile``: whole columns as Python values,
    the same values fastavro's records hold (structs become dicts by field name)."""
    present = set(batch.schema.names)
    columns: list[Any] = [batch.column(name) if name in present else None for name in layout.fields]
    summaries = _arrow_summaries(columns[_PARTITIONS], layout.summary, batch.num_rows)
    built = summaries.rows() if summaries is not None else None
    rows = zip(
        *(
            repeat(None)
            if column is None
            else built
            if k == _PARTITIONS and built is not None
            else column.to_pylist()
            for k, column in enumerate(columns)
        )
    )
    return _manifest_files(rows, layout, summaries_built=built is not None)


def _manifest_files(
    rows: Iterable[tuple[Any, ...]], layout: _Layout, *, summaries_built: bool
) -> list[ManifestFile]:
    """The rows (values in ``_ORDER``) as ``ManifestFile``, checked; ``summaries_built``: the
    partitions are ``FieldSummary`` tuples already (else records as dicts)."""
    n_null, n_nan, n_lower, n_upper = layout.summary
    result: list[ManifestFile] = []
    for row in rows:
        try:
            (
                path,
                length,
                spec_id,
                content,
                seq,
                min_seq,
                snapshot_id,
                added_files,
                existing_files,
                deleted_files,
                added_rows,
                existing_rows,
                deleted_rows,
                partitions,
                key_metadata,
                first_row_id,
            ) = row
            if path is None or length is None or spec_id is None:
                raise KeyError("manifest_path, manifest_length and partition_spec_id are required")
            result.append(
                _new_manifest_file(
                    path,
                    length,
                    spec_id,
                    _CONTENT_VALUES[content] if content in _CONTENT_VALUES else ManifestContent(content or 0),
                    0 if seq is None else seq,
                    0 if min_seq is None else min_seq,
                    snapshot_id,
                    added_files,
                    existing_files,
                    deleted_files,
                    added_rows,
                    existing_rows,
                    deleted_rows,
                    None
                    if partitions is None
                    else partitions
                    if summaries_built
                    else tuple(
                        FieldSummary(bool(p[n_null]), p.get(n_nan), p.get(n_lower), p.get(n_upper))
                        for p in partitions
                    ),
                    key_metadata,
                    first_row_id,
                )
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InvalidManifestError(
                f"{layout.location} has an invalid manifest row ({type(exc).__name__}: {exc})",
                location=layout.location,
            ) from exc
    return result


def _slot(cls: type, name: str) -> Any:
    """The setter of a slot of the frozen dataclass ``cls`` (for building rows without its
    ``__init__``; each slot is set once, before the row is handed out)."""
    return cls.__dict__[name].__set__


_set_path = _slot(ManifestFile, "manifest_path")
_set_length = _slot(ManifestFile, "manifest_length")
_set_spec_id = _slot(ManifestFile, "partition_spec_id")
_set_content = _slot(ManifestFile, "content")
_set_sequence_number = _slot(ManifestFile, "sequence_number")
_set_min_sequence_number = _slot(ManifestFile, "min_sequence_number")
_set_snapshot_id = _slot(ManifestFile, "added_snapshot_id")
_set_added_files = _slot(ManifestFile, "added_files_count")
_set_existing_files = _slot(ManifestFile, "existing_files_count")
_set_deleted_files = _slot(ManifestFile, "deleted_files_count")
_set_added_rows = _slot(ManifestFile, "added_rows_count")
_set_existing_rows = _slot(ManifestFile, "existing_rows_count")
_set_deleted_rows = _slot(ManifestFile, "deleted_rows_count")
_set_partitions = _slot(ManifestFile, "partitions")
_set_key_metadata = _slot(ManifestFile, "key_metadata")
_set_first_row_id = _slot(ManifestFile, "first_row_id")


def _new_manifest_file(
    path: Any,
    length: Any,
    spec_id: Any,
    content: Any,
    sequence_number: Any,
    min_sequence_number: Any,
    snapshot_id: Any,
    added_files: Any,
    existing_files: Any,
    deleted_files: Any,
    added_rows: Any,
    existing_rows: Any,
    deleted_rows: Any,
    partitions: Any,
    key_metadata: Any,
    first_row_id: Any,
) -> ManifestFile:
    """``ManifestFile(...)`` (every field, in order), built by setting its slots one by one,
    unrolled: the frozen dataclass ``__init__`` (one ``object.__setattr__`` per field) costs
    twice as much, and a large table's list has thousands of rows."""
    row = object.__new__(ManifestFile)
    _set_path(row, path)
    _set_length(row, length)
    _set_spec_id(row, spec_id)
    _set_content(row, content)
    _set_sequence_number(row, sequence_number)
    _set_min_sequence_number(row, min_sequence_number)
    _set_snapshot_id(row, snapshot_id)
    _set_added_files(row, added_files)
    _set_existing_files(row, existing_files)
    _set_deleted_files(row, deleted_files)
    _set_added_rows(row, added_rows)
    _set_existing_rows(row, existing_rows)
    _set_deleted_rows(row, deleted_rows)
    _set_partitions(row, partitions)
    _set_key_metadata(row, key_metadata)
    _set_first_row_id(row, first_row_id)
    return row


_set_contains_null = _slot(FieldSummary, "contains_null")
_set_contains_nan = _slot(FieldSummary, "contains_nan")
_set_lower_bound = _slot(FieldSummary, "lower_bound")
_set_upper_bound = _slot(FieldSummary, "upper_bound")


def _new_field_summary(contains_null: Any, contains_nan: Any, lower: Any, upper: Any) -> FieldSummary:
    """``FieldSummary(...)``, its slots set directly (as ``_new_manifest_file``)."""
    summary = object.__new__(FieldSummary)
    _set_contains_null(summary, bool(contains_null))
    _set_contains_nan(summary, contains_nan)
    _set_lower_bound(summary, lower)
    _set_upper_bound(summary, upper)
    return summary
