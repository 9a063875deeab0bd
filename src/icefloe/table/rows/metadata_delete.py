"""A DELETE that metadata alone decides: Java's metadata-only delete (Spark's
``SparkTable.canDeleteWhere`` / ``deleteWhere``), shared by ``table.delete`` and
``isp.delete`` / ``DELETE FROM``.

When the whole condition is an Iceberg filter and every data file it may match holds only
matching rows, judged by the file's partition or its column metrics, Java does not read or
rewrite anything: it commits ``newDelete().deleteFromRowFilter(filter)``, a ``delete`` snapshot
that removes those files and the delete files the filter covers wholly. That snapshot is
committed even when no file matches (a value outside every file's bounds, a partition that
does not exist, a table without files or without a snapshot), so both histories gain one
``delete`` snapshot per such statement. A filter that is always false commits nothing
(Java skips it).

The filter is judged again at commit time on the table as it is then (as Java's is): a
concurrent append of wholly matching files is deleted with the rest, and one that matches in
part fails the commit with ``ValidationException``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from icefloe.expressions import Expression
from icefloe.scan import FileScanTask
from icefloe.spec.snapshots import Snapshot
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.snapshots.manifest_filter import FileEvaluator

if TYPE_CHECKING:
    from icefloe.table.snapshots.delete_files import DeleteFiles

__all__ = ["delete_by_metadata", "metadata_decides"]


class DeleteTarget(Protocol):
    """A Table or a Transaction."""

    @property
    def metadata(self) -> TableMetadata: ...

    def new_delete(self) -> DeleteFiles: ...


def metadata_decides(
    metadata: TableMetadata,
    tasks: Iterable[FileScanTask],
    row_filter: Expression,
    case_sensitive: bool = True,
) -> bool:
    """Whether removing whole files applies ``row_filter``: every planned file (the ones the
    filter may match) matches it in every row by its partition or its metrics (Java's
    ``canDeleteUsingMetadata``); true when no file was planned. The same judgement the commit
    makes (:class:`FileEvaluator`), so the commit does not find a file it cannot remove."""
    schema = metadata.schema()
    specs = metadata.specs_by_id()
    evaluators: dict[int, FileEvaluator] = {}
    for task in tasks:
        spec_id = task.file.spec_id
        evaluator = evaluators.get(spec_id)
        if evaluator is None:
            evaluator = evaluators[spec_id] = FileEvaluator(
                specs[spec_id], schema, row_filter, case_sensitive
            )
        if not evaluator.rows_must_match(task.file):
            return False
    return True


def delete_by_metadata(
    target: DeleteTarget,
    row_filter: Expression,
    *,
    case_sensitive: bool = True,
    snapshot_properties: Mapping[str, str] | None = None,
    branch: str | None = None,
    stage_only: bool = False,
) -> Snapshot | None:
    """Commit ``new_delete().delete_from_row_filter(row_filter)`` (to ``branch``, default main;
    ``stage_only``: without moving a ref) and return its snapshot."""
    delete = target.new_delete()
    delete.case_sensitive(case_sensitive)
    delete.delete_from_row_filter(row_filter)
    if branch is not None:
        delete.to_branch(branch)
    if stage_only:
        delete.stage_only()
    for key, value in (snapshot_properties or {}).items():
        delete.set(key, value)
    delete.commit()
    return target.metadata.snapshot_by_id(delete.snapshot_id)
