"""Page-index pruning: reading only the Parquet pages a filter may match, through DataFusion.

A Parquet file may hold a *page index* (a column index of each page's min / max / null count,
and an offset index of where each page starts and its first row). Java Iceberg's writer
(parquet-mr) writes one by default, and its row groups are large (128 MB): a point lookup
that row-group statistics cannot prune then decodes a whole row group to keep a few rows.
pyarrow 26 reads the index but cannot skip pages with it (apache/arrow#45284: there is no
API to read row ranges). DataFusion's Parquet reader can, so a selective read of a file with
a page index goes through it (the ``page-index`` extra, ``pip install icefloe[page-index]``):

- ``page_predicate`` turns the task's bound residual into a :class:`PagePredicate`: the part of
  it DataFusion evaluates exactly as icefloe does. Comparisons, IN and IS [NOT] NULL on
  top-level int, long, date, timestamp and string columns; AND keeps the parts it can push,
  OR only when it can push every side. Floats (NaN, -0.0 ordering), decimals and the rest are
  left out: leaving a term out only reads more rows.
- :func:`page_batches` reads one file through DataFusion with that predicate pushed into the
  scan, when it is worth it (:func:`worth_reading`): the file is local and plaintext, the
  read is of the whole file and needs no row positions (position deletes, ``_pos``,
  ``_row_id`` come from pyarrow's reader), a pushed column has a page index in the row groups
  left after row-group pruning, and those row groups hold at least ``MIN_ROWS`` rows, of
  which the row-group statistics say the filter keeps at most ``MAX_FRACTION``.

The batches come back in the file's row order and in exactly the Arrow types pyarrow reads the
same columns as; the reader then projects them and applies the whole residual as for any
other batch, so the result does not depend on which reader read the pages.
"""

from __future__ import annotations

import functools
import operator
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe._util.optional import installed_module
from icefloe.arrow._types import field_id_of
from icefloe.arrow.row_filter import literal_arrow_type
from icefloe.errors import InvalidDataFileError
from icefloe.expressions.binder import reference_for_id
from icefloe.expressions.model import BoundReference, Expression
from icefloe.expressions.rewrite import rewrite_not
from icefloe.expressions.visitors import BoundPredicateVisitor, visit
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
)

__all__ = [
    "BUFFER_BYTES",
    "MAX_FRACTION",
    "MIN_ROWS",
    "Compare",
    "PagePredicate",
    "leaf_columns",
    "page_available",
    "page_batches",
    "page_predicate",
    "worth_reading",
]

#: Row groups (left after row-group pruning) of fewer rows are read by pyarrow: a DataFusion
#: read costs a few milliseconds of planning, which pages of so few rows do not repay.
MIN_ROWS = 200_000
#: What a DataFusion read holds before handing on its first batch (see ``page_batches``).
BUFFER_BYTES = 16 << 20
#: A filter that the row-group statistics say keeps more than this share of the rows read is
#: read by pyarrow (faster when most pages are read anyway).
MAX_FRACTION = 0.25

_PUSHED_TYPES = (
    IntegerType,
    LongType,
    DateType,
    TimestampType,
    TimestamptzType,
    TimestampNanoType,
    TimestamptzNanoType,
    StringType,
)
#: DataFusion reads a path holding these as a pattern (of other files, maybe): pyarrow reads it.
_GLOB = frozenset("*?[]{}")
#: The most rows per batch DataFusion makes (its default).
_BATCH_ROWS = 8192
#: Types whose Parquet physical values are the Iceberg value as an int (for the estimate).
_INTEGRAL = _PUSHED_TYPES[:-1]


# ---- the predicate ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Compare:
    """``column op values`` on a top-level column (by field id): ``op`` is one of ``<``,
    ``<=``, ``>``, ``>=``, ``=``, ``in`` (``values``: one value, or the set's values), or
    ``is_null`` / ``not_null`` (no values). Values are in icefloe's representation."""

    field_id: int
    type: IcebergType
    op: str
    values: tuple[Any, ...] = ()


@dataclass(frozen=True)
class PagePredicate:
    """``all`` (AND) or ``any`` (OR) of its parts, each a :class:`Compare` or a predicate."""

    kind: str
    parts: tuple[Compare | PagePredicate, ...]


def page_predicate(bound: Expression, schema: Schema) -> PagePredicate | Compare | None:
    """What of ``bound`` (bound to ``schema``) DataFusion may evaluate while reading: rows it
    rejects are rows ``bound`` rejects. None when nothing of it can be pushed."""
    return visit(rewrite_not(bound), _ToPredicate(schema))


class _ToPredicate(BoundPredicateVisitor["PagePredicate | Compare | None"]):
    """None stands for "not pushed" (any row may match)."""

    def __init__(self, schema: Schema):
        self.schema = schema

    def _compare(self, ref: BoundReference, op: str, values: tuple[Any, ...] = ()) -> Compare | None:
        if not isinstance(ref.type, _PUSHED_TYPES):
            return None
        if len(reference_for_id(self.schema, ref.field_id).path) != 1:
            return None  # a field of a struct: only top-level columns are pushed
        return Compare(ref.field_id, ref.type, op, values)

    def always_true(self) -> None:
        return None

    def always_false(self) -> None:
        return None  # (planning drops such tasks; nothing to gain here)

    def and_(self, left: Any, right: Any) -> PagePredicate | Compare | None:
        parts = [p for p in (left, right) if p is not None]
        if len(parts) < 2:
            return parts[0] if parts else None
        return PagePredicate("all", tuple(_flatten("all", parts)))

    def or_(self, left: Any, right: Any) -> PagePredicate | None:
        if left is None or right is None:
            return None  # a side that may match any row: so may the whole
        return PagePredicate("any", tuple(_flatten("any", [left, right])))

    def is_null(self, ref: BoundReference) -> Compare | None:
        return self._compare(ref, "is_null")

    def not_null(self, ref: BoundReference) -> Compare | None:
        return self._compare(ref, "not_null")

    def is_nan(self, ref: BoundReference) -> None:
        return None

    def not_nan(self, ref: BoundReference) -> None:
        return None

    def lt(self, ref: BoundReference, value: Any) -> Compare | None:
        return self._compare(ref, "<", (value,))

    def lt_eq(self, ref: BoundReference, value: Any) -> Compare | None:
        return self._compare(ref, "<=", (value,))

    def gt(self, ref: BoundReference, value: Any) -> Compare | None:
        return self._compare(ref, ">", (value,))

    def gt_eq(self, ref: BoundReference, value: Any) -> Compare | None:
        return self._compare(ref, ">=", (value,))

    def eq(self, ref: BoundReference, value: Any) -> Compare | None:
        return self._compare(ref, "=", (value,))

    def not_eq(self, ref: BoundReference, value: Any) -> None:
        return None  # prunes no page worth the trouble

    def in_(self, ref: BoundReference, values: frozenset[Any]) -> Compare | None:
        return self._compare(ref, "in", tuple(sorted(values)))

    def not_in(self, ref: BoundReference, values: frozenset[Any]) -> None:
        return None

    def starts_with(self, ref: BoundReference, prefix: str) -> None:
        return None

    def not_starts_with(self, ref: BoundReference, prefix: str) -> None:
        return None


def _flatten(kind: str, parts: Sequence[PagePredicate | Compare]) -> Iterator[PagePredicate | Compare]:
    for part in parts:
        if isinstance(part, PagePredicate) and part.kind == kind:
            yield from part.parts
        else:
            yield part


def _compares(predicate: PagePredicate | Compare) -> Iterator[Compare]:
    if isinstance(predicate, Compare):
        yield predicate
    else:
        for part in predicate.parts:
            yield from _compares(part)


# ---- whether a file is worth it ---------------------------------------------------------------


def worth_reading(
    metadata: pq.FileMetaData,
    row_groups: Sequence[int],
    columns: dict[int, int],
    predicate: PagePredicate | Compare,
) -> bool:
    """Whether to read the ``row_groups`` of a file through DataFusion with ``predicate``:
    they hold at least ``MIN_ROWS`` rows, a pushed column has a column index in each of them,
    and their statistics say the predicate keeps at most ``MAX_FRACTION`` of the rows.
    ``columns``: the Parquet column index of each top-level field id the file holds."""
    rows = sum(metadata.row_group(g).num_rows for g in row_groups)
    if rows < MIN_ROWS:
        return False
    indexed = {
        fid
        for fid in {c.field_id for c in _compares(predicate)}
        if fid in columns
        and all(metadata.row_group(g).column(columns[fid]).has_column_index for g in row_groups)
    }
    if not indexed:
        return False
    kept = sum(
        metadata.row_group(g).num_rows * _fraction(predicate, metadata.row_group(g), columns)
        for g in row_groups
    )
    return bool(kept <= MAX_FRACTION * rows)


_RANGE_OPS = ("<", "<=", ">", ">=")


def _fraction(predicate: PagePredicate | Compare, group: Any, columns: dict[int, int]) -> float:
    """The share of the row group's rows ``predicate`` keeps, by its statistics, assuming
    values spread evenly between the column's min and max (1.0 when they cannot say)."""
    if isinstance(predicate, Compare):
        if predicate.op in _RANGE_OPS:
            return _range_share([predicate], group, columns)
        return _share(predicate, group, columns)
    if predicate.kind == "any":
        return min(1.0, sum(_fraction(p, group, columns) for p in predicate.parts))
    # AND: the bounds on one column make one range (a lower and an upper bound keep what is
    # between them, not the smaller of their shares)
    ranges: dict[int, list[Compare]] = {}
    shares = []
    for part in predicate.parts:
        if isinstance(part, Compare) and part.op in _RANGE_OPS:
            ranges.setdefault(part.field_id, []).append(part)
        else:
            shares.append(_fraction(part, group, columns))
    shares += [_range_share(bounds, group, columns) for bounds in ranges.values()]
    return min(shares)


def _statistics(compare: Compare, group: Any, columns: dict[int, int]) -> Any:
    index = columns.get(compare.field_id)
    return None if index is None else group.column(index).statistics


def _int_bounds(compare: Compare, stats: Any) -> tuple[int, int] | None:
    """The min and max of the compared column, when it stores integers (the Iceberg values,
    for ``_INTEGRAL`` types) and its statistics have them."""
    if not isinstance(compare.type, _INTEGRAL) or not stats.has_min_max:
        return None
    low, high = stats.min_raw, stats.max_raw
    return (low, high) if isinstance(low, int) and isinstance(high, int) else None


def _share(compare: Compare, group: Any, columns: dict[int, int]) -> float:
    """The share of rows an equality, IN or null check keeps."""
    stats = _statistics(compare, group, columns)
    if stats is None:
        return 1.0
    rows = group.num_rows or 1
    nulls = stats.null_count if stats.has_null_count else None
    if compare.op == "is_null":
        return 1.0 if nulls is None else nulls / rows
    if compare.op == "not_null":
        return 1.0 if nulls is None else 1 - nulls / rows
    # = and IN: a few rows per value, at most; and of an integer column, the values' share of
    # the ones between its min and max (k IN (0, 1) of a column of zeros and ones keeps all)
    bounds = _int_bounds(compare, stats)
    if bounds is not None and all(isinstance(v, int) for v in compare.values):
        low, high = bounds
        inside = sum(1 for v in compare.values if low <= v <= high)
        return min(1.0, inside / min(high - low + 1, rows))
    return min(1.0, len(compare.values) / rows)


def _range_share(bounds: list[Compare], group: Any, columns: dict[int, int]) -> float:
    """The share of the column's [min, max] that range comparisons on it keep."""
    stats = _statistics(bounds[0], group, columns)
    found = None if stats is None else _int_bounds(bounds[0], stats)
    values = [b.values[0] for b in bounds]
    if found is None or not all(isinstance(v, int) for v in values) or found[1] <= found[0]:
        return 1.0
    low, high = found
    start, stop = low, high
    for bound, value in zip(bounds, values):
        if bound.op in ("<", "<="):
            stop = min(stop, value)
        else:
            start = max(start, value)
    return min(1.0, max(0.0, float(stop - start) / float(high - low)))


# ---- reading ----------------------------------------------------------------------------------

_lock = threading.Lock()
_sessions: dict[int, Any] = {}
#: The process whose DataFusion runtime runs the reads (see ``_usable``); ``_NOBODY`` in a child
#: forked after DataFusion was loaded.
_owner: int | None = None
_NOBODY = -1
_loaded = False
_module: Any = None


def _datafusion() -> Any:
    global _loaded, _module
    if not _loaded:
        with _lock:
            if not _loaded:
                _module = installed_module("datafusion")
                _loaded = True
    return _module


def page_available() -> bool:
    """Whether DataFusion (the ``page-index`` extra) is installed and loads."""
    return _datafusion() is not None


def _usable() -> bool:
    """Whether this process may read through DataFusion: the one that first did (or any, if
    none has and DataFusion was not loaded before it was forked: ``_after_fork``)."""
    global _owner
    with _lock:
        if _owner is None:
            _owner = os.getpid()
        return _owner == os.getpid()


def _after_fork() -> None:
    """In a forked child: DataFusion's runtime, if the parent ran it (through icefloe or not),
    came without the threads that drive it, and a read would hang. A child of a process that
    had loaded DataFusion reads with pyarrow; the lock starts afresh (the fork may have copied
    it held)."""
    global _lock, _owner
    _lock = threading.Lock()
    if _module is not None or "datafusion" in sys.modules:
        _owner = _NOBODY


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _session(batch_size: int) -> Any:
    """A DataFusion session making batches of ``batch_size`` rows, one per batch size for the
    process (a session is thread-safe, and setting one up costs milliseconds)."""
    with _lock:
        found = _sessions.get(batch_size)
        if found is None:
            datafusion = _module
            config = (
                datafusion.SessionConfig()
                .set("datafusion.execution.parquet.enable_page_index", "true")
                .set("datafusion.execution.parquet.pushdown_filters", "true")
                .set("datafusion.execution.parquet.reorder_filters", "true")
                # the file's own Arrow types (not string views), one partition per file (its
                # rows in file order)
                .set("datafusion.execution.parquet.schema_force_view_types", "false")
                .set("datafusion.execution.parquet.binary_as_string", "false")
                .set("datafusion.optimizer.repartition_file_scans", "false")
                # one partition: a plan of several (e.g. after common subexpressions of the
                # filter are factored out) merges them in any order
                .set("datafusion.execution.target_partitions", "1")
                .set("datafusion.execution.batch_size", str(batch_size))
            )
            found = _sessions[batch_size] = datafusion.SessionContext(config)
        return found


_COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}


def _column(name: str) -> Any:
    """A DataFusion column by its exact name (quoted: no case folding, no dotted paths)."""
    return _module.col('"' + name.replace('"', '""') + '"')


def _literal(value: Any, type_: IcebergType, column_type: pa.DataType) -> Any:
    """``value`` as a DataFusion literal of the column's own type; None when it has no exact
    form there (then the comparison is not pushed)."""
    try:
        scalar = pa.scalar(value, literal_arrow_type(type_))
        if scalar.type != column_type:
            scalar = scalar.cast(column_type)  # safe: fails rather than change the value
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError):
        return None
    return _module.lit(scalar)


def _matches(type_: IcebergType, column_type: pa.DataType) -> bool:
    """Whether the file's column holds ``type_``'s values as icefloe compares them (not a
    promoted or differently encoded column)."""
    if isinstance(type_, (IntegerType, LongType)):
        return bool(pa.types.is_int32(column_type) or pa.types.is_int64(column_type))
    if isinstance(type_, DateType):
        return bool(pa.types.is_date32(column_type))
    if isinstance(type_, (TimestampType, TimestamptzType)):
        return pa.types.is_timestamp(column_type) and bool(column_type.unit == "us")
    if isinstance(type_, (TimestampNanoType, TimestamptzNanoType)):
        return pa.types.is_timestamp(column_type) and bool(column_type.unit == "ns")
    return isinstance(type_, StringType) and (
        pa.types.is_string(column_type) or pa.types.is_large_string(column_type)
    )


def _expression(
    predicate: PagePredicate | Compare, names: dict[int, str], types: dict[str, pa.DataType]
) -> Any:
    """DataFusion's form of ``predicate`` on the file's columns; None for "any row"."""
    if isinstance(predicate, PagePredicate):
        parts = [_expression(p, names, types) for p in predicate.parts]
        if predicate.kind == "all":
            pushed = [p for p in parts if p is not None]  # AND: what can be pushed of it
            return functools.reduce(operator.and_, pushed) if pushed else None
        # (``is``: a DataFusion expression's ``==`` builds an expression, always true)
        return None if any(p is None for p in parts) else functools.reduce(operator.or_, parts)
    name = names.get(predicate.field_id)
    if name is None or name not in types or not _matches(predicate.type, types[name]):
        return None  # (a column the file lacks reads as nulls: not pushed)
    column = _column(name)
    if predicate.op == "is_null":
        return column.is_null()
    if predicate.op == "not_null":
        return column.is_not_null()
    literals = [_literal(v, predicate.type, types[name]) for v in predicate.values]
    if not literals or any(lit is None for lit in literals):
        return None
    if predicate.op == "in":
        return _module.functions.in_list(column, literals, False)
    return _COMPARISONS[predicate.op](column, literals[0])


def leaf_columns(metadata: pq.FileMetaData, file_fields: Sequence[pa.Field]) -> dict[int, int]:
    """The Parquet column (leaf) index of each top-level primitive field, by field id (as
    ``_names_by_id`` finds the field's column)."""
    ids = {name: fid for fid, name in _names_by_id(file_fields).items()}
    found: dict[int, int] = {}
    for index in range(metadata.num_columns):
        fid = ids.get(metadata.schema.column(index).path)
        if fid is not None:
            found[fid] = index
    return found


def page_batches(
    path: str,
    metadata: pq.FileMetaData,
    row_groups: Sequence[int],
    file_fields: Sequence[pa.Field],
    columns: Sequence[str],
    predicate: PagePredicate | Compare,
    batch_size: int,
) -> Iterator[pa.RecordBatch] | None:
    """The rows of the local Parquet file ``path`` that ``predicate`` may match, its top-level
    primitive ``columns`` only, read by DataFusion skipping the pages its page index rules
    out; None when that is not worth it (:func:`worth_reading`: ``row_groups`` are the ones
    left by row-group pruning), when nothing of ``predicate`` applies to this file's columns,
    or when DataFusion cannot read it (pyarrow then reads it, and reports what is wrong).

    ``file_fields``: the file's top-level Arrow fields as pyarrow reads them; the batches have
    exactly those fields' types and metadata (field ids), in the order of ``columns``.

    Raises:
        InvalidDataFileError: DataFusion failed after ``BUFFER_BYTES`` of rows were handed on
            (naming the file).
    """
    if not worth_reading(metadata, row_groups, leaf_columns(metadata, file_fields), predicate):
        return None
    if any(c in path for c in _GLOB) or _datafusion() is None or not _usable():
        return None
    try:
        # DataFusion sizes its decoding buffers by the batch size: a table read's batches of
        # 64 MB (``for_table``) made a point lookup twice as slow as batches of 8,192 rows
        frame = _session(min(batch_size, _BATCH_ROWS)).read_parquet(path, file_extension="")
        types = {field.name: field.type for field in frame.schema()}
        condition = _expression(predicate, _names_by_id(file_fields), types)
        if condition is None:
            return None
        by_name = {f.name: f for f in file_fields}
        schema = pa.schema([by_name[name] for name in columns])
        read = _in_file_types(frame.filter(condition).select(*(_column(name) for name in columns)), schema)
        # Up to BUFFER_BYTES of the rows are read before any is handed on, so that a file
        # DataFusion fails on (it checks strings are UTF-8, pyarrow does not) is read by pyarrow
        # instead; a selective read is usually all there by then.
        buffered: list[pa.RecordBatch] = []
        size = 0
        rest: Iterator[pa.RecordBatch] | None = None
        for batch in read:
            buffered.append(batch)
            size += batch.nbytes
            if size > BUFFER_BYTES:
                rest = read
                break
    except Exception:  # DataFusion raises errors of no common base: pyarrow reads the file instead
        return None
    return _batches(buffered, rest, path)


def _names_by_id(file_fields: Sequence[pa.Field]) -> dict[int, str]:
    """The file's top-level column of each field id; none for an id two columns claim (an
    invalid file: the projection takes the first, so the filter must not guess)."""
    names: dict[int, str] = {}
    repeated: set[int] = set()
    for field in file_fields:
        fid = field_id_of(field)
        if fid is not None:
            if fid in names:
                repeated.add(fid)
            names[fid] = field.name
    return {fid: name for fid, name in names.items() if fid not in repeated}


def _in_file_types(frame: Any, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The non-empty batches of the DataFusion ``frame``, with the types and field metadata
    (``schema``) pyarrow reads the file's columns with."""
    for found in frame.execute_stream():
        batch = found.to_pyarrow()
        if batch.num_rows:
            arrays = [
                column if column.type == field.type else column.cast(field.type)
                for column, field in zip(batch.columns, schema)
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def _batches(
    buffered: list[pa.RecordBatch], rest: Iterator[pa.RecordBatch] | None, path: str
) -> Iterator[pa.RecordBatch]:
    """The batches read ahead, then the ``rest`` of the read."""
    yield from buffered
    buffered.clear()
    if rest is None:
        return
    try:
        yield from rest
    except Exception as error:  # DataFusion's errors have no common base
        raise InvalidDataFileError(f"cannot read data file {path}: {error}", location=path) from error
