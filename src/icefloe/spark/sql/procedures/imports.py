"""Procedures that bring existing files or metadata into icefloe: register_table, add_files,
snapshot and migrate.

``snapshot`` and ``migrate`` read a Parquet table of Spark's session catalog (``db.t`` or
``spark_catalog.db.t``; ``snapshot`` and ``add_files`` also take ``parquet.`/path```). Java
runs them inside one Spark catalog that holds both kinds of table; icefloe's catalog is not
Spark's session catalog, so names map as follows:

- ``snapshot(source_table, table)``: the source is the session catalog's, ``table`` is the
  icefloe catalog's (``db.t`` or ``<icefloe catalog>.db.t``). The source and its files stay
  untouched: the new table references them and has ``gc.enabled=false`` (so expiring its
  snapshots or dropping it with purge never deletes them) and ``snapshot=true``.
- ``migrate(table)``: the session catalog's ``db.t`` becomes the icefloe catalog's ``db.t``
  (the namespace is created there when missing), located where the source was, over its
  files; in the session catalog the source is renamed ``db.t_backup_`` (or
  ``backup_table_name``), and dropped afterwards with ``drop_backup``. A managed backup's drop
  would delete the files the new table references, so ``drop_backup`` is refused for a
  managed source before anything changes.

The new table's schema is the source's, its columns resolved by name through the name
mapping ``add_files`` stores; both commit the table and its files as one metadata version (a
create transaction): a failure leaves no table behind (and ``migrate`` renames the source
back). Sources partitioned Hive-style (partition values only in the paths) are refused:
icefloe reads partition values from the files' data.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from icefloe.errors import TableAlreadyExistsError, UnsupportedFeatureError, ValidationError
from icefloe.spark.sql.procedures.common import Args, Procedure, Rows, current_id, string_map, table_arg
from icefloe.spark.sql.resolve import Resolver
from icefloe.spark.types import schema_from_spark
from icefloe.spec import properties as props
from icefloe.spec.schema import assign_fresh_ids
from icefloe.table.rows.add_files import stage_add_files
from icefloe.table.table import Table

__all__ = ["IMPORTS"]

#: Source table properties that describe the Spark table, not the data (Java's
#: ``EXCLUDED_PROPERTIES`` and location properties).
_EXCLUDED = frozenset(
    {
        "path",
        "transient_lastddltime",
        "serialization.format",
        "provider",
        "location",
        "owner",
        "external",
        "is_managed_location",
        "write.metadata.path",
        "write.folder-storage.path",
        "write.object-storage.path",
        "write.data.path",
    }
)


@dataclass(frozen=True)
class _Source:
    """A Parquet table of Spark's session catalog (``name``), or a Parquet folder."""

    name: str | None  # the session-catalog name, quoted for Spark SQL
    location: str
    managed: bool
    properties: dict[str, str]


def _quoted(name: str) -> str:
    return ".".join(f"`{part.strip('`')}`" for part in name.split("."))


def _session_name(text: str) -> str:
    parts = text.split(".")
    if len(parts) == 3 and parts[0].lower() == "spark_catalog":
        parts = parts[1:]
    return _quoted(".".join(parts))


def _path_source(text: str) -> str | None:
    """The folder of ``parquet.`/path``` (None: a table name)."""
    head, _, rest = text.partition(".")
    if head.strip("`").lower() == "parquet" and rest.startswith("`"):
        return rest.strip("`")
    return None


def _describe(spark: SparkSession, text: str) -> _Source:
    path = _path_source(text)
    if path is not None:
        return _Source(None, path.rstrip("/"), False, {})
    name = _session_name(text)
    if not spark.catalog.tableExists(name.replace("`", "")):
        raise ValidationError(f"'{text}' is not a table of Spark's session catalog")
    detail = {
        str(r[0]).strip(): str(r[1]).strip()
        for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
        if r[0] is not None and r[1] is not None
    }
    if detail.get("Provider", "").lower() != "parquet":
        raise UnsupportedFeatureError(
            f"'{text}' is a {detail.get('Provider') or 'Hive-format'} table: icefloe imports Parquet tables"
        )
    partitioned = [c.name for c in spark.catalog.listColumns(name.replace("`", "")) if c.isPartition]
    if partitioned:
        raise UnsupportedFeatureError(
            f"'{text}' is partitioned by {partitioned} (values in the paths only): icefloe "
            "imports unpartitioned Parquet tables"
        )
    properties = {
        str(r[0]): str(r[1])
        for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()
        if str(r[0]).lower() not in _EXCLUDED
    }
    return _Source(
        name, detail["Location"].rstrip("/"), detail.get("Type", "").upper() == "MANAGED", properties
    )


def _frame(spark: SparkSession, source: _Source) -> DataFrame:
    return spark.table(source.name) if source.name else spark.read.parquet(source.location)


def _files(frame: DataFrame) -> list[str]:
    """Every Parquet file of the source (empty ones included, as Java lists them)."""
    return sorted(frame.inputFiles())


def _import(
    spark: SparkSession,
    resolver: Resolver,
    source: _Source,
    identifier: str,
    location: str | None,
    properties: dict[str, str],
) -> Table:
    """The icefloe table ``identifier`` over the source's files, created and filled in one
    commit."""
    frame = _frame(spark, source)
    schema = assign_fresh_ids(schema_from_spark(frame.schema), itertools.count(1).__next__)
    files = _files(frame)
    txn = resolver.catalog.create_table_transaction(
        identifier, schema, location=location, properties=properties
    )
    if files:
        stage_add_files(txn, files)
    txn.commit_transaction()
    resolver.forget(identifier)
    return resolver.load(identifier)


def _data_files_count(table: Table) -> int:
    snapshot = table.current_snapshot()
    return int(snapshot.summary.get("total-data-files", 0)) if snapshot else 0


def _snapshot(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    for name in ("source_table", "table"):
        if not args.get(name):
            raise ValidationError(f"snapshot: argument '{name}' cannot be empty")
    text, target = str(args["source_table"]), str(args["table"])
    if text == target:
        raise ValidationError("Cannot create a snapshot with the same name as the source of the snapshot.")
    source = _describe(spark, text)
    location = args.get("location")
    if location is not None:
        here, there = str(location).rstrip("/"), source.location
        if here == there or here.startswith(there + "/") or there.startswith(here + "/"):
            raise ValidationError(
                f"snapshot at '{location}' would overlap with the source's location '{there}'"
            )
    properties = {**source.properties, **string_map(args, "properties")}
    properties[props.GC_ENABLED] = "false"  # the files are the source's: never delete them
    properties["snapshot"] = "true"
    identifier = resolver.identifier(target.split("."))
    table = _import(spark, resolver, source, identifier, location, properties)
    return [(_data_files_count(table),)]


def _migrate(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    text = str(args.get("table") or "")
    if not text:
        raise ValidationError("migrate: argument 'table' cannot be empty")
    source = _describe(spark, text)
    if source.name is None:
        raise UnsupportedFeatureError(f"migrate '{text}': only tables of Spark's session catalog migrate")
    drop_backup = bool(args.get("drop_backup", False))
    if drop_backup and source.managed:
        raise ValidationError(
            f"migrate '{text}' with drop_backup: dropping the managed backup table would delete "
            "the files the migrated table references; migrate without drop_backup"
        )
    parts = [p.strip("`") for p in source.name.split(".")]
    identifier = ".".join(parts)
    if resolver.catalog.table_exists(identifier):
        raise TableAlreadyExistsError(f"migrate '{text}': icefloe table '{identifier}' already exists")
    backup = _quoted(str(args.get("backup_table_name") or f"{identifier}_backup_"))
    if "." not in backup and len(parts) > 1:
        backup = f"`{parts[0]}`.{backup}"
    properties = {**source.properties, **string_map(args, "properties"), "migrated": "true"}
    resolver.catalog.create_namespace_if_not_exists(".".join(parts[:-1]))
    spark.sql(f"ALTER TABLE {source.name} RENAME TO {backup}")
    try:
        # Read after the rename: a managed table's folder moves with its name.
        moved = _Source(backup, source.location, source.managed, source.properties)
        table = _import(spark, resolver, moved, identifier, source.location, properties)
    except BaseException:
        spark.sql(f"ALTER TABLE {backup} RENAME TO {source.name}")
        raise
    if drop_backup:
        spark.sql(f"DROP TABLE {backup}")
    return [(_data_files_count(table),)]


def _register(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    identifier = resolver.identifier(str(args["table"]).split("."))
    table = resolver.catalog.register_table(identifier, str(args["metadata_file"]))
    resolver.forget(identifier)
    snapshot = table.current_snapshot()
    summary = snapshot.summary if snapshot else {}
    return [
        (current_id(table), int(summary.get("total-records", 0)), int(summary.get("total-data-files", 0)))
    ]


def _add_files(spark: SparkSession, resolver: Resolver, args: Args) -> Rows:
    table = table_arg(resolver, args)
    text = str(args["source_table"])
    path = _path_source(text)
    if path is None:
        raise UnsupportedFeatureError(f"add_files from '{text}': only parquet.`<path>` sources are supported")
    files = _files(spark.read.parquet(path))
    before = {tuple(f.partition) for f in _live_data_files(table)}
    table.add_files(files, check_duplicate_files=bool(args.get("check_duplicate_files", True)))
    changed = {tuple(f.partition) for f in _live_data_files(table)} - before
    return [(len(files), len(changed))]


def _live_data_files(table: Table) -> list[Any]:
    if table.current_snapshot() is None:
        return []
    return [task.file for task in table.new_scan().plan_files()]


IMPORTS: dict[str, Procedure] = {
    "register_table": Procedure(
        ("table", "metadata_file"),
        "current_snapshot_id bigint, total_records_count bigint, total_data_files_count bigint",
        _register,
    ),
    "add_files": Procedure(
        ("table", "source_table", "partition_filter", "check_duplicate_files", "parallelism"),
        "added_files_count bigint, changed_partition_count bigint",
        _add_files,
    ),
    "snapshot": Procedure(
        ("source_table", "table", "location", "properties", "parallelism", "ignore_missing_files"),
        "imported_files_count bigint",
        _snapshot,
    ),
    "migrate": Procedure(
        ("table", "properties", "drop_backup", "backup_table_name", "parallelism", "ignore_missing_files"),
        "migrated_files_count bigint",
        _migrate,
    ),
}
