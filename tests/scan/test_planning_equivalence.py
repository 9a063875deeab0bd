"""The fast planner gives exactly the tasks of the straightforward one.

Random tables (format versions 1-3, every partition transform kind, float partitions with
-0.0 and NaN, ADDED / EXISTING / DELETED entries, position deletes, missing and partial
metrics, bounds that are NaN, of a promoted width or undecodable, unknown and zero record
counts) are planned with random filters by ``plan_files`` (cold, then warm from the manifest
cache, then with the cache disabled) and by ``planning_helpers.reference_plan``; the tasks must
be equal field by field (files, deletes, residuals, spec, sequence numbers), in order.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icefloe.errors import InvalidFilterError
from icefloe.expressions import (
    Expression,
    always_true,
    and_,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    or_,
    starts_with,
)
from icefloe.io import LocalFileIO
from icefloe.scan import plan_files
from icefloe.scan._manifest_cache import drop_caches
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import FileContent, ManifestContent, ManifestEntryStatus
from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)
from scan.planning_helpers import (
    EntrySpec,
    ManifestSpec,
    data_file,
    position_delete,
    reference_plan,
    task_signature,
    write_snapshot,
)

COLUMNS: list[tuple[int, str, IcebergType, bool]] = [
    (1, "id", LongType(), True),
    (2, "i", IntegerType(), False),
    (3, "f", FloatType(), False),
    (4, "d", DoubleType(), False),
    (5, "s", StringType(), False),
    (6, "dt", DateType(), False),
    (7, "ts", TimestampType(), False),
    (8, "dec", DecimalType(9, 2), False),
    (9, "b", BooleanType(), False),
]
SCHEMA = Schema(*(NestedField(fid, name, t, required=req) for fid, name, t, req in COLUMNS))
TYPES = {fid: t for fid, _, t, _ in COLUMNS}
NAMES = {fid: name for fid, name, _, _ in COLUMNS}

# Partition specs: (source id, transform) per field.
SPECS: list[list[tuple[int, str]]] = [
    [],
    [(2, "identity")],
    [(7, "day")],
    [(1, "bucket[4]")],
    [(5, "truncate[2]")],
    [(4, "identity")],
    [(5, "identity"), (6, "month")],
    [(8, "identity"), (3, "identity")],
    [(1, "truncate[10]"), (7, "hour")],
]

FLOATS = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), 3.0]
DAY0 = (dt.date(2024, 1, 1) - dt.date(1970, 1, 1)).days


def _value(fid: int) -> st.SearchStrategy[Any]:
    """Column values (icefloe representation) from a few values, so that filters and bounds
    meet often (equal values are where off-by-one mistakes hide)."""
    t = TYPES[fid]
    if isinstance(t, (LongType, IntegerType)):
        return st.integers(-4, 4)
    if isinstance(t, (FloatType, DoubleType)):
        return st.sampled_from([v for v in FLOATS if not math.isnan(v)] + [0.5, -1.0])
    if isinstance(t, StringType):
        return st.text(alphabet="ab", max_size=2)
    if isinstance(t, DateType):
        return st.integers(DAY0 - 2, DAY0 + 2)
    if isinstance(t, TimestampType):
        return st.integers(-3, 3).map(lambda v: DAY0 * 86_400_000_000 + v * 3_600_000_000)
    if isinstance(t, DecimalType):
        return st.integers(-4, 4).map(lambda v: Decimal(v * 25).scaleb(-2))
    if isinstance(t, BooleanType):
        return st.booleans()
    raise AssertionError(t)


def _partition_value(source: int, transform: str) -> st.SearchStrategy[Any]:
    if transform == "identity":
        if isinstance(TYPES[source], (FloatType, DoubleType)):
            return st.sampled_from([*FLOATS, None])
        return st.one_of(st.none(), _value(source))
    if transform.startswith("bucket"):
        return st.one_of(st.none(), st.integers(0, 3))
    if transform.startswith("truncate"):
        if isinstance(TYPES[source], StringType):
            return st.one_of(st.none(), st.text(alphabet="abc", max_size=2))
        return st.one_of(st.none(), st.integers(-3, 3).map(lambda v: v * 10))
    if transform == "day":
        return st.one_of(st.none(), st.integers(DAY0 - 2, DAY0 + 2))
    if transform == "month":
        return st.one_of(st.none(), st.integers(645, 650))
    if transform == "hour":
        return st.one_of(st.none(), st.integers(DAY0 * 24 - 5, DAY0 * 24 + 5))
    raise AssertionError(transform)


@st.composite
def _bound(draw: st.DrawFn, fid: int) -> bytes:
    t = TYPES[fid]
    kind = draw(st.sampled_from(["value"] * 8 + ["garbage", "nan", "narrow"]))
    if kind == "garbage":
        return b"\x07\x01\x02"
    if kind == "nan" and isinstance(t, (FloatType, DoubleType)):
        return to_bytes(t, float("nan"))
    if kind == "narrow" and isinstance(t, (LongType, DoubleType)):
        # A bound written before the column was promoted from int / float.
        value = draw(st.integers(-4, 4))
        return (
            to_bytes(IntegerType(), value) if isinstance(t, LongType) else to_bytes(FloatType(), value + 0.5)
        )
    return to_bytes(t, draw(_value(fid)))


@st.composite
def _metrics(draw: st.DrawFn) -> dict[str, Any]:
    columns = draw(st.lists(st.sampled_from(sorted(TYPES)), unique=True, max_size=5))
    maps: dict[str, Any] = {}
    for name in ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds"):
        if draw(st.integers(0, 5)) == 0:
            continue  # the whole map is missing
        chosen = [c for c in columns if draw(st.integers(0, 4))]
        if name == "nan_value_counts":
            chosen = [c for c in chosen if isinstance(TYPES[c], (FloatType, DoubleType))]
        if name.endswith("bounds"):
            maps[name] = {c: draw(_bound(c)) for c in chosen}
        else:
            maps[name] = {c: draw(st.integers(0, 12)) for c in chosen}
    if draw(st.booleans()):
        maps["column_sizes"] = {c: draw(st.integers(1, 10**6)) for c in columns}
    return maps


@st.composite
def _table(draw: st.DrawFn) -> tuple[int, list[tuple[int, str]], list[ManifestSpec]]:
    format_version = draw(st.sampled_from([1, 2, 3]))
    spec_fields = draw(st.sampled_from(SPECS))
    counter = itertools.count()
    manifests = []
    for _ in range(draw(st.integers(1, 4))):
        entries = []
        for _ in range(draw(st.integers(0, 6))):
            partition = tuple(draw(_partition_value(s, t)) for s, t in spec_fields)
            records = draw(st.sampled_from([0, -1, 1, 5, 10, 100]))
            file = data_file(f"/data/f{next(counter)}.parquet", partition, records, **draw(_metrics()))
            if draw(st.booleans()):
                file = file.copy(split_offsets=(4, 100), sort_order_id=0, key_metadata=b"k")
            status = draw(st.sampled_from(list(ManifestEntryStatus)))
            if format_version == 1 or status == ManifestEntryStatus.ADDED:
                seq = None if format_version == 1 or draw(st.booleans()) else draw(st.integers(0, 3))
                entries.append(EntrySpec(file, ManifestEntryStatus.ADDED, data_sequence_number=seq))
            else:
                seq = draw(st.integers(0, 3))
                entries.append(EntrySpec(file, status, 77, seq, seq))
        manifests.append(ManifestSpec(tuple(entries), codec=draw(st.sampled_from(["gzip", "uncompressed"]))))
    if format_version >= 2 and draw(st.booleans()):
        deletes = []
        for _ in range(draw(st.integers(1, 3))):
            partition = tuple(draw(_partition_value(s, t)) for s, t in spec_fields)
            referenced = draw(st.one_of(st.none(), st.sampled_from(["/data/f0.parquet", "/data/f1.parquet"])))
            delete = position_delete(
                f"/data/d{next(counter)}.parquet", partition, referenced_data_file=referenced
            )
            deletes.append(EntrySpec(delete, ManifestEntryStatus.ADDED))
        manifests.insert(
            draw(st.integers(0, len(manifests))), ManifestSpec(tuple(deletes), ManifestContent.DELETES)
        )
    return format_version, spec_fields, manifests


@st.composite
def _predicate(draw: st.DrawFn) -> Expression:
    fid = draw(st.sampled_from(sorted(TYPES)))
    name, t = NAMES[fid], TYPES[fid]
    kinds = ["lt", "lt_eq", "gt", "gt_eq", "eq", "not_eq", "in", "not_in", "is_null", "not_null"]
    if isinstance(t, (FloatType, DoubleType)):
        kinds += ["is_nan", "not_nan"]
    if isinstance(t, StringType):
        kinds += ["starts_with", "not_starts_with"]
    if isinstance(t, BooleanType):
        kinds = ["eq", "not_eq", "is_null", "not_null"]
    kind = draw(st.sampled_from(kinds))
    value = draw(_value(fid))
    if isinstance(t, DateType):
        value = dt.date(1970, 1, 1) + dt.timedelta(days=value)
    builders = {
        "lt": less_than,
        "lt_eq": less_than_or_equal,
        "gt": greater_than,
        "gt_eq": greater_than_or_equal,
        "eq": equal,
        "not_eq": not_equal,
        "starts_with": starts_with,
        "not_starts_with": not_starts_with,
    }
    if kind in builders:
        return builders[kind](name, value)
    if kind in ("in", "not_in"):
        values = draw(st.lists(_value(fid), min_size=2, max_size=4, unique_by=repr))
        if isinstance(t, DateType):
            values = [dt.date(1970, 1, 1) + dt.timedelta(days=v) for v in values]
        return (is_in if kind == "in" else not_in)(name, values)
    return {"is_null": is_null, "not_null": not_null, "is_nan": is_nan, "not_nan": not_nan}[kind](name)


def _filters() -> st.SearchStrategy[Expression]:
    return st.recursive(
        _predicate(),
        lambda children: st.one_of(
            st.tuples(children, children).map(lambda p: and_(*p)),
            st.tuples(children, children).map(lambda p: or_(*p)),
            children.map(not_),
        ),
        max_leaves=4,
    )


def _spec(fields: list[tuple[int, str]]) -> PartitionSpec:
    return PartitionSpec(
        tuple(
            PartitionField(source, 1000 + k, parse_transform(transform), f"p{k}")
            for k, (source, transform) in enumerate(fields)
        )
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.slow
@given(
    table=_table(), filters=st.lists(st.one_of(st.just(always_true()), _filters()), min_size=1, max_size=3)
)
def test_fast_planner_equals_reference(
    tmp_path_factory: pytest.TempPathFactory, table: Any, filters: list[Expression]
) -> None:
    format_version, spec_fields, manifests = table
    io = LocalFileIO()
    folder = tmp_path_factory.mktemp("t")
    metadata, snapshot = write_snapshot(
        folder, io, SCHEMA, _spec(spec_fields), manifests, format_version=format_version
    )
    uncached = LocalFileIO({"io.manifest.cache-enabled": "false"})
    for row_filter in filters:
        try:
            expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, row_filter)]
        except InvalidFilterError:
            with pytest.raises(InvalidFilterError):
                plan_files(io, metadata, snapshot, row_filter)
            continue
        for run in ("cold-or-warm", "warm", "uncached"):
            planned = plan_files(uncached if run == "uncached" else io, metadata, snapshot, row_filter)
            assert [task_signature(t) for t in planned] == expected, (run, str(row_filter))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=_table(), row_filter=st.one_of(st.just(always_true()), _filters()), data=st.data())
def test_manifest_and_entry_filter_hooks_as_in_the_reference(
    tmp_path_factory: pytest.TempPathFactory, table: Any, row_filter: Expression, data: st.DataObject
) -> None:
    """The hooks of incremental scans: keep manifests by who added them, entries by status,
    snapshot and path."""
    format_version, spec_fields, manifests = table
    io = LocalFileIO()
    folder = tmp_path_factory.mktemp("t")
    metadata, snapshot = write_snapshot(
        folder, io, SCHEMA, _spec(spec_fields), manifests, format_version=format_version
    )
    added_by = data.draw(st.sets(st.integers(1000, 1004)))
    statuses = data.draw(st.sets(st.sampled_from(list(ManifestEntryStatus)), min_size=1))
    paths = data.draw(st.sets(st.sampled_from([f"/data/f{k}.parquet" for k in range(12)])))

    def manifest_filter(m: Any) -> bool:
        return m.added_snapshot_id in added_by

    def entry_filter(e: Any) -> bool:
        return (
            e.status in statuses
            and (not paths or e.data_file.file_path in paths)
            and e.snapshot_id is not None
        )

    try:
        expected = reference_plan(
            io, metadata, snapshot, row_filter, manifest_filter=manifest_filter, entry_filter=entry_filter
        )
    except InvalidFilterError:
        return
    for _ in range(2):  # cold, then from the cache
        planned = plan_files(
            io, metadata, snapshot, row_filter, manifest_filter=manifest_filter, entry_filter=entry_filter
        )
        assert [task_signature(t) for t in planned] == [task_signature(t) for t in expected]


def test_equal_on_a_float_partition_with_signed_zeros_and_nans(tmp_path: Path) -> None:
    """-0.0 and 0.0 (and NaNs) are distinct partitions: each file keeps its own value."""
    io = LocalFileIO()
    values = [0.0, -0.0, float("nan"), 0.0, -0.0, None]
    files = [EntrySpec(data_file(f"/data/{k}.parquet", (v,))) for k, v in enumerate(values)]
    metadata, snapshot = write_snapshot(
        tmp_path, io, SCHEMA, _spec([(4, "identity")]), [ManifestSpec(tuple(files))], format_version=2
    )
    drop_caches()
    for row_filter in (always_true(), equal("d", 0.0), is_nan("d"), not_nan("d"), is_null("d")):
        expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, row_filter)]
        for _ in range(2):  # cold, then from the cache
            assert [task_signature(t) for t in plan_files(io, metadata, snapshot, row_filter)] == expected
    planned = plan_files(io, metadata, snapshot)
    assert [repr(t.file.partition[0]) for t in planned] == ["0.0", "-0.0", "nan", "0.0", "-0.0", "None"]


def test_delete_files_attach_as_in_the_reference(tmp_path: Path) -> None:
    io = LocalFileIO()
    data = [EntrySpec(data_file(f"/data/f{k}.parquet", (k % 2,))) for k in range(4)]
    deletes = [
        EntrySpec(position_delete("/data/d0.parquet", (0,))),
        EntrySpec(position_delete("/data/d1.parquet", (1,), referenced_data_file="/data/f1.parquet")),
    ]
    metadata, snapshot = write_snapshot(
        tmp_path,
        io,
        SCHEMA,
        _spec([(2, "identity")]),
        [ManifestSpec(tuple(data)), ManifestSpec(tuple(deletes), ManifestContent.DELETES)],
        format_version=2,
    )
    planned = plan_files(io, metadata, snapshot)
    assert [task_signature(t) for t in planned] == [
        task_signature(t) for t in reference_plan(io, metadata, snapshot)
    ]
    deletes_by_file = {t.file.file_path: [d.file_path for d in t.deletes] for t in planned}
    assert deletes_by_file == {
        "/data/f0.parquet": ["/data/d0.parquet"],
        "/data/f1.parquet": ["/data/d1.parquet"],
        "/data/f2.parquet": ["/data/d0.parquet"],
        "/data/f3.parquet": [],
    }
    assert all(d.content == FileContent.POSITION_DELETES for t in planned for d in t.deletes)


def test_manifests_of_two_partition_specs(tmp_path: Path) -> None:
    """Each manifest is filtered with its own spec's projection and residuals."""
    io = LocalFileIO()
    by_id = [EntrySpec(data_file(f"/data/a{k}.parquet", (k % 4,), 10, **_id_bounds(k))) for k in range(8)]
    by_day = [
        EntrySpec(data_file(f"/data/b{k}.parquet", (DAY0 - 1 + k % 3,), 10, **_id_bounds(k)))
        for k in range(8)
    ]
    metadata, snapshot = write_snapshot(
        tmp_path,
        io,
        SCHEMA,
        _spec([(1, "bucket[4]")]),
        [ManifestSpec(tuple(by_id), spec_id=0), ManifestSpec(tuple(by_day), spec_id=1)],
        format_version=2,
        other_specs=(dataclasses.replace(_spec([(7, "day")]), spec_id=1),),
    )
    filters = [
        always_true(),
        equal("id", 3),
        less_than("ts", dt.datetime(2024, 1, 1)),
        or_(equal("id", 2), greater_than_or_equal("ts", dt.datetime(2024, 1, 2))),
    ]
    for row_filter in filters:
        expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, row_filter)]
        assert expected  # every filter keeps some files
        for _ in range(2):
            assert [task_signature(t) for t in plan_files(io, metadata, snapshot, row_filter)] == expected
    specs = {t.spec.spec_id for t in plan_files(io, metadata, snapshot)}
    assert specs == {0, 1}


def _id_bounds(k: int) -> dict[str, Any]:
    return {
        "value_counts": {1: 10},
        "null_value_counts": {1: 0},
        "lower_bounds": {1: to_bytes(LongType(), k)},
        "upper_bounds": {1: to_bytes(LongType(), k + 1)},
    }


def test_filters_equal_but_for_a_signed_zero_are_planned_apart(tmp_path: Path) -> None:
    """Compiled filters are reused by later plans; ``d <= -0.0`` equals ``d <= 0.0`` in Python
    but prunes differently (-0.0 sorts before 0.0), so neither may be served for the other."""
    io = LocalFileIO()
    files = [
        EntrySpec(
            data_file(
                f"/data/z{k}.parquet",
                (),
                10,
                value_counts={4: 10},
                null_value_counts={4: 0},
                nan_value_counts={4: 0},
                lower_bounds={4: to_bytes(DoubleType(), lo)},
                upper_bounds={4: to_bytes(DoubleType(), hi)},
            )
        )
        for k, (lo, hi) in enumerate([(0.0, 1.0), (-1.0, -0.0), (-0.0, -0.0), (0.0, 0.0)])
    ]
    metadata, snapshot = write_snapshot(
        tmp_path, io, SCHEMA, _spec([]), [ManifestSpec(tuple(files))], format_version=2
    )
    for zero in (0.0, -0.0, 0.0, -0.0):
        for predicate in (less_than_or_equal, less_than, greater_than, greater_than_or_equal, equal):
            row_filter = predicate("d", zero)
            expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, row_filter)]
            planned = plan_files(io, metadata, snapshot, row_filter)
            assert [task_signature(t) for t in planned] == expected, f"{row_filter} ({zero!r})"


def test_uniform_numeric_bounds_as_in_the_reference(tmp_path: Path) -> None:
    """Every entry with the same columns and 8-byte bounds (the fast path that reads a column
    of bounds straight out of the manifest's bytes), NaN and signed-zero bounds included."""
    io = LocalFileIO()
    doubles = [(-1.0, 2.0), (float("nan"), 1.0), (-0.0, 0.0), (0.5, float("nan")), (3.0, 4.0)]
    files = [
        EntrySpec(
            data_file(
                f"/data/u{k}.parquet",
                (),
                10 if k != 3 else 0,
                value_counts={1: 10, 4: 10},
                null_value_counts={1: 0, 4: k % 2},
                nan_value_counts={1: 0, 4: 1 if k == 1 else 0},
                lower_bounds={1: to_bytes(LongType(), k), 4: to_bytes(DoubleType(), lo)},
                upper_bounds={1: to_bytes(LongType(), k + 2), 4: to_bytes(DoubleType(), hi)},
            )
        )
        for k, (lo, hi) in enumerate(doubles)
    ]
    metadata, snapshot = write_snapshot(
        tmp_path, io, SCHEMA, _spec([]), [ManifestSpec(tuple(files))], format_version=2
    )
    filters = [
        less_than("id", 2),
        greater_than("id", 4),
        equal("id", 3),
        not_equal("d", 0.0),
        greater_than("d", 1.5),
        less_than_or_equal("d", -0.0),
        is_in("id", [0, 6]),
        not_in("d", [3.0, 4.0]),
        is_nan("d"),
        not_nan("d"),
        is_null("d"),
    ]
    for row_filter in filters:
        expected = [task_signature(t) for t in reference_plan(io, metadata, snapshot, row_filter)]
        for _ in range(2):
            planned = plan_files(io, metadata, snapshot, row_filter)
            assert [task_signature(t) for t in planned] == expected, str(row_filter)
