"""UpdateSchema on nested fields and moves, mirroring Java's TestSchemaUpdate, plus data written
and read across nested evolution."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema, index_by_id
from icefloe.spec.types import (
    BooleanType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from support.catalogs import sorted_rows

# Java's TestSchemaUpdate.SCHEMA (same ids; last column id 23).
SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), True),
    NestedField(2, "data", StringType()),
    NestedField(
        3,
        "preferences",
        StructType(
            NestedField(8, "feature1", BooleanType(), True), NestedField(9, "feature2", BooleanType())
        ),
        doc="struct of named boolean options",
    ),
    NestedField(
        4,
        "locations",
        MapType(
            10,
            StructType(
                NestedField(20, "address", StringType(), True),
                NestedField(21, "city", StringType(), True),
                NestedField(22, "state", StringType(), True),
                NestedField(23, "zip", IntegerType(), True),
            ),
            11,
            StructType(NestedField(12, "lat", FloatType(), True), NestedField(13, "long", FloatType(), True)),
            True,
        ),
        True,
        "map of address to coordinate",
    ),
    NestedField(
        5,
        "points",
        ListType(
            14,
            StructType(NestedField(15, "x", LongType(), True), NestedField(16, "y", LongType(), True)),
            False,
        ),
        doc="2-D cartesian points",
    ),
    NestedField(6, "doubles", ListType(17, DoubleType(), True), True),
    NestedField(
        7, "properties", MapType(18, StringType(), 19, StringType(), False), doc="string map of properties"
    ),
)


@pytest.fixture
def table(memory_catalog: Catalog) -> Table:
    t = memory_catalog.create_table("db.t", SCHEMA)
    # Fresh ids as Java assigns them: 1-7 top level, 8-9 preferences, 10-11 the locations key and
    # value, 12-15 the key struct, 16-17 the value struct (lat, long), 18-20 points, 21 doubles, 22-23 properties.
    assert t.metadata.last_column_id == 23
    assert (t.schema().field("locations.lat").field_id, t.schema().field("points.y").field_id) == (16, 20)
    return t


def _descendants(field: NestedField) -> set[int]:
    if isinstance(field.field_type, (StructType, ListType, MapType)):
        return set(index_by_id(StructType(*field.field_type.fields)))
    return set()


def _type(schema: Schema, name: str) -> Any:
    return schema.field(name).field_type


# ---- deletes -----------------------------------------------------------------------------------

NESTED_NAMES = [
    "id",
    "data",
    "preferences",
    "preferences.feature1",
    "preferences.feature2",
    "locations",
    "locations.lat",
    "locations.long",
    "points",
    "points.x",
    "points.y",
    "doubles",
    "properties",
]


@pytest.mark.parametrize("case_sensitive", [True, False])
@pytest.mark.parametrize("name", NESTED_NAMES)
def test_delete_fields(table: Table, name: str, case_sensitive: bool) -> None:
    """Java's testDeleteFields / testDeleteFieldsCaseSensitiveDisabled."""
    field = table.schema().field(name)
    given = name if case_sensitive else name[0].upper() + name[1:]
    deleted = table.update_schema().case_sensitive(case_sensitive).delete_column(given).apply()
    expected = set(index_by_id(table.schema())) - {field.field_id} - _descendants(field)
    assert set(index_by_id(deleted)) == expected
    # Order and everything else stays.
    assert [f.name for f in deleted.fields] == [f.name for f in SCHEMA.fields if f.field_id in expected]


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("locations.key", "map keys"),
        ("locations.key.zip", "map keys"),
        ("points.element", "element of a list"),
        ("doubles.element", "element of a list"),
        ("properties.value", "value of a map"),
    ],
)
def test_deleting_map_keys_list_elements_and_map_values_is_refused(
    table: Table, name: str, needle: str
) -> None:
    with pytest.raises(ValidationError, match=needle):
        table.update_schema().delete_column(name)


# ---- type, doc, nullability updates --------------------------------------------------------------


@pytest.mark.parametrize("case_sensitive", [True, False])
def test_update_nested_types(table: Table, case_sensitive: bool) -> None:
    """Java's testUpdateTypes(CaseInsensitive): map value struct fields by their short names."""
    names = ("id", "locations.lat", "locations.long")
    if not case_sensitive:
        names = ("ID", "Locations.Lat", "Locations.Long")
    before = table.schema()
    update = table.update_schema().case_sensitive(case_sensitive)
    update.update_column(names[0], "long").update_column(names[1], "double").update_column(
        names[2], DoubleType()
    )
    update.commit()
    schema = table.schema()
    assert schema.field(1).field_type == LongType()
    assert (schema.field(16).field_type, schema.field(17).field_type) == (DoubleType(), DoubleType())
    # Everything else is untouched: the map keeps its ids, key and requiredness.
    locations = _type(schema, "locations")
    assert (locations.key_id, locations.value_id, locations.value_required) == (10, 11, True)
    assert locations.key_type == _type(before, "locations").key_type
    assert schema.field("locations").doc == "map of address to coordinate"


def test_update_points_element_field_and_refusals(table: Table) -> None:
    table.update_schema().update_column_doc("points.x", "x coordinate").commit()
    assert table.schema().field("points.element.x").doc == "x coordinate"
    with pytest.raises(ValidationError, match=r"cannot update map keys: locations.key.zip"):
        table.update_schema().update_column("locations.key.zip", "long")
    with pytest.raises(ValidationError, match=r"cannot change column type: points.x: long -> int"):
        table.update_schema().update_column("points.x", "int")
    with pytest.raises(ValidationError, match=r"cannot change column type: preferences: struct<"):
        table.update_schema().update_column("preferences", "string")
    with pytest.raises(ValidationError, match=r"only primitive types"):
        table.update_schema().update_column("id", "struct<a: int>")


def test_nested_nullability(table: Table) -> None:
    with pytest.raises(ValidationError, match=r"optional -> required"):
        table.update_schema().require_column("preferences.feature2")
    update = (
        table.update_schema()
        .make_column_optional("preferences.feature1")
        .make_column_optional("locations.lat")
    )
    update.make_column_optional("points.element.x").make_column_optional("locations.value")
    update.allow_incompatible_changes().require_column("preferences.feature2").require_column(
        "points.element"
    )
    update.require_column("properties.value").commit()
    schema = table.schema()
    assert not schema.field("preferences.feature1").required and schema.field("preferences.feature2").required
    assert not schema.field("locations.lat").required and not schema.field("points.x").required
    assert not _type(schema, "locations").value_required
    assert _type(schema, "points").element_required and _type(schema, "properties").value_required
    with pytest.raises(ValidationError, match=r"cannot update map keys"):
        table.update_schema().make_column_optional("locations.key.city")


# ---- renames -------------------------------------------------------------------------------------


def test_rename_nested_fields(table: Table) -> None:
    """Java's testRename: struct fields, map value fields and list element fields by short names."""
    table.update_schema().rename_column("data", "json").rename_column("preferences", "options").rename_column(
        "preferences.feature2", "newfeature"
    ).rename_column("locations.lat", "latitude").rename_column("points.x", "X").rename_column(
        "points.y", "y.y"
    ).commit()
    schema = table.schema()
    names = schema.id_to_name()
    assert names[2] == "json" and names[3] == "options" and names[9] == "options.newfeature"
    assert names[16] == "locations.value.latitude" and names[19] == "points.element.X"
    assert names[20] == "points.element.y.y"  # a dot in a new name is taken literally
    assert schema.field("options").doc == "struct of named boolean options"
    assert schema.field(16).required and schema.field(16).field_type == FloatType()


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("locations.key.zip", "cannot rename map keys"),
        ("points.element", "cannot rename the element of a list"),
        ("properties.value", "cannot rename the value of a map"),
        ("preferences.nope", "cannot rename missing column: preferences.nope"),
    ],
)
def test_rename_refusals(table: Table, name: str, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        table.update_schema().rename_column(name, "z")


def test_rename_onto_a_sibling_name_is_refused(table: Table) -> None:
    with pytest.raises(
        ValidationError, match=r"two fields of struct 'preferences' would be named 'feature2'"
    ):
        table.update_schema().rename_column("preferences.feature1", "feature2").apply()
    # Swapping two sibling names in one update is fine.
    swapped = table.update_schema().rename_column("points.x", "y").rename_column("points.y", "x").apply()
    assert swapped.field("points.x").field_id == 20


# ---- adds ----------------------------------------------------------------------------------------


def test_add_nested_fields_with_fresh_ids(table: Table) -> None:
    """Java's testAddFields: a struct field, a map value field, a list element field, a nested
    type (its fields get the ids after the column's, in Java's order)."""
    table.update_schema().add_column("topLevel", "decimal(9, 3)").add_column(
        "preferences.feature3", "boolean"
    ).add_column("alt", "float", parent="locations").add_column(("points", "z"), "long").add_column(
        "t.t", "long", parent="points"
    ).add_column("nested", "struct<a: int, b: map<string, list<int>>>", "doc", parent="preferences").commit()
    schema = table.schema()
    assert table.metadata.last_column_id == 34
    assert [(f.field_id, f.name) for f in schema.fields][-1] == (24, "topLevel")
    assert [f.name for f in _type(schema, "preferences").fields] == [
        "feature1",
        "feature2",
        "feature3",
        "nested",
    ]
    assert schema.field("preferences.feature3").field_id == 25
    assert schema.field("locations.value.alt").field_id == 26
    assert [f.field_id for f in _type(schema, "points").element_type.fields] == [19, 20, 27, 28]
    assert _type(schema, "points").element_type.fields[-1].name == "t.t"
    nested = schema.field("preferences.nested")
    assert (nested.field_id, nested.doc, nested.required) == (29, "doc", False)
    a, b = nested.field_type.fields
    assert (a.field_id, b.field_id) == (30, 31)
    assert (b.field_type.key_id, b.field_type.value_id, b.field_type.value_type.element_id) == (32, 33, 34)
    # Also through the list element and map value by their full names.
    table.update_schema().add_column("q", "int", parent="points.element").add_column(
        "locations.value.r", "int"
    ).commit()
    assert (
        table.schema().field("points.q").field_id == 35 and table.schema().field("locations.r").field_id == 36
    )


def test_add_required_nested_field(table: Table) -> None:
    with pytest.raises(ValidationError, match=r"without a default value: preferences.r"):
        table.update_schema().add_required_column("r", "int", parent="preferences")
    table.update_schema().allow_incompatible_changes().add_required_column("preferences.r", "int").commit()
    assert table.schema().field("preferences.r").required


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda u: u.add_column("nope.x", "int"), "no parent column 'nope'"),
        (lambda u: u.add_column("x", "int", parent="nope"), "cannot find parent struct: nope"),
        (lambda u: u.add_column("doubles.x", "int"), "cannot add to non-struct column: doubles: double"),
        (lambda u: u.add_column("x", "int", parent="properties"), "non-struct column: properties: string"),
        (lambda u: u.add_column("x", "int", parent="id"), "non-struct column: id: int"),
        (lambda u: u.add_column("x", "int", parent="locations.key"), "cannot add fields to map keys"),
        (lambda u: u.add_column("preferences.feature1", "int"), "name already exists: preferences.feature1"),
        (lambda u: u.add_column("q", "int", parent="points"), None),
        (lambda u: u.add_column("points.x", "int"), "name already exists: points.x"),
        (lambda u: u.add_column("points.q", "int").add_column("points.q", "int"), "already added"),
        (
            lambda u: u.delete_column("preferences").add_column("preferences.x", "int"),
            "will be deleted: preferences",
        ),
        (lambda u: u.delete_column("points").add_column("points.z", "int"), "will be deleted: points"),
        (
            lambda u: u.add_column("preferences.x", "int").delete_column("preferences"),
            "has additions: preferences",
        ),
        (lambda u: u.add_column("points.z", "int").delete_column("points"), "has additions: points"),
        (lambda u: u.add_column("locations.z", "int").delete_column("locations"), "has additions: locations"),
        (lambda u: u.add_column(("nope", "x"), "int"), "cannot find parent struct: nope"),
    ],
)
def test_add_refusals(table: Table, build: Any, needle: str | None) -> None:
    if needle is None:
        build(table.update_schema())  # the positive control
        return
    with pytest.raises(ValidationError, match=needle):
        build(table.update_schema())


def test_deleted_nested_name_can_be_re_added(table: Table) -> None:
    table.update_schema().delete_column("preferences.feature1").add_column(
        "preferences.feature1", "string"
    ).commit()
    field = table.schema().field("preferences.feature1")
    assert (field.field_id, field.field_type) == (24, StringType())
    assert [f.name for f in _type(table.schema(), "preferences").fields] == ["feature2", "feature1"]


def test_dotted_top_level_name_as_a_tuple(table: Table) -> None:
    table.update_schema().add_column(("a.b",), "int").commit()
    assert table.schema().fields[-1].name == "a.b"


def test_changes_to_added_nested_fields_merge(table: Table) -> None:
    table.update_schema().add_column("preferences.n", "int").update_column(
        "preferences.n", "long"
    ).update_column_doc("preferences.n", "d").commit()
    field = table.schema().field("preferences.n")
    assert (field.field_id, field.field_type, field.doc) == (24, LongType(), "d")


# ---- moves ---------------------------------------------------------------------------------------


def _names(schema: Schema, name: str | None = None) -> list[str]:
    if name is None:
        return [f.name for f in schema.fields]
    field_type = _type(schema, name)
    if isinstance(field_type, ListType):
        field_type = field_type.element_type
    elif isinstance(field_type, MapType):
        field_type = field_type.value_type
    return [f.name for f in field_type.fields]


TOP = ["id", "data", "preferences", "locations", "points", "doubles", "properties"]


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda u: u.move_first("data"), ["data", "id", *TOP[2:]]),
        (lambda u: u.move_first("id"), TOP),
        (lambda u: u.move_before("data", "id"), ["data", "id", *TOP[2:]]),
        (lambda u: u.move_after("id", "data"), ["data", "id", *TOP[2:]]),
        (lambda u: u.move_after("id", "properties"), [*TOP[1:], "id"]),
        (lambda u: u.move_before("properties", "preferences"), ["id", "data", "properties", *TOP[2:6]]),
        (lambda u: u.move_after("data", "id"), TOP),
        # Two moves apply in order.
        (
            lambda u: u.move_first("doubles").move_after("id", "doubles"),
            ["doubles", "id", "data", *TOP[2:5], "properties"],
        ),
        # Added columns can be moved and be the reference.
        (lambda u: u.add_column("ts", "timestamptz").move_first("ts"), ["ts", *TOP]),
        (lambda u: u.add_column("ts", "timestamptz").move_before("ts", "id"), ["ts", *TOP]),
        (lambda u: u.add_column("ts", "timestamptz").move_after("ts", "id"), ["id", "ts", *TOP[1:]]),
        (
            lambda u: (
                u.add_column("ts", "timestamptz")
                .add_column("count", "long")
                .move_after("ts", "id")
                .move_after("count", "ts")
            ),
            ["id", "ts", "count", *TOP[1:]],
        ),
        (
            lambda u: u.add_column("ts", "timestamptz").move_after("data", "ts"),
            ["id", *TOP[2:], "ts", "data"],
        ),
        # Renamed columns are moved by their old names.
        (lambda u: u.rename_column("data", "json").move_first("data"), ["json", "id", *TOP[2:]]),
        # A moved and deleted neighbour.
        (
            lambda u: u.delete_column("data").move_first("points"),
            ["points", "id", "preferences", "locations", *TOP[5:]],
        ),
    ],
)
def test_top_level_moves(table: Table, build: Any, expected: list[str]) -> None:
    assert _names(build(table.update_schema()).apply()) == expected


@pytest.mark.parametrize(
    ("build", "struct", "expected"),
    [
        (lambda u: u.move_first("preferences.feature2"), "preferences", ["feature2", "feature1"]),
        (
            lambda u: u.move_before("preferences.feature2", "preferences.feature1"),
            "preferences",
            ["feature2", "feature1"],
        ),
        (
            lambda u: u.move_after("preferences.feature1", "preferences.feature2"),
            "preferences",
            ["feature2", "feature1"],
        ),
        # List element struct and map value struct fields, by short and full names.
        (lambda u: u.move_first("points.y"), "points", ["y", "x"]),
        (lambda u: u.move_after("points.element.x", "points.element.y"), "points", ["y", "x"]),
        (lambda u: u.move_before("locations.long", "locations.lat"), "locations", ["long", "lat"]),
        # Added nested fields.
        (
            lambda u: u.add_column("preferences.ts", "timestamp").move_first("preferences.ts"),
            "preferences",
            ["ts", "feature1", "feature2"],
        ),
        (
            lambda u: u.add_column("preferences.ts", "timestamp").move_before(
                "preferences.ts", "preferences.feature2"
            ),
            "preferences",
            ["feature1", "ts", "feature2"],
        ),
        (
            lambda u: u.add_column("points.z", "long").move_after("points.x", "points.z"),
            "points",
            ["y", "z", "x"],
        ),
        (
            lambda u: u.add_column("locations.alt", "double").move_first("locations.value.alt"),
            "locations",
            ["alt", "lat", "long"],
        ),
    ],
)
def test_nested_moves(table: Table, build: Any, struct: str, expected: list[str]) -> None:
    applied = build(table.update_schema()).apply()
    assert _names(applied, struct) == expected
    assert _names(applied) == TOP


def test_moves_and_renames_in_a_nested_struct(table: Table) -> None:
    table.update_schema().rename_column("preferences.feature1", "first").move_after(
        "preferences.feature1", "preferences.feature2"
    ).commit()
    assert _names(table.schema(), "preferences") == ["feature2", "first"]
    assert table.schema().field("preferences.first").field_id == 8


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda u: u.move_first("nope"), "cannot move missing column: nope"),
        (lambda u: u.move_before("nope", "id"), "cannot move missing column: nope"),
        (lambda u: u.move_after("id", "nope"), "cannot move id after missing column: nope"),
        (lambda u: u.move_before("id", "id"), "cannot move id before itself"),
        (lambda u: u.move_after("points.x", "points.x"), "cannot move points.x after itself"),
        # Java's testMoveBeforeAddFails: a column must be added before it is moved.
        (lambda u: u.move_first("ts").add_column("ts", "int"), "cannot move missing column: ts"),
        (lambda u: u.move_before("preferences.feature1", "id"), "to a different struct"),
        (lambda u: u.move_after("id", "preferences.feature1"), "to a different struct"),
        (lambda u: u.move_before("points.x", "preferences.feature1"), "to a different struct"),
        (lambda u: u.move_first("points.element"), "non-struct type: list<struct"),
        (lambda u: u.move_first("locations.value"), "non-struct type: map<"),
        (lambda u: u.delete_column("data").move_first("data"), "will be deleted"),
        (lambda u: u.delete_column("data").move_after("id", "data"), "will be deleted"),
    ],
)
def test_move_refusals(table: Table, build: Any, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        build(table.update_schema())


def test_moving_between_sibling_structs_is_refused(memory_catalog: Catalog) -> None:
    """Java's testMoveBetweenStructsFails."""
    schema = Schema(
        NestedField(
            1,
            "s1",
            StructType(NestedField(3, "a", IntegerType(), True), NestedField(4, "b", IntegerType(), True)),
        ),
        NestedField(
            2,
            "s2",
            StructType(NestedField(5, "x", IntegerType(), True), NestedField(6, "y", IntegerType(), True)),
        ),
    )
    table = memory_catalog.create_table("db.s", schema)
    with pytest.raises(ValidationError, match=r"cannot move field s2.x to a different struct"):
        table.update_schema().move_before("s2.x", "s1.a")


def test_case_insensitive_moves(table: Table) -> None:
    applied = (
        table.update_schema().case_sensitive(False).move_after("ID", "DATA").move_first("Points.Y").apply()
    )
    assert _names(applied) == ["data", "id", *TOP[2:]]
    assert _names(applied, "points") == ["y", "x"]


# ---- data across nested evolution ----------------------------------------------------------------

# (x is optional: icefloe's writer refuses a null struct row whose child is required.)
POINT = pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.int64())])
ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("point", POINT),
        pa.field("tags", pa.list_(pa.field("element", pa.struct([pa.field("k", pa.string())])))),
        pa.field("attrs", pa.map_(pa.string(), pa.struct([pa.field("v", pa.int32())]))),
    ]
)


def _first_rows() -> pa.Table:
    return pa.table(
        {
            "id": [1, 2],
            "point": [{"x": 10, "y": 11}, None],
            "tags": [[{"k": "a"}], []],
            "attrs": [[("m", {"v": 1})], None],
        },
        schema=ARROW,
    )


def test_nested_evolution_reads_old_and_new_files(catalog: Catalog) -> None:
    table = catalog.create_table("db.nested", ARROW)
    table.append(_first_rows())
    (
        table.update_schema()
        .add_column("point.z", "double")
        .add_column("n", "int", parent="tags")
        .add_column("w", "long", parent="attrs")
        .rename_column("point.x", "lon")
        .rename_column("tags.k", "key")
        .update_column("attrs.v", "long")
        .move_first("point.y")
        .commit()
    )
    schema = table.schema()
    assert _names(schema, "point") == ["y", "lon", "z"]
    arrow = table.new_scan().to_arrow().schema
    new_rows = pa.table(
        {
            "id": [3],
            "point": [{"y": 31, "lon": 30, "z": 0.5}],
            "tags": [[{"key": "c", "n": 7}]],
            "attrs": [[("q", {"v": 2**40, "w": 9})]],
        },
        schema=arrow,
    )
    table.append(new_rows)
    got = sorted_rows(catalog.load_table("db.nested").new_scan().to_arrow())
    assert got == [
        {
            "id": 1,
            "point": {"y": 11, "lon": 10, "z": None},  # renamed field reads old data; new one is null
            "tags": [{"key": "a", "n": None}],
            "attrs": [("m", {"v": 1, "w": None})],
        },
        {"id": 2, "point": None, "tags": [], "attrs": None},
        {
            "id": 3,
            "point": {"y": 31, "lon": 30, "z": 0.5},
            "tags": [{"key": "c", "n": 7}],
            "attrs": [("q", {"v": 2**40, "w": 9})],
        },
    ]
    # A projection of the renamed nested field and a filter on it.
    assert table.new_scan().filter("point.lon >= 20").select("id", "point.lon").count() == 1

    # Deleting a nested field: old and new files read without it.
    table.update_schema().delete_column("point.z").delete_column("tags.n").commit()
    got = sorted_rows(table.new_scan().select("id", "point", "tags").to_arrow())
    assert got[0] == {"id": 1, "point": {"y": 11, "lon": 10}, "tags": [{"key": "a"}]}
    assert got[2] == {"id": 3, "point": {"y": 31, "lon": 30}, "tags": [{"key": "c"}]}
