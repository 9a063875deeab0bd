"""ViewMetadataBuilder follows Java's ViewMetadata.Builder: id reuse, -1 for last added, the
version log, dialect rules, version expiry."""

from __future__ import annotations

import pytest

from icefloe.errors import CommitFailedException, ValidationError, ValidationException
from icefloe.spec.schema import Schema
from icefloe.spec.types import IntegerType, LongType, NestedField, StringType
from icefloe.spec.updates import AddSchema, SetCurrentSchema, SetProperties
from icefloe.spec.view_builder import ViewMetadataBuilder, new_view_metadata
from icefloe.spec.views import (
    AddViewVersion,
    AssertViewUUID,
    SetCurrentViewVersion,
    SQLViewRepresentation,
    ViewVersion,
)

SCHEMA = Schema(NestedField(0, "id", LongType()), NestedField(1, "name", StringType()))


def version(
    sql: str, *, dialect: str = "spark", schema_id: int = 0, ts: int = 1000, **kw: object
) -> ViewVersion:
    return ViewVersion(
        version_id=1,
        schema_id=schema_id,
        timestamp_ms=ts,
        summary={"engine-name": "icefloe"},
        representations=(SQLViewRepresentation(sql, dialect),),
        default_namespace=("db",),
        **kw,  # type: ignore[arg-type]
    )


def test_new_view_has_one_version_one_schema_and_a_log_entry_stamped_with_the_version() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 1", ts=1234), "/wh/db/v", {"comment": "c"})
    assert md.current_version_id == 1
    assert md.schema() == SCHEMA
    assert [(e.version_id, e.timestamp_ms) for e in md.version_log] == [(1, 1234)]
    assert md.properties == {"comment": "c"}
    assert md.current_version().sql_for("SPARK") == SQLViewRepresentation("SELECT 1", "spark")
    AssertViewUUID(md.view_uuid).validate(md)


def test_replace_adds_a_version_with_the_next_id_and_reuses_an_equal_schema() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 1"), "/wh/db/v")
    builder = ViewMetadataBuilder(md)
    new_id = builder.set_current_version(version("SELECT 2", ts=2000), SCHEMA.replace(schema_id=7))
    replaced = builder.build()
    assert new_id == 2
    assert [s.schema_id for s in replaced.schemas] == [0]
    assert [v.version_id for v in replaced.versions] == [1, 2]
    assert [e.version_id for e in replaced.version_log] == [1, 2]
    # The recorded changes use -1 for what this change added, as Java's REST client sends them.
    assert isinstance(builder.changes[-1], SetCurrentViewVersion)
    assert builder.changes[-1].view_version_id == -1


def test_updates_with_last_added_ids_apply_as_spark_sends_them() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 1"), "/wh/db/v")
    other = Schema(NestedField(0, "n", IntegerType()), schema_id=1)
    replaced = (
        ViewMetadataBuilder(md)
        .apply_all(
            [
                SetProperties({"comment": "new"}),
                AddSchema(other, 0),
                AddViewVersion(version("SELECT n", schema_id=-1, ts=5)),
                SetCurrentViewVersion(-1),
            ]
        )
        .build()
    )
    assert replaced.current_version().schema_id == 1
    assert replaced.schema().fields[0].name == "n"


def test_an_equal_version_is_reused_and_rolling_back_logs_now() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 1"), "/wh/db/v")
    second = ViewMetadataBuilder(md)
    second.set_current_version(version("SELECT 2"), SCHEMA)
    md2 = second.build()
    back = ViewMetadataBuilder(md2)
    assert back.set_current_version(version("SELECT 1", ts=99), SCHEMA) == 1  # the same definition
    md3 = back.build()
    assert [v.version_id for v in md3.versions] == [1, 2]
    assert [e.version_id for e in md3.version_log] == [1, 2, 1]
    assert md3.version_log[-1].timestamp_ms > 99  # not the version's own time: it was not added now


def test_two_queries_of_one_dialect_and_dropping_a_dialect_are_refused() -> None:
    twice = ViewVersion(
        1,
        0,
        1,
        representations=(SQLViewRepresentation("a", "spark"), SQLViewRepresentation("b", "Spark")),
        default_namespace=("db",),
    )
    with pytest.raises(
        ValidationError, match=r"^Invalid view version: Cannot add multiple queries for dialect spark$"
    ):
        new_view_metadata(SCHEMA, twice, "/wh/v")
    md = new_view_metadata(SCHEMA, version("SELECT 1"), "/wh/v")
    builder = ViewMetadataBuilder(md)
    builder.set_current_version(version("SELECT 1", dialect="trino"), SCHEMA)
    with pytest.raises(ValidationException, match="drops dialect"):
        builder.build()
    allowed = ViewMetadataBuilder(md)
    allowed.apply(SetProperties({"replace.drop-dialect.allowed": "true"}))
    allowed.set_current_version(version("SELECT 1", dialect="trino"), SCHEMA)
    assert allowed.build().current_version().dialects() == {"trino"}


def test_versions_beyond_the_history_size_expire_and_cut_the_log() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 0"), "/wh/v", {"version.history.num-entries": "2"})
    for i in range(1, 4):
        builder = ViewMetadataBuilder(md)
        builder.set_current_version(version(f"SELECT {i}"), SCHEMA)
        md = builder.build()
    assert [v.version_id for v in md.versions] == [4, 3]
    assert [e.version_id for e in md.version_log] == [3, 4]


def test_a_table_update_and_a_foreign_uuid_are_refused() -> None:
    md = new_view_metadata(SCHEMA, version("SELECT 1"), "/wh/v")
    with pytest.raises(ValidationError, match="does not apply to a view"):
        ViewMetadataBuilder(md).apply(SetCurrentSchema(0))
    with pytest.raises(CommitFailedException, match="view UUID does not match"):
        AssertViewUUID("00000000-0000-0000-0000-000000000000").validate(md)
