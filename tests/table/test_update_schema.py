"""UpdateSchema: top-level schema evolution with Java's SchemaUpdate semantics (nested fields,
moves, union and identifier fields: test_update_schema_nested.py)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.schema import Schema
from icefloe.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    UnknownType,
)
from icefloe.spec.updates import AssertCurrentSchemaId, AssertLastAssignedFieldId
from support.catalogs import ARROW_SCHEMA, rows, sorted_rows

FAST_RETRIES = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}

# id, i (int), f (float), d (decimal(9, 2)), day (date), s (string), u (unknown: v3 only)
BASE_FIELDS = (
    NestedField(1, "id", LongType(), True),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "f", FloatType()),
    NestedField(4, "d", DecimalType(9, 2)),
    NestedField(5, "day", DateType()),
    NestedField(6, "s", StringType(), doc="a string"),
)


def _table(catalog: Catalog, version: int = 2, *, name: str = "db.t", **kwargs: Any) -> Table:
    fields: tuple[NestedField, ...] = BASE_FIELDS
    if version >= 3:
        fields = (*fields, NestedField(7, "u", UnknownType()))
    properties = {"format-version": str(version), **FAST_RETRIES, **kwargs.pop("properties", {})}
    return catalog.create_table(
        name, Schema(*fields, **kwargs.pop("schema_kwargs", {})), properties=properties, **kwargs
    )


def _names(table: Table) -> list[str]:
    return table.schema().column_names


# ---- adding --------------------------------------------------------------------------------


def test_add_columns_get_ids_from_last_column_id(catalog: Catalog) -> None:
    table = _table(catalog)
    assert table.metadata.last_column_id == 6
    update = table.update_schema().add_column("a", "long", "first").add_column("b", StringType())
    applied = update.apply()
    assert applied.schema_id == 1
    assert [(f.field_id, f.name, str(f.field_type), f.required, f.doc) for f in applied.fields[-2:]] == [
        (7, "a", "long", False, "first"),
        (8, "b", "string", False, None),
    ]
    assert table.schema().schema_id == 0 and len(table.schema()) == 6  # apply() commits nothing
    update.commit()
    assert table.schema() == applied
    assert table.metadata.last_column_id == 8
    assert catalog.load_table("db.t").schema() == applied
    with pytest.raises(ValidationError, match="already committed"):
        update.add_column("c", "int")

    # A deleted column's id is never reused: ids continue from last-column-id.
    table.update_schema().delete_column("b").commit()
    table.update_schema().add_column("b", "int").commit()
    assert table.schema().find_field("b").field_id == 9  # type: ignore[union-attr]
    assert table.metadata.last_column_id == 9
    assert [s.schema_id for s in table.metadata.schemas] == [0, 1, 2, 3]


def test_nested_types_get_fresh_ids_in_java_order(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().add_column("st", "struct<x: int, y: list<string>>").add_column(
        "m", "map<string, long>"
    ).commit()
    st = table.schema().field("st")
    # The column first, then its struct's fields, then what is nested below them (as Java).
    assert st.field_id == 7
    assert isinstance(st.field_type, StructType)
    x, y = st.field_type.fields
    assert (x.field_id, y.field_id) == (8, 9)
    assert isinstance(y.field_type, ListType) and y.field_type.element_id == 10
    m = table.schema().field("m")
    assert (m.field_id, m.field_type.key_id, m.field_type.value_id) == (11, 12, 13)  # type: ignore[attr-defined]
    assert table.metadata.last_column_id == 13


@pytest.mark.parametrize(
    ("build", "error", "needle"),
    [
        (lambda u: u.add_column("s", "int"), ValidationError, "already exists"),
        (lambda u: u.add_column("x", "int").add_column("x", "long"), ValidationError, "already added"),
        (lambda u: u.add_column("a.b", "int"), ValidationError, "no parent column 'a'"),
        (lambda u: u.add_column("s.b", "int"), ValidationError, "cannot add to non-struct column: s: string"),
        (lambda u: u.add_column("", "int"), ValidationError, "non-empty"),
        (lambda u: u.add_column("x", "nonsense"), ValidationError, "nonsense"),
        (lambda u: u.add_column("x", "timestamp_ns"), ValidationError, "format-version 3"),
        (lambda u: u.add_column("x", "int", default=1), ValidationError, "format-version 3"),
        (lambda u: u.add_required_column("x", "int"), ValidationError, "without a default value: x"),
        # allow_incompatible_changes applies to the calls after it, as in Java
        (
            lambda u: u.add_required_column("x", "int").allow_incompatible_changes(),
            ValidationError,
            "allow_incompatible_changes",
        ),
        (lambda u: u.case_sensitive(False).add_column("S", "int"), ValidationError, "already exists"),
    ],
)
def test_add_column_refusals(
    memory_catalog: Catalog, build: Any, error: type[Exception], needle: str
) -> None:
    table = _table(memory_catalog)
    with pytest.raises(error, match=needle):
        build(table.update_schema())


def test_add_required_column(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().allow_incompatible_changes().add_required_column("r", "int", "req").commit()
    field = table.schema().field("r")
    assert (field.required, field.doc, field.initial_default) == (True, "req", None)
    # Same name differing only in case is a different column when case-sensitive.
    table.update_schema().add_column("S", "int").commit()
    assert _names(table)[-1] == "S"


def test_add_column_re_adds_a_deleted_name_in_one_update(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().delete_column("s").add_column("s", "long").commit()
    field = table.schema().field("s")
    assert (field.field_id, field.field_type) == (7, LongType())
    assert _names(table) == ["id", "i", "f", "d", "day", "s"]


# ---- v3 defaults -----------------------------------------------------------------------------


def test_v3_required_column_with_default_reads_old_rows_as_the_default(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "3"})
    table.append(rows(3))
    update = table.update_schema()
    update.add_required_column("region", "string", default="eu")
    update.add_column("since", "date", default="2024-01-01")
    update.add_column("rate", "decimal(5, 2)", default="1.5")
    update.commit()
    region, since, rate = table.schema().fields[-3:]
    assert (region.required, region.initial_default, region.write_default) == (True, "eu", "eu")
    assert (since.required, since.initial_default) == (
        False,
        (dt.date(2024, 1, 1) - dt.date(1970, 1, 1)).days,
    )
    assert rate.initial_default == Decimal("1.50")
    # The defaults survive the metadata file round trip.
    assert memory_catalog.load_table("db.t").schema() == table.schema()

    result = table.new_scan().select("id", "region", "since", "rate").to_arrow()
    assert sorted_rows(result) == [
        {"id": i, "region": "eu", "since": dt.date(2024, 1, 1), "rate": Decimal("1.50")} for i in range(3)
    ]


@pytest.mark.parametrize(
    ("field_type", "default", "needle"),
    [
        ("int", "abc", "invalid default"),
        ("int", 2.5, "not exactly representable"),
        ("decimal(5, 2)", "1.234", "not exactly representable"),
        ("unknown", 1, "must default to null"),
        ("fixed[2]", b"abc", "fixed\\[2\\]"),
    ],
)
def test_bad_defaults_are_refused(
    memory_catalog: Catalog, field_type: str, default: Any, needle: str
) -> None:
    table = _table(memory_catalog, 3)
    with pytest.raises(ValidationError, match=needle):
        table.update_schema().add_column("x", field_type, default=default)


def test_update_column_default_changes_only_the_write_default(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 3)
    table.update_schema().add_column("x", "int", default=1).commit()
    table.update_schema().update_column_default("x", 2).commit()
    field = table.schema().field("x")
    assert (field.initial_default, field.write_default) == (1, 2)
    table2 = _table(memory_catalog, 2, name="db.t2")
    with pytest.raises(ValidationError, match="format-version 3"):
        table2.update_schema().update_column_default("i", 5)


# ---- renames -------------------------------------------------------------------------------


def test_rename_and_update_one_column(catalog: Catalog) -> None:
    table = _table(catalog)
    table.update_schema().rename_column("i", "count").update_column("i", "long", "now long").commit()
    field = table.schema().field(2)
    assert (field.name, field.field_type, field.doc) == ("count", LongType(), "now long")
    # Java allows dots in new names (only additions refuse them).
    table.update_schema().rename_column("count", "c.d").commit()
    assert table.schema().field(2).name == "c.d"


def test_swapping_names_in_one_update(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().rename_column("i", "s").rename_column("s", "i").commit()
    assert (table.schema().field("s").field_id, table.schema().field("i").field_id) == (2, 6)


def test_renaming_back_reuses_the_earlier_schema(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().rename_column("s", "t").commit()
    assert table.schema().schema_id == 1
    table.update_schema().rename_column("t", "s").commit()
    # As Java's TableMetadata builder: an equal schema is not added twice.
    assert table.schema().schema_id == 0
    assert len(table.schemas()) == 2


def test_rename_to_an_existing_name_is_refused(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    with pytest.raises(ValidationError, match="two columns would be named 's'"):
        table.update_schema().rename_column("i", "s").apply()


def test_case_insensitive_lookups(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    with pytest.raises(ValidationError, match="missing column: I"):
        table.update_schema().rename_column("I", "x")
    table.update_schema().case_sensitive(False).rename_column("I", "x").update_column("F", "double").commit()
    assert table.schema().field(2).name == "x"
    assert table.schema().field(3).field_type == DoubleType()


# ---- type promotions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "column", "target", "allowed"),
    [
        (1, "i", "long", True),
        (2, "f", "double", True),
        (2, "d", "decimal(12, 2)", True),
        (2, "d", "decimal(9, 2)", True),  # the same type: nothing changes
        (2, "i", "int", True),
        (2, "id", "int", False),
        (2, "i", "string", False),
        (2, "i", "double", False),
        (2, "f", "long", False),
        (2, "d", "decimal(12, 3)", False),
        (2, "d", "decimal(8, 2)", False),
        (2, "s", "binary", False),
        (2, "day", "timestamp", False),  # a v3 promotion
        (3, "day", "timestamp", True),
        (3, "day", "timestamp_ns", True),
        (3, "day", "timestamptz", False),
        (3, "day", "timestamptz_ns", False),
        (3, "u", "string", True),
        (3, "u", "decimal(4, 1)", True),
        (3, "i", "list<int>", False),
    ],
)
def test_type_promotions_follow_the_spec(
    memory_catalog: Catalog, version: int, column: str, target: str, allowed: bool
) -> None:
    table = _table(memory_catalog, version)
    update = table.update_schema()
    if not allowed:
        with pytest.raises(ValidationError, match=f"cannot change column type: {column}"):
            update.update_column(column, target)
        return
    update.update_column(column, target).commit()
    assert str(table.schema().field(column).field_type) == target


@pytest.mark.parametrize(("transform", "allowed"), [("day", True), ("month", True), ("identity", False)])
def test_date_promotion_with_a_partition_source(
    memory_catalog: Catalog, transform: str, allowed: bool
) -> None:
    spec = "day" if transform == "identity" else f"{transform}(day)"
    table = _table(memory_catalog, 3, partition_by=[spec])
    if allowed:
        table.update_schema().update_column("day", "timestamp").commit()
        assert table.schema().field("day").field_type == TimestampType()
    else:
        with pytest.raises(ValidationError, match="would produce different values"):
            table.update_schema().update_column("day", "timestamp")


def test_date_promotion_converts_defaults_and_reads_old_files(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "3"})
    table.append(rows(3))
    table.update_schema().add_column("since", "date", default=1).commit()
    table.update_schema().update_column("since", "timestamp").update_column("day", "timestamp").commit()
    since = table.schema().field("since")
    assert (since.initial_default, since.write_default) == (86_400_000_000, 86_400_000_000)
    result = sorted_rows(table.new_scan().select("id", "day", "since").to_arrow())
    assert result[1] == {"id": 1, "day": dt.datetime(2024, 1, 2), "since": dt.datetime(1970, 1, 2)}


def test_promoted_columns_read_old_and_new_files(catalog: Catalog) -> None:
    arrow_schema = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("x", pa.float32())])
    table = catalog.create_table("db.t", arrow_schema)
    table.append(pa.table({"id": [1, 2], "x": [1.5, 2.5]}, schema=arrow_schema))
    table.update_schema().update_column("id", "long").update_column("x", "double").commit()
    new_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("x", pa.float64())])
    table.append(pa.table({"id": [2**40], "x": [1e300]}, schema=new_schema))
    result = table.new_scan().to_arrow()
    assert result.schema.field("id").type == pa.int64()
    assert sorted_rows(result) == [{"id": 1, "x": 1.5}, {"id": 2, "x": 2.5}, {"id": 2**40, "x": 1e300}]
    # Filters on the promoted column prune with the old files' 4-byte bounds.
    assert table.new_scan().filter("id > 1").count() == 2


# ---- docs and nullability ------------------------------------------------------------------


def test_docs(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().update_column_doc("i", "counts").update_column_doc("s", None).commit()
    assert (table.schema().field("i").doc, table.schema().field("s").doc) == ("counts", None)
    with pytest.raises(ValidationError, match="doc must be a string"):
        table.update_schema().update_column_doc("i", 5)  # type: ignore[arg-type]


def test_nullability(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    with pytest.raises(ValidationError, match="optional -> required"):
        table.update_schema().require_column("i")
    table.update_schema().require_column("id").make_column_optional("i").commit()  # no-ops
    assert table.schema().schema_id == 0
    table.update_schema().allow_incompatible_changes().require_column("i").commit()
    assert table.schema().field("i").required
    table.update_schema().make_column_optional("i").make_column_optional("id").commit()
    assert not table.schema().field("i").required and not table.schema().field("id").required


def test_requiring_a_defaulted_added_column_needs_no_flag(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 3)
    table.update_schema().add_column("x", "int", default=0).require_column("x").commit()
    assert table.schema().field("x").required
    with pytest.raises(ValidationError, match="optional -> required"):
        table.update_schema().add_column("y", "int").require_column("y")


# ---- deletes and conflicting changes ---------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda u: u.delete_column("s").rename_column("s", "x"), "rename a column that will be deleted: s"),
        (lambda u: u.rename_column("s", "x").delete_column("s"), "delete a column that has updates: s"),
        (
            lambda u: u.delete_column("i").update_column("i", "long"),
            "update a column that will be deleted: i",
        ),
        (lambda u: u.update_column("i", "long").delete_column("i"), "delete a column that has updates: i"),
        (lambda u: u.delete_column("s").update_column_doc("s", "x"), "will be deleted"),
        (
            lambda u: u.allow_incompatible_changes().delete_column("s").require_column("s"),
            "will be deleted",
        ),
        (lambda u: u.update_column_doc("i", "x").delete_column("i"), "has updates"),
        (lambda u: u.add_column("x", "int").delete_column("x"), "delete missing column: x"),
        (lambda u: u.add_column("x", "int").rename_column("x", "y"), "rename missing column: x"),
        (lambda u: u.delete_column("nope"), "delete missing column: nope"),
        (lambda u: u.update_column("nope", "long"), "update missing column: nope"),
        (lambda u: u.make_column_optional("nope"), "update missing column: nope"),
    ],
)
def test_conflicting_changes_are_refused(memory_catalog: Catalog, build: Any, needle: str) -> None:
    table = _table(memory_catalog)
    with pytest.raises(ValidationError, match=needle):
        build(table.update_schema())


def test_changes_to_an_added_column_merge_into_it(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    table.update_schema().add_column("x", "int").update_column("x", "long").update_column_doc(
        "x", "d"
    ).commit()
    field = table.schema().field("x")
    assert (field.field_id, field.field_type, field.doc) == (7, LongType(), "d")


def test_deleting_partition_and_sort_sources_is_refused(catalog: Catalog) -> None:
    table = _table(catalog, partition_by=["bucket(4, s)"], sort_by=["i"])
    with pytest.raises(ValidationException, match="partition field"):
        table.update_schema().delete_column("s").commit()
    with pytest.raises(ValidationException, match="sort field"):
        table.update_schema().delete_column("i").commit()
    assert table.schema().schema_id == 0
    assert catalog.load_table("db.t").schema().schema_id == 0
    # Renaming and promoting them is fine.
    table.update_schema().rename_column("s", "s2").update_column("i", "long").commit()
    assert _names(table)[1] == "i" and _names(table)[5] == "s2"


def test_identifier_fields_cannot_be_deleted_or_made_optional(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, schema_kwargs={"identifier_field_ids": [1]})
    with pytest.raises(ValidationError, match="identifier field id"):
        table.update_schema().delete_column("id").apply()
    with pytest.raises(ValidationError, match="field 'id' as an identifier field: not a required field"):
        table.update_schema().make_column_optional("id").commit()
    table.update_schema().rename_column("id", "key").commit()
    assert table.schema().identifier_field_ids == (1,)
    assert table.schema().identifier_field_names() == ["key"]


# ---- properties kept in step -------------------------------------------------------------------


def test_name_mapping_follows_renames_and_additions(memory_catalog: Catalog) -> None:
    mapping = [{"field-id": i, "names": [f.name]} for i, f in enumerate(BASE_FIELDS, start=1)]
    mapping[5]["names"] = ["s", "legacy_s"]
    table = _table(memory_catalog, properties={"schema.name-mapping.default": json.dumps(mapping)})
    table.update_schema().rename_column("i", "count").add_column("n", "struct<a: int>").delete_column(
        "f"
    ).commit()
    updated = json.loads(table.properties()["schema.name-mapping.default"])
    by_id = {m["field-id"]: m for m in updated}
    assert by_id[2]["names"] == ["i", "count"]  # the old name stays an alias
    assert by_id[3]["names"] == ["f"]  # deleted columns keep their entry (as Java)
    assert by_id[6]["names"] == ["s", "legacy_s"]
    assert by_id[7] == {"field-id": 7, "names": ["n"], "fields": [{"field-id": 8, "names": ["a"]}]}

    # Tables without a mapping do not get one.
    plain = _table(memory_catalog, name="db.plain")
    plain.update_schema().rename_column("i", "count").commit()
    assert "schema.name-mapping.default" not in plain.properties()


def test_unreadable_name_mapping_does_not_block_the_change(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, properties={"schema.name-mapping.default": "not json"})
    table.update_schema().rename_column("i", "count").commit()
    assert table.properties()["schema.name-mapping.default"] == "not json"
    assert table.schema().field(2).name == "count"


def test_column_properties_follow_renames_and_deletes(memory_catalog: Catalog) -> None:
    properties = {
        "write.metadata.metrics.column.i": "full",
        "write.metadata.metrics.column.s": "counts",
        "write.parquet.bloom-filter-enabled.column.i": "true",
        "write.parquet.stats-enabled.column.f": "false",
        "write.metadata.metrics.default": "none",
    }
    table = _table(memory_catalog, properties=properties)
    table.update_schema().rename_column("i", "count").delete_column("s").delete_column("f").commit()
    current = {k: v for k, v in table.properties().items() if k.startswith("write.")}
    assert current == {
        "write.metadata.metrics.column.count": "full",
        "write.parquet.bloom-filter-enabled.column.count": "true",
        "write.metadata.metrics.default": "none",
        "write.parquet.compression-codec": "zstd",  # a new table's default
    }


# ---- commits, retries and transactions -----------------------------------------------------------


def test_commit_requirements_guard_the_schema(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    update = table.update_schema().add_column("x", "int")
    changes = update._produce(table.metadata)
    assert AssertCurrentSchemaId(0) in changes.requirements
    assert AssertLastAssignedFieldId(6) in changes.requirements
    assert update._produce(table.metadata).updates == changes.updates  # no side effects
    assert table.update_schema()._produce(table.metadata).updates == ()  # nothing to change


def test_concurrent_additions_are_both_kept(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    stale = memory_catalog.load_table("db.t")
    table.update_schema().add_column("a", "int").commit()
    update = stale.update_schema().add_column("b", "long").rename_column("s", "s2")
    assert update.apply().field("b").field_id == 7  # as the stale table sees it
    update.commit()  # the requirement fails, the retry re-applies to the fresh schema
    assert [(f.field_id, f.name) for f in stale.schema().fields[-3:]] == [(6, "s2"), (7, "a"), (8, "b")]
    assert stale.metadata.last_column_id == 8
    assert stale.schema().schema_id == 2


def test_a_concurrent_conflicting_change_is_a_validation_exception(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog)
    stale = memory_catalog.load_table("db.t")
    table.update_schema().delete_column("s").commit()
    with pytest.raises(ValidationException, match="missing column: s"):
        stale.update_schema().rename_column("s", "t").commit()
    assert memory_catalog.load_table("db.t").schema() == table.schema()

    # A concurrent addition of the same name.
    stale = memory_catalog.load_table("db.t")
    table.update_schema().add_column("x", "int").commit()
    with pytest.raises(ValidationException, match="already exists"):
        stale.update_schema().add_column("x", "long").commit()


def test_schema_change_and_append_in_one_transaction(catalog: Catalog, format_version: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(format_version)})
    first = table.append(rows(2))
    assert first is not None
    txn = table.new_transaction()
    txn.update_schema().add_column("note", "string").rename_column("name", "label").commit()
    txn.update_properties().set("owner", "me").commit()
    new_rows = rows(2, start=2).rename_columns(["id", "label", "ts", "day", "amount", "score"])
    new_rows = new_rows.append_column("note", pa.array(["n2", "n3"]))
    txn.append(new_rows)
    assert "note" not in table.schema().column_names  # nothing committed yet
    txn.commit_transaction()
    assert table.properties()["owner"] == "me"
    assert "note" in catalog.load_table("db.t").schema().column_names
    result = sorted_rows(table.new_scan().select("id", "label", "note").to_arrow())
    assert result == [
        {"id": 0, "label": "a", "note": None},
        {"id": 1, "label": "b", "note": None},
        {"id": 2, "label": "c", "note": "n2"},
        {"id": 3, "label": "a", "note": "n3"},
    ]
    # Time travel reads the first snapshot with the schema it was written with.
    old = table.new_scan().use_snapshot(first.snapshot_id).to_arrow()
    assert old.column_names == ARROW_SCHEMA.names


def test_upgrade_then_add_a_defaulted_column_in_one_transaction(memory_catalog: Catalog) -> None:
    table = _table(memory_catalog, 2)
    txn = table.new_transaction()
    txn.update_properties().set("format-version", "3").commit()
    txn.update_schema().add_required_column("r", "int", default=5).commit()
    txn.commit_transaction()
    assert table.format_version() == 3
    assert table.schema().field("r").initial_default == 5
