"""The ``icefloe`` Spark data source (streaming): reads pick up appends across triggers and refuse
overwrite / delete snapshots unless told to skip them; writes commit each micro-batch exactly
once, across replays and restarts from the same checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.spark.datasource.source import IcefloeDataSource
from icefloe.spark.datasource.writer import EPOCH_ID_KEY, QUERY_ID_KEY
from spark.test_datasource import catalog_options
from support.spark import sorted_tuples, spark_rows

_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])


def _rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "s": [f"v{i}" for i in ids]}, schema=_SCHEMA)


def _stream(spark: Any, catalog: Catalog, **options: Any) -> Any:
    isp.register(spark)
    return (
        spark.readStream.format("icefloe")
        .options(**catalog_options(catalog))
        .options(**options)
        .load("db.src")
    )


def _drain(
    spark: Any, catalog: Catalog, checkpoint: Path, sink: Path, **options: Any
) -> list[tuple[Any, ...]]:
    """Run the stream once over what is available (the same checkpoint each call) into a
    Parquet sink; returns every row the sink holds."""
    query = (
        _stream(spark, catalog, **options)
        .writeStream.format("parquet")
        .option("checkpointLocation", str(checkpoint))
        .option("path", str(sink))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    query.stop()
    if query.exception() is not None:
        raise query.exception()
    return spark_rows(spark.read.parquet(str(sink))) if any(sink.glob("*.parquet")) else []


@pytest.mark.every_session
def test_stream_reads_appends_across_triggers(spark: Any, catalog: Catalog, tmp_path: Path) -> None:
    table = catalog.create_table("db.src", _SCHEMA)
    table.append(_rows([1, 2]))
    checkpoint, sink = tmp_path / "chk", tmp_path / "sink"
    assert _drain(spark, catalog, checkpoint, sink) == [(1, "v1"), (2, "v2")]
    table.append(_rows([3]))
    table.append(_rows([4, 5]))
    assert _drain(spark, catalog, checkpoint, sink) == [(i, f"v{i}") for i in [1, 2, 3, 4, 5]]
    # Replace snapshots (here a manifest rewrite) are skipped silently: no duplicates.
    table.rewrite_manifests().commit()
    assert table.current_snapshot().operation == "replace"
    table.append(_rows([6]))
    assert _drain(spark, catalog, checkpoint, sink) == [(i, f"v{i}") for i in range(1, 7)]


def test_stream_from_timestamp(spark: Any, catalog: Catalog, tmp_path: Path) -> None:
    table = catalog.create_table("db.src", _SCHEMA)
    table.append(_rows([1]))
    table.append(_rows([2]))
    start = table.current_snapshot().timestamp_ms
    table.append(_rows([3]))
    rows = _drain(spark, catalog, tmp_path / "chk", tmp_path / "sink", **{"stream-from-timestamp": start})
    assert rows == [(2, "v2"), (3, "v3")]


def test_overwrite_and_delete_snapshots_fail_unless_skipped(
    spark: Any, catalog: Catalog, tmp_path: Path
) -> None:
    table = catalog.create_table("db.src", _SCHEMA)
    table.append(_rows([1, 2]))
    assert _drain(spark, catalog, tmp_path / "chk", tmp_path / "sink") == [(1, "v1"), (2, "v2")]
    table.new_delete().delete_from_row_filter("id >= 0").commit()
    assert table.current_snapshot().operation == "delete"
    with pytest.raises(Exception, match=r"'delete' snapshot.*streaming-skip-delete-snapshots=true"):
        _drain(spark, catalog, tmp_path / "chk", tmp_path / "sink")
    table.append(_rows([8]))
    table.overwrite(_rows([7]), "id = 8")
    assert table.current_snapshot().operation == "overwrite"
    skip_delete = {"streaming-skip-delete-snapshots": "true"}
    with pytest.raises(Exception, match=r"'overwrite' snapshot.*streaming-skip-overwrite-snapshots=true"):
        _drain(spark, catalog, tmp_path / "chk", tmp_path / "sink", **skip_delete)
    table.append(_rows([3]))
    skip_both = {**skip_delete, "streaming-skip-overwrite-snapshots": "true"}
    rows = _drain(spark, catalog, tmp_path / "chk", tmp_path / "sink", **skip_both)
    assert rows == [(1, "v1"), (2, "v2"), (3, "v3"), (8, "v8")]  # the overwrite's own rows are skipped too


def _target(catalog: Catalog) -> Table:
    return catalog.create_table("db.dst", _SCHEMA)


@pytest.mark.every_session
def test_stream_write_commits_each_batch_once_across_restarts(
    spark: Any, catalog: Catalog, tmp_path: Path
) -> None:
    source = catalog.create_table("db.src", _SCHEMA)
    target = _target(catalog)
    checkpoint = tmp_path / "chk"

    def run() -> None:
        query = (
            _stream(spark, catalog)
            .writeStream.format("icefloe")
            .options(**catalog_options(catalog))
            .option("checkpointLocation", str(checkpoint))
            .outputMode("append")
            .trigger(availableNow=True)
            .start("db.dst")
        )
        query.awaitTermination()
        query.stop()
        assert query.exception() is None

    source.append(_rows([1, 2]))
    run()
    source.append(_rows([3]))
    run()
    run()  # nothing new: no commit
    target.refresh()
    assert sorted_tuples(target.new_scan().to_arrow()) == [(1, "v1"), (2, "v2"), (3, "v3")]
    summaries = [s.summary for s in target.snapshots()]
    assert [s[EPOCH_ID_KEY] for s in summaries] == ["0", "1"]
    assert len({s[QUERY_ID_KEY] for s in summaries}) == 1
    assert spark_rows(isp.read(spark, target)) == [(1, "v1"), (2, "v2"), (3, "v3")]

    # A crash after the commit but before Spark recorded it: Spark replays the last batch.
    for name in ("1", ".1.crc"):
        (checkpoint / "commits" / name).unlink(missing_ok=True)
    run()
    target.refresh()
    assert len(target.snapshots()) == 2
    assert sorted_tuples(target.new_scan().to_arrow()) == [(1, "v1"), (2, "v2"), (3, "v3")]


def test_stream_writer_commit_twice_commits_once(spark: Any, catalog: Catalog, tmp_path: Path) -> None:
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.types import StructType

    target = _target(catalog)
    options = CaseInsensitiveDict(
        {"path": "db.dst", "checkpointLocation": str(tmp_path / "chk"), **catalog_options(catalog)}
    )
    schema = StructType.fromDDL("id long, s string")
    source = IcefloeDataSource(options)

    def batch(batch_id: int, ids: list[int]) -> list[str]:
        writer = source.streamWriter(schema, False)
        message = writer.write(iter(_rows(ids).to_batches()))
        writer.commit([message], batch_id)
        return [f.file_path for f in message.files]

    batch(0, [1])
    batch(1, [2])
    replayed = batch(1, [2])  # the same batch again (a replay): skipped, its files removed
    batch(0, [1])
    target.refresh()
    assert len(target.snapshots()) == 2
    assert sorted_tuples(target.new_scan().to_arrow()) == [(1, "v1"), (2, "v2")]
    assert not any(Path(p.removeprefix("file:")).exists() for p in replayed)
    batch(2, [3])
    target.refresh()
    assert target.current_snapshot().summary[EPOCH_ID_KEY] == "2"
    with pytest.raises(Exception, match="checkpointLocation"):
        IcefloeDataSource(CaseInsensitiveDict({"path": "db.dst", **catalog_options(catalog)})).streamWriter(
            schema, False
        )


def test_stream_write_complete_mode_overwrites(spark: Any, catalog: Catalog, tmp_path: Path) -> None:
    source = catalog.create_table("db.src", _SCHEMA)
    target = catalog.create_table(
        "db.dst", pa.schema([pa.field("s", pa.string()), pa.field("n", pa.int64())])
    )
    checkpoint = tmp_path / "chk"

    def run() -> None:
        query = (
            _stream(spark, catalog)
            .groupBy("s")
            .count()
            .withColumnRenamed("count", "n")
            .writeStream.format("icefloe")
            .options(**catalog_options(catalog))
            .option("checkpointLocation", str(checkpoint))
            .outputMode("complete")
            .trigger(availableNow=True)
            .start("db.dst")
        )
        query.awaitTermination()
        query.stop()
        assert query.exception() is None

    source.append(_rows([1, 2]))
    run()
    source.append(pa.table({"id": [3], "s": ["v1"]}, schema=_SCHEMA))
    run()
    target.refresh()
    assert sorted_tuples(target.new_scan().to_arrow()) == [("v1", 2), ("v2", 1)]
