"""UpdateSpec: partition spec evolution with Java's BaseUpdatePartitionSpec semantics.

The first part mirrors Java's ``TestUpdatePartitionSpec`` (one update on a table whose only
spec is ``PARTITIONED`` or unpartitioned), the second ``TestTableUpdatePartitionSpec``
(committed evolutions of a table partitioned by ``bucket(16, data)``), then commits, retries,
transactions, and writes and scans across several specs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationError, ValidationException
from icefloe.expressions import ref
from icefloe.serde.updates_json import (
    requirement_from_json,
    requirement_to_json,
    update_from_json,
    update_to_json,
)
from icefloe.spec.builder import MetadataBuilder
from icefloe.spec.partitioning import PartitionField, PartitionSpec, PartitionSpecBuilder
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import BucketTransform, DayTransform, UnknownTransform
from icefloe.spec.types import LongType, NestedField, StringType, TimestamptzType
from icefloe.spec.updates import AssertDefaultSpecId, AssertLastAssignedPartitionId

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}

SCHEMA = Schema(
    NestedField(1, "id", LongType(), True),
    NestedField(2, "ts", TimestamptzType(), True),
    NestedField(3, "category", StringType(), True),
    NestedField(4, "data", StringType()),
)

Field = tuple[int, int, str, str]  # (source id, field id, transform, name)


def _partitioned() -> PartitionSpec:
    return PartitionSpecBuilder(SCHEMA).identity("category").day("ts").bucket("id", 16, "shard").build()


def _table(catalog: Catalog, version: int, spec: PartitionSpec | list[str] | None = None) -> Table:
    return catalog.create_table(
        "db.t", SCHEMA, partition_by=spec, properties={"format-version": str(version), **FAST_RETRIES}
    )


def _fields(spec: PartitionSpec) -> list[Field]:
    return [(f.source_id, f.field_id, str(f.transform), f.name) for f in spec.fields]


def _by_version(version: int, v1: list[Field], v2: list[Field]) -> list[Field]:
    return v1 if version == 1 else v2


@pytest.fixture
def unpartitioned(memory_catalog: Catalog, format_version: int) -> Table:
    return _table(memory_catalog, format_version)


@pytest.fixture
def partitioned(memory_catalog: Catalog, format_version: int) -> Table:
    return _table(memory_catalog, format_version, _partitioned())


CATEGORY = (3, 1000, "identity", "category")
TS_DAY = (2, 1001, "day", "ts_day")
SHARD = (1, 1002, "bucket[16]", "shard")


# ---- adding (Java TestUpdatePartitionSpec) ---------------------------------------------------


@pytest.mark.parametrize("term", ["category", ref("category"), "`category`", "identity(category)"])
def test_add_identity(unpartitioned: Table, term: Any) -> None:
    assert _fields(unpartitioned.update_spec().add_field(term).apply()) == [CATEGORY]


@pytest.mark.parametrize("transform", ["year", "month", "day", "hour"])
def test_add_time_transform(unpartitioned: Table, transform: str) -> None:
    spec = unpartitioned.update_spec().add_field(f"{transform}(ts)").apply()
    assert _fields(spec) == [(2, 1000, transform, f"ts_{transform}")]


def test_add_bucket_and_truncate_default_names_carry_the_width(unpartitioned: Table) -> None:
    # Java's update names differ from the builder's ("id_bucket") so that widths do not collide.
    assert _fields(unpartitioned.update_spec().add_field("bucket(16, id)").apply()) == [
        (1, 1000, "bucket[16]", "id_bucket_16")
    ]
    assert _fields(unpartitioned.update_spec().add_field("truncate(4, data)").apply()) == [
        (4, 1000, "truncate[4]", "data_trunc_4")
    ]


def test_add_named_field(unpartitioned: Table) -> None:
    assert _fields(unpartitioned.update_spec().add_field("bucket(16, id)", name="shard").apply()) == [
        (1, 1000, "bucket[16]", "shard")
    ]


@pytest.mark.parametrize(
    ("column", "transform"),
    [
        ("id", "bucket[16]"),
        ("id", "bucket(16)"),
        ("id", "BUCKET[16]"),
        ("id", BucketTransform(16)),
        (ref("id"), "bucket[16]"),
    ],
)
def test_column_with_explicit_transform(unpartitioned: Table, column: Any, transform: Any) -> None:
    spec = unpartitioned.update_spec().add_field(column, transform, "shard").apply()
    assert _fields(spec) == [(1, 1000, "bucket[16]", "shard")]


@pytest.mark.parametrize("transform", ["day", "days", DayTransform()])
def test_time_transform_spellings(unpartitioned: Table, transform: Any) -> None:
    assert _fields(unpartitioned.update_spec().add_field("ts", transform).apply()) == [
        (2, 1000, "day", "ts_day")
    ]


def test_add_to_existing(partitioned: Table) -> None:
    spec = partitioned.update_spec().add_field("truncate(4, data)").apply()
    assert _fields(spec) == [CATEGORY, TS_DAY, SHARD, (4, 1003, "truncate[4]", "data_trunc_4")]


def test_multiple_adds(unpartitioned: Table) -> None:
    spec = (
        unpartitioned.update_spec()
        .add_field("category")
        .add_field("day(ts)")
        .add_field("bucket(16, id)", name="shard")
        .add_field("truncate(4, data)", name="prefix")
        .apply()
    )
    assert _fields(spec) == [CATEGORY, TS_DAY, SHARD, (4, 1003, "truncate[4]", "prefix")]


def test_add_hour_next_to_an_existing_day(unpartitioned: Table) -> None:
    # Allowed when evolving (not when building a spec) so that existing specs keep working.
    unpartitioned.update_spec().add_field("day(ts)").commit()
    spec = unpartitioned.update_spec().add_field("hour(ts)").apply()
    assert _fields(spec) == [(2, 1000, "day", "ts_day"), (2, 1001, "hour", "ts_hour")]


def test_add_multiple_buckets(unpartitioned: Table) -> None:
    unpartitioned.update_spec().add_field("bucket(16, id)").commit()
    spec = unpartitioned.update_spec().add_field("bucket(8, id)").apply()
    assert _fields(spec) == [(1, 1000, "bucket[16]", "id_bucket_16"), (1, 1001, "bucket[8]", "id_bucket_8")]


def test_add_void_field(unpartitioned: Table) -> None:
    assert _fields(unpartitioned.update_spec().add_field("data", "void").apply()) == [
        (4, 1000, "void", "data_null")
    ]


# ---- removing and renaming -------------------------------------------------------------------


@pytest.mark.parametrize("how", ["category", ref("category"), "identity(category)"])
def test_remove_identity(partitioned: Table, format_version: int, how: Any) -> None:
    spec = partitioned.update_spec().remove_field(how).apply()
    assert _fields(spec) == _by_version(
        format_version, [(3, 1000, "void", "category"), TS_DAY, SHARD], [TS_DAY, SHARD]
    )


@pytest.mark.parametrize("how", ["shard", "bucket(16, id)"])
def test_remove_bucket(partitioned: Table, format_version: int, how: str) -> None:
    spec = partitioned.update_spec().remove_field(how).apply()
    assert _fields(spec) == _by_version(
        format_version, [CATEGORY, TS_DAY, (1, 1002, "void", "shard")], [CATEGORY, TS_DAY]
    )


@pytest.mark.parametrize("how", ["ts_day", "day(ts)", "days(ts)"])
def test_remove_day(partitioned: Table, format_version: int, how: str) -> None:
    spec = partitioned.update_spec().remove_field(how).apply()
    assert _fields(spec) == _by_version(
        format_version, [CATEGORY, (2, 1001, "void", "ts_day"), SHARD], [CATEGORY, SHARD]
    )


def test_rename(partitioned: Table) -> None:
    spec = partitioned.update_spec().rename_field("shard", "id_bucket").apply()
    assert _fields(spec) == [CATEGORY, TS_DAY, (1, 1002, "bucket[16]", "id_bucket")]


def test_multiple_changes(partitioned: Table, format_version: int) -> None:
    spec = (
        partitioned.update_spec()
        .rename_field("shard", "id_bucket")
        .remove_field("day(ts)")
        .add_field("truncate(4, data)", name="prefix")
        .apply()
    )
    renamed, prefix = (1, 1002, "bucket[16]", "id_bucket"), (4, 1003, "truncate[4]", "prefix")
    assert _fields(spec) == _by_version(
        format_version, [CATEGORY, (2, 1001, "void", "ts_day"), renamed, prefix], [CATEGORY, renamed, prefix]
    )


@pytest.mark.parametrize("name", ["shard", None])
def test_removing_and_re_adding_a_field_changes_nothing(partitioned: Table, name: str | None) -> None:
    update = partitioned.update_spec().remove_field("shard").add_field("bucket(16, id)", name=name)
    assert update.apply() == partitioned.spec()
    update.commit()
    assert len(partitioned.specs()) == 1


def test_removing_and_re_adding_under_a_new_name_renames(partitioned: Table) -> None:
    spec = (
        partitioned.update_spec().remove_field("shard").add_field("bucket(16, id)", name="new_shard").apply()
    )
    assert _fields(spec) == [CATEGORY, TS_DAY, (1, 1002, "bucket[16]", "new_shard")]


def test_remove_and_add_a_different_transform_under_the_same_name(
    memory_catalog: Catalog, format_version: int
) -> None:
    spec = PartitionSpecBuilder(SCHEMA).month("ts", "ts_transformed").build()
    table = _table(memory_catalog, format_version, spec)
    spec = (
        table.update_spec().remove_field("ts_transformed").add_field("day(ts)", name="ts_transformed").apply()
    )
    assert _fields(spec) == _by_version(
        format_version,
        [(2, 1000, "void", "ts_transformed_1000"), (2, 1001, "day", "ts_transformed")],
        [(2, 1001, "day", "ts_transformed")],
    )


def test_remove_and_add_many_times(unpartitioned: Table, format_version: int) -> None:
    table = unpartitioned
    table.update_spec().add_field("day(ts)", name="ts_date").commit()
    table.update_spec().remove_field("day(ts)").commit()
    table.update_spec().add_field("day(ts)", name="ts_date").commit()
    table.update_spec().remove_field("day(ts)").commit()
    table.update_spec().add_field("month(ts)").commit()
    table.update_spec().rename_field("ts_month", "ts_date").commit()
    spec = table.spec()
    if format_version == 1:
        # Each removal leaves a void field; each addition moves the void name aside.
        assert [str(f.transform) for f in spec.fields] == ["void", "void", "month"]
        assert [f.name for f in spec.fields] == ["ts_date_1000", "ts_date_1001", "ts_date"]
        assert [f.field_id for f in spec.fields] == [1000, 1001, 1002]
    else:
        # The re-added day field got its old id back; the month field is new.
        assert _fields(spec) == [(2, 1001, "month", "ts_date")]
        assert table.metadata.last_partition_id == 1001


# ---- refused changes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda u: u.add_field("truncate(4, data)", name="prefix").remove_field("prefix"),
            "cannot delete newly added",
        ),
        (
            lambda u: u.add_field("truncate(4, data)", name="prefix").remove_field("truncate(4, data)"),
            "cannot delete newly added",
        ),
        (
            lambda u: u.add_field("truncate(4, data)", name="prefix").add_field("truncate(4, data)"),
            "cannot add duplicate partition field",
        ),
        (
            lambda u: u.add_field("truncate(4, data)", name="prefix").add_field(
                "truncate(6, data)", name="prefix"
            ),
            "cannot add duplicate partition field",
        ),
        (lambda u: u.add_field("category"), "cannot add duplicate partition field"),
        (lambda u: u.add_field(ref("category")), "cannot add duplicate partition field"),
        (lambda u: u.add_field("bucket(16, id)"), "cannot add duplicate partition field"),
        (lambda u: u.add_field("bucket(16, id)", name="b16"), "cannot add duplicate partition field"),
        (lambda u: u.add_field("hour(ts)").add_field("month(ts)"), "cannot add redundant partition field"),
        (lambda u: u.remove_field("moon"), "cannot find partition field to remove"),
        (lambda u: u.remove_field("hour(ts)"), "cannot find partition field to remove"),
        (lambda u: u.remove_field("id"), "cannot find partition field to remove"),
        (lambda u: u.rename_field("shake", "seal"), "cannot find partition field to rename: shake"),
        (
            lambda u: u.add_field("truncate(4, data)", name="data_trunc").rename_field(
                "data_trunc", "prefix"
            ),
            "cannot rename newly added partition field: data_trunc",
        ),
        (
            lambda u: u.rename_field("shard", "id_bucket").remove_field("bucket(16, id)"),
            "cannot rename and delete partition field: shard",
        ),
        (
            lambda u: u.remove_field("bucket(16, id)").rename_field("shard", "id_bucket"),
            "cannot delete and rename partition field: shard",
        ),
        (lambda u: u.add_field("nope"), "cannot find source column 'nope'"),
        (lambda u: u.add_field("day(category)"), "cannot partition column 'category' of type string by day"),
        (lambda u: u.add_field("zorder(id)"), "unknown partition transform"),
        (lambda u: u.add_field("id", "zorder"), "unknown partition transform"),
        (lambda u: u.add_field("bucket(0, id)"), "invalid number of buckets"),
        (lambda u: u.add_field("bucket(id)"), "needs a width"),
        (lambda u: u.add_field(42), "a partition term must be"),
        (lambda u: u.add_field("truncate(4, data)", name=""), "non-empty string"),
        (
            lambda u: u.add_field("truncate(4, data)", name="ts_day"),
            "cannot add duplicate partition field name",
        ),
    ],
)
def test_refused_changes(partitioned: Table, build: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=f"(?i){message}"):
        build(partitioned.update_spec())


def test_redundant_time_partitions_added_together_are_refused(unpartitioned: Table) -> None:
    with pytest.raises(ValidationError, match="redundant partition field ts_hour"):
        unpartitioned.update_spec().add_field("day(ts)").add_field("hour(ts)")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        # Only an identity field may share its own column's name.
        (lambda u: u.add_field("bucket(4, id)", name="data"), "name that exists in schema: 'data'"),
        (lambda u: u.add_field("bucket(4, id)", name="id"), "name that exists in schema: 'id'"),
        (lambda u: u.add_field("data", name="id"), "identity partition sourced from different field"),
        (lambda u: u.rename_field("shard", "data"), "name that exists in schema: 'data'"),
        (lambda u: u.rename_field("shard", "ts_day"), "more than once: 'ts_day'"),
    ],
)
def test_names_that_conflict_are_refused_when_the_spec_is_built(
    partitioned: Table, build: Any, message: str
) -> None:
    update = build(partitioned.update_spec())
    with pytest.raises(ValidationError, match=message):
        update.apply()
    with pytest.raises(ValidationError, match=message):
        update.commit()
    assert len(partitioned.specs()) == 1


def test_identity_field_may_keep_its_column_name(unpartitioned: Table) -> None:
    assert _fields(unpartitioned.update_spec().add_field("data", name="data").apply()) == [
        (4, 1000, "identity", "data")
    ]


def test_a_refused_call_changes_nothing(partitioned: Table) -> None:
    update = partitioned.update_spec().add_field("truncate(4, data)")
    with pytest.raises(ValidationError):
        update.add_field("hour(ts)").add_field("month(ts)")  # the first call is kept, the second refused
    with pytest.raises(ValidationError):
        update.add_field("bucket(8, id)", name="ts_day")  # name taken: refused after its id was drawn
    spec = update.add_field("bucket(8, id)").apply()
    assert _fields(spec) == [
        CATEGORY,
        TS_DAY,
        SHARD,
        (4, 1003, "truncate[4]", "data_trunc_4"),
        (2, 1004, "hour", "ts_hour"),
        (1, 1005, "bucket[8]", "id_bucket_8"),
    ]


def test_case_insensitive_terms(unpartitioned: Table) -> None:
    with pytest.raises(ValidationError, match="cannot find source column 'ID'"):
        unpartitioned.update_spec().add_field("bucket(4, ID)")
    spec = (
        unpartitioned.update_spec()
        .case_sensitive(False)
        .add_field("bucket(4, ID)")
        .add_field("Day(TS)")
        .apply()
    )
    # Default names use the schema's spelling of the column.
    assert _fields(spec) == [(1, 1000, "bucket[4]", "id_bucket_4"), (2, 1001, "day", "ts_day")]


def test_a_spec_with_an_unknown_transform_cannot_be_evolved(partitioned: Table) -> None:
    metadata = partitioned.metadata
    spec = partitioned.spec()
    odd = dataclasses.replace(
        spec, fields=(*spec.fields, PartitionField(4, 1003, UnknownTransform("zorder"), "z"))
    )
    partitioned._set_state(
        dataclasses.replace(metadata, partition_specs=(odd,), last_partition_id=1003),
        partitioned.metadata_location,
    )
    with pytest.raises(ValidationError, match="unknown transform: 1003: z: zorder"):
        partitioned.update_spec()


# ---- committed evolution (Java TestTableUpdatePartitionSpec) -----------------------------------

DATA_BUCKET = (4, 1000, "bucket[16]", "data_bucket")


@pytest.fixture
def by_data(memory_catalog: Catalog, format_version: int) -> Table:
    table = _table(memory_catalog, format_version, ["bucket(16, data)"])
    assert _fields(table.spec()) == [DATA_BUCKET]
    return table


def test_commit_updated_spec(by_data: Table, format_version: int) -> None:
    by_data.update_spec().add_field("bucket(8, id)").commit()
    assert by_data.spec().spec_id == 1
    assert _fields(by_data.spec()) == [DATA_BUCKET, (1, 1001, "bucket[8]", "id_bucket_8")]
    assert by_data.metadata.last_partition_id == 1001

    by_data.update_spec().remove_field("id_bucket_8").remove_field("data_bucket").add_field(
        "truncate(8, data)"
    ).commit()
    assert by_data.spec().spec_id == 2
    assert _fields(by_data.spec()) == _by_version(
        format_version,
        [
            (4, 1000, "void", "data_bucket"),
            (1, 1001, "void", "id_bucket_8"),
            (4, 1002, "truncate[8]", "data_trunc_8"),
        ],
        [(4, 1002, "truncate[8]", "data_trunc_8")],
    )
    assert by_data.metadata.last_partition_id == 1002


def test_noop_commits_change_nothing(by_data: Table) -> None:
    before = by_data.metadata
    update = by_data.update_spec()
    assert update._produce(before).updates == ()
    update.commit()
    by_data.update_spec().rename_field("data_bucket", "data_bucket").commit()
    assert by_data.metadata.partition_specs == before.partition_specs
    assert by_data.metadata.default_spec_id == 0


def test_rename_field_and_add(by_data: Table) -> None:
    by_data.update_spec().rename_field("data_bucket", "data_partition").add_field("bucket(8, id)").commit()
    assert by_data.spec().spec_id == 1
    assert _fields(by_data.spec()) == [
        (4, 1000, "bucket[16]", "data_partition"),
        (1, 1001, "bucket[8]", "id_bucket_8"),
    ]
    by_data.update_spec().add_field("truncate(4, id)").rename_field("data_partition", "data_bucket").commit()
    assert by_data.spec().spec_id == 2
    assert _fields(by_data.spec()) == [
        DATA_BUCKET,
        (1, 1001, "bucket[8]", "id_bucket_8"),
        (1, 1002, "truncate[4]", "id_trunc_4"),
    ]
    assert by_data.metadata.last_partition_id == 1002


def test_rename_only_evolution(by_data: Table) -> None:
    by_data.update_spec().rename_field("data_bucket", "data_partition").commit()
    assert by_data.spec().spec_id == 1
    assert _fields(by_data.spec()) == [(4, 1000, "bucket[16]", "data_partition")]
    assert by_data.metadata.last_partition_id == 1000


def test_remove_and_add_field(by_data: Table, format_version: int) -> None:
    by_data.update_spec().remove_field("data_bucket").add_field("bucket(8, id)").commit()
    assert _fields(by_data.spec()) == _by_version(
        format_version,
        [(4, 1000, "void", "data_bucket"), (1, 1001, "bucket[8]", "id_bucket_8")],
        [(1, 1001, "bucket[8]", "id_bucket_8")],
    )
    assert by_data.metadata.last_partition_id == 1001


def test_remove_and_add_year_field_in_one_update_keeps_the_spec(by_data: Table) -> None:
    by_data.update_schema().add_column("year_field", "date").commit()
    by_data.update_spec().add_field("year(year_field)").commit()
    expected = [DATA_BUCKET, (5, 1001, "year", "year_field_year")]
    assert _fields(by_data.spec()) == expected
    by_data.update_spec().remove_field("year_field_year").add_field("year(year_field)").commit()
    assert by_data.spec().spec_id == 1
    assert _fields(by_data.spec()) == expected
    assert len(by_data.specs()) == 2


def test_add_and_remove_field(by_data: Table, format_version: int) -> None:
    by_data.update_spec().add_field("bucket(6, data)").remove_field("data_bucket").commit()
    assert _fields(by_data.spec()) == _by_version(
        format_version,
        [(4, 1000, "void", "data_bucket"), (4, 1001, "bucket[6]", "data_bucket_6")],
        [(4, 1001, "bucket[6]", "data_bucket_6")],
    )


def test_re_adding_a_field_in_a_later_update(by_data: Table, format_version: int) -> None:
    by_data.update_spec().remove_field("data_bucket").commit()
    by_data.update_spec().add_field("bucket(16, data)").commit()
    if format_version == 1:
        assert by_data.spec().spec_id == 2
        assert _fields(by_data.spec()) == [
            (4, 1000, "void", "data_bucket"),
            (4, 1001, "bucket[16]", "data_bucket_16"),
        ]
        assert by_data.metadata.last_partition_id == 1001
    else:
        # The field of spec 0 comes back with its id and name: spec 0 is the default again.
        assert by_data.spec().spec_id == 0
        assert _fields(by_data.spec()) == [DATA_BUCKET]
        assert by_data.metadata.last_partition_id == 1000
        assert len(by_data.specs()) == 2


def test_add_after_the_last_field_was_removed(by_data: Table, format_version: int) -> None:
    by_data.update_spec().remove_field("data_bucket").commit()
    assert by_data.spec().spec_id == 1
    assert _fields(by_data.spec()) == _by_version(format_version, [(4, 1000, "void", "data_bucket")], [])
    assert by_data.metadata.last_partition_id == 1000
    by_data.update_spec().add_field("bucket(8, id)").commit()
    assert by_data.spec().spec_id == 2
    assert _fields(by_data.spec()) == _by_version(
        format_version,
        [(4, 1000, "void", "data_bucket"), (1, 1001, "bucket[8]", "id_bucket_8")],
        [(1, 1001, "bucket[8]", "id_bucket_8")],
    )
    assert by_data.metadata.last_partition_id == 1001


def test_add_non_default_spec(by_data: Table) -> None:
    original = by_data.spec()
    update = by_data.update_spec().add_field("id").add_non_default_spec()
    applied = update.apply()
    assert applied.spec_id == 1
    update.commit()
    assert by_data.spec() == original
    assert by_data.specs()[1] == applied
    assert _fields(by_data.specs()[1]) == [DATA_BUCKET, (1, 1001, "identity", "id")]
    assert by_data.metadata.last_partition_id == 1001
    # Making it the default later reuses it.
    by_data.update_spec().add_field("id").commit()
    assert by_data.spec().spec_id == 1
    assert len(by_data.specs()) == 2


def test_evolving_back_to_an_earlier_spec_reuses_its_id(by_data: Table, format_version: int) -> None:
    by_data.update_spec().rename_field("data_bucket", "b").commit()
    by_data.update_spec().rename_field("b", "data_bucket").commit()
    assert by_data.spec().spec_id == 0
    assert len(by_data.specs()) == 2
    assert by_data.metadata.default_spec_id == 0


def test_v2_reuses_field_ids_of_earlier_specs(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 2, ["category"])
    table.update_spec().add_field("day(ts)").add_field("bucket(4, id)").commit()  # 1001, 1002
    table.update_spec().remove_field("ts_day").rename_field("id_bucket_4", "shard").commit()
    table.update_spec().remove_field("shard").commit()
    assert _fields(table.spec()) == [CATEGORY]
    # Without a name: the earlier field's id and (latest) name.
    spec = table.update_spec().add_field("bucket(4, id)").add_field("day(ts)").apply()
    assert _fields(spec) == [CATEGORY, (1, 1002, "bucket[4]", "shard"), (2, 1001, "day", "ts_day")]
    # With another name: a fresh id.
    spec = table.update_spec().add_field("day(ts)", name="d").apply()
    assert _fields(spec) == [CATEGORY, (2, 1003, "day", "d")]
    # With a name an earlier field had: that field's id.
    spec = table.update_spec().add_field("bucket(4, id)", name="id_bucket_4").apply()
    assert _fields(spec) == [CATEGORY, (1, 1002, "bucket[4]", "id_bucket_4")]


def test_v1_void_fields_move_aside_for_new_names(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 1, ["day(ts)", "category"])
    table.update_spec().remove_field("ts_day").commit()
    assert _fields(table.spec()) == [(2, 1000, "void", "ts_day"), (3, 1001, "identity", "category")]
    table.update_spec().add_field("hour(ts)", name="ts_day").commit()
    assert _fields(table.spec()) == [
        (2, 1000, "void", "ts_day_1000"),
        (3, 1001, "identity", "category"),
        (2, 1002, "hour", "ts_day"),
    ]
    table.update_spec().remove_field("ts_day").commit()
    table.update_spec().rename_field("category", "ts_day").commit()
    assert [f.name for f in table.spec().fields] == ["ts_day_1000", "ts_day", "ts_day_1002"]


def test_remove_a_field_whose_column_was_dropped_later_in_v1(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 1, ["category", "truncate(2, data)"])
    table.update_spec().remove_field("data_trunc").commit()
    table.update_schema().delete_column("data").commit()
    table.update_spec().add_field("bucket(2, id)").commit()
    assert _fields(table.spec()) == [
        CATEGORY,
        (4, 1001, "void", "data_trunc"),
        (1, 1002, "bucket[2]", "id_bucket_2"),
    ]


def test_a_column_only_an_older_spec_uses_can_be_dropped_and_the_table_still_loads(
    catalog: Catalog, format_version: int
) -> None:
    """Java binds only the default spec checked on load: older specs may name dropped columns."""
    table = _table(catalog, format_version, ["category"])
    table.append(_data(0, 3))
    table.update_spec().remove_field("category").add_field("bucket(4, id)").commit()
    table.update_schema().delete_column("category").commit()
    table.append(_data(3, 3).drop_columns(["category"]))

    loaded = catalog.load_table("db.t")
    assert loaded.schema().find_field("category") is None
    assert loaded.specs()[0].fields[0].source_id == 3  # the dropped column
    assert _ids(loaded) == list(range(6))
    assert _ids(loaded, "id >= 2") == [2, 3, 4, 5]


def test_a_column_named_like_a_partition_field_of_another_column_is_refused(memory_catalog: Catalog) -> None:
    """Java refuses the schema (its specs no longer bind): a metadata file with it would not load."""
    table = _table(memory_catalog, 2, ["day(ts)"])
    with pytest.raises(ValidationError, match=r"partition field 'ts_day' of spec 0 .* column named 'ts_day'"):
        table.update_schema().add_column("ts_day", "int").commit()
    with pytest.raises(ValidationError, match="'ts_day'"):
        table.update_schema().rename_column("data", "ts_day").commit()
    assert table.schema().schema_id == 0
    # An identity field may keep its own column's name.
    table.update_spec().add_field("category").commit()
    table.update_schema().rename_column("category", "kind").commit()
    assert [f.name for f in table.spec().fields] == ["ts_day", "category"]


# ---- commits, retries and transactions -------------------------------------------------------


def test_commit_requirements(by_data: Table) -> None:
    changes = by_data.update_spec().add_field("id")._produce(by_data.metadata)
    assert list(changes.requirements) == [AssertDefaultSpecId(0), AssertLastAssignedPartitionId(1000)]


def test_changes_round_trip_through_rest_json(by_data: Table) -> None:
    # What a REST catalog receives: the updates and requirements as JSON.
    update = by_data.update_spec().remove_field("data_bucket").add_field("bucket(4, id)", name="shard")
    changes = update._produce(by_data.metadata)
    updates = [update_from_json(update_to_json(u)) for u in changes.updates]
    requirements = [requirement_from_json(requirement_to_json(r)) for r in changes.requirements]
    assert updates == list(changes.updates) and requirements == list(changes.requirements)
    for requirement in requirements:
        requirement.validate(by_data.metadata)
    result = MetadataBuilder(by_data.metadata).apply_all(updates).build()
    assert result.spec() == update.apply()


def test_a_committed_update_cannot_change(by_data: Table) -> None:
    update = by_data.update_spec().add_field("id")
    update.commit()
    with pytest.raises(ValidationError, match="already committed"):
        update.add_field("bucket(2, id)")
    with pytest.raises(ValidationError, match="already committed"):
        update.commit()


def test_concurrent_spec_changes_are_both_kept(memory_catalog: Catalog, format_version: int) -> None:
    table = _table(memory_catalog, format_version, ["bucket(16, data)"])
    stale = memory_catalog.load_table("db.t")
    table.update_spec().add_field("category").commit()
    update = stale.update_spec().add_field("bucket(4, id)").rename_field("data_bucket", "b")
    assert _fields(update.apply()) == [(4, 1000, "bucket[16]", "b"), (1, 1001, "bucket[4]", "id_bucket_4")]
    update.commit()  # the requirements fail; the retry replays on the fresh spec
    assert _fields(stale.spec()) == [
        (4, 1000, "bucket[16]", "b"),
        (3, 1001, "identity", "category"),
        (1, 1002, "bucket[4]", "id_bucket_4"),
    ]
    assert stale.metadata.last_partition_id == 1002
    assert memory_catalog.load_table("db.t").spec() == stale.spec()


def test_a_concurrent_conflicting_change_is_a_validation_exception(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 2, ["bucket(16, data)", "category"])
    stale = memory_catalog.load_table("db.t")
    table.update_spec().remove_field("category").commit()
    with pytest.raises(ValidationException, match="cannot find partition field to rename: category"):
        stale.update_spec().rename_field("category", "c").commit()
    stale = memory_catalog.load_table("db.t")
    table.update_spec().add_field("bucket(2, id)").commit()
    with pytest.raises(ValidationException, match="duplicate partition field"):
        stale.update_spec().add_field("bucket(2, id)").commit()
    assert len(memory_catalog.load_table("db.t").specs()) == 3


def test_commit_applies_to_the_table_as_it_is_at_commit(by_data: Table) -> None:
    update = by_data.update_spec().add_field("bucket(4, id)")
    by_data.update_spec().add_field("category").commit()  # the same table object moved on
    update.commit()
    assert [f.name for f in by_data.spec().fields] == ["data_bucket", "category", "id_bucket_4"]


def test_spec_change_and_append_in_one_transaction(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", SCHEMA, properties={"format-version": str(format_version)})
    table.append(_data(0, 3))
    txn = table.new_transaction()
    txn.update_spec().add_field("category").commit()
    txn.append(_data(3, 3))
    assert table.spec().is_unpartitioned  # nothing committed yet
    txn.commit_transaction()
    assert _fields(catalog.load_table("db.t").spec()) == [CATEGORY]
    specs = sorted(t.file.spec_id for t in table.new_scan().plan_files())
    assert specs == [0, 1, 1, 1]  # the appended rows were written with the new spec
    assert table.new_scan().count() == 6


# ---- writes and scans across specs -------------------------------------------------------------

BASE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _data(start: int, n: int) -> pa.Table:
    """Rows ``start .. start+n-1``: a day apart, categories a/b/c, data ``d<i>``."""
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array([BASE + dt.timedelta(days=i) for i in ids], pa.timestamp("us", tz="UTC")),
            "category": pa.array(["abc"[i % 3] for i in ids]),
            "data": pa.array([f"d{i}" for i in ids]),
        },
        schema=pa.schema(
            [
                pa.field("id", pa.int64(), nullable=False),
                pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False),
                pa.field("category", pa.string(), nullable=False),
                pa.field("data", pa.string()),
            ]
        ),
    )


def _ids(table: Table, where: str | None = None) -> list[int]:
    scan = table.new_scan() if where is None else table.new_scan().filter(where)
    return sorted(scan.to_arrow().column("id").to_pylist())


def _planned(table: Table, where: str) -> list[tuple[int, int]]:
    """(spec id, record count) of each planned file."""
    return sorted((t.file.spec_id, t.file.record_count) for t in table.new_scan().filter(where).plan_files())


@pytest.fixture
def evolved(catalog: Catalog, format_version: int) -> Table:
    """unpartitioned (ids 0-3) -> day(ts) (4-7) -> + bucket(4, id) (8-11) -> - day(ts) (12-15)."""
    table = catalog.create_table("db.t", SCHEMA, properties={"format-version": str(format_version)})
    table.append(_data(0, 4))
    table.update_spec().add_field("day(ts)").commit()
    table.append(_data(4, 4))
    table.update_spec().add_field("bucket(4, id)").commit()
    table.append(_data(8, 4))
    table.update_spec().remove_field("day(ts)").commit()
    table.append(_data(12, 4))
    return table


def test_writes_use_the_default_spec_of_their_time(evolved: Table, format_version: int) -> None:
    assert sorted(evolved.specs()) == [0, 1, 2, 3]
    by_spec: dict[int, list[Any]] = {}
    for task in evolved.new_scan().plan_files():
        by_spec.setdefault(task.file.spec_id, []).append(tuple(task.file.partition))
    assert by_spec[0] == [()]
    assert sorted(by_spec[1]) == [(19723 + i,) for i in range(4, 8)]  # days since epoch
    assert len(by_spec[2]) == 4 and all(day == 19723 + 8 + i for i, (day, _) in enumerate(sorted(by_spec[2])))
    if format_version == 1:
        assert all(day is None for day, _ in by_spec[3])  # the void field stays, always null
    else:
        assert all(len(p) == 1 for p in by_spec[3])
    bucket_of = {bucket for *_, bucket in by_spec[3]}
    assert bucket_of <= {0, 1, 2, 3}
    assert _ids(evolved) == list(range(16))


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("ts >= '2024-01-06T00:00:00+00:00' AND ts < '2024-01-07T00:00:00+00:00'", [5]),
        ("ts >= '2024-01-10T00:00:00+00:00' AND ts < '2024-01-11T00:00:00+00:00'", [9]),
        ("ts < '2024-01-02T00:00:00+00:00'", [0]),
        ("id = 13", [13]),
        ("id IN (2, 6, 10, 14)", [2, 6, 10, 14]),
        ("category = 'b' AND id > 6", [7, 10, 13]),
    ],
)
def test_filters_read_the_same_rows_across_specs(evolved: Table, where: str, expected: list[int]) -> None:
    assert _ids(evolved, where) == expected


def test_partition_pruning_across_specs(evolved: Table, format_version: int) -> None:
    # A day filter prunes the day-partitioned files (specs 1 and 2) to the matching day; the
    # files without a day field (specs 0 and 3) cannot be pruned by partition, only by stats.
    planned = _planned(evolved, "ts >= '2024-01-06T00:00:00+00:00' AND ts < '2024-01-07T00:00:00+00:00'")
    assert [p for p in planned if p[0] in (1, 2)] == [(1, 1)]
    # An id filter prunes the bucketed files (specs 2 and 3) to one bucket each.
    planned = _planned(evolved, "id = 13")
    spec3 = [p for p in planned if p[0] == 3]
    assert len(spec3) == 1
    all_spec3 = [t for t in evolved.new_scan().plan_files() if t.file.spec_id == 3]
    assert len(all_spec3) > 1  # so files of spec 3 were pruned (by partition or by column stats)


def test_overwrite_and_delete_across_specs(evolved: Table) -> None:
    evolved.delete(where="id IN (1, 5, 9, 13)")
    assert _ids(evolved) == [i for i in range(16) if i not in (1, 5, 9, 13)]
    evolved.overwrite(_data(100, 2), where="category = 'a'")
    expected = sorted([i for i in range(16) if i not in (1, 5, 9, 13) and i % 3 != 0] + [100, 101])
    assert _ids(evolved) == expected
    # The rewritten and new files are written with the current spec.
    assert {t.file.spec_id for t in evolved.new_scan().filter("id >= 100").plan_files()} == {3}


def test_time_travel_reads_every_state(evolved: Table) -> None:
    snapshots = evolved.snapshots()
    assert [len(_ids_at(evolved, s.snapshot_id)) for s in snapshots] == [4, 8, 12, 16]


def _ids_at(table: Table, snapshot_id: int) -> list[int]:
    return sorted(table.new_scan().use_snapshot(snapshot_id).to_arrow().column("id").to_pylist())


def test_the_evolved_metadata_round_trips(evolved: Table, catalog: Catalog) -> None:
    loaded = catalog.load_table("db.t")
    assert loaded.specs() == evolved.specs()
    assert loaded.metadata.last_partition_id == evolved.metadata.last_partition_id == 1001
    assert loaded.spec().spec_id == 3
