"""Name mappings: lookups by name path and id, creation from a schema, updates after schema changes
(as Java's MappingUtil.update)."""

from __future__ import annotations

import pytest

from icefloe.errors import ValidationError
from icefloe.spec.name_mapping import (
    TOP_LEVEL_PARENT_ID,
    MappedField,
    NameMapping,
    create_mapping_from_schema,
    update_mapping,
)
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "data", StringType()),
    NestedField(
        3, "location", StructType(NestedField(4, "lat", DoubleType()), NestedField(5, "long", DoubleType()))
    ),
    NestedField(6, "tags", ListType(7, StringType())),
    NestedField(8, "attrs", MapType(9, StringType(), 10, StructType(NestedField(11, "v", IntegerType())))),
)


def test_create_mapping_from_schema() -> None:
    mapping = create_mapping_from_schema(SCHEMA)
    assert mapping == NameMapping(
        (
            MappedField(1, ("id",)),
            MappedField(2, ("data",)),
            MappedField(3, ("location",), (MappedField(4, ("lat",)), MappedField(5, ("long",)))),
            MappedField(6, ("tags",), (MappedField(7, ("element",)),)),
            MappedField(
                8,
                ("attrs",),
                (MappedField(9, ("key",)), MappedField(10, ("value",), (MappedField(11, ("v",)),))),
            ),
        )
    )
    assert create_mapping_from_schema(SCHEMA.as_struct()) == mapping


def test_find_by_name_path_and_by_id() -> None:
    mapping = create_mapping_from_schema(SCHEMA)
    assert mapping.find("location", "lat") == MappedField(4, ("lat",))
    assert mapping.find("location.lat") is mapping.find("location", "lat")
    assert mapping.find("attrs", "value", "v") == MappedField(11, ("v",))
    assert mapping.find("tags.element") == MappedField(7, ("element",))
    assert mapping.find("lat") is None
    assert mapping.find("location", "altitude") is None
    assert mapping.find_by_id(11) == MappedField(11, ("v",))
    assert mapping.find_by_id(99) is None
    assert len(mapping) == 5 and [f.field_id for f in mapping] == [1, 2, 3, 6, 8]


def test_aliases_are_found_by_every_name() -> None:
    mapping = NameMapping(
        (
            MappedField(1, ("id", "record_id")),
            MappedField(3, ("location", "loc"), (MappedField(4, ("latitude", "lat")),)),
        )
    )
    assert mapping.find("record_id") is mapping.find("id")
    assert (
        mapping.find("loc", "lat")
        == mapping.find("location", "latitude")
        == MappedField(4, ("latitude", "lat"))
    )


def test_names_are_a_set_in_first_seen_order() -> None:
    assert MappedField(1, ("a", "b", "a")).names == ("a", "b")
    assert MappedField(1, "a").names == ("a",)  # type: ignore[arg-type]


def test_duplicate_ids_fail_on_lookup_by_id() -> None:
    mapping = NameMapping((MappedField(1, ("a",)), MappedField(2, ("b",), (MappedField(1, ("c",)),))))
    assert mapping.find("b.c") == MappedField(1, ("c",))
    with pytest.raises(ValidationError, match="field id 1"):
        mapping.find_by_id(1)


def test_unmapped_fields_have_no_id() -> None:
    mapping = NameMapping((MappedField(None, ("legacy",)), MappedField(1, ("id",))))
    assert mapping.find("legacy") == MappedField(None, ("legacy",))
    assert mapping.find_by_id(1) == MappedField(1, ("id",))


# ---- updates ----------------------------------------------------------------------------------------


def test_rename_keeps_the_old_name_as_an_alias() -> None:
    mapping = create_mapping_from_schema(SCHEMA)
    updated = update_mapping(mapping, {2: NestedField(2, "payload", StringType())}, {})
    assert updated.find("payload") == MappedField(2, ("data", "payload"))
    assert updated.find("data") is updated.find("payload")
    nested = update_mapping(mapping, {4: NestedField(4, "latitude", DoubleType())}, {})
    assert nested.find("location.lat") == MappedField(4, ("lat", "latitude"))


def test_added_columns_top_level_and_nested() -> None:
    mapping = create_mapping_from_schema(SCHEMA)
    alt = NestedField(12, "alt", DoubleType())
    points = NestedField(13, "points", ListType(14, StructType(NestedField(15, "x", IntegerType()))))
    updated = update_mapping(mapping, {12: alt, 13: points}, {3: [12], TOP_LEVEL_PARENT_ID: [13]})
    assert updated.find("location", "alt") == MappedField(12, ("alt",))
    assert updated.fields[-1] == MappedField(
        13, ("points",), (MappedField(14, ("element",), (MappedField(15, ("x",)),)),)
    )
    assert updated.find("points.element.x") == MappedField(15, ("x",))
    assert mapping.find("location.alt") is None  # the original is unchanged


def test_added_field_inside_a_field_that_had_no_nested_mapping() -> None:
    mapping = NameMapping((MappedField(1, ("s",)),))
    updated = update_mapping(mapping, {2: NestedField(2, "a", IntegerType())}, {1: [2]})
    assert updated.find("s.a") == MappedField(2, ("a",))


def test_a_reused_name_moves_to_the_new_field() -> None:
    # "data" was dropped (id 2 stays in the mapping for old files) and re-added as id 12.
    mapping = create_mapping_from_schema(SCHEMA)
    updated = update_mapping(
        mapping, {12: NestedField(12, "data", IntegerType())}, {TOP_LEVEL_PARENT_ID: [12]}
    )
    assert updated.find("data") == MappedField(12, ("data",))
    assert updated.find_by_id(2) == MappedField(2, ())


def test_a_rename_onto_a_sibling_name_takes_the_name() -> None:
    # "data" renamed to "old", then "id" renamed to "data": the name now belongs to field 1.
    mapping = NameMapping((MappedField(1, ("id",)), MappedField(2, ("data", "old"))))
    updated = update_mapping(mapping, {1: NestedField(1, "data", LongType())}, {})
    assert updated.fields == (MappedField(1, ("id", "data")), MappedField(2, ("old",)))


def test_an_added_field_with_a_known_id_is_merged() -> None:
    mapping = NameMapping((MappedField(1, ("id",)), MappedField(5, ("stale",), (MappedField(6, ("x",)),))))
    field = NestedField(
        5, "fresh", StructType(NestedField(6, "x", IntegerType()), NestedField(7, "y", IntegerType()))
    )
    updated = update_mapping(mapping, {5: field}, {TOP_LEVEL_PARENT_ID: [5]})
    merged = updated.find_by_id(5)
    assert merged is not None
    assert merged.names == ("stale", "fresh")
    assert [f.field_id for f in merged.fields] == [6, 7]
    assert len(updated.fields) == 2


def test_adds_must_be_described_in_updates() -> None:
    with pytest.raises(ValidationError, match="12"):
        update_mapping(NameMapping(), {}, {TOP_LEVEL_PARENT_ID: [12]})


def test_str() -> None:
    mapping = NameMapping((MappedField(1, ("id", "key")), MappedField(2, ("s",), (MappedField(3, ("a",)),))))
    assert str(mapping) == "[([id, key] -> 1), ([s] -> 2 [([a] -> 3)])]"
