"""Readable reprs of the spec objects people print: names and types, times in UTC; equality
is untouched."""

from __future__ import annotations

import dataclasses

from icefloe.spec.partitioning import PartitionField, PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.snapshots import HistoryEntry, Snapshot
from icefloe.spec.sorting import NullOrder, SortDirection, SortField, SortOrder
from icefloe.spec.types import ListType, LongType, NestedField, StringType, StructType


def test_reprs() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "loc", StructType(NestedField(3, "city", StringType()))),
        NestedField(4, "tags", ListType(5, StringType())),
        identifier_field_ids=[1],
    )
    assert repr(schema) == (
        "Schema(schema_id=0, columns=[id: long (1, required), loc: struct<city: string (3)> (2), "
        "tags: list<string> (4)], identifier_field_ids=[1])"
    )
    spec = PartitionSpec((PartitionField(2, 1000, "day", "ts_day"),), spec_id=3)
    assert repr(spec) == "PartitionSpec(spec_id=3, fields=[1000: ts_day = day(source 2)])"
    order = SortOrder((SortField(1, "identity", SortDirection.DESC, NullOrder.NULLS_LAST),), order_id=2)
    assert repr(order) == "SortOrder(order_id=2, fields=[identity(source 1) DESC NULLS LAST])"
    snapshot = Snapshot(7, 1710072000123, "/t/m.avro", 6, 3, {"operation": "append", "added-records": "10"})
    assert repr(snapshot) == (
        "Snapshot(snapshot_id=7, parent_snapshot_id=6, sequence_number=3, committed_at=2024-03-10T12:00:00.123Z, "
        "operation='append', summary={'added-records': '10'}, manifest_list='/t/m.avro')"
    )
    assert (
        repr(HistoryEntry(1710072000123, 7))
        == "HistoryEntry(made_current_at=2024-03-10T12:00:00.123Z, snapshot_id=7)"
    )
    # Equality and hashing stay the dataclasses' own.
    assert snapshot == dataclasses.replace(snapshot) and spec == PartitionSpec(spec.fields, spec_id=3)
    assert schema == Schema(*schema.fields, identifier_field_ids=[1])
