"""``icefloe.spark.register(spark)``: Iceberg tables as the Spark data source ``"icefloe"``.

Built on PySpark's Python Data Source API, so no JVM jar is needed::

    from icefloe import spark as isp
    isp.register(spark)
    df = spark.read.format("icefloe").load("db.events")
    df.write.format("icefloe").mode("append").save("db.events")
    spark.readStream.format("icefloe").load("db.events")
    (df.writeStream.format("icefloe").option("checkpointLocation", "/chk/q1")
       .outputMode("append").start("db.events"))

This is the convenience path. The fast path for batch reads is :func:`icefloe.spark.read.frames`:
there Spark's own (vectorized, column-pruning, row-group-skipping) Parquet reader reads the
files, while here each Spark task runs icefloe's Arrow reader in a Python worker and hands
Arrow batches to Spark, and Spark does not prune columns of Python data sources. Writes cost
the same on both paths (:func:`icefloe.spark.write.frames` takes ``where=`` overwrites too).

The table is ``load(...)`` / ``save(...)``'s argument (or option ``path``): an identifier
resolved through ``icefloe.load_catalog()``, or the location of a ``metadata.json`` file (read
only). ``load("db.t.files")`` (any of Java's metadata table names) reads that metadata table
of ``db.t``, with options ``snapshot-id``, ``branch``, ``tag`` and ``filter``. Spark runs data sources in separate Python workers, started with the environment Spark
itself was started with; to name another catalog than the default, or to configure one
without environment variables or ``~/.icefloe.yaml``, register it or use the options:

- ``isp.register(spark, catalogs={"lake": catalog})`` (a ``Catalog`` or its properties): the
  option ``catalog=lake`` names it. Its properties, credentials included, travel pickled inside
  the registered data source class to every Python worker, not as options: no secret is in a
  plan, the Spark UI or an event log;
- ``catalog``: the catalog's name (``load_catalog(name)``, or a registered one);
- ``catalog.<key>``: catalog properties (``catalog.type``, ``catalog.uri``,
  ``catalog.warehouse``, ``catalog.s3.endpoint``, ...), as ``load_catalog(name, **properties)``.
  Options are part of the query's plan: keep credentials out of them (register the catalog).

Batch read options: ``snapshot-id``, ``as-of-timestamp`` (epoch milliseconds), ``branch``,
``tag`` (at most one), ``filter`` (an icefloe SQL predicate, e.g. ``"day >= '2024-01-01'"``),
``split-size`` / ``lookback`` / ``file-open-cost`` (task planning). A DataFrame reads the
snapshot its options chose when it was loaded (its schema is that snapshot's). Deletes
(position, deletion vectors, equality) are applied. ``push-filters=true`` (with the session
setting ``spark.sql.python.filterPushdown.enabled=true``) hands Spark's simple filters to
icefloe's planning; it is off by default because PySpark 4.3 reuses a pushed-down plan for
later unfiltered scans of the same DataFrame (see :mod:`icefloe.spark.datasource.reader`).

Batch write: ``mode("append")``; ``mode("overwrite")`` replaces every row, or with option
``overwrite-mode=dynamic`` the partitions the new rows fall in; option ``branch`` commits to a
branch. Columns are matched by name (case-insensitively); a column the table lacks, a missing
required column or a type that does not convert fails the write naming the column. One
snapshot per write; a failed write deletes its files and commits nothing.

Streaming read and write: see :mod:`icefloe.spark.datasource.streaming` (offsets are snapshots; options
``stream-from-timestamp``, ``streaming-skip-overwrite-snapshots``,
``streaming-skip-delete-snapshots``) and :mod:`icefloe.spark.datasource.writer` (output modes
``append`` and ``complete``; ``checkpointLocation`` is required: each micro-batch commits
exactly once, recorded as Java does under the summary keys ``spark.sql.streaming.queryId`` and
``spark.sql.streaming.epochId``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession
from pyspark.sql import datasource as ds
from pyspark.sql import types as st

from icefloe.catalog.catalog import Catalog
from icefloe.errors import ValidationError
from icefloe.spark.datasource.common import TableRef, bool_option, metadata_at, spark_read_schema
from icefloe.spark.datasource.metadata import MetadataTableReader
from icefloe.spark.datasource.reader import IcefloePushdownReader, IcefloeReader, ReadOptions
from icefloe.spark.datasource.streaming import IcefloeStreamReader
from icefloe.spark.datasource.writer import IcefloeStreamWriter, IcefloeWriter, stream_query_id
from icefloe.spark.read.metadata_tables import metadata_table_spark_schema, split_metadata_table
from icefloe.table.table import Table

__all__ = ["FORMAT", "PUSH_FILTERS_OPTION", "IcefloeDataSource", "register"]

#: The data source's name: ``spark.read.format(FORMAT)``.
FORMAT = "icefloe"
_OVERWRITE_MODES = ("static", "dynamic")
#: Read option: hand Spark's filters to icefloe (needs ``spark.sql.python.filterPushdown.enabled``).
PUSH_FILTERS_OPTION = "push-filters"


# The catalogs registered in this (driver) process: each register() call registers them all.
_REGISTERED: dict[str, dict[str, str]] = {}


def register(spark: SparkSession, catalogs: Mapping[str, Catalog | Mapping[str, str]] | None = None) -> None:
    """Make ``format("icefloe")`` available in ``spark`` (reads, writes, streams).

    Args:
        catalogs: catalogs the option ``catalog=<name>`` names, as ``Catalog`` s or their
            properties. They add to those registered before; their properties travel pickled
            with the data source to Spark's Python workers (never as plan options).
    """
    for name, catalog in (catalogs or {}).items():
        properties = catalog.properties if isinstance(catalog, Catalog) else catalog
        _REGISTERED[name] = {str(k): str(v) for k, v in properties.items()}
    if not _REGISTERED:
        spark.dataSource.register(IcefloeDataSource)
        return
    # A class made here is pickled by value (cloudpickle cannot import it by name), with the
    # catalogs as its attribute.
    carrying = type(
        "IcefloeDataSource",
        (IcefloeDataSource,),
        {"registered_catalogs": {k: dict(v) for k, v in _REGISTERED.items()}, "__module__": __name__},
    )
    carrying.__qualname__ = "IcefloeDataSource<with registered catalogs>"
    spark.dataSource.register(carrying)


class IcefloeDataSource(ds.DataSource):
    """The ``icefloe`` data source (see the module documentation for its options)."""

    #: Catalogs by name, set on the class ``register`` makes (pickled with it).
    registered_catalogs: Mapping[str, Mapping[str, str]] = {}

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def _ref(self) -> TableRef:
        return TableRef.from_options(self.options, self.registered_catalogs)

    def _metadata_table(self) -> tuple[TableRef, str] | None:
        """(the table, the metadata table's name) when ``load("db.t.files")`` names one."""
        ref = self._ref()
        if ref.is_metadata_file:
            return None
        split = split_metadata_table(ref.identifier, ref.catalog_instance)
        return None if split is None else (ref.with_identifier(split[0]), split[1])

    def schema(self) -> st.StructType:
        meta = self._metadata_table()
        if meta is not None:
            return metadata_table_spark_schema(meta[0].load(), meta[1])
        table = self._ref().load()
        scan = ReadOptions.from_options(self.options).scan(table)
        # Pinned: the planning worker reads the same metadata (the instance is pickled to it).
        self._metadata_location = table.metadata_location
        return spark_read_schema(scan.table_schema())

    def _pinned_table(self) -> Table:
        table = self._ref().load()
        pinned = getattr(self, "_metadata_location", None)
        if pinned is not None and pinned != table.metadata_location:
            table = Table(table.identifier_tuple, metadata_at(table.io(), pinned), pinned, table.io())
        return table

    def reader(self, schema: st.StructType) -> ds.DataSourceReader:
        meta = self._metadata_table()
        if meta is not None:
            return MetadataTableReader(meta[0], meta[1], dict(self.options), schema)
        kind = IcefloePushdownReader if bool_option(self.options, PUSH_FILTERS_OPTION) else IcefloeReader
        return kind(self._ref(), self._pinned_table(), ReadOptions.from_options(self.options), schema)

    def writer(self, schema: st.StructType, overwrite: bool) -> IcefloeWriter:
        overwrite_mode = (self.options.get("overwrite-mode") or "static").lower()
        if overwrite_mode not in _OVERWRITE_MODES:
            raise ValidationError(
                f"option 'overwrite-mode' must be one of {', '.join(_OVERWRITE_MODES)}, not '{overwrite_mode}'"
            )
        mode = "append"
        if overwrite:
            mode = "overwrite-partitions" if overwrite_mode == "dynamic" else "overwrite"
        ref = self._ref()
        return IcefloeWriter(ref, ref.load(), schema, mode=mode, branch=self.options.get("branch") or None)

    def streamReader(self, schema: st.StructType) -> IcefloeStreamReader:
        ref = self._ref()
        return IcefloeStreamReader(ref, ref.load(), self.options, schema)

    def streamWriter(self, schema: st.StructType, overwrite: bool) -> IcefloeStreamWriter:
        ref = self._ref()
        return IcefloeStreamWriter(
            ref,
            ref.load(),
            schema,
            overwrite=overwrite,
            branch=self.options.get("branch") or None,
            query_id=stream_query_id(self.options),
        )
