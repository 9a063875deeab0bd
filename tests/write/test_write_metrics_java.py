"""icefloe's data-file metrics against Java Iceberg's (1.9.2, the reference implementation).

Two comparisons, both exact (serialized bounds byte for byte):

* the metrics Java's Parquet writer records for the same rows: Java reads icefloe's file
  through an Iceberg table and rewrites the rows with its own writer (Spark), and the metrics
  of its data file must equal the ones icefloe recorded;
* ``ParquetUtil.fileMetrics`` (Java's metrics from a footer, used when importing files) on
  icefloe's file must equal :func:`icefloe.write.footer_metrics`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.io import load_file_io
from icefloe.serde.schema_json import schema_to_json
from icefloe.spec.manifest import DataFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.write import footer_metrics, write_data_files
from write._cases import nested_schema, nested_table, primitive_schema, primitive_table

pytestmark = pytest.mark.interop

# Runs inside the Java engine. Metrics maps come back keyed by field id (text), bounds as hex.
_JAVA = r"""
ice = jvm.org.apache.iceberg

def counts(m):
    return {} if m is None else {str(k): int(m[k]) for k in m}

def hexes(m):
    return {} if m is None else {str(k): bytes(ice.util.ByteBuffers.toByteArray(m[k])).hex() for k in m}

out = {}
metrics = ice.parquet.ParquetUtil.fileMetrics(ice.Files.localInput(path), ice.MetricsConfig.getDefault())
out["file"] = {
    "column_sizes": counts(metrics.columnSizes()),
    "value_counts": counts(metrics.valueCounts()),
    "null_value_counts": counts(metrics.nullValueCounts()),
    "nan_value_counts": counts(metrics.nanValueCounts()),
    "lower_bounds": hexes(metrics.lowerBounds()),
    "upper_bounds": hexes(metrics.upperBounds()),
}
if rewrite_in is not None:
    tables = ice.hadoop.HadoopTables(sc._jsc.hadoopConfiguration())
    schema = ice.SchemaParser.fromJson(schema_json)
    spec = ice.PartitionSpec.unpartitioned()
    props = jvm.java.util.HashMap()
    props.put("format-version", "2")
    source = tables.create(schema, spec, props, rewrite_in + "/source")
    data_file = (
        ice.DataFiles.builder(spec).withPath(path).withFileSizeInBytes(size)
        .withRecordCount(rows).withFormat("parquet").build()
    )
    source.newAppend().appendFile(data_file).commit()
    target = tables.create(schema, spec, props, rewrite_in + "/target")
    names = target.schema().idToName()
    out["names"] = {str(k): names[k] for k in names}
    df = spark.read.format("iceberg").load(rewrite_in + "/source")
    out["rows_read"] = df.count()
    df.coalesce(1).write.format("iceberg").mode("append").save(rewrite_in + "/target")
    files = [r.asDict() for r in spark.read.format("iceberg").load(rewrite_in + "/target#files").collect()]
    out["java_files"] = len(files)
    r = files[0]
    out["writer"] = {
        "value_counts": {str(k): v for k, v in (r["value_counts"] or {}).items()},
        "null_value_counts": {str(k): v for k, v in (r["null_value_counts"] or {}).items()},
        "nan_value_counts": {str(k): v for k, v in (r["nan_value_counts"] or {}).items()},
        "lower_bounds": {str(k): bytes(v).hex() for k, v in (r["lower_bounds"] or {}).items()},
        "upper_bounds": {str(k): bytes(v).hex() for k, v in (r["upper_bounds"] or {}).items()},
    }
result = out
"""

_COUNTS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
_BOUNDS = ("lower_bounds", "upper_bounds")


def _ours(metrics: Any, keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    result = {}
    for key in keys:
        values = getattr(metrics, key) or {}
        result[key] = {str(k): (v.hex() if isinstance(v, bytes) else int(v)) for k, v in values.items()}
    return result


def _named(schema: Schema, metrics: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Keys as column names, so that a mismatch reads well."""
    names = schema.id_to_name()
    return {key: {names[int(k)]: v for k, v in values.items()} for key, values in metrics.items()}


def _write(
    tmp_path: Path, schema: Schema, table: pa.Table, properties: dict[str, str] | None = None
) -> DataFile:
    [data_file] = write_data_files(
        load_file_io({}, str(tmp_path)),
        table_location=str(tmp_path / "icefloe"),
        properties=properties or {},
        schema=schema,
        spec=PartitionSpec(),
        data=table,
    )
    return data_file


def _java(java_engine: Any, data_file: DataFile, schema: Schema, rewrite_in: Path | None) -> dict[str, Any]:
    return dict(
        java_engine.exec(
            _JAVA,
            path=data_file.file_path,
            size=data_file.file_size_in_bytes,
            rows=data_file.record_count,
            schema_json=json.dumps(schema_to_json(schema)),
            rewrite_in=None if rewrite_in is None else str(rewrite_in),
        )
    )


CASES = {
    "primitives": (primitive_schema, primitive_table, {}),
    "primitives-in-row-groups-of-2": (
        primitive_schema,
        primitive_table,
        {"write.parquet.row-group-limit": "2"},
    ),
    "nested": (nested_schema, nested_table, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_footer_metrics_equal_java_file_metrics(java_engine: Any, tmp_path: Path, case: str) -> None:
    """Every primitive type (time, nanosecond timestamps and uuid included), nested columns,
    and bounds merged over several row groups."""
    make_schema, make_table, properties = CASES[case]
    schema = make_schema()
    data_file = _write(tmp_path, schema, make_table(), properties)
    ours = footer_metrics(pq.ParquetFile(data_file.file_path).metadata, schema)
    java = _java(java_engine, data_file, schema, rewrite_in=None)["file"]
    assert _named(schema, _ours(ours, _COUNTS + _BOUNDS)) == _named(schema, java)


@pytest.mark.parametrize("case", ["primitives", "nested"])
def test_writer_metrics_equal_java_writer_metrics(java_engine: Any, tmp_path: Path, case: str) -> None:
    """The metrics Java's writer records for the same rows, NaN counts and float bounds
    (signed zeros, infinities) included. Spark cannot carry time, nanosecond timestamps or
    uuid values, so those are covered by the footer comparison only."""
    if case == "primitives":
        schema = primitive_schema(spark_types_only=True)
        table = primitive_table(spark_types_only=True)
    else:
        schema, table = nested_schema(), nested_table()
    data_file = _write(tmp_path, schema, table)
    java = _java(java_engine, data_file, schema, rewrite_in=tmp_path / "java")
    assert java["rows_read"] == table.num_rows
    assert java["java_files"] == 1
    # Java numbers the columns of a new table itself; map its ids back through the names
    ids = {name: field_id for field_id, name in schema.id_to_name().items()}
    java_metrics = {
        key: {str(ids[java["names"][k]]): v for k, v in values.items()}
        for key, values in java["writer"].items()
    }
    keys = ("value_counts", "null_value_counts", "nan_value_counts", *_BOUNDS)
    assert _named(schema, _ours(data_file, keys)) == _named(schema, java_metrics)


_JAVA_READ = r"""
ice = jvm.org.apache.iceberg
tables = ice.hadoop.HadoopTables(sc._jsc.hadoopConfiguration())
spec = ice.PartitionSpec.unpartitioned()
table = tables.create(ice.SchemaParser.fromJson(schema_json), spec, location)
append = table.newAppend()
for path, size, rows in files:
    append.appendFile(
        ice.DataFiles.builder(spec).withPath(path).withFileSizeInBytes(size)
        .withRecordCount(rows).withFormat("parquet").build()
    )
append.commit()
result = [list(r) for r in spark.read.format("iceberg").load(location).orderBy("id").collect()]
"""


def test_java_reads_every_codec(java_engine: Any, tmp_path: Path) -> None:
    schema = nested_schema()
    table = nested_table()
    files = []
    # brotli is left out: Java needs a Brotli codec jar that the engine (like most Java
    # deployments) does not ship
    for codec in ("zstd", "snappy", "gzip", "lz4", "uncompressed"):
        data_file = _write(tmp_path / codec, schema, table, {"write.parquet.compression-codec": codec})
        files.append([data_file.file_path, data_file.file_size_in_bytes, data_file.record_count])
    rows = java_engine.exec(
        _JAVA_READ,
        schema_json=json.dumps(schema_to_json(schema)),
        location=str(tmp_path / "java"),
        files=files,
    )
    assert len(rows) == 5 * table.num_rows
    assert [row[0] for row in rows] == sorted(table.column("id").to_pylist() * 5)
