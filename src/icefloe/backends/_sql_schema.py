"""The catalog tables of Iceberg's JDBC catalog (Java ``JdbcUtil``, schema version V1).

``iceberg_tables`` holds one row per table (and, written by Java or iceberg-rust, per view:
``iceberg_type = 'VIEW'``); a row with ``iceberg_type`` NULL is a table written before views
existed (schema V0 has no such column). ``iceberg_namespace_properties`` holds one row per
namespace property; Java marks every created namespace with the property ``exists=true``.
Column types, lengths and primary keys are Java's DDL, so Java's JdbcCatalog, PyIceberg's
SqlCatalog and icefloe can share one database.
"""

from __future__ import annotations

from sqlalchemy import Column, MetaData, String, Table

__all__ = [
    "EXISTS_PROPERTY",
    "MAX_LOCATION_LENGTH",
    "MAX_NAME_LENGTH",
    "NAMESPACE_PROPERTIES",
    "SCHEMA",
    "TABLES",
    "TABLE_TYPE",
]

SCHEMA = MetaData()

TABLES = Table(
    "iceberg_tables",
    SCHEMA,
    Column("catalog_name", String(255), primary_key=True, nullable=False),
    Column("table_namespace", String(255), primary_key=True, nullable=False),
    Column("table_name", String(255), primary_key=True, nullable=False),
    Column("metadata_location", String(1000), nullable=True),
    Column("previous_metadata_location", String(1000), nullable=True),
    Column("iceberg_type", String(5), nullable=True),
)

NAMESPACE_PROPERTIES = Table(
    "iceberg_namespace_properties",
    SCHEMA,
    Column("catalog_name", String(255), primary_key=True, nullable=False),
    Column("namespace", String(255), primary_key=True, nullable=False),
    Column("property_key", String(255), primary_key=True, nullable=False),
    Column("property_value", String(1000), nullable=True),
)

TABLE_TYPE = "TABLE"
EXISTS_PROPERTY = "exists"
MAX_NAME_LENGTH = 255
MAX_LOCATION_LENGTH = 1000
