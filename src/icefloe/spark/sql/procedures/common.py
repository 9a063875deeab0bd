"""What every procedure shares: its declaration (Java's parameters and output) and the helpers
that turn arguments into icefloe objects."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from icefloe.errors import ValidationError
from icefloe.spark.sql.resolve import Resolver
from icefloe.table.table import Table

__all__ = ["Args", "Procedure", "Rows", "current_id", "millis", "string_map", "table_arg"]

Args = dict[str, Any]
Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Procedure:
    params: tuple[str, ...]  # Java's parameter names, in order
    output: str  # Java's output schema (Spark DDL)
    run: Callable[[SparkSession, Resolver, Args], Rows]


def table_arg(resolver: Resolver, args: Args, name: str = "table") -> Table:
    """The icefloe table the argument ``name`` names (``db.t`` or ``<catalog>.db.t``)."""
    if name not in args:
        raise ValidationError(f"the procedure needs a '{name}' argument")
    parts = str(args[name]).split(".")
    ref = resolver.resolve(parts)
    if ref is None or ref.metadata_table or ref.ref or ref.snapshot_id:
        raise ValidationError(f"'{args[name]}' is not an icefloe table")
    return resolver.load(ref.identifier)


def current_id(table: Table) -> int | None:
    snapshot = table.current_snapshot()
    return snapshot.snapshot_id if snapshot else None


def millis(value: Any) -> int:
    """A timestamp argument (a Spark TIMESTAMP, or epoch milliseconds) as epoch milliseconds."""
    if isinstance(value, dt.datetime):
        value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    return int(value)


def string_map(args: Args, name: str) -> dict[str, str]:
    """A ``map(...)`` argument as strings (Java's ``asStringMap``); absent: empty."""
    value = args.get(name) or {}
    if not isinstance(value, dict):
        raise ValidationError(f"argument '{name}' must be a map, not {value!r}")
    return {str(k): str(v) for k, v in value.items()}
