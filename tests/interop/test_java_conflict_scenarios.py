"""The conflict scenarios of ``tests/table/test_conflict_scenarios.py`` have Java's outcome.

Each scenario there builds a table with icefloe, lets a "concurrent" writer commit, commits an
operation and expects an outcome: the commit succeeds, or a ``ValidationException`` whose
message matches a regex. Those outcomes are what Java Iceberg is believed to do; this module
proves it: every scenario is replayed with Java Iceberg 1.9.2's own API in the engine's JVM
(``HadoopTables`` on a fresh folder; no Spark job): the same table (``id long``, ``date date``,
``identity(date)``, same format version and properties), the same data and delete files
(``DataFiles.builder`` / ``FileMetadata.deleteFileBuilder`` with the same paths, partitions,
record counts and ``id`` bounds as ``tests/table/ops_helpers.py`` builds), the same concurrent
commits, and the same operation built on a second ``Table`` object loaded before the concurrent
commit (the "stale writer"). Java's outcome must equal the scenario's:

- success: the commit goes through and moves the table to a new snapshot;
- failure: Java throws ``org.apache.iceberg.exceptions.ValidationException``, the table keeps
  its snapshot, and Java's message matches the scenario's regex, modulo the formatting of the
  filter expression (Java prints ``ref(name="date") == "2018-06-09"`` or ``true`` where icefloe
  prints SQL, and Java prints a partition by its internal value, ``[date=17691]``): for the
  scenarios listed in ``FILTER_PRINTED_OTHERWISE`` only the regex's part up to the word
  "matching" (the stable prefix, e.g. "Found conflicting files that can contain records
  matching") must match; for all others the whole regex.

That the Java helpers build the very tables and files ``ops_helpers`` builds is itself checked
(``test_java_builds_the_scenarios_tables_and_files``: schema, spec, format version, properties,
and every field of the files the scenarios set).

Where Java's outcome differs from the scenario's, the case is an ``xfail(strict=True)`` naming
the difference, and ``DIFFERENCES`` records Java's actual outcome, which
``test_java_outcome_of_each_difference`` asserts (so the record stays true, and a fixed scenario
turns its xfail into a failure that asks for the entry's removal). A scenario Java 1.9.2's API
cannot express is skipped with the reason (``NOT_EXPRESSIBLE``). Every scenario must be in
exactly one of ``JAVA_SCENARIOS`` and ``NOT_EXPRESSIBLE`` (``test_every_scenario_is_replayed``),
so a new scenario without its Java twin fails here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

import icefloe
from icefloe.spec.manifest import ContentFile
from table.ops_helpers import (
    DAY_1,
    DAY_2,
    DAY_3,
    FAST_RETRIES,
    data_file,
    deletion_vector,
    equality_deletes,
    make_table,
    position_deletes,
)
from table.test_conflict_scenarios import SCENARIOS

from .engines import JavaEngine

pytestmark = pytest.mark.interop

# ----------------------------------------------------------------------------------------------
# Java-side helpers: the counterparts of tests/table/ops_helpers.py, run once in the engine and
# kept in ``state`` for the scenario scripts.

_JAVA_HELPERS = """
import struct

from py4j.protocol import Py4JJavaError

I = jvm.org.apache.iceberg
E = I.expressions.Expressions
T = I.types.Types
GATEWAY = sc._gateway
TABLES = I.hadoop.HadoopTables(sc._jsc.hadoopConfiguration())
SCHEMA = I.Schema([
    T.NestedField.required(1, "id", T.LongType.get()),
    T.NestedField.required(2, "date", T.DateType.get()),
])
JSON = jvm.com.fasterxml.jackson.databind.ObjectMapper()
# Map<Integer, Long> through JSON: py4j would hand small Python ints to Java as Integers.
LONG_MAP = JSON.getTypeFactory().constructMapType(
    jvm.java.lang.Class.forName("java.util.HashMap"),
    jvm.java.lang.Class.forName("java.lang.Integer"),
    jvm.java.lang.Class.forName("java.lang.Long"),
)


def long_map(values):
    return JSON.readValue(json.dumps({str(k): v for k, v in values.items()}), LONG_MAP)


def long_bounds(values):
    bounds = jvm.java.util.HashMap()
    for field_id, value in values.items():
        bounds.put(field_id, jvm.java.nio.ByteBuffer.wrap(bytearray(struct.pack("<q", value))))
    return bounds


def java_set(*items):
    result = jvm.java.util.HashSet()
    for item in items:
        result.add(item)
    return result


def int_array(*values):
    array = GATEWAY.new_array(GATEWAY.jvm.int, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def make_table(location, format_version, partitioned=True):
    spec = I.PartitionSpec.builderFor(SCHEMA).identity("date").build() if partitioned else (
        I.PartitionSpec.unpartitioned()
    )
    properties = {"format-version": str(format_version), **FAST_RETRIES} if partitioned else {}
    return TABLES.create(SCHEMA, spec, I.SortOrder.unsorted(), properties, location)


def stale(location):
    return TABLES.load(location)


def day_filter(day):
    return E.equal("date", day)


def all_of(*expressions):
    result = expressions[0]
    for expression in expressions[1:]:
        result = getattr(E, "and")(result, expression)  # `and` is a Python keyword
    return result


DAY_2_ID_RANGE = all_of(day_filter(DAY_2), E.greaterThanOrEqual("id", 10), E.lessThan("id", 20))


def data_file(table, name, day, ids=(0, 9), records=10):
    spec = table.spec()
    metrics = I.Metrics(
        records,
        None,
        long_map({1: records, 2: records}),
        long_map({1: 0, 2: 0}),
        None,
        long_bounds({1: ids[0]}),
        long_bounds({1: ids[1]}),
    )
    builder = (
        I.DataFiles.builder(spec)
        .withPath(f"/path/to/data-{name}.parquet")
        .withFormat(I.FileFormat.PARQUET)
        .withFileSizeInBytes(100)
        .withMetrics(metrics)
    )
    if spec.isPartitioned():
        builder = builder.withPartitionPath(f"date={day}")
    return builder.build()


def _delete_builder(table, path, file_format, size, partition):
    builder = (
        I.FileMetadata.deleteFileBuilder(table.spec())
        .withPath(path)
        .withFormat(file_format)
        .withFileSizeInBytes(size)
        .withRecordCount(1)
    )
    if isinstance(partition, str):
        return builder.withPartitionPath(partition)
    return builder.withPartition(partition)


def position_deletes(table, name, day, referenced=None):
    builder = _delete_builder(
        table, f"/path/to/pos-{name}.parquet", I.FileFormat.PARQUET, 10, f"date={day}"
    ).ofPositionDeletes()
    if referenced is not None:
        builder = builder.withReferencedDataFile(referenced.location())
    return builder.build()


def equality_deletes(table, name, day):
    return (
        _delete_builder(table, f"/path/to/eq-{name}.parquet", I.FileFormat.PARQUET, 10, f"date={day}")
        .ofEqualityDeletes(int_array(1))
        .build()
    )


def deletion_vector(table, name, referenced, offset=4):
    return (
        _delete_builder(table, f"/path/to/dv-{name}.puffin", I.FileFormat.PUFFIN, 100, referenced.partition())
        .ofPositionDeletes()
        .withReferencedDataFile(referenced.location())
        .withContentOffset(offset)
        .withContentSizeInBytes(40)
        .build()
    )


def append(table, *files):
    op = table.newFastAppend()
    for file in files:
        op.appendFile(file)
    op.commit()
    return table.currentSnapshot()


def add_deletes(table, *deletes):
    op = table.newRowDelta()
    for delete in deletes:
        op.addDeletes(delete)
    op.commit()
    return table.currentSnapshot()


def _hex_map(buffers):
    if buffers is None:
        return None
    return {int(k): bytes(I.util.ByteBuffers.toByteArray(v)).hex() for k, v in buffers.items()}


def _count_map(counts):
    return None if counts is None else {int(k): int(v) for k, v in counts.items()}


def describe_file(file):
    # the fields of a content file the scenarios set, to compare with icefloe's
    partition = file.partition()
    anything = jvm.java.lang.Class.forName("java.lang.Object")
    ids = file.equalityFieldIds()
    return {
        "content": file.content().id(),
        "path": file.location(),
        "format": file.format().name(),
        "partition": [partition.get(i, anything) for i in range(partition.size())],
        "record_count": file.recordCount(),
        "file_size_in_bytes": file.fileSizeInBytes(),
        "value_counts": _count_map(file.valueCounts()),
        "null_value_counts": _count_map(file.nullValueCounts()),
        "lower_bounds": _hex_map(file.lowerBounds()),
        "upper_bounds": _hex_map(file.upperBounds()),
        "equality_ids": None if ids is None else [int(i) for i in ids],
        "referenced_data_file": file.referencedDataFile(),
        "content_offset": file.contentOffset(),
        "content_size_in_bytes": file.contentSizeInBytes(),
    }


def describe_table(table):
    return {
        "format_version": table.operations().current().formatVersion(),
        "schema": [
            [f.fieldId(), f.name(), str(f.type()), f.isRequired()] for f in table.schema().columns()
        ],
        "spec": [
            [f.sourceId(), f.fieldId(), f.name(), str(f.transform())] for f in table.spec().fields()
        ],
        "properties": {k: table.properties()[k] for k in FAST_RETRIES if k in table.properties()},
    }


def _head(location):
    snapshot = TABLES.load(location).currentSnapshot()
    return None if snapshot is None else snapshot.snapshotId()


def outcome(op, location):
    \"\"\"Commits OP (an operation or a transaction) to the table at LOCATION; what happened.\"\"\"
    before = _head(location)
    transaction = op.getClass().getName().endswith("Transaction")
    try:
        if transaction:
            op.commitTransaction()
        else:
            op.commit()
    except Py4JJavaError as exc:
        error = exc.java_exception
        return {
            "ok": False,
            "type": error.getClass().getName(),
            "message": error.getMessage(),
            "changed": _head(location) != before,
        }
    return {"ok": True, "type": None, "message": None, "changed": _head(location) != before}


state["conflict_helpers"] = {
    name: value for name, value in globals().items() if not name.startswith("__") and name != "result"
}
"""

# The scenario scripts see the helpers above and ``location`` (the table's folder); each leaves
# the operation (or transaction) to commit in ``op``. Same names and steps as the icefloe
# scenario functions.
JAVA_SCENARIOS: dict[str, str] = {
    # ---- TestOverwriteWithValidation -----------------------------------------------------------
    "overwrite_empty_table_validated": """
        t = make_table(location, 2)
        op = (
            t.newOverwrite()
            .addFile(data_file(t, "2", DAY_2))
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateAddedFilesMatchOverwriteFilter()
            .validateNoConflictingData()
        )
    """,
    "overwrite_compatible_addition_validated": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        append(t, data_file(t, "1", DAY_1))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "overwrite_incompatible_addition_validated": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "1", DAY_1))
        writer = stale(location)
        append(t, data_file(t, "2", DAY_2))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "overwrite_incompatible_addition_not_validated": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "1", DAY_1))
        writer = stale(location)
        append(t, data_file(t, "2", DAY_2))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "overwrite_without_starting_snapshot_checks_all_history": """
        t = make_table(location, 2)
        append(t, data_file(t, "2", DAY_2))
        op = t.newOverwrite().overwriteByRowFilter(day_filter(DAY_2)).validateNoConflictingData()
    """,
    "overwrite_compatible_addition_by_id_range": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "a", DAY_2, ids=(10, 19)))
        writer = stale(location)
        append(t, data_file(t, "b", DAY_2, ids=(30, 39)))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(DAY_2_ID_RANGE)
            .addFile(data_file(writer, "am", DAY_2, ids=(10, 19)))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "overwrite_incompatible_addition_by_id_range": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "a", DAY_2, ids=(10, 19)))
        writer = stale(location)
        append(t, data_file(t, "b", DAY_2, ids=(15, 25)))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(DAY_2_ID_RANGE)
            .addFile(data_file(writer, "am", DAY_2, ids=(10, 19)))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "overwrite_strict_validation_of_added_files": """
        t = make_table(location, 2)
        op = (
            t.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(t, "1", DAY_1))
            .validateAddedFilesMatchOverwriteFilter()
        )
    """,
    "overwrite_incompatible_deletion_validated": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, data_file(t, "1", DAY_1), f2)
        writer = stale(location)
        t.newDelete().deleteFile(f2).commit()
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_compatible_deletion_validated": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1, data_file(t, "2", DAY_2))
        writer = stale(location)
        t.newDelete().deleteFile(f1).commit()
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_incompatible_rewrite_validated": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, f2)
        writer = stale(location)
        t.newRewrite().rewriteFiles(java_set(f2), java_set(data_file(t, "2r", DAY_2))).commit()
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_concurrent_conflicting_position_deletes": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, f2)
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_concurrent_non_conflicting_position_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1, data_file(t, "2", DAY_2))
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p1", DAY_1, f1))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_concurrent_conflicting_equality_deletes": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        add_deletes(t, equality_deletes(t, "e2", DAY_2))
        op = (
            writer.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_deleted_file_got_new_position_deletes": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, f2)
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
        op = (
            writer.newOverwrite()
            .deleteFile(f2)
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "overwrite_starting_snapshot_not_an_ancestor": """
        t = make_table(location, 2)
        append(t, data_file(t, "1", DAY_1))
        t.newDelete().deleteFile(data_file(t, "1", DAY_1)).toBranch("side").commit()
        side = t.snapshot("side")
        append(t, data_file(t, "2", DAY_2))
        op = (
            t.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .validateFromSnapshot(side.snapshotId())
            .validateNoConflictingData()
        )
    """,
    # ---- TestReplacePartitions -----------------------------------------------------------------
    "replace_partitions_concurrent_append_elsewhere": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        append(t, data_file(t, "1", DAY_1))
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
            .validateNoConflictingDeletes()
        )
    """,
    "replace_partitions_concurrent_append_same_partition": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        append(t, data_file(t, "2b", DAY_2))
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "replace_partitions_concurrent_append_not_validated": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        append(t, data_file(t, "2b", DAY_2))
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "replace_partitions_concurrent_delete_same_partition": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, f2, data_file(t, "2b", DAY_2))
        writer = stale(location)
        t.newDelete().deleteFile(f2).commit()
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "replace_partitions_concurrent_deletes_same_partition": """
        t = make_table(location, 2)
        f2 = data_file(t, "2", DAY_2)
        base = append(t, f2)
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p2", DAY_2, f2))
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingDeletes()
        )
    """,
    "replace_partitions_unpartitioned_concurrent_append": """
        t = make_table(location, 2, partitioned=False)
        base = append(t, data_file(t, "a", DAY_1))
        writer = stale(location)
        append(t, data_file(t, "b", DAY_1))
        op = (
            writer.newReplacePartitions()
            .addFile(data_file(writer, "c", DAY_1))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
        )
    """,
    "replace_partitions_append_only_with_existing_partition": """
        t = make_table(location, 2)
        append(t, data_file(t, "2", DAY_2))
        op = t.newReplacePartitions().addFile(data_file(t, "2m", DAY_2)).validateAppendOnly()
    """,
    "replace_partitions_append_only_new_partition": """
        t = make_table(location, 2)
        append(t, data_file(t, "2", DAY_2))
        op = t.newReplacePartitions().addFile(data_file(t, "1", DAY_1)).validateAppendOnly()
    """,
    # ---- TestRowDelta --------------------------------------------------------------------------
    "row_delta_deletes_for_existing_file": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        append(t, data_file(t, "2", DAY_2))
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
            .validateDeletedFiles()
        )
    """,
    "row_delta_referenced_file_removed_by_overwrite": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        t.newOverwrite().deleteFile(f1).addFile(data_file(t, "1o", DAY_1)).commit()
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
        )
    """,
    "row_delta_referenced_file_removed_by_overwrite_that_only_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        t.newOverwrite().deleteFile(f1).commit()
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
        )
    """,
    "row_delta_referenced_file_removed_by_rewrite": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        t.newRewrite().rewriteFiles(java_set(f1), java_set(data_file(t, "1r", DAY_1))).commit()
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
        )
    """,
    "row_delta_referenced_file_removed_by_delete_not_validated": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        t.newDelete().deleteFile(f1).commit()
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
        )
    """,
    "row_delta_referenced_file_removed_by_delete_validated": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        t.newDelete().deleteFile(f1).commit()
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .validateDataFilesExist([f1.location()])
            .validateDeletedFiles()
        )
    """,
    "row_delta_conflicting_append_serializable": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        append(t, data_file(t, "1b", DAY_1))
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .conflictDetectionFilter(day_filter(DAY_1))
            .validateNoConflictingDataFiles()
        )
    """,
    "row_delta_non_conflicting_append_serializable": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        append(t, data_file(t, "2", DAY_2))
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .conflictDetectionFilter(day_filter(DAY_1))
            .validateNoConflictingDataFiles()
        )
    """,
    "row_delta_conflicting_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p1a", DAY_1, f1))
        op = (
            writer.newRowDelta()
            .addDeletes(position_deletes(writer, "p1b", DAY_1, f1))
            .validateFromSnapshot(base.snapshotId())
            .conflictDetectionFilter(day_filter(DAY_1))
            .validateNoConflictingDeleteFiles()
        )
    """,
    "row_delta_concurrent_dv_for_same_file": """
        t = make_table(location, 3)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        add_deletes(t, deletion_vector(t, "a", f1))
        op = (
            writer.newRowDelta()
            .addDeletes(deletion_vector(writer, "b", f1))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "row_delta_concurrent_dv_for_other_file": """
        t = make_table(location, 3)
        f1, f2 = data_file(t, "1", DAY_1), data_file(t, "2", DAY_2)
        base = append(t, f1, f2)
        writer = stale(location)
        add_deletes(t, deletion_vector(t, "a", f2))
        op = (
            writer.newRowDelta()
            .addDeletes(deletion_vector(writer, "b", f1))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    # ---- TestRewriteFiles ----------------------------------------------------------------------
    # ---- TestRewriteFiles ----------------------------------------------------------------------
    "rewrite_deletes_into_dv_with_concurrent_dv_for_same_file": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        append(t, f1)
        p1 = position_deletes(t, "p1", DAY_1, f1)
        add_deletes(t, p1)
        t.updateProperties().set("format-version", "3").commit()
        t.refresh()
        base = t.currentSnapshot()
        writer = stale(location)
        add_deletes(t, deletion_vector(t, "a", f1))
        op = (
            writer.newRewrite()
            .deleteFile(p1)
            .addFile(deletion_vector(writer, "b", f1))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "rewrite_deletes_into_dv_with_concurrent_dv_for_other_file": """
        t = make_table(location, 2)
        f1, f2 = data_file(t, "1", DAY_1), data_file(t, "2", DAY_2)
        append(t, f1, f2)
        p1 = position_deletes(t, "p1", DAY_1, f1)
        add_deletes(t, p1)
        t.updateProperties().set("format-version", "3").commit()
        t.refresh()
        base = t.currentSnapshot()
        writer = stale(location)
        add_deletes(t, deletion_vector(t, "a", f2))
        op = (
            writer.newRewrite()
            .deleteFile(p1)
            .addFile(deletion_vector(writer, "b", f1))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "rewrite_file_removed_concurrently": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        append(t, f1)
        writer = stale(location)
        t.newDelete().deleteFile(f1).commit()
        op = writer.newRewrite().rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1)))
    """,
    "rewrite_file_got_concurrent_position_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        add_deletes(t, position_deletes(t, "p1", DAY_1, f1))
        op = (
            writer.newRewrite()
            .rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1)))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "rewrite_keeping_sequence_number_ignores_concurrent_equality_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        add_deletes(t, equality_deletes(t, "e1", DAY_1))
        op = (
            writer.newRewrite()
            .rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1)), base.sequenceNumber())
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "rewrite_new_sequence_number_with_concurrent_equality_deletes": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        add_deletes(t, equality_deletes(t, "e1", DAY_1))
        op = (
            writer.newRewrite()
            .rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1)))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    "rewrite_with_concurrent_append": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        base = append(t, f1)
        writer = stale(location)
        append(t, data_file(t, "1b", DAY_1))
        op = (
            writer.newRewrite()
            .rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1)))
            .validateFromSnapshot(base.snapshotId())
        )
    """,
    # ---- TestTransaction -----------------------------------------------------------------------
    "transaction_rewrite_of_file_deleted_concurrently": """
        t = make_table(location, 2)
        f1 = data_file(t, "1", DAY_1)
        append(t, f1)
        writer = stale(location)
        txn = writer.newTransaction()
        txn.newAppend().appendFile(data_file(writer, "x", DAY_2)).commit()
        txn.newRewrite().rewriteFiles(java_set(f1), java_set(data_file(writer, "1r", DAY_1))).commit()
        t.newDelete().deleteFile(f1).commit()
        op = txn
    """,
    "transaction_of_append_and_overwrite_retries_on_concurrent_append": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "2", DAY_2))
        writer = stale(location)
        txn = writer.newTransaction()
        txn.newAppend().appendFile(data_file(writer, "1", DAY_1)).commit()
        (
            txn.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
            .commit()
        )
        append(t, data_file(t, "3", DAY_3))
        op = txn
    """,
    "transaction_overwrite_conflict_found_on_retry": """
        t = make_table(location, 2)
        base = append(t, data_file(t, "1", DAY_1))
        writer = stale(location)
        txn = writer.newTransaction()
        (
            txn.newOverwrite()
            .overwriteByRowFilter(day_filter(DAY_2))
            .addFile(data_file(writer, "2m", DAY_2))
            .validateFromSnapshot(base.snapshotId())
            .validateNoConflictingData()
            .commit()
        )
        append(t, data_file(t, "2", DAY_2))
        op = txn
    """,
}

#: Scenarios Java 1.9.2's public API cannot replay, with the reason.
NOT_EXPRESSIBLE: dict[str, str] = {
    "row_delta_removed_file_got_concurrent_deletes": (
        "RowDelta.removeRows(DataFile) does not exist in Java Iceberg 1.9.2: its RowDelta adds rows "
        "and deletes and removes delete files only (removeRows came in a later release)"
    ),
}

#: Scenarios whose expected outcome is not Java's: (Java's actual outcome: None when the commit
#: succeeds, else a regex of its ValidationException message; what differs). Checked by
#: ``test_java_outcome_of_each_difference``, so the record stays true.
DIFFERENCES: dict[str, tuple[str | None, str]] = {
    "rewrite_deletes_into_dv_with_concurrent_dv_for_same_file": (
        None,
        "Java 1.9.2's RewriteFiles does not look for DVs added concurrently (only RowDelta does): it "
        "commits a second DV for one data file, and readers then apply only one of the two; icefloe "
        "refuses the rewrite as its RowDelta does",
    ),
}

#: Scenarios whose message regex matches Java's message only up to the filter, which Java prints
#: its own way (what Java prints there); every other expected message must match as a whole.
FILTER_PRINTED_OTHERWISE: dict[str, str] = {
    "replace_partitions_concurrent_append_same_partition": "partitions [date=17691]",
    "replace_partitions_concurrent_deletes_same_partition": "[date=17691]",
    "replace_partitions_concurrent_delete_same_partition": "[date=17691]",
    "replace_partitions_unpartitioned_concurrent_append": "true",
}

_VALIDATION_EXCEPTION = "org.apache.iceberg.exceptions.ValidationException"


@pytest.fixture(scope="module")
def java(java_engine: JavaEngine) -> JavaEngine:
    """The module's Java engine, with the helpers loaded."""
    java_engine.exec(_JAVA_HELPERS, DAY_1=DAY_1, DAY_2=DAY_2, DAY_3=DAY_3, FAST_RETRIES=FAST_RETRIES)
    return java_engine


@pytest.fixture(scope="module")
def java_outcomes(java: JavaEngine, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Any]:
    """Java's outcome of a scenario (run once per module, on a table of its own): ``ok``,
    ``type`` and ``message`` of the exception, ``changed`` (the table moved to a new snapshot)."""
    outcomes: dict[str, Any] = {}

    def outcome(name: str) -> Any:
        if name not in outcomes:
            code = "globals().update(state['conflict_helpers'])\n" + dedent(JAVA_SCENARIOS[name])
            location = tmp_path_factory.mktemp("java-conflicts") / name
            outcomes[name] = java.exec(code + "\nresult = outcome(op, location)\n", location=str(location))
        return outcomes[name]

    return outcome


_JAVA_FILES = """
globals().update(state["conflict_helpers"])
t = make_table(location, format_version)
f2 = data_file(t, "2", DAY_2)
files = [f2, data_file(t, "a", DAY_2, ids=(10, 19), records=7)]
if format_version == 3:
    files.append(deletion_vector(t, "a", f2))
else:
    files += [position_deletes(t, "p2", DAY_2, f2), position_deletes(t, "p", DAY_1)]
    files.append(equality_deletes(t, "e2", DAY_2))
result = {"table": describe_table(t), "files": [describe_file(f) for f in files]}
"""


def _own_file(file: ContentFile) -> dict[str, Any]:
    # keyed by text, as the engine's answer (JSON) is
    def hexes(bounds: Mapping[int, bytes] | None) -> dict[str, str] | None:
        return None if bounds is None else {str(k): v.hex() for k, v in bounds.items()}

    def counts(values: Mapping[int, int] | None) -> dict[str, int] | None:
        return None if values is None else {str(k): v for k, v in values.items()}

    return {
        "content": int(file.content),
        "path": file.file_path,
        "format": str(file.file_format),
        "partition": list(file.partition),
        "record_count": file.record_count,
        "file_size_in_bytes": file.file_size_in_bytes,
        "value_counts": counts(file.value_counts),
        "null_value_counts": counts(file.null_value_counts),
        "lower_bounds": hexes(file.lower_bounds),
        "upper_bounds": hexes(file.upper_bounds),
        "equality_ids": None if file.equality_ids is None else list(file.equality_ids),
        "referenced_data_file": file.referenced_data_file,
        "content_offset": file.content_offset,
        "content_size_in_bytes": file.content_size_in_bytes,
    }


@pytest.mark.parametrize("format_version", [2, 3])
def test_java_builds_the_scenarios_tables_and_files(
    java: JavaEngine, tmp_path: Path, format_version: int
) -> None:
    """The Java helpers build what ``ops_helpers`` builds: same schema ids and types, partition
    spec, format version and retry properties; same file paths, contents, formats, partitions,
    counts, ``id`` bounds, referenced files and DV offsets."""
    catalog = icefloe.load_catalog("own", type="memory", warehouse=str(tmp_path / "own"))
    catalog.create_namespace("db")
    try:
        t = make_table(catalog, format_version)
        f2 = data_file(t, "2", DAY_2)
        files: list[ContentFile] = [f2, data_file(t, "a", DAY_2, ids=(10, 19), records=7)]
        if format_version == 3:
            files.append(deletion_vector(t, "a", f2))
        else:
            files += [position_deletes(t, "p2", DAY_2, f2), position_deletes(t, "p", DAY_1)]
            files.append(equality_deletes(t, "e2", DAY_2))
    finally:
        catalog.close()
    java_built = java.exec(_JAVA_FILES, location=str(tmp_path / "java"), format_version=format_version)
    own_table = {
        "format_version": format_version,
        "schema": [[f.field_id, f.name, str(f.field_type), f.required] for f in t.schema().fields],
        "spec": [[f.source_id, f.field_id, f.name, str(f.transform)] for f in t.spec().fields],
        "properties": {k: t.properties()[k] for k in FAST_RETRIES},
    }
    assert java_built["table"] == own_table
    assert java_built["files"] == [_own_file(f) for f in files]


def _stable_prefix(expected: str) -> str:
    """The part of a message regex before the filter expression (which each side prints its own
    way): up to and including the first "matching"; the whole regex when it has none."""
    head, word, _ = expected.partition("matching")
    return head + word


def _assert_outcome(got: Any, expected: str | None, *, filter_printed_otherwise: bool = False) -> None:
    if expected is None:
        assert got["ok"], f"Java failed: {got['type']}: {got['message']}"
        assert got["changed"], "Java's commit left the table at its snapshot"
        return
    assert not got["ok"], f"Java committed; expected a ValidationException matching {expected!r}"
    assert got["type"] == _VALIDATION_EXCEPTION, f"{got['type']}: {got['message']}"
    assert not got["changed"], "Java's failed commit changed the table"
    message = got["message"]
    if not filter_printed_otherwise:
        assert re.search(expected, message), f"Java's message {message!r} does not match {expected!r}"
        return
    assert not re.search(expected, message), (
        "the whole regex matches: drop the FILTER_PRINTED_OTHERWISE entry"
    )
    assert re.search(_stable_prefix(expected), message), (
        f"Java's message {message!r} does not match {expected!r}, not even before the filter"
    )


def _params() -> list[Any]:
    params = []
    for name in SCENARIOS:
        marks: list[pytest.MarkDecorator] = []
        if name in NOT_EXPRESSIBLE:
            marks.append(pytest.mark.skip(reason=f"not expressible in Java 1.9.2: {NOT_EXPRESSIBLE[name]}"))
        elif name in DIFFERENCES:
            reason = f"icefloe differs from Java: {DIFFERENCES[name][1]}"
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def test_every_scenario_is_replayed() -> None:
    assert set(JAVA_SCENARIOS).isdisjoint(NOT_EXPRESSIBLE)
    assert set(JAVA_SCENARIOS) | set(NOT_EXPRESSIBLE) == set(SCENARIOS)
    assert set(DIFFERENCES) <= set(JAVA_SCENARIOS)
    assert set(FILTER_PRINTED_OTHERWISE) <= set(JAVA_SCENARIOS)


def test_stable_prefix() -> None:
    assert _stable_prefix("Found conflicting files that can contain records matching TRUE") == (
        "Found conflicting files that can contain records matching"
    )
    assert _stable_prefix("Missing required files to delete") == "Missing required files to delete"


@pytest.mark.parametrize("name", _params())
def test_java_has_the_scenarios_outcome(java_outcomes: Callable[[str], Any], name: str) -> None:
    otherwise = name in FILTER_PRINTED_OTHERWISE
    _assert_outcome(java_outcomes(name), SCENARIOS[name][1], filter_printed_otherwise=otherwise)


@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_java_outcome_of_each_difference(java_outcomes: Callable[[str], Any], name: str) -> None:
    java_outcome, _ = DIFFERENCES[name]
    got = java_outcomes(name)
    _assert_outcome(got, java_outcome)
