"""Scan planning by a REST catalog server: the request, the scan it stands for, and the tasks
that come back.

- :class:`PlanRequest` is the REST spec's ``PlanTableScanRequest``: a point-in-time scan
  (``snapshot-id``, or the current snapshot) or an incremental append scan
  (``start-snapshot-id`` exclusive, ``end-snapshot-id``), a filter (Iceberg's expression JSON),
  the selected columns, case sensitivity, and ``stats-fields``. The server turns it into an
  icefloe scan (:meth:`PlanRequest.scan`); the client builds it from one.
- :func:`plan_on_server` is the client side of ``scan.option("planning", "server")`` (or the
  catalog property ``scan-planning-mode=server``): the backend sends the request and gathers
  every task, and the tasks become icefloe ``FileScanTask`` s (files, their deletes, residuals
  bound to the scan's schema), read as any planned task is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from icefloe.backends import CatalogBackend
from icefloe.errors import InvalidFilterError, UnsupportedFeatureError, ValidationError
from icefloe.expressions import bind
from icefloe.expressions.json_form import expression_from_json, expression_to_json
from icefloe.expressions.model import AlwaysTrue, Expression
from icefloe.scan.tasks import FileScanTask
from icefloe.serde._reader import JsonReader
from icefloe.serde.content_file_json import content_file_from_json
from icefloe.spec.manifest import DataFile, DeleteFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.types import StructType

__all__ = ["PLANNING_OPTION", "SCAN_PLANNING_MODE", "PlanRequest", "plan_on_server", "read_plan_request"]

#: The scan option choosing where a scan plans: ``server`` or ``client``.
PLANNING_OPTION = "planning"
#: The catalog property (the REST spec's) making ``server`` the default.
SCAN_PLANNING_MODE = "scan-planning-mode"


@dataclass(frozen=True)
class PlanRequest:
    snapshot_id: int | None = None
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    select: tuple[str, ...] | None = None
    filter: Expression = field(default_factory=AlwaysTrue)
    case_sensitive: bool = True
    with_stats: bool = False

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"case-sensitive": self.case_sensitive}
        for key, value in (
            ("snapshot-id", self.snapshot_id),
            ("start-snapshot-id", self.start_snapshot_id),
            ("end-snapshot-id", self.end_snapshot_id),
        ):
            if value is not None:
                result[key] = value
        if self.select is not None:
            result["select"] = list(self.select)
        if not isinstance(self.filter, AlwaysTrue):
            result["filter"] = expression_to_json(self.filter)
        if self.with_stats:
            result["stats-fields"] = []
        return result

    def scan(self, table: Any) -> Any:
        """The icefloe scan of ``table`` this request stands for.

        Raises:
            ValidationError: a snapshot the table does not have, a bad column or filter.
        """
        if self.start_snapshot_id is not None or self.end_snapshot_id is not None:
            if self.end_snapshot_id is None or self.snapshot_id is not None:
                raise ValidationError("an incremental plan needs end-snapshot-id, and no snapshot-id")
            scan = table.new_incremental_append_scan().to_snapshot(self.end_snapshot_id)
            if self.start_snapshot_id is not None:
                scan = scan.from_snapshot_exclusive(self.start_snapshot_id)
        else:
            scan = table.new_scan()
            if self.snapshot_id is not None:
                scan = scan.use_snapshot(self.snapshot_id)
        scan = scan.case_sensitive(self.case_sensitive).filter(self.filter)
        if self.select:
            scan = scan.select(*self.select)
        return scan


def read_plan_request(obj: Any) -> PlanRequest:
    """Raises InvalidMetadataError / InvalidFilterError (a 400) naming what is wrong."""
    r = JsonReader("request body", "PlanTableScanRequest")
    o = r.obj(obj, "")
    case = o.get("case-sensitive", True)
    if type(case) is not bool:
        r.fail("case-sensitive", "expected a JSON boolean")
    select = r.str_list(o, "select", "", required=False)
    return PlanRequest(
        snapshot_id=r.opt_long(o, "snapshot-id", ""),
        start_snapshot_id=r.opt_long(o, "start-snapshot-id", ""),
        end_snapshot_id=r.opt_long(o, "end-snapshot-id", ""),
        select=tuple(select) if select is not None else None,
        filter=expression_from_json(o["filter"]) if o.get("filter") is not None else AlwaysTrue(),
        case_sensitive=case,
        with_stats=o.get("stats-fields") is not None,
    )


def _specs(metadata: TableMetadata) -> dict[int, tuple[PartitionSpec, StructType]]:
    result = {}
    for spec in metadata.partition_specs:
        for schema in sorted(metadata.schemas, key=lambda s: s.schema_id != metadata.current_schema_id):
            try:
                result[spec.spec_id] = (spec, spec.partition_type(schema))
                break
            except Exception:  # a source column this schema lacks: an older one has it
                continue
    return result


def tasks_from_plan(
    response: dict[str, Any],
    metadata: TableMetadata,
    schema: Schema,
    *,
    case_sensitive: bool,
    default_residual: Expression,
    where: str,
) -> list[FileScanTask]:
    """The FileScanTasks of a completed plan (its tasks and those of every plan task, merged);
    a task without ``residual-filter`` gets ``default_residual`` (the scan's bound filter)."""
    r = JsonReader(where, "scan plan")
    specs = _specs(metadata)
    partitions: dict[Any, tuple[Any, ...]] = {}
    residuals: dict[str, Expression] = {}  # by JSON text: tasks of one partition share one
    deletes: list[DeleteFile] = []
    for item, path in r.objects(response, "delete-files", "", required=False):
        file = content_file_from_json(item, specs, location=f"{where}: {path}", partitions=partitions)
        if not isinstance(file, DeleteFile):
            r.fail(path, "a data file among the delete files")
        deletes.append(file)
    tasks = []
    for item, path in r.objects(response, "file-scan-tasks", "", required=False):
        file = content_file_from_json(
            r.req_obj(item, "data-file", path), specs, location=f"{where}: {path}", partitions=partitions
        )
        if not isinstance(file, DataFile):
            r.fail(path, "data-file is not a data file")
        indices = r.int_list(item, "delete-file-references", path, required=False) or []
        if any(not 0 <= i < len(deletes) for i in indices):
            r.fail(path, "a delete-file-reference outside delete-files")
        residual_json = item.get("residual-filter")
        residual = default_residual
        if residual_json is not None:
            text = json.dumps(residual_json, sort_keys=True)
            cached = residuals.get(text)
            if cached is None:
                try:
                    cached = bind(schema, expression_from_json(residual_json), case_sensitive=case_sensitive)
                except InvalidFilterError as exc:
                    r.fail(path, f"residual-filter: {exc}")
                residuals[text] = cached
            residual = cached
        tasks.append(
            FileScanTask(
                file=file,
                deletes=tuple(deletes[i] for i in indices),
                residual=residual,
                spec=specs[file.spec_id][0],
                start=0,
                length=file.file_size_in_bytes,
            )
        )
    return tasks


def plan_on_server(
    backend: CatalogBackend,
    identifier: Sequence[str],
    metadata: TableMetadata,
    request: PlanRequest,
    schema: Schema,
    scan_filter: Expression,
) -> list[FileScanTask]:
    """Plan on the catalog's server; the residuals the server sends are bound to ``schema``
    (a server that sends none leaves the scan's own filter as every task's residual).

    Raises:
        UnsupportedFeatureError: the catalog does not plan scans.
    """
    plan = getattr(backend, "plan_table_scan", None)
    if plan is None:
        raise UnsupportedFeatureError(f"the {backend.catalog_type} catalog does not plan scans on a server")
    response = plan(tuple(identifier), request.to_json())
    default = bind(schema, scan_filter, case_sensitive=request.case_sensitive)
    return tasks_from_plan(
        response,
        metadata,
        schema,
        case_sensitive=request.case_sensitive,
        default_residual=default,
        where=f"plan of {'.'.join(identifier)}",
    )
