"""Write-audit-publish (Java's WAP): with ``write.wap.enabled=true`` on a table, two Spark
session settings redirect the writes (and reads) of ``isp.write``, ``isp.read`` and ``isp.sql``:

- ``spark.wap.id``: a write commits a *staged* snapshot: in the table's snapshots, with
  ``wap.id`` in its summary, but not current (publish it with ``CALL
  system.publish_changes(table, wap_id)`` or ``cherrypick_snapshot``);
- ``spark.wap.branch``: writes go to that branch (created by the first one), and reads without
  time travel read it once it exists (``fast_forward`` publishes it).

Both set at once, or ``spark.wap.branch`` with a write that names its own branch, is an error,
as in Java (``SparkWriteConf.branch()``, ``SparkReadConf.branch()``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession

from icefloe.errors import ValidationException
from icefloe.spec import properties as props
from icefloe.table.table import Table

__all__ = ["STAGED_WAP_ID", "WAP_BRANCH", "WAP_ID", "WapWrite", "wap_read_branch", "wap_write"]

#: Java's ``SparkSQLProperties.WAP_ID`` / ``WAP_BRANCH`` (Spark session settings).
WAP_ID = "spark.wap.id"
WAP_BRANCH = "spark.wap.branch"
#: The snapshot summary property of a staged write (Java's ``SnapshotSummary.STAGED_WAP_ID_PROP``).
STAGED_WAP_ID = "wap.id"


@dataclass(frozen=True)
class WapWrite:
    """Where a write commits: ``branch`` (None: main); ``wap_id``: stage it with that id."""

    branch: str | None
    wap_id: str | None = None

    def summary(self) -> dict[str, str]:
        return {STAGED_WAP_ID: self.wap_id} if self.wap_id else {}


def _enabled(table: Table) -> bool:
    return props.lenient_bool(
        table.properties(), props.WRITE_AUDIT_PUBLISH_ENABLED, props.WRITE_AUDIT_PUBLISH_ENABLED_DEFAULT
    )


def _setting(spark: SparkSession, key: str) -> str | None:
    value = spark.conf.get(key, None)
    return value or None


def wap_write(spark: SparkSession, table: Table, branch: str | None) -> WapWrite:
    """Where a write to ``table`` (``branch``: the one the write names) commits.

    Raises:
        ValidationException: both ``spark.wap.id`` and ``spark.wap.branch`` are set, or the
            write names a branch while ``spark.wap.branch`` is set.
    """
    if not _enabled(table):
        return WapWrite(branch)
    wap_id, wap_branch = _setting(spark, WAP_ID), _setting(spark, WAP_BRANCH)
    if wap_id is not None and wap_branch is not None:
        raise ValidationException(
            f"Cannot set both WAP ID and branch, but got ID [{wap_id}] and branch [{wap_branch}]"
        )
    if wap_branch is not None:
        if branch is not None:
            raise ValidationException(
                f"Cannot write to both branch and WAP branch, but got branch [{branch}] and "
                f"WAP branch [{wap_branch}]"
            )
        return WapWrite(wap_branch)
    return WapWrite(branch, wap_id)


def wap_read_branch(spark: SparkSession, table: Table) -> str | None:
    """The branch a read of ``table`` without time travel reads: ``spark.wap.branch`` when
    the table has WAP enabled and the branch exists; else None (main)."""
    if not _enabled(table):
        return None
    branch = _setting(spark, WAP_BRANCH)
    if branch is not None and table.metadata.refs.get(branch) is not None:
        return branch
    return None
