"""UpdateSchema: union_by_name_with (Java's TestSchemaUnionByNameVisitor), set_identifier_fields
(Java's TestSchemaUpdate identifier cases), and properties kept in step for nested changes."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationError, ValidationException
from icefloe.serde.name_mapping_json import dumps_name_mapping
from icefloe.spec.name_mapping import create_mapping_from_schema
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DecimalType,
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
from table.test_update_schema_nested import SCHEMA

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}


def _table(catalog: Catalog, *fields: NestedField, **kwargs: Any) -> Table:
    return catalog.create_table("db.u", Schema(*fields), properties=FAST_RETRIES, **kwargs)


def _union(catalog: Catalog, existing: list[NestedField], new: list[NestedField], **kwargs: Any) -> Schema:
    table = _table(catalog, *existing)
    return table.update_schema().union_by_name_with(Schema(*new), **kwargs).apply()


def _plain(schema: Schema) -> str:
    return str(schema.as_struct())


# ---- union_by_name_with ------------------------------------------------------------------------


def test_union_adds_top_level_and_nested_columns(memory_catalog: Catalog) -> None:
    existing = [
        NestedField(1, "id", LongType(), True),
        NestedField(2, "point", StructType(NestedField(3, "x", DoubleType(), True))),
        NestedField(4, "tags", ListType(5, StructType(NestedField(6, "k", StringType())), False)),
        NestedField(
            7, "attrs", MapType(8, StringType(), 9, StructType(NestedField(10, "v", IntegerType())), False)
        ),
    ]
    new = [
        NestedField(100, "name", StringType(), True, doc="the name"),  # added optional (as Java)
        NestedField(
            101,
            "point",
            StructType(NestedField(102, "y", DoubleType()), NestedField(103, "x", DoubleType(), True)),
        ),
        NestedField(104, "tags", ListType(105, StructType(NestedField(106, "n", IntegerType())), False)),
        NestedField(
            107,
            "attrs",
            MapType(108, StringType(), 109, StructType(NestedField(110, "w", LongType())), False),
        ),
        NestedField(111, "extra", StructType(NestedField(112, "a", ListType(113, IntegerType())))),
    ]
    applied = _union(memory_catalog, existing, new)
    assert _plain(applied) == (
        "struct<id: long, point: struct<x: double, y: double>, tags: list<struct<k: string, n: int>>, "
        "attrs: map<string, struct<v: int, w: long>>, name: string, extra: struct<a: list<int>>>"
    )
    # Children first (as Java's visitor), then each struct's fields in order: fresh ids from 11.
    ids = {
        name: applied.field(name).field_id
        for name in ("point.y", "tags.n", "attrs.w", "name", "extra", "extra.a")
    }
    assert ids == {"point.y": 11, "tags.n": 12, "attrs.w": 13, "name": 14, "extra": 15, "extra.a": 16}
    assert applied.field("extra.a.element").field_id == 17
    name = applied.field("name")
    assert (name.required, name.doc) == (False, "the name")
    assert applied.field("id").required  # never relaxed when the new field is required too
    # Nothing is dropped: a union with a subset is no change.
    assert _plain(_union_again(memory_catalog, applied)) == _plain(applied)


def _union_again(catalog: Catalog, schema: Schema) -> Schema:
    table = catalog.create_table("db.again", schema)
    return table.update_schema().union_by_name_with(Schema(NestedField(1, "id", LongType(), True))).apply()


@pytest.mark.parametrize(
    ("existing", "new", "expected"),
    [
        (IntegerType(), LongType(), LongType()),
        (FloatType(), DoubleType(), DoubleType()),
        (DecimalType(9, 2), DecimalType(18, 2), DecimalType(18, 2)),
        # A narrower new type is ignored (Java's isIgnorableTypeUpdate).
        (LongType(), IntegerType(), LongType()),
        (DoubleType(), FloatType(), DoubleType()),
        (DecimalType(18, 2), DecimalType(9, 2), DecimalType(18, 2)),
    ],
)
def test_union_promotes_wider_types(memory_catalog: Catalog, existing: Any, new: Any, expected: Any) -> None:
    nested = lambda t: NestedField(1, "s", StructType(NestedField(2, "v", t)))  # noqa: E731
    applied = _union(
        memory_catalog,
        [nested(existing), NestedField(3, "m", MapType(4, StringType(), 5, existing))],
        [
            nested(new),
            NestedField(3, "m", MapType(4, StringType(), 5, new)),
        ],
    )
    assert applied.field("s.v").field_type == expected
    assert applied.field("m.value").field_type == expected


@pytest.mark.parametrize(
    ("existing", "new", "needle"),
    [
        (IntegerType(), StringType(), "cannot change column type: s.v: int -> string"),
        (LongType(), DecimalType(10, 2), "cannot change column type: s.v: long -> decimal"),
        (
            StructType(NestedField(9, "a", IntegerType())),
            IntegerType(),
            "cannot change column type: s.v: struct<a: int> -> int",
        ),
        (
            IntegerType(),
            StructType(NestedField(9, "a", IntegerType())),
            "cannot change column type: s.v: int -> struct",
        ),
        (
            ListType(9, IntegerType()),
            MapType(9, StringType(), 10, IntegerType()),
            "list<int> -> map<string, int>",
        ),
    ],
)
def test_union_refuses_incompatible_types(
    memory_catalog: Catalog, existing: Any, new: Any, needle: str
) -> None:
    with pytest.raises(ValidationError, match=needle):
        _union(
            memory_catalog,
            [NestedField(1, "s", StructType(NestedField(2, "v", existing)))],
            [NestedField(1, "s", StructType(NestedField(2, "v", new)))],
        )


def test_refused_union_leaves_the_update_as_it_was(memory_catalog: Catalog) -> None:
    # The union adds ``extra`` before it reaches the refused long -> string change.
    table = _table(memory_catalog, NestedField(1, "id", LongType()))
    update = table.update_schema().add_column("kept", IntegerType())
    with pytest.raises(ValidationError, match="long -> string"):
        update.union_by_name_with(
            Schema(NestedField(1, "extra", StringType()), NestedField(2, "id", StringType()))
        )
    assert [f.name for f in update.apply().fields] == ["id", "kept"]
    update.commit()
    assert [f.name for f in table.refresh().schema().fields] == ["id", "kept"]


def test_union_relaxes_requiredness_and_takes_docs(memory_catalog: Catalog) -> None:
    existing = [
        NestedField(1, "a", IntegerType(), True, doc="old"),
        NestedField(2, "l", ListType(3, StructType(NestedField(4, "x", IntegerType(), True)), True), True),
        NestedField(5, "m", MapType(6, StringType(), 7, IntegerType(), True), True),
    ]
    new = [
        NestedField(1, "a", IntegerType(), False),  # no doc: the old doc stays
        NestedField(
            2, "l", ListType(3, StructType(NestedField(4, "x", IntegerType(), False, doc="ex")), False), True
        ),
        NestedField(5, "m", MapType(6, StringType(), 7, IntegerType(), False)),
    ]
    applied = _union(memory_catalog, existing, new)
    a, lst, m = applied.fields
    assert (a.required, a.doc) == (False, "old")
    assert not lst.field_type.element_required and lst.required
    x = applied.field("l.x")
    assert (x.required, x.doc) == (False, "ex")
    assert not m.required and not m.field_type.value_required


def test_union_never_tightens_or_drops(memory_catalog: Catalog) -> None:
    existing = [NestedField(1, "a", IntegerType()), NestedField(2, "b", StringType())]
    applied = _union(memory_catalog, existing, [NestedField(1, "a", IntegerType(), True)])
    assert _plain(applied) == "struct<a: int, b: string>" and not applied.field("a").required


def test_union_case_insensitive_and_from_pyarrow(memory_catalog: Catalog) -> None:
    table = _table(
        memory_catalog,
        NestedField(1, "ID", IntegerType(), True),
        NestedField(2, "Point", StructType(NestedField(3, "X", FloatType()))),
    )
    arrow = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("point", pa.struct([pa.field("x", pa.float64()), pa.field("z", pa.string())])),
        ]
    )
    # Case-sensitive: "id" and "point" are other columns than "ID" and "Point".
    applied = table.update_schema().union_by_name_with(arrow).apply()
    assert applied.column_names == ["ID", "Point", "id", "point"]
    applied = table.update_schema().case_sensitive(False).union_by_name_with(arrow).apply()
    assert _plain(applied) == "struct<ID: long, Point: struct<X: double, z: string>>"
    with pytest.raises(ValidationError, match=r"icefloe Schema or a pyarrow Schema"):
        table.update_schema().union_by_name_with({"id": "int"})  # type: ignore[arg-type]


def test_union_then_data_round_trip(memory_catalog: Catalog) -> None:
    arrow_v1 = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.struct([pa.field("a", pa.int32())]))]
    )
    table = memory_catalog.create_table("db.data", arrow_v1)
    table.append(pa.table({"id": [1], "p": [{"a": 5}]}, schema=arrow_v1))
    arrow_v2 = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("p", pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())])),
            pa.field("c", pa.list_(pa.float64())),
        ]
    )
    table.update_schema().union_by_name_with(arrow_v2).commit()
    table.append(pa.table({"id": [2], "p": [{"a": 2**40, "b": "x"}], "c": [[1.5]]}, schema=arrow_v2))
    got = sorted(table.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == [
        {"id": 1, "p": {"a": 5, "b": None}, "c": None},
        {"id": 2, "p": {"a": 2**40, "b": "x"}, "c": [1.5]},
    ]


# ---- set_identifier_fields -----------------------------------------------------------------------


@pytest.fixture
def table(memory_catalog: Catalog) -> Table:
    return memory_catalog.create_table("db.t", SCHEMA, properties=FAST_RETRIES)


def test_set_existing_and_added_identifier_fields(table: Table) -> None:
    assert table.update_schema().set_identifier_fields("id").apply().identifier_field_ids == (1,)
    # Added columns may be identifier fields, whichever call comes first (Java's testAddNewIdentifierFieldColumns).
    for order in ("add-first", "set-first"):
        update = table.update_schema().allow_incompatible_changes()
        if order == "set-first":
            update.set_identifier_fields("id", "new_field")
        update.add_required_column("new_field", "string")
        if order == "add-first":
            update.set_identifier_fields(["id", "new_field"])
        applied = update.apply()
        assert applied.identifier_field_ids == (1, applied.field("new_field").field_id)
    # Nested in required structs, added in this update (Java's testAddNestedIdentifierFieldColumns).
    update = table.update_schema().allow_incompatible_changes()
    inner = StructType(NestedField(0, "nested", StringType(), True))
    update.add_required_column("new", StructType(NestedField(0, "field", inner, True)))
    applied = update.set_identifier_fields("new.field.nested").apply()
    assert applied.identifier_field_names() == ["new.field.nested"]
    # A top-level name with a dot (Java's testAddDottedIdentifierFieldColumns).
    applied = (
        table.update_schema()
        .allow_incompatible_changes()
        .add_required_column(("dot.field",), "string")
        .set_identifier_fields("id", "dot.field")
        .apply()
    )
    assert applied.identifier_field_names() == ["id", "dot.field"]


def test_identifier_fields_commit_and_clear(table: Table) -> None:
    table.update_schema().set_identifier_fields("id").commit()
    assert table.schema().identifier_field_ids == (1,)
    table.update_schema().set_identifier_fields().commit()
    assert table.schema().identifier_field_ids == ()


@pytest.mark.parametrize(
    ("names", "needle"),
    [
        (["unknown"], "cannot add field unknown as an identifier field: not found"),
        (["locations"], "'locations' as an identifier field: not a primitive type field"),
        (["data"], "'data' as an identifier field: not a required field"),
        (["locations.key.zip"], "'locations.key.zip' as an identifier field: must not be nested in map<"),
        (["points.element.x"], "'points.element.x' as an identifier field: must not be nested in list<"),
        (["preferences.feature1"], "must not be nested in an optional field 'preferences'"),
        (["doubles.element"], "must not be float or double"),
    ],
)
def test_identifier_field_refusals(table: Table, names: list[str], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        table.update_schema().set_identifier_fields(*names).apply()


def test_float_identifier_fields_are_refused(table: Table) -> None:
    update = table.update_schema().allow_incompatible_changes().add_required_column("f", "float")
    with pytest.raises(ValidationError, match=r"'f' as an identifier field: must not be float or double"):
        update.set_identifier_fields("f").apply()


def test_deleting_identifier_fields(table: Table) -> None:
    table.update_schema().set_identifier_fields("id").commit()
    with pytest.raises(ValidationError, match=r"cannot delete identifier field id .* set_identifier_fields"):
        table.update_schema().delete_column("id").apply()
    # Java's testDeleteIdentifierFieldColumns: resetting the identifier fields allows it, either order.
    assert (
        table.update_schema().delete_column("id").set_identifier_fields().apply().identifier_field_ids == ()
    )
    assert (
        table.update_schema().set_identifier_fields().delete_column("id").apply().identifier_field_ids == ()
    )


def test_deleting_a_struct_holding_an_identifier_field(table: Table) -> None:
    update = table.update_schema().allow_incompatible_changes()
    update.add_required_column("out", StructType(NestedField(0, "nested", StringType(), True)))
    update.set_identifier_fields("out.nested").commit()
    with pytest.raises(
        ValidationError, match=r"cannot delete field out as it will delete nested identifier field out.nested"
    ):
        table.update_schema().delete_column("out").apply()


def test_renames_and_moves_keep_identifier_fields(table: Table) -> None:
    update = table.update_schema().allow_incompatible_changes()
    update.add_required_column("out", StructType(NestedField(0, "nested", StringType(), True)))
    update.set_identifier_fields("id", "out.nested").commit()
    table.update_schema().rename_column("id", "id2").rename_column("out", "outer").rename_column(
        "out.nested", "inner"
    ).move_after("id", "locations").commit()
    assert table.schema().identifier_field_names() == ["id2", "outer.inner"]
    assert table.schema().fields[3].name == "id2"  # moved after locations
    # Named in this update, then renamed (as Java: the identifier follows the rename).
    applied = table.update_schema().set_identifier_fields("outer.inner").rename_column("outer", "o").apply()
    assert applied.identifier_field_names() == ["o.inner"]


def test_identifier_names_refer_to_the_new_schema(table: Table) -> None:
    # As Java: after a rename the old name is gone from the new schema.
    with pytest.raises(ValidationError, match=r"cannot add field id as an identifier field: not found"):
        table.update_schema().rename_column("id", "key").set_identifier_fields("id").apply()
    applied = table.update_schema().rename_column("id", "key").set_identifier_fields("key").apply()
    assert applied.identifier_field_ids == (1,)
    applied = table.update_schema().set_identifier_fields("id").rename_column("id", "key").apply()
    assert applied.identifier_field_names() == ["key"]
    applied = table.update_schema().case_sensitive(False).set_identifier_fields("ID").apply()
    assert applied.identifier_field_ids == (1,)


def test_identifier_field_made_optional_is_refused(table: Table) -> None:
    table.update_schema().set_identifier_fields("id").commit()
    with pytest.raises(ValidationError, match=r"'id' as an identifier field: not a required field"):
        table.update_schema().make_column_optional("id").apply()


# ---- properties kept in step for nested changes ----------------------------------------------------


def test_name_mapping_follows_nested_adds_and_renames(table: Table) -> None:
    table.update_properties().set(
        "schema.name-mapping.default", dumps_name_mapping(create_mapping_from_schema(table.schema()))
    ).commit()
    table.update_schema().rename_column("preferences.feature1", "f1").add_column(
        "preferences.f3", "int"
    ).add_column("points.z", "long").add_column("locations.alt", "struct<m: double>").commit()
    mapping = json.loads(table.properties()["schema.name-mapping.default"])
    by_name = {m["names"][0]: m for m in mapping}
    prefs = {f["names"][0]: f for f in by_name["preferences"]["fields"]}
    assert prefs["feature1"]["names"] == ["feature1", "f1"]
    assert prefs["f3"] == {"field-id": 24, "names": ["f3"]}
    element = by_name["points"]["fields"][0]
    assert element["names"] == ["element"] and element["fields"][-1] == {"field-id": 25, "names": ["z"]}
    value = by_name["locations"]["fields"][1]
    assert value["fields"][-1] == {
        "field-id": 26,
        "names": ["alt"],
        "fields": [{"field-id": 27, "names": ["m"]}],
    }


def test_column_properties_follow_nested_renames_and_deletes(table: Table) -> None:
    table.update_properties().set("write.metadata.metrics.column.preferences.feature1", "full").set(
        "write.parquet.bloom-filter-enabled.column.points.element.x", "true"
    ).set("write.metadata.metrics.column.preferences.feature2", "counts").commit()
    table.update_schema().rename_column("preferences.feature1", "f1").rename_column(
        "points.x", "px"
    ).delete_column("preferences.feature2").commit()
    current = {k: v for k, v in table.properties().items() if k.startswith("write.")}
    assert current == {
        "write.metadata.metrics.column.preferences.f1": "full",
        "write.parquet.bloom-filter-enabled.column.points.element.px": "true",
        "write.parquet.compression-codec": "zstd",  # a new table's default
    }


def test_nested_changes_replay_on_retry(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", SCHEMA, properties=FAST_RETRIES)
    stale = memory_catalog.load_table("db.t")
    table.update_schema().add_column("preferences.a", "int").commit()
    update = (
        stale.update_schema()
        .add_column("preferences.b", "long")
        .move_first("preferences.b")
        .rename_column("points.x", "px")
    )
    update.set_identifier_fields("id")
    update.commit()
    schema = stale.schema()
    prefs = [(f.field_id, f.name) for f in schema.field("preferences").field_type.fields]  # type: ignore[attr-defined]
    assert prefs == [(25, "b"), (8, "feature1"), (9, "feature2"), (24, "a")]
    assert schema.field("points.px").field_id == 19 and schema.identifier_field_ids == (1,)

    # A concurrent delete of the parent struct makes the replay fail.
    stale = memory_catalog.load_table("db.t")
    table.update_schema().delete_column("points").commit()
    with pytest.raises(ValidationException, match=r"cannot find parent struct: points"):
        stale.update_schema().add_column("points.q", "int").commit()
