"""What the ``icefloe`` data source's readers and writers share: finding the table from the
options (in whichever Spark Python worker asks), and Arrow batches in the form Spark expects.

Every object here pickles: Spark runs a data source's planning, commits and tasks in separate
Python workers (executors are other processes, other machines), so nothing may rely on state
of the driver's own Python process.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema

from icefloe.catalog.catalog import Catalog
from icefloe.catalog.config import load_catalog
from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.io import FileIO, load_file_io
from icefloe.io.encryption import load_kms_client
from icefloe.serde.metadata_json import loads_metadata
from icefloe.spark.types import to_spark_schema
from icefloe.spec import types as it
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.table.table import Table

__all__ = [
    "CATALOG_OPTION",
    "CATALOG_PROPERTY_PREFIX",
    "SPLIT_OPTIONS",
    "TableRef",
    "arrow_target",
    "bool_option",
    "int_option",
    "metadata_at",
    "spark_read_schema",
    "to_spark_batch",
]

#: The options that size a read's splits (the table's ``read.split.*`` properties otherwise).
SPLIT_OPTIONS = ("split-size", "lookback", "file-open-cost")
#: Option naming a catalog configured for ``icefloe.load_catalog`` (default: the default one).
CATALOG_OPTION = "catalog"
#: Options ``catalog.<key>`` are catalog properties passed to ``load_catalog`` (``catalog.type``,
#: ``catalog.uri``, ``catalog.warehouse``, ...), as Spark's ``spark.sql.catalog.<name>.<key>``.
CATALOG_PROPERTY_PREFIX = "catalog."


@dataclass(frozen=True, slots=True)
class TableRef:
    """Where a data source's table lives, as its options say; loads it in any process.

    ``identifier`` is a table identifier (``db.t``) resolved through
    ``icefloe.load_catalog(catalog, **properties)``, or the location of a ``metadata.json``
    file (a read-only table).
    """

    identifier: str
    catalog: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:  # the properties may hold credentials
        return f"TableRef({self.identifier!r}, catalog={self.catalog!r})"

    @classmethod
    def from_options(
        cls, options: Mapping[str, str], registered: Mapping[str, Mapping[str, str]] | None = None
    ) -> TableRef:
        """The table the options name (``path``: what ``load(...)`` / ``save(...)`` were given).

        Raises:
            ValidationError: no table given.
        """
        identifier = options.get("path")
        if not identifier:
            raise ValidationError(
                "the icefloe data source needs a table: load('db.table') / save('db.table') or "
                "option('path', 'db.table')"
            )
        name = options.get(CATALOG_OPTION) or None
        # A registered catalog's properties travel pickled with the data source, never as
        # options (which Spark may show); options still add to them.
        merged = dict((registered or {}).get(name or "", {}))
        merged.update(
            (key[len(CATALOG_PROPERTY_PREFIX) :], value)
            for key, value in options.items()
            if key.lower().startswith(CATALOG_PROPERTY_PREFIX)
        )
        return cls(identifier, name, tuple(sorted(merged.items())))

    @property
    def is_metadata_file(self) -> bool:
        return self.identifier.endswith("metadata.json") and (
            "/" in self.identifier or "\\" in self.identifier
        )

    def catalog_instance(self) -> Catalog:
        """The catalog the options name."""
        return load_catalog(self.catalog, **dict(self.properties))

    def with_identifier(self, identifier: str) -> TableRef:
        return TableRef(identifier, self.catalog, self.properties)

    def load(self) -> Table:
        """The table, as its catalog (or metadata file) has it now.

        Raises:
            NoSuchTableError, ValidationError: as ``load_catalog`` / ``load_table``.
        """
        if self.is_metadata_file:
            io = load_file_io(dict(self.properties), self.identifier)
            metadata = loads_metadata(io.read_bytes(self.identifier), location=self.identifier)
            kms = load_kms_client(dict(self.properties))  # an encrypted table's, from catalog.* options
            return Table((self.identifier,), metadata, self.identifier, io, kms=kms)
        return load_catalog(self.catalog, **dict(self.properties)).load_table(self.identifier)


def bool_option(options: Mapping[str, str], key: str) -> bool:
    """A ``true``/``false`` option (absent: false).

    Raises:
        ValidationError: another value (naming the option).
    """
    value = options.get(key)
    if value is None:
        return False
    if value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValidationError(f"option '{key}' must be true or false, not '{value}'")


def int_option(options: Mapping[str, str], key: str) -> int | None:
    """An integer option (absent: None).

    Raises:
        ValidationError: not an integer (naming the option).
    """
    value = options.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValidationError(f"option '{key}' must be an integer, not '{value}'") from None


# Metadata files never change: each Python worker reads one once (a few, most recent kept).
_METADATA_CACHE: OrderedDict[str, TableMetadata] = OrderedDict()
_METADATA_CACHE_SIZE = 8


def metadata_at(io: FileIO, location: str) -> TableMetadata:
    """The table metadata in a metadata file (cached per process)."""
    found = _METADATA_CACHE.get(location)
    if found is None:
        found = loads_metadata(io.read_bytes(location), location=location)
        _METADATA_CACHE[location] = found
        while len(_METADATA_CACHE) > _METADATA_CACHE_SIZE:
            _METADATA_CACHE.popitem(last=False)
    return found


# ---------------------------------------------------------------------------------------------
# Rows for Spark


def spark_read_schema(schema: Schema) -> st.StructType:
    """The Spark schema rows of ``schema`` are returned with: the types :func:`icefloe.spark.read.frames`
    returns (uuid as strings), every field nullable (files written before a column became
    required may hold nulls, and Spark trusts the flag).

    Raises:
        UnsupportedFeatureError: a column without a Spark type, or a uuid inside a nested type.
    """
    for field in schema.fields:
        if isinstance(field.field_type, it.NestedType) and _has_uuid(field.field_type):
            raise UnsupportedFeatureError(
                f"column '{field.name}': uuid values inside nested types are not read by Spark"
            )
    spark_schema = to_spark_schema(schema, with_ids=False)
    nullable = _nullable(spark_schema)
    assert isinstance(nullable, st.StructType)
    return nullable


def _has_uuid(field_type: it.IcebergType) -> bool:
    if isinstance(field_type, it.UUIDType):
        return True
    if isinstance(field_type, it.StructType):
        return any(_has_uuid(f.field_type) for f in field_type.fields)
    if isinstance(field_type, it.ListType):
        return _has_uuid(field_type.element_type)
    if isinstance(field_type, it.MapType):
        return _has_uuid(field_type.key_type) or _has_uuid(field_type.value_type)
    return False


def _nullable(data_type: st.DataType) -> st.DataType:
    if isinstance(data_type, st.StructType):
        return st.StructType(
            [st.StructField(f.name, _nullable(f.dataType), True, f.metadata) for f in data_type.fields]
        )
    if isinstance(data_type, st.ArrayType):
        return st.ArrayType(_nullable(data_type.elementType), True)
    if isinstance(data_type, st.MapType):
        return st.MapType(_nullable(data_type.keyType), _nullable(data_type.valueType), True)
    return data_type


def arrow_target(spark_schema: st.StructType) -> pa.Schema:
    """The Arrow schema Spark checks a data source's batches against."""
    return to_arrow_schema(spark_schema, timezone="UTC")


def to_spark_batch(
    batch: pa.RecordBatch, target: pa.Schema, uuid_columns: frozenset[str] = frozenset()
) -> pa.RecordBatch:
    """An icefloe batch (``schema_to_arrow`` form) in the exact Arrow schema Spark expects:
    columns by name, ``uuid_columns`` as strings, fixed as binary, nested names as Spark's."""
    columns = []
    for field in target:
        column = batch.column(field.name)
        if isinstance(column.type, pa.ExtensionType):
            column = column.storage
        if field.name in uuid_columns:
            column = _uuid_strings(column)
        if column.type != field.type:
            column = column.cast(field.type)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _uuid_strings(column: pa.Array) -> pa.Array:
    strings = []
    for value in column.to_pylist():
        if value is None or isinstance(value, uuid.UUID):
            strings.append(None if value is None else str(value))
        else:
            strings.append(str(uuid.UUID(bytes=bytes(value))))
    return pa.array(strings, pa.string())
