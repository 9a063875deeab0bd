"""The metadata of a replaced table (Java's ``TableMetadata.buildReplacement``)."""

from __future__ import annotations

import itertools

import pytest

from icefloe.errors import ValidationError
from icefloe.spec.builder import MetadataBuilder, new_table_metadata
from icefloe.spec.partitioning import build_spec
from icefloe.spec.replacement import assign_ids_reusing, updates_for_replacement
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import UNSORTED_SORT_ORDER, build_sort_order
from icefloe.spec.types import (
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
)


def _schema(*fields: NestedField) -> Schema:
    return Schema(*fields)


BASE = _schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "s", StructType(NestedField(5, "a", IntegerType()), NestedField(6, "b", StringType()))),
    NestedField(3, "l", ListType(7, StringType())),
    NestedField(4, "m", MapType(8, StringType(), 9, LongType())),
)


def test_ids_are_reused_by_full_name_at_every_depth() -> None:
    new = _schema(
        NestedField(10, "m", MapType(11, StringType(), 12, LongType())),
        NestedField(
            13, "s", StructType(NestedField(14, "b", StringType()), NestedField(15, "c", LongType()))
        ),
        NestedField(16, "id", LongType(), required=True),
        NestedField(17, "l", ListType(18, StringType())),
        NestedField(19, "extra", StringType()),
    )
    counter = itertools.count(10)
    fresh = assign_ids_reusing(new, BASE, lambda: next(counter))
    assert fresh.field("m").field_id == 4
    assert fresh.find_type("m") == MapType(8, StringType(), 9, LongType())
    assert fresh.field("s.b").field_id == 6
    assert fresh.field("id").field_id == 1
    assert fresh.find_type("l") == ListType(7, StringType())
    # New fields in Java's order: a struct's fields before their children.
    assert fresh.field("extra").field_id == 10
    assert fresh.field("s.c").field_id == 11


def test_replacement_updates_reuse_and_add_ids() -> None:
    spec = build_spec(BASE, ["bucket(4, id)", "s.a"])
    base = new_table_metadata(BASE, spec, build_sort_order(BASE, ["id"]), "/t", {"k": "v"})
    new = _schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StructType(NestedField(3, "a", IntegerType()))),
        NestedField(4, "z", StringType()),
    )
    new_spec = build_spec(new, ["z", "s.a", "bucket(4, id)"])
    updates = updates_for_replacement(base, new, new_spec, UNSORTED_SORT_ORDER, "/t2", {"p": "q"})
    replaced = MetadataBuilder(base).apply_all(updates).build()
    schema = replaced.schema()
    assert schema.field("id").field_id == base.schema().field("id").field_id
    assert schema.field("s.a").field_id == base.schema().field("s.a").field_id
    assert schema.field("z").field_id == base.last_column_id + 1
    fields = {f.name: f.field_id for f in replaced.spec().fields}
    old_fields = {f.name: f.field_id for f in base.spec().fields}
    assert fields["id_bucket"] == old_fields["id_bucket"] and fields["s.a"] == old_fields["s.a"]
    assert fields["z"] == base.last_partition_id + 1
    assert replaced.sort_order().is_unsorted
    assert replaced.location == "/t2"
    assert replaced.properties == {"k": "v", "write.parquet.compression-codec": "zstd", "p": "q"}
    assert replaced.table_uuid == base.table_uuid
    assert len(replaced.schemas) == 2 and len(replaced.partition_specs) == 2


def test_replacement_refuses_bad_format_versions_and_types() -> None:
    base = new_table_metadata(
        BASE, build_spec(BASE, None), UNSORTED_SORT_ORDER, "/t", {"format-version": "2"}
    )
    with pytest.raises(ValidationError, match="downgrade"):
        updates_for_replacement(
            base, BASE, build_spec(BASE, None), UNSORTED_SORT_ORDER, "/t", {"format-version": "1"}
        )
    with pytest.raises(ValidationError, match="integer"):
        updates_for_replacement(
            base, BASE, build_spec(BASE, None), UNSORTED_SORT_ORDER, "/t", {"format-version": "x"}
        )
    nanos = _schema(NestedField(1, "ts", TimestampNanoType()))
    with pytest.raises(ValidationError, match="needs format-version 3"):
        updates_for_replacement(base, nanos, build_spec(nanos, None), UNSORTED_SORT_ORDER, "/t")
    upgraded = updates_for_replacement(
        base, nanos, build_spec(nanos, None), UNSORTED_SORT_ORDER, "/t", {"format-version": "3"}
    )
    assert MetadataBuilder(base).apply_all(upgraded).build().format_version == 3
