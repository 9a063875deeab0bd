"""UpdateProperties: set, remove, format-version upgrades, reserved names."""

from __future__ import annotations

import pytest

from icefloe import Catalog
from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.manifest import FileFormat
from support.catalogs import ARROW_SCHEMA, rows


def test_set_and_remove(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"a": "1", "b": "2"})
    update = table.update_properties().set("c", "3").remove("a")
    assert update.apply() == {**{k: v for k, v in table.properties().items() if k != "a"}, "c": "3"}
    assert table.properties()["a"] == "1"  # apply() commits nothing
    update.commit()
    assert table.properties()["c"] == "3"
    assert "a" not in table.properties()
    assert table.properties()["b"] == "2"
    reloaded = catalog.load_table("db.t")
    assert reloaded.properties() == table.properties()

    # Removing a key that is not there is fine (as Java).
    table.update_properties().set("b", "changed").remove("not-there").commit()
    assert table.properties()["b"] == "changed"
    table.update_properties().default_format("PARQUET").commit()
    assert table.properties()["write.format.default"] == "parquet"


def test_set_and_remove_same_key_is_refused(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match="'k'"):
        table.update_properties().set("k", "v").remove("k")
    with pytest.raises(ValidationError, match="'k'"):
        table.update_properties().remove("k").set("k", "v")


@pytest.mark.parametrize(("key", "value"), [("", "v"), ("k", 1)])
def test_bad_keys_and_values(memory_catalog: Catalog, key: str, value: object) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError):
        table.update_properties().set(key, value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name",
    [
        "uuid",
        "snapshot-count",
        "current-snapshot-id",
        "current-snapshot-summary",
        "current-snapshot-timestamp-ms",
        "current-schema",
        "default-partition-spec",
        "default-sort-order",
    ],
)
def test_reserved_names_are_refused(memory_catalog: Catalog, name: str) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match=name):
        table.update_properties().set(name, "x")
    with pytest.raises(ValidationError, match=name):
        table.update_properties().remove(name)


@pytest.mark.parametrize(("start", "target"), [(1, 2), (2, 3), (1, 3)])
def test_format_version_upgrade(catalog: Catalog, start: int, target: int) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(start)})
    first = table.append(rows(2))
    assert first is not None
    assert table.update_properties().set("format-version", str(target)).apply().get("format-version") is None
    table.update_properties().set("format-version", str(target)).commit()
    assert table.format_version() == target
    assert "format-version" not in table.properties()  # not stored as a property
    assert catalog.load_table("db.t").format_version() == target

    second = table.append(rows(2, start=2))
    assert second is not None
    assert second.sequence_number == first.sequence_number + 1
    if target == 3:
        # As Java's v3 manifest list writer: the pre-v3 manifest gets row ids too (2 rows),
        # then the new one (2 rows); ids start at the upgraded table's next-row-id, 0.
        assert (second.first_row_id, second.added_rows) == (0, 4)
        assert table.metadata.next_row_id == 4
    assert table.new_scan().count() == 4


def test_same_format_version_changes_nothing(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "2"})
    table.update_properties().set("format-version", "2").commit()
    assert table.format_version() == 2


@pytest.mark.parametrize(
    ("start", "target", "needle"),
    [(2, "1", "downgrade"), (3, "2", "downgrade"), (2, "9", "9"), (2, "x", "x")],
)
def test_format_version_refusals(memory_catalog: Catalog, start: int, target: str, needle: str) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": str(start)})
    with pytest.raises(ValidationError, match=needle):
        table.update_properties().set("format-version", target).commit()
    assert table.format_version() == start
    assert memory_catalog.load_table("db.t").format_version() == start


def test_properties_in_a_transaction_combine(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    txn = table.new_transaction()
    txn.update_properties().set("a", "1").commit()
    txn.update_properties().set("b", "2").remove("a").commit()
    assert "a" not in table.properties() and "b" not in table.properties()
    txn.commit_transaction()
    assert "a" not in table.properties()
    assert table.properties()["b"] == "2"


def test_format_version_cannot_be_removed(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match="format-version"):
        table.update_properties().remove("format-version")


def test_upgrade_and_properties_in_one_update(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA, properties={"format-version": "1", "a": "1"})
    table.update_properties().set("format-version", "3").set("b", "2").remove("a").commit()
    assert table.format_version() == 3
    assert table.properties().get("b") == "2" and "a" not in table.properties()
    assert "format-version" not in memory_catalog.load_table("db.t").properties()


@pytest.mark.parametrize(
    ("value", "stored"), [("PARQUET", "parquet"), ("avro", "avro"), (FileFormat.ORC, "orc")]
)
def test_default_format(memory_catalog: Catalog, value: object, stored: str) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    table.update_properties().default_format(value).commit()  # type: ignore[arg-type]
    assert table.properties()["write.format.default"] == stored


@pytest.mark.parametrize("value", ["csv", FileFormat.PUFFIN, 3])
def test_default_format_refuses_other_formats(memory_catalog: Catalog, value: object) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match="invalid default file format"):
        table.update_properties().default_format(value)  # type: ignore[arg-type]


def test_metrics_modes_must_name_a_column(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationException, match="could not find column 'nope'"):
        table.update_properties().set("write.metadata.metrics.column.nope", "full").commit()
    assert "write.metadata.metrics.column.nope" not in table.properties()
    table.update_properties().set("write.metadata.metrics.column.name", "full").commit()
    assert table.properties()["write.metadata.metrics.column.name"] == "full"
    # A stale key left by another writer does not block unrelated updates.
    table.update_schema().rename_column("name", "label").commit()  # the key follows the column
    assert table.properties()["write.metadata.metrics.column.label"] == "full"
    table.update_properties().set("write.metadata.metrics.column.label", "counts").commit()
    stale = {"write.metadata.metrics.column.gone": "none"}
    table2 = memory_catalog.create_table("db.t2", ARROW_SCHEMA, properties=stale)
    table2.update_properties().set("x", "y").commit()
    assert table2.properties()["x"] == "y"


def test_concurrent_property_updates_both_apply(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table(
        "db.t", ARROW_SCHEMA, properties={"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "5"}
    )
    stale = memory_catalog.load_table("db.t")
    table.update_properties().set("a", "1").commit()
    stale.update_properties().set("b", "2").commit()  # retried on the fresh metadata
    properties = memory_catalog.load_table("db.t").properties()
    assert (properties["a"], properties["b"]) == ("1", "2")
