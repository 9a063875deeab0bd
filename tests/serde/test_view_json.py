"""View metadata JSON: Java's files round-trip byte for byte; view updates and requirements in
REST JSON; malformed input names the field."""

from __future__ import annotations

import gzip

import pytest

from icefloe.errors import InvalidMetadataError
from icefloe.serde.view_json import (
    dumps_view_metadata,
    loads_view_metadata,
    view_requirement_from_json,
    view_requirement_to_json,
    view_update_from_json,
    view_update_to_json,
)
from icefloe.spec.updates import AddSchema, SetProperties
from icefloe.spec.views import AddViewVersion, AssertViewUUID, SetCurrentViewVersion

from ._fixtures import FIXTURES

JAVA_VIEW = FIXTURES / "views" / "java_spark_view_replaced.gz.metadata.json"


def test_a_view_java_wrote_round_trips_byte_for_byte() -> None:
    data = JAVA_VIEW.read_bytes()
    md = loads_view_metadata(data, location=str(JAVA_VIEW))
    assert md.current_version_id == 2
    assert md.current_version().sql_for("spark") is not None
    assert md.schema().fields[0].name == "id"
    assert md.properties["spark.query-column-names"] == "id"
    assert gzip.decompress(dumps_view_metadata(md)) == gzip.decompress(data)
    assert loads_view_metadata(dumps_view_metadata(md, compression="none")) == md


def test_view_updates_round_trip_and_table_only_updates_are_refused() -> None:
    md = loads_view_metadata(JAVA_VIEW.read_bytes())
    for update in (
        AddViewVersion(md.current_version()),
        SetCurrentViewVersion(-1),
        AddSchema(md.schema()),
        SetProperties({"comment": "x"}),
    ):
        assert view_update_from_json(view_update_to_json(update)) == update
    with pytest.raises(InvalidMetadataError, match="unknown view update action 'add-snapshot'"):
        view_update_from_json({"action": "add-snapshot", "snapshot": {}})
    with pytest.raises(InvalidMetadataError, match="view-version"):
        view_update_from_json({"action": "add-view-version"})
    requirement = AssertViewUUID(md.view_uuid)
    assert view_requirement_from_json(view_requirement_to_json(requirement)) == requirement
    with pytest.raises(InvalidMetadataError, match="unknown view requirement"):
        view_requirement_from_json({"type": "assert-table-uuid", "uuid": "x"})


def test_a_view_file_without_its_current_version_names_the_field() -> None:
    text = (
        gzip.decompress(JAVA_VIEW.read_bytes())
        .decode()
        .replace('"current-version-id":2', '"current-version-id":9')
    )
    with pytest.raises(InvalidMetadataError, match="current-version-id"):
        loads_view_metadata(text, location="v.json")
