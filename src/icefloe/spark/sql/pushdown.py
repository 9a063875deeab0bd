"""What a statement needs of each icefloe table it reads: the columns it names and the rows its
WHERE clause keeps.

Spark cannot push its column pruning or filters into icefloe's reader in the Spark tasks (a
``mapInArrow`` is opaque to the optimizer), and it never prunes the files ``isp.read`` planned.
So before a statement reaches Spark, its text says what to read: only the table columns whose
names appear in it, and only the files (row groups, pages) its WHERE clause can match. Spark
still runs the whole statement on what was read, so both are only ever a superset of what the
statement uses:

* columns: every identifier of the statement (any scope, any qualifier) counts as a possible
  reference to a table column of that name, case-insensitively. Where a statement can use
  columns it does not name (``*`` outside ``count(*)``, ``t.*``, ``NATURAL JOIN``, ``PIVOT`` /
  ``UNPIVOT``, which group by every other column) the table is read whole.
* rows: only the WHERE clause of a SELECT that reads the table alone (no joins, lateral views or
  sampling), converted by :mod:`icefloe.spark.rows.conditions` to an Iceberg filter true
  wherever the clause is (the conjuncts it can convert; the rest prune nothing).
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from sqlglot import exp

from icefloe.errors import IcefloeError
from icefloe.expressions import Expression, bind
from icefloe.expressions.model import AlwaysTrue
from icefloe.spark.rows.conditions import implied_filter
from icefloe.spec import types as it
from icefloe.spec.schema import Schema

__all__ = ["named_identifiers", "read_columns", "where_filter"]


def named_identifiers(tree: exp.Expression) -> frozenset[str] | None:
    """The lower-cased identifiers of ``tree``, or None where it may use columns it does not
    name."""
    for node in tree.find_all(exp.Star, exp.Pivot, exp.Join):
        if isinstance(node, exp.Pivot):
            return None
        if isinstance(node, exp.Join):
            if str(node.args.get("method") or "").upper() == "NATURAL":
                return None
            continue
        if not isinstance(node.parent, exp.Count):  # count(*) counts rows, it reads no column
            return None
    return frozenset(ident.name.lower() for ident in tree.find_all(exp.Identifier))


def read_columns(schema: Schema, identifiers: frozenset[str] | None) -> list[str] | None:
    """The columns of ``schema`` to read for a statement with ``identifiers`` (None: all).

    A statement that names none of them (``SELECT count(*) FROM t``) still reads one, the
    cheapest to decode, for the row count."""
    if identifiers is None:
        return None
    named = [field.name for field in schema.fields if field.name.lower() in identifiers]
    if len(named) == len(schema.fields):
        return None
    if named:
        return named
    return [min(schema.fields, key=_decode_cost).name]


def where_filter(spark: SparkSession, schema: Schema, table_node: exp.Table, alias: str) -> Expression | None:
    """An Iceberg filter true on every row of the table ``table_node`` names that its SELECT's
    WHERE clause keeps, or None: the table is not read alone or nothing converts."""
    from_ = table_node.parent
    select = from_.parent if isinstance(from_, exp.From) else None
    if not isinstance(select, exp.Select) or any(select.args.get(key) for key in ("joins", "laterals")):
        return None
    if table_node.args.get("sample") is not None:
        return None  # a sample is drawn before the WHERE clause filters it
    where = select.args.get("where")
    if not isinstance(where, exp.Where):
        return None
    pushed = implied_filter(spark, schema, where.this.sql(dialect="spark"), alias=alias)
    if isinstance(pushed, AlwaysTrue):
        return None
    try:  # a column name with a dot in it does not bind back by its dotted name
        bind(schema, pushed, case_sensitive=True)
    except IcefloeError:
        return None
    return pushed


_CHEAP = (it.BooleanType, it.IntegerType, it.DateType, it.LongType, it.TimestampType, it.TimestamptzType)


def _decode_cost(field: it.NestedField) -> int:
    """Primitives of fixed small width first, then other primitives, nested types last (``min``
    keeps the schema's order among equals)."""
    kind = field.field_type
    return 0 if isinstance(kind, _CHEAP) else 1 if kind.is_primitive else 2
