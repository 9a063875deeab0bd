"""Server-side scan planning: icefloe's server plans with icefloe's planner, the client asks for
it (``option("planning", "server")`` or ``scan-planning-mode=server``) and gets the same tasks
as planning locally; the expression and content-file JSON round-trip; bad requests are 4xx."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import UnsupportedFeatureError
from icefloe.expressions import bind, parse
from icefloe.expressions.json_form import expression_from_json, expression_to_json
from icefloe.rest import app
from icefloe.serde.content_file_json import content_file_from_json, content_file_to_json
from support.rest import serve_in_thread

FILTERS = ["id > 2", "p = '1'", "id IN (1, 5, 9) OR p IS NULL", "NOT (id < 7) AND p != '0'", "id = 4"]


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[icefloe.Catalog, icefloe.Catalog, str]]:
    root = tmp_path_factory.mktemp("planning")
    local = icefloe.load_catalog("served", type="sql", warehouse=str(root / "wh"))
    local.create_namespace("db")
    table = local.create_table(
        "db.t",
        pa.schema([("id", pa.int64()), ("p", pa.string()), ("d", pa.date32())]),
        partition_by=["p"],
        properties={"write.delete.mode": "merge-on-read", "format-version": "2"},
    )
    for start in (0, 10):
        ids = list(range(start, start + 10))
        table.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "p": [None if i % 7 == 0 else str(i % 3) for i in ids],
                    "d": pa.array([19700 + i for i in ids], pa.date32()),
                }
            )
        )
    table.delete("id = 4 OR id = 15")
    with serve_in_thread(app(local)) as url:
        remote = icefloe.load_catalog("remote", type="rest", uri=url)
        yield local, remote, url
        remote.close()
    local.close()


def signature(tasks: list) -> list:  # type: ignore[type-arg]
    return sorted(
        (t.file.file_path, tuple(sorted(d.file_path for d in t.deletes)), str(t.residual)) for t in tasks
    )


@pytest.mark.parametrize("text", FILTERS)
def test_the_server_plans_what_the_client_would(
    served: tuple[icefloe.Catalog, icefloe.Catalog, str], text: str
) -> None:
    _, remote, _ = served
    table = remote.load_table("db.t")
    here = table.new_scan().filter(text).option("planning", "client")
    there = table.new_scan().filter(text).option("planning", "server")
    assert signature(there.plan_files()) == signature(here.plan_files())
    assert sorted(there.to_arrow().column("id").to_pylist()) == sorted(
        here.to_arrow().column("id").to_pylist()
    )


def test_planning_by_catalog_property_time_travel_and_refusals(
    served: tuple[icefloe.Catalog, icefloe.Catalog, str],
) -> None:
    local, _, url = served
    table = local.load_table("db.t")
    first = table.snapshots()[0].snapshot_id
    with icefloe.load_catalog("r2", type="rest", uri=url, **{"scan-planning-mode": "server"}) as by_default:
        remote = by_default.load_table("db.t")
        assert remote.new_scan().use_snapshot(first).count() == 10
        assert (
            remote.new_scan().filter("d >= '2024-01-01'").count()
            == table.new_scan().filter("d >= '2024-01-01'").count()
        )
    with pytest.raises(UnsupportedFeatureError, match="does not plan scans"):
        table.new_scan().option("planning", "server").plan_files()
    with httpx.Client(base_url=url) as client:
        plan = "/v1/namespaces/db/tables/t/plan"
        bad = [
            client.post(
                plan,
                json={
                    "filter": {
                        "type": "gt",
                        "term": {"type": "transform", "transform": "bucket[4]", "term": "id"},
                        "value": 1,
                    }
                },
            ),
            client.post(plan, json={"filter": {"type": "bogus", "term": "id"}}),
            client.post(plan, json={"filter": {"type": "gt", "term": "no_such_column", "value": 1}}),
            client.post(plan, json={"snapshot-id": 12345}),
            client.post(plan, json={"start-snapshot-id": first}),
            client.post(plan, content=b"{"),
        ]
        assert [r.status_code for r in bad] == [400] * 6, [r.text for r in bad]
        assert (
            client.post("/v1/namespaces/db/tables/t/tasks", json={"plan-task": "x"}).json()["error"]["type"]
            == "NoSuchPlanTaskException"
        )
        assert client.get("/v1/namespaces/db/tables/t/plan/sync-1").status_code == 404
        assert client.delete("/v1/namespaces/db/tables/t/plan/sync-1").status_code == 204
        increment = client.post(
            plan, json={"start-snapshot-id": first, "end-snapshot-id": table.snapshots()[1].snapshot_id}
        ).json()
        assert increment["status"] == "completed" and len(increment["file-scan-tasks"]) >= 1


def test_expression_and_content_file_json_round_trip(
    served: tuple[icefloe.Catalog, icefloe.Catalog, str],
) -> None:
    local, _, _ = served
    table = local.load_table("db.t")
    schema = table.schema()
    for text in FILTERS:
        expr = parse(text)
        assert expression_from_json(expression_to_json(expr)) == expr
        bound = bind(schema, expr)
        assert bind(schema, expression_from_json(expression_to_json(bound))) == bound
    specs = {s.spec_id: (s, s.partition_type(schema)) for s in table.metadata.partition_specs}
    for task in table.new_scan().plan_files():
        for file in (task.file, *task.deletes):
            again = content_file_from_json(content_file_to_json(file, specs[file.spec_id][1]), specs)
            assert (again.file_path, again.partition, again.record_count, again.content) == (
                file.file_path,
                file.partition,
                file.record_count,
                file.content,
            )
            assert dict(again.lower_bounds or {}) == dict(file.lower_bounds or {})


def test_the_plan_answer_carries_stats_only_when_asked(
    served: tuple[icefloe.Catalog, icefloe.Catalog, str], tmp_path: Path
) -> None:
    _, _, url = served
    with httpx.Client(base_url=url) as client:
        plain = client.post("/v1/namespaces/db/tables/t/plan", json={}).json()
        stats = client.post("/v1/namespaces/db/tables/t/plan", json={"stats-fields": ["id"]}).json()
    assert "lower-bounds" not in plain["file-scan-tasks"][0]["data-file"]
    assert "lower-bounds" in stats["file-scan-tasks"][0]["data-file"]
    assert plain["plan-id"].startswith("sync-") and plain["plan-tasks"] == []
