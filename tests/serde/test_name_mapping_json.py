"""The ``schema.name-mapping.default`` property: Java's text, parsed and written back byte for byte;
icefloe's updates reproduce the mapping Java maintained through a rename and two added columns."""

from __future__ import annotations

import json

import pytest

from icefloe.errors import InvalidMetadataError
from icefloe.serde import (
    dumps_name_mapping,
    loads_metadata,
    loads_name_mapping,
    name_mapping_from_json,
    name_mapping_to_json,
)
from icefloe.spec.name_mapping import (
    TOP_LEVEL_PARENT_ID,
    MappedField,
    NameMapping,
    create_mapping_from_schema,
    update_mapping,
)
from icefloe.spec.properties import DEFAULT_NAME_MAPPING
from icefloe.spec.table_metadata import TableMetadata

from ._fixtures import fixture_bytes

# Java created the mapping (add_files) for schema 0 = (id, name, loc<lat, lon>), then renamed
# name -> label, added loc.alt and added tags list<string>.
FIXTURE = "v2_statistics_name_mapping.metadata.json"


def java_table() -> TableMetadata:
    return loads_metadata(fixture_bytes(FIXTURE), location=FIXTURE)


def test_java_property_parses_and_writes_back_byte_for_byte() -> None:
    text = java_table().properties[DEFAULT_NAME_MAPPING]
    mapping = loads_name_mapping(text)
    assert mapping.find("label") == MappedField(2, ("name", "label"))
    assert mapping.find("loc", "alt") == MappedField(6, ("alt",))
    assert mapping.find("tags", "element") == MappedField(8, ("element",))
    assert dumps_name_mapping(mapping) == text


def test_updates_reproduce_the_mapping_java_maintained() -> None:
    md = java_table()
    original, current = md.schema_by_id(0), md.schema()
    mapping = create_mapping_from_schema(original)
    updated = update_mapping(
        mapping,
        {2: current.field(2), 6: current.field(6), 7: current.field(7)},
        {3: [6], TOP_LEVEL_PARENT_ID: [7]},
    )
    assert updated == loads_name_mapping(md.properties[DEFAULT_NAME_MAPPING])


def test_json_form() -> None:
    mapping = NameMapping(
        (
            MappedField(1, ("id", "record_id")),
            MappedField(3, ("location",), (MappedField(4, ("latitude", "lat")),)),
            MappedField(None, ("unmapped",)),
        )
    )
    assert name_mapping_to_json(mapping) == [
        {"field-id": 1, "names": ["id", "record_id"]},
        {"field-id": 3, "names": ["location"], "fields": [{"field-id": 4, "names": ["latitude", "lat"]}]},
        {"names": ["unmapped"]},
    ]
    assert name_mapping_from_json(name_mapping_to_json(mapping)) == mapping
    assert loads_name_mapping(dumps_name_mapping(mapping)) == mapping
    assert dumps_name_mapping(NameMapping()) == "[ ]"


def test_spec_example() -> None:
    text = """[ { "field-id": 1, "names": ["id", "record_id"] },
       { "field-id": 2, "names": ["data"] },
       { "field-id": 3, "names": ["location"], "fields": [
           { "field-id": 4, "names": ["latitude", "lat"] },
           { "field-id": 5, "names": ["longitude", "long"] }
         ] } ]"""
    mapping = loads_name_mapping(text)
    assert mapping.find("location.long") == MappedField(5, ("longitude", "long"))
    assert mapping.find_by_id(2) == MappedField(2, ("data",))


def test_missing_names_mean_none() -> None:
    assert name_mapping_from_json([{"field-id": 1}]) == NameMapping((MappedField(1, ()),))


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"field-id": 1}, None),
        ([{"field-id": "1", "names": ["a"]}], "[0].field-id"),
        ([{"field-id": 1, "names": "a"}], "[0].names"),
        (
            [{"field-id": 1, "names": ["a"], "fields": [{"field-id": 2, "names": [3]}]}],
            "[0].fields[0].names[0]",
        ),
        ([7], "[0]"),
    ],
)
def test_malformed_mappings_name_the_field(value: object, field: str | None) -> None:
    with pytest.raises(InvalidMetadataError) as info:
        loads_name_mapping(json.dumps(value), location="db.t property schema.name-mapping.default")
    assert info.value.field == field
    assert "db.t property" in str(info.value)


def test_not_json() -> None:
    with pytest.raises(InvalidMetadataError, match="not valid JSON"):
        loads_name_mapping("[{", location="x")
