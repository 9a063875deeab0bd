"""Tables, filters and Java-side probes shared by the interop acceptance tests.

- :func:`hadoop_catalog`: an icefloe catalog over a Hadoop-layout warehouse, the layout Java's
  ``HadoopCatalog`` (``java_engine.hadoop_catalog``) reads and writes too.
- :class:`Filter`: one filter written once, rendered for every reader: icefloe's SQL syntax,
  Spark SQL (``java_engine.read(where=...)``), Java's ``Expressions`` API (to plan files in Java)
  and a Python predicate over the input rows (the expected answer, independent of any reader).
- :func:`java_planned_files`, :func:`java_partition_paths`: ask Java Iceberg itself (no Spark
  job) which files a filtered scan plans and where it would put a partition's files.
- :func:`assert_engine_read`: an engine's read equals the expected rows and snapshot ids.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

import icefloe

from .engines import JavaEngine
from .normalize import normalize_arrow

__all__ = [
    "Filter",
    "and_",
    "assert_engine_read",
    "assert_same_rows",
    "eq",
    "expected_rows",
    "ge",
    "gt",
    "hadoop_catalog",
    "in_",
    "is_null",
    "java_catalog_table_properties",
    "java_partition_paths",
    "java_planned_files",
    "le",
    "lt",
    "ne",
    "not_",
    "not_null",
    "or_",
    "own_planned_files",
    "own_rows",
    "snapshot_ids",
    "starts_with",
]


def hadoop_catalog(warehouse: Path, name: str = "interop") -> icefloe.Catalog:
    """An icefloe catalog over WAREHOUSE in the Hadoop layout (``<wh>/<ns>/<table>/metadata``)."""
    return icefloe.load_catalog(name, type="hadoop", warehouse=str(warehouse))


# ----------------------------------------------------------------------------------------------
# expected answers


def expected_rows(data: pa.Table, keep: Callable[[dict[str, Any]], bool | None] | None = None) -> list[Any]:
    """The normalised, sorted rows of DATA (the rows KEEP answers True for)."""
    if keep is not None:
        mask = pa.array([keep(row) is True for row in data.to_pylist()], pa.bool_())
        data = data.filter(mask)
    return list(normalize_arrow(data)["rows"])


def own_rows(table: icefloe.Table, *, snapshot_id: int | None = None, where: str | None = None) -> dict:
    """icefloe's own read of TABLE, normalised like an engine's ``read``."""
    scan = table.new_scan()
    if snapshot_id is not None:
        scan = scan.use_snapshot(snapshot_id)
    if where is not None:
        scan = scan.filter(where)
    return normalize_arrow(scan.to_arrow())


def snapshot_ids(table: icefloe.Table) -> list[int]:
    return sorted(s.snapshot_id for s in table.snapshots())


def assert_engine_read(
    name: str,
    result: dict[str, Any],
    table: icefloe.Table,
    rows: list[Any],
    columns: Sequence[str] | None = None,
) -> None:
    """RESULT (an engine's ``read``) holds ROWS (and COLUMNS) and TABLE's snapshot ids."""
    if columns is not None:
        assert result["columns"] == list(columns), name
    assert_same_rows(name, result["rows"], rows)
    current = table.current_snapshot()
    assert result["current_snapshot_id"] == (current.snapshot_id if current else None), name
    assert result["snapshot_ids"] == snapshot_ids(table), name


def assert_same_rows(name: str, got: list[Any], want: list[Any]) -> None:
    """GOT and WANT are the same normalised rows, compared as JSON text: unlike ``==``, the text
    tells ``-0.0`` from ``0.0`` (and ``1`` from ``1.0``)."""
    if json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True):
        return
    # A readable failure: the first rows that differ, not two walls of JSON.
    missing = [r for r in want if r not in got][:3]
    extra = [r for r in got if r not in want][:3]
    raise AssertionError(
        f"{name}: {len(got)} rows, expected {len(want)}\n"
        f"  expected but missing: {_short(missing)}\n  unexpected: {_short(extra)}"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) < 2000 else text[:2000] + "..."


# ----------------------------------------------------------------------------------------------
# filters


@dataclass(frozen=True)
class Filter:
    """A filter tree: ``op`` is a comparison (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``),
    ``in``, ``is_null``, ``not_null``, ``starts_with``, ``and``, ``or`` or ``not``.

    Values are Python values of the column's type: bool, int, str, ``Decimal``, ``UUID``,
    ``date``, a naive ``datetime`` (timestamp) or an aware one (timestamptz).
    """

    op: str
    column: str | None = None
    value: Any = None
    children: tuple[Filter, ...] = ()

    @property
    def negates(self) -> bool:
        """Whether the filter holds ``!=`` or ``NOT`` (see ``_check_filters`` for why it matters)."""
        return self.op in ("!=", "not") or any(child.negates for child in self.children)

    # -- icefloe's SQL syntax ---------------------------------------------------------------------

    def icefloe(self) -> str:
        if self.op in ("and", "or"):
            return f"({self.children[0].icefloe()} {self.op.upper()} {self.children[1].icefloe()})"
        if self.op == "not":
            return f"NOT ({self.children[0].icefloe()})"
        if self.op == "is_null":
            return f"{self.column} IS NULL"
        if self.op == "not_null":
            return f"{self.column} IS NOT NULL"
        if self.op == "starts_with":
            return f"{self.column} LIKE {_quote(self.value + '%')}"
        if self.op == "in":
            return f"{self.column} IN ({', '.join(_icefloe_literal(v) for v in self.value)})"
        return f"{self.column} {self.op} {_icefloe_literal(self.value)}"

    # -- Spark SQL --------------------------------------------------------------------------------

    def spark(self) -> str:
        if self.op in ("and", "or"):
            return f"({self.children[0].spark()} {self.op.upper()} {self.children[1].spark()})"
        if self.op == "not":
            return f"NOT ({self.children[0].spark()})"
        if self.op == "is_null":
            return f"{self.column} IS NULL"
        if self.op == "not_null":
            return f"{self.column} IS NOT NULL"
        if self.op == "starts_with":
            return f"{self.column} LIKE {_quote(self.value + '%')}"
        if self.op == "in":
            return f"{self.column} IN ({', '.join(_spark_literal(v) for v in self.value)})"
        return f"{self.column} {self.op} {_spark_literal(self.value)}"

    # -- Java's Expressions (as JSON for java_planned_files) ---------------------------------------

    def java(self) -> list[Any]:
        if self.children:
            return [self.op, *(child.java() for child in self.children)]
        if self.op in ("is_null", "not_null"):
            return [self.op, self.column]
        if self.op == "in":
            return [self.op, self.column, [_java_value(v) for v in self.value]]
        return [self.op, self.column, _java_value(self.value)]

    # -- the expected answer ---------------------------------------------------------------------

    def matches(self, row: dict[str, Any]) -> bool | None:
        """SQL's three-valued answer for one input row (None: unknown, i.e. not selected)."""
        if self.op == "and":
            a, b = (c.matches(row) for c in self.children)
            return False if a is False or b is False else (None if a is None or b is None else True)
        if self.op == "or":
            a, b = (c.matches(row) for c in self.children)
            return True if a is True or b is True else (None if a is None or b is None else False)
        if self.op == "not":
            inner = self.children[0].matches(row)
            return None if inner is None else not inner
        value = row[self.column]
        if self.op == "is_null":
            return value is None
        if self.op == "not_null":
            return value is not None
        if value is None:
            return None
        if self.op == "starts_with":
            return bool(value.startswith(self.value))
        if self.op == "in":
            return value in self.value
        return bool(_COMPARE[self.op](value, self.value))

    def __str__(self) -> str:
        return self.icefloe()


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _quote(text: str) -> str:
    if "'" in text or "\\" in text:
        raise ValueError(f"keep filter strings free of quotes and backslashes: {text!r}")
    return f"'{text}'"


def _icefloe_literal(value: Any) -> str:
    if value is None:
        raise TypeError("use is_null / not_null for nulls")
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return f"TIMESTAMP '{value.isoformat()}'"
        return f"TIMESTAMPTZ '{value.astimezone(dt.UTC).isoformat()}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, decimal.Decimal):
        return f"DECIMAL '{value}'"
    if isinstance(value, uuid.UUID):
        return f"UUID '{value}'"
    if isinstance(value, str):
        return _quote(value)
    return str(value)


def _spark_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return f"timestamp'{value.isoformat(sep=' ')}'"
        return f"timestamp'{value.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=' ')}Z'"
    if isinstance(value, dt.date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, decimal.Decimal):
        return f"{value}BD"
    if isinstance(value, uuid.UUID):  # Spark shows a uuid column as a string
        return f"'{value}'"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int) and not -(2**31) <= value < 2**31:
        return f"{value}L"
    return str(value)


def _java_value(value: Any) -> Any:
    """Strings for temporal and decimal values: Iceberg's string literals convert to the column's
    type when the expression is bound (ISO forms), exactly what we want to exercise."""
    if isinstance(value, dt.datetime):
        return value.isoformat() if value.tzinfo is None else value.astimezone(dt.UTC).isoformat()
    if isinstance(value, (dt.date, decimal.Decimal, uuid.UUID)):
        return str(value)
    return value


def _leaf(op: str) -> Callable[[str, Any], Filter]:
    def build(column: str, value: Any) -> Filter:
        return Filter(op, column, value)

    return build


eq, ne, lt, le, gt, ge = (_leaf(op) for op in ("=", "!=", "<", "<=", ">", ">="))


def in_(column: str, values: Sequence[Any]) -> Filter:
    return Filter("in", column, tuple(values))


def starts_with(column: str, prefix: str) -> Filter:
    return Filter("starts_with", column, prefix)


def is_null(column: str) -> Filter:
    return Filter("is_null", column)


def not_null(column: str) -> Filter:
    return Filter("not_null", column)


def and_(a: Filter, b: Filter) -> Filter:
    return Filter("and", children=(a, b))


def or_(a: Filter, b: Filter) -> Filter:
    return Filter("or", children=(a, b))


def not_(a: Filter) -> Filter:
    return Filter("not", children=(a,))


# ----------------------------------------------------------------------------------------------
# Java Iceberg's own API, through the java engine (planning only: no Spark job runs)

_JAVA_LOAD = """
HadoopTables = jvm.org.apache.iceberg.hadoop.HadoopTables
table = HadoopTables(sc._jsc.hadoopConfiguration()).load(location)

def java_list(iterable, closeable=False):
    out = []
    it = iterable.iterator()
    while it.hasNext():
        out.append(it.next())
    if closeable:
        iterable.close()
    return out
"""

_JAVA_PLAN = (
    _JAVA_LOAD
    + """
E = jvm.org.apache.iceberg.expressions.Expressions
COMPARE = {"=": "equal", "!=": "notEqual", "<": "lessThan", "<=": "lessThanOrEqual",
           ">": "greaterThan", ">=": "greaterThanOrEqual"}

def build(node):
    op = node[0]
    if op in ("and", "or"):
        return getattr(E, op)(build(node[1]), build(node[2]))
    if op == "not":
        return getattr(E, "not")(build(node[1]))
    if op == "is_null":
        return E.isNull(node[1])
    if op == "not_null":
        return E.notNull(node[1])
    if op == "starts_with":
        return E.startsWith(node[1], node[2])
    if op == "in":  # an OR of equalities: py4j cannot pick Expressions.in's varargs overload
        result = E.equal(node[1], node[2][0])
        for value in node[2][1:]:
            result = getattr(E, "or")(result, E.equal(node[1], value))
        return result
    return getattr(E, COMPARE[op])(node[1], node[2])

scan = table.newScan()
if snapshot_id is not None:
    scan = scan.useSnapshot(snapshot_id)
if expression is not None:
    scan = scan.filter(build(expression))
result = sorted(
    [str(task.file().location()), sorted(str(d.location()) for d in task.deletes())]
    for task in java_list(scan.planFiles(), closeable=True)
)
"""
)

_JAVA_PARTITION_PATHS = (
    _JAVA_LOAD
    + """
snapshot = table.currentSnapshot()
specs = table.specs()
result = sorted(
    [str(f.location()), str(specs.get(f.specId()).partitionToPath(f.partition()))]
    for f in java_list(snapshot.addedDataFiles(table.io()))
)
"""
)


def java_planned_files(
    java: JavaEngine, table_dir: Path | str, flt: Filter | None, *, snapshot_id: int | None = None
) -> list[tuple[str, tuple[str, ...]]]:
    """What Java Iceberg's ``TableScan.planFiles()`` plans for FLT: sorted (data file, its
    delete files) pairs."""
    result = java.exec(
        _JAVA_PLAN,
        location=str(table_dir),
        expression=None if flt is None else flt.java(),
        snapshot_id=snapshot_id,
    )
    return [(path, tuple(deletes)) for path, deletes in result]


def own_planned_files(
    table: icefloe.Table, flt: Filter | None, *, snapshot_id: int | None = None
) -> list[tuple[str, tuple[str, ...]]]:
    """What icefloe's ``plan_files()`` plans for FLT, in the form of :func:`java_planned_files`."""
    scan = table.new_scan()
    if snapshot_id is not None:
        scan = scan.use_snapshot(snapshot_id)
    if flt is not None:
        scan = scan.filter(flt.icefloe())
    return sorted(
        (task.file.file_path, tuple(sorted(d.file_path for d in task.deletes))) for task in scan.plan_files()
    )


def java_partition_paths(java: JavaEngine, table_dir: Path | str) -> dict[str, str]:
    """For the current snapshot's added data files: file -> Java's ``partitionToPath``."""
    return {path: part for path, part in java.exec(_JAVA_PARTITION_PATHS, location=str(table_dir))}


_JAVA_CATALOG_PROPERTIES = """
catalog = jvm.org.apache.iceberg.hadoop.HadoopCatalog(sc._jsc.hadoopConfiguration(), warehouse)
table = catalog.loadTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(identifier))
result = {str(k): str(v) for k, v in dict(table.properties()).items()}
result["current-snapshot-id"] = str(table.currentSnapshot().snapshotId())
"""


def java_catalog_table_properties(java: JavaEngine, warehouse: Path | str, identifier: str) -> dict[str, str]:
    """Java's ``HadoopCatalog(warehouse).loadTable(identifier)``: its properties, plus the
    ``current-snapshot-id`` it sees (so the table was found by name, not by path)."""
    return dict(java.exec(_JAVA_CATALOG_PROPERTIES, warehouse=str(warehouse), identifier=identifier))
