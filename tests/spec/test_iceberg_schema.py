import itertools
import pickle

import pytest

from icefloe.errors import InvalidSchemaError, ValidationError
from icefloe.spec.schema import Schema, assign_fresh_ids, index_by_id, index_by_name, prune_columns
from icefloe.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    UnknownType,
    parse_type,
)


@pytest.fixture
def nested() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(
            2,
            "location",
            StructType(NestedField(3, "lat", DoubleType()), NestedField(4, "lon", DoubleType())),
        ),
        NestedField(5, "points", ListType(6, StructType(NestedField(7, "x", IntegerType())), False)),
        NestedField(8, "attrs", MapType(9, StringType(), 10, StructType(NestedField(11, "y", LongType())))),
        identifier_field_ids=[1],
    )


def test_lookup_by_full_and_short_names(nested: Schema) -> None:
    assert nested.find_field("location.lat").field_id == 3
    assert nested.find_field("points.element.x").field_id == 7
    assert nested.find_field("points.x").field_id == 7  # Java's short alias
    assert nested.find_field("attrs.key").field_id == 9
    assert nested.find_field("attrs.value.y").field_id == 11
    assert nested.find_field("attrs.y").field_id == 11
    assert nested.find_field("nope") is None
    assert nested.find_field(10).name == "value"


def test_case_insensitive_lookup(nested: Schema) -> None:
    assert nested.find_field("LOCATION.Lat") is None
    assert nested.find_field("LOCATION.Lat", case_sensitive=False).field_id == 3


def test_canonical_names_and_parents(nested: Schema) -> None:
    names = nested.id_to_name()
    assert names[7] == "points.element.x"
    assert names[11] == "attrs.value.y"
    assert nested.find_column_name(4) == "location.lon"
    assert nested.parent_id(7) == 6
    assert nested.parent_id(6) == 5
    assert nested.parent_id(1) is None
    assert nested.highest_field_id == 11
    assert nested.identifier_field_names() == ["id"]


def test_field_raises_naming_the_column(nested: Schema) -> None:
    with pytest.raises(ValidationError, match="'missing'"):
        nested.field("missing")


def test_select_keeps_parents_and_full_types(nested: Schema) -> None:
    selected = nested.select("location.lat", "attrs")
    assert [f.name for f in selected.fields] == ["location", "attrs"]
    assert [f.name for f in selected.find_field("location").field_type.fields] == ["lat"]
    assert selected.find_field("attrs").field_type == nested.find_field("attrs").field_type
    assert nested.select("*") is nested
    with pytest.raises(ValidationError):
        nested.select("nope")


def test_prune_nested_list_element(nested: Schema) -> None:
    pruned = prune_columns(nested, {7})
    assert pruned.find_field("points.element.x").field_id == 7
    assert pruned.find_field("id") is None


def test_duplicate_ids_and_names_rejected() -> None:
    with pytest.raises(InvalidSchemaError, match="field id 1"):
        Schema(NestedField(1, "a", LongType()), NestedField(1, "b", LongType()))
    with pytest.raises(InvalidSchemaError, match="duplicate field name 'a'"):
        Schema(NestedField(1, "a", LongType()), NestedField(2, "a", LongType()))
    with pytest.raises(InvalidSchemaError, match="unknown must be optional"):
        Schema(NestedField(1, "u", UnknownType(), required=True))


def test_assign_fresh_ids_matches_java_order() -> None:
    schema = Schema(
        NestedField(0, "a", parse_type("struct<x: int, y: list<int>>")),
        NestedField(0, "b", parse_type("map<string, long>")),
        NestedField(0, "c", LongType()),
    )
    counter = itertools.count(1)
    fresh = assign_fresh_ids(schema, lambda: next(counter))
    # Java numbers every field of a struct before descending into any of them.
    assert [f.field_id for f in fresh.fields] == [1, 2, 3]
    assert fresh.find_field("a.x").field_id == 4
    assert fresh.find_field("a.y").field_id == 5
    assert fresh.find_field("a.y.element").field_id == 6
    assert fresh.find_field("b.key").field_id == 7
    assert fresh.find_field("b.value").field_id == 8


def test_index_functions_cover_every_field(nested: Schema) -> None:
    assert sorted(index_by_id(nested)) == list(range(1, 12))
    assert set(index_by_name(nested).values()) == set(range(1, 12))


def test_pickle_and_equality(nested: Schema) -> None:
    copy = pickle.loads(pickle.dumps(nested))
    assert copy == nested
    assert hash(copy) == hash(nested)
    assert copy.same_structure(nested.replace(schema_id=5))
    assert copy != nested.replace(schema_id=5)


def test_immutable(nested: Schema) -> None:
    with pytest.raises(AttributeError):
        nested.schema_id = 3  # type: ignore[misc]
