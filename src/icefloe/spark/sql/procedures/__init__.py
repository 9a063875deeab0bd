"""CALL <catalog>.system.<procedure>(...): Java's stored procedures on icefloe's actions.

Arguments are named (``table => 'db.t'``) or positional, in Java's order; each procedure
returns a DataFrame with the columns and types of Java's procedure output
(``org.apache.iceberg.spark.procedures``). By theme: :mod:`.maintenance`, :mod:`.history`,
:mod:`.imports` (add_files, register_table, snapshot, migrate), :mod:`.changelog`.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spark.sql.procedures.changelog import CHANGELOG
from icefloe.spark.sql.procedures.common import Procedure
from icefloe.spark.sql.procedures.history import HISTORY
from icefloe.spark.sql.procedures.imports import IMPORTS
from icefloe.spark.sql.procedures.maintenance import MAINTENANCE
from icefloe.spark.sql.queries import to_sql
from icefloe.spark.sql.resolve import Resolver

__all__ = ["PROCEDURES", "run_call"]

PROCEDURES: dict[str, Procedure] = {**MAINTENANCE, **HISTORY, **IMPORTS, **CHANGELOG}


def _value(spark: SparkSession, node: exp.Expression) -> Any:
    """An argument's value: literals directly, anything else (map(...), array(...), casts,
    TIMESTAMP '...') evaluated by Spark."""
    if isinstance(node, exp.Literal):
        return (
            node.name
            if node.is_string
            else int(node.name)
            if node.name.lstrip("-").isdigit()
            else float(node.name)
        )
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    value = spark.sql(f"SELECT {to_sql(node)} AS v").first()[0]  # type: ignore[index]
    if isinstance(value, dict) or not isinstance(value, (list, tuple)):
        return value
    return list(value)


def run_call(spark: SparkSession, tree: Any, resolver: Resolver) -> DataFrame:
    """CALL [catalog.]system.<name>(args)."""
    parts = [i.name for i in tree.this.expressions]
    if len(parts) < 2 or parts[-2].lower() != "system":
        raise UnsupportedFeatureError(f"CALL {'.'.join(parts)}: procedures live in <catalog>.system")
    if len(parts) == 3 and parts[0].lower() != resolver.catalog.name.lower():
        raise ValidationError(
            f"CALL {'.'.join(parts)}: catalog '{parts[0]}' is not '{resolver.catalog.name}'"
        )
    name = parts[-1].lower()
    procedure = PROCEDURES.get(name)
    if procedure is None:
        raise UnsupportedFeatureError(f"procedure '{name}' is not supported by icefloe")
    args: dict[str, Any] = {}
    named = [isinstance(arg, exp.Kwarg) for arg in tree.expressions]
    if any(named) and not all(named):
        raise ValidationError(f"CALL {name}: named and positional arguments cannot be mixed")
    for position, arg in enumerate(tree.expressions):
        if isinstance(arg, exp.Kwarg):
            key = arg.this.name.lower()
            if key not in procedure.params:
                raise ValidationError(
                    f"procedure '{name}' has no parameter '{key}' (it has {list(procedure.params)})"
                )
            args[key] = _value(spark, arg.expression)
        else:
            if position >= len(procedure.params):
                raise ValidationError(f"procedure '{name}' takes at most {len(procedure.params)} arguments")
            args[procedure.params[position]] = _value(spark, arg)
    rows = procedure.run(spark, resolver, args)
    return spark.createDataFrame(rows, procedure.output)
