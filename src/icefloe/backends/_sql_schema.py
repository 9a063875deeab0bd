"""The catalog tables of Iceberg's JDBC catalog (Java ``JdbcUtil``, schema version V1).

``iceberg_tables`` holds one row per table (and, written by Java or iceberg-rust, per view:
``iceberg_type = 'VIEW'``); a row with ``iceberg_type`` NULL is a table written before views
existed (schema V0 has no such column). ``iceberg_namespace_properties`` holds one row per
namespace property; Java marks every created namespace with the property ``exists=true``.
Column types, lengths and primary keys are Java's DDL, so Java's JdbcCatalog, PyIceberg's
SqlCatalog and icefloe can share one database.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Column, MetaData, String, Table

from icefloe.errors import ValidationError

__all__ = [
    "EXISTS_PROPERTY",
    "MAX_LOCATION_LENGTH",
    "MAX_NAME_LENGTH",
    "NAMESPACE_PROPERTIES",
    "SCHEMA",
    "TABLES",
    "TABLE_TYPE",
    "VIEW_TYPE",
    "check_location_length",
    "check_properties",
    "check_property_update",
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
VIEW_TYPE = "VIEW"
EXISTS_PROPERTY = "exists"
MAX_NAME_LENGTH = 255
MAX_LOCATION_LENGTH = 1000


def check_location_length(location: str) -> None:
    if len(location) > MAX_LOCATION_LENGTH:
        raise ValidationError(
            f"metadata location {location[:60]!r}... is longer than the {MAX_LOCATION_LENGTH} "
            "characters the catalog stores"
        )


def check_properties(properties: Mapping[str, str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in properties.items():
        if not isinstance(key, str) or not key:
            raise ValidationError(f"namespace property keys must be non-empty strings, not {key!r}")
        if not isinstance(value, str):
            raise ValidationError(f"namespace property '{key}' must be a string, not {value!r}")
        if len(key) > MAX_NAME_LENGTH or len(value) > MAX_LOCATION_LENGTH:
            raise ValidationError(
                f"namespace property '{key[:40]}': keys are limited to {MAX_NAME_LENGTH} and values to "
                f"{MAX_LOCATION_LENGTH} characters"
            )
        result[key] = value
    return result


def check_property_update(removals: set[str], updates: Mapping[str, str]) -> None:
    both = sorted(removals & set(updates))
    if both:
        raise ValidationError(f"namespace properties {both} are both removed and updated")
    if EXISTS_PROPERTY in removals or EXISTS_PROPERTY in updates:
        raise ValidationError(f"namespace property '{EXISTS_PROPERTY}' is reserved by the catalog")
