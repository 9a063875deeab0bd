"""Reading a metadata table (``load("db.t.files")``) through the ``icefloe`` data source: one
Spark partition whose Python worker loads the table and builds the rows with
``table.inspect`` (see :mod:`icefloe.spark.read.metadata_tables`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as ds
from pyspark.sql import types as st

from icefloe.spark.datasource.common import TableRef, arrow_target, int_option, to_spark_batch
from icefloe.spark.read.metadata_tables import metadata_table_arrow

__all__ = ["MetadataTableReader"]


class MetadataTableReader(ds.DataSourceReader):
    """The rows of one metadata table, in a single partition."""

    def __init__(self, ref: TableRef, name: str, options: dict[str, str], schema: st.StructType):
        self.ref = ref
        self.name = name
        self.options = options
        self.target = arrow_target(schema)

    def partitions(self) -> list[Any]:
        return [ds.InputPartition(0)]

    def read(self, partition: ds.InputPartition) -> Iterator[pa.RecordBatch]:
        options = self.options
        ref = options.get("branch") or options.get("tag") or None
        arrow = metadata_table_arrow(
            self.ref.load(),
            self.name,
            snapshot_id=int_option(options, "snapshot-id"),
            ref=ref,
            filter=options.get("filter") or None,
        )
        for batch in arrow.to_batches():
            yield to_spark_batch(batch, self.target)
