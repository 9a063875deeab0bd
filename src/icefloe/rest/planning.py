"""Server-side scan planning: ``POST .../plan`` planned by icefloe's own planner.

Planning is synchronous: the answer is ``completed`` with every file scan task inline (each
data file, the indices of the delete files that apply to it in ``delete-files``, and the
residual filter), and a ``plan-id`` that names nothing kept: no plan state lives on the server,
so any worker answers any request, ``GET .../plan/{id}`` and ``POST .../tasks`` find nothing
(404), and cancelling is a no-op. Point-in-time scans (``snapshot-id`` or the current snapshot)
and incremental append scans (``start-snapshot-id`` exclusive, ``end-snapshot-id``) are served.
Column metrics ride along only when ``stats-fields`` asks for them.
"""

from __future__ import annotations

import uuid
from typing import Any

from icefloe.expressions.json_form import expression_to_json
from icefloe.io import load_file_io
from icefloe.rest.errors import HttpProblem
from icefloe.rest.routing import Call, Reply
from icefloe.rest.service import CatalogService, json_reply
from icefloe.rest.wording import java_words
from icefloe.serde._reader import JsonReader
from icefloe.serde.content_file_json import content_file_to_json
from icefloe.spec.manifest import ContentFile
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import StructType
from icefloe.table import Table
from icefloe.table.remote_planning import read_plan_request

__all__ = ["cancel_planning", "fetch_planning_result", "fetch_scan_tasks", "plan_table_scan"]


def _partition_types(metadata: TableMetadata) -> dict[int, StructType]:
    """Each spec's partition type, over the newest schema that has its source columns."""
    types = {}
    schemas = sorted(metadata.schemas, key=lambda s: s.schema_id == metadata.current_schema_id, reverse=True)
    for spec in metadata.partition_specs:
        for schema in schemas:
            try:
                types[spec.spec_id] = spec.partition_type(schema)
                break
            except Exception:  # a source column this schema does not have: try an older one
                continue
    return types


def plan_table_scan(service: CatalogService, call: Call) -> Reply:
    ident = call.identifier()
    with java_words(table=ident):
        location, _ = service.load_table_document(ident, "all")
    metadata = service.metadata_at(location)
    table = Table(
        ident,
        metadata,
        location,
        load_file_io(service.backend.properties, metadata.location),
        service.backend,
    )
    request = read_plan_request(call.json("PlanTableScanRequest"))
    tasks = request.scan(table).plan_files()
    types = _partition_types(metadata)

    partitions: dict[Any, list[Any]] = {}
    residuals: dict[Any, Any] = {}  # many tasks share a residual (one per partition)

    def file_json(file: ContentFile) -> dict[str, Any]:
        return content_file_to_json(
            file, types[file.spec_id], stats=request.with_stats, partitions=partitions
        )

    def residual_json(residual: Any) -> Any:
        found = residuals.get(residual)
        if found is None:
            found = residuals[residual] = expression_to_json(residual)
        return found

    deletes: dict[str, int] = {}
    delete_files: list[dict[str, Any]] = []
    file_tasks = []
    for task in tasks:
        references = []
        for delete in task.deletes:
            index = deletes.get(delete.file_path)
            if index is None:
                index = deletes[delete.file_path] = len(delete_files)
                delete_files.append(file_json(delete))
            references.append(index)
        entry: dict[str, Any] = {
            "data-file": file_json(task.file),
            "residual-filter": residual_json(task.residual),
        }
        if references:
            entry["delete-file-references"] = references
        file_tasks.append(entry)
    return json_reply(
        {
            "status": "completed",
            "plan-id": f"sync-{uuid.uuid4()}",
            "plan-tasks": [],
            "file-scan-tasks": file_tasks,
            "delete-files": delete_files,
        }
    )


def fetch_planning_result(service: CatalogService, call: Call) -> Reply:
    raise HttpProblem(
        404, "NoSuchPlanIdException", f"no plan {call.params.get('plan-id')!r}: plans complete at once"
    )


def cancel_planning(service: CatalogService, call: Call) -> Reply:
    return Reply(204)


def fetch_scan_tasks(service: CatalogService, call: Call) -> Reply:
    r = JsonReader("request body", "FetchScanTasksRequest")
    task = r.req_str(r.obj(call.json("FetchScanTasksRequest"), ""), "plan-task", "")
    raise HttpProblem(404, "NoSuchPlanTaskException", f"no plan task {task[:100]!r}: this server issues none")
