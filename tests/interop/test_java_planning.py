"""icefloe plans the same data files as Java Iceberg's own planner, for every partition transform.

For each partition transform (identity, bucket, truncate, year, month, day, hour, void, and no
partitioning at all) the same rows go into two tables: one icefloe writes (four appends) and
one Java writes (Spark SQL ``CREATE TABLE ... PARTITIONED BY (...)`` and four ``INSERT``s;
the void table is Java's: a v1 table whose partition field was dropped). For 20 filters per
table (on the transform's source column: equalities, ranges around the transform's edges and
the epoch, IN / NOT IN, LIKE / NOT LIKE, nulls; and on the other columns: metrics, NaN, signed
zeros, nesting) icefloe's ``plan_files()`` must keep exactly the data files Java's
``table.newScan().filter(expr).planFiles()`` keeps, run through the Java API in the engine's
JVM (``HadoopTables.load`` and ``Expressions`` built over py4j; no Spark job).

Where the two may differ, and what is then required (each direction is asserted to occur, so
the exceptions are not vacuous):

- icefloe prunes more: every file only Java keeps must hold no row the filter matches
  (checked row by row with ``icefloe.expressions.Evaluator``). Where: ``x != v`` /
  ``x NOT IN (...)`` on a file whose lower and upper bounds equal ``v`` and that has no null or
  NaN (Java never prunes those with metrics); ``!=``, NOT IN and NOT LIKE on a file whose
  partition value is null (Java evaluates the projected partition filter two-valued, where
  ``null != 'apple'`` is true; in SQL, and icefloe, it is unknown) and NOT LIKE on a file with
  nulls (Java's NOT STARTS WITH matches nulls); a comparison on a file holding only nulls and
  NaN (Java checks for "only nulls" and for "only NaN", not for the mix).
- Java prunes more for a comparison of a float or double column with zero: Java's comparators
  order -0.0 below 0.0 (``Double.compare``), so a file of -0.0 values is skipped for
  ``amount = 0.0``; icefloe follows IEEE and SQL (Spark too): -0.0 = 0.0, and keeps the file.
  The files only icefloe keeps hold matching rows (by icefloe's and Spark's semantics), so
  Spark's own ``WHERE amount = 0.0`` misses them (``test_java_skips_negative_zeros_spark_matches``).

Left out: uuid columns (Java 1.9.2 compares UUIDs as signed longs, apache/iceberg#14216; see
``test_icefloe_writes.test_uuid_filters``); time and nanosecond timestamps (Spark 3.5 cannot
create or read them).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.expressions import (
    Evaluator,
    Expression,
    and_,
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    or_,
    starts_with,
)
from icefloe.spec.schema import Schema
from icefloe.spec.types import NestedField

from .engines import JavaEngine
from .normalize import normalize_arrow, normalize_rows
from .tables import hadoop_catalog

pytestmark = pytest.mark.interop

D = Decimal
UTC = dt.UTC
NAN = math.nan
INF = math.inf

COLUMNS = {
    "id": ("long", "bigint"),
    "name": ("string", "string"),
    "d": ("date", "date"),
    "ts": ("timestamp", "timestamp_ntz"),
    "tstz": ("timestamptz", "timestamp"),
    "amount": ("double", "double"),
    "price": ("decimal(10, 2)", "decimal(10, 2)"),
}
SCHEMA = Schema(*(NestedField(n + 1, name, types[0]) for n, (name, types) in enumerate(COLUMNS.items())))


# ----------------------------------------------------------------------------------------------
# the rows: four batches, each its own stretch of values (so metrics prune batches too)

NAMES = [
    "apple",
    "apricot",
    "banana",
    "ab",
    "",
    "abcde",
    "日本語",
    "🧊🧊",
    "Zed",
    None,
    "apx",
    "\uff5a\uff5a",
]
#: Per batch: the amounts (batch 2 holds only -0.0, batch 3 only NaN and null).
AMOUNTS: list[list[float | None]] = [
    [1.5, -2.25, NAN, INF, -INF, 0.0, None, 3.0],
    [10.0, 11.5, 12.25, 100.0],
    [-0.0],
    [NAN, None],
]
ROWS_PER_BATCH = 16


def _instant(batch: int, j: int) -> dt.datetime:
    """A timestamp in the batch's stretch of time; batch 0 straddles the epoch."""
    if batch == 0:
        edges = [
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            dt.datetime(1970, 1, 1),
            dt.datetime(1969, 12, 31, 23),
            dt.datetime(1969, 1, 1),
            dt.datetime(1970, 1, 1, 0, 59, 59, 999999),
            dt.datetime(1968, 12, 31, 23, 59, 59, 999999),
        ]
        return edges[j % len(edges)]
    base = dt.datetime(2018 + 2 * batch, 1 + (j * 5) % 12, 1 + (j * 7) % 28)
    return base + dt.timedelta(hours=j % 5, minutes=j * 13, microseconds=j)


def batch_rows(batch: int) -> list[dict[str, Any]]:
    rows = []
    for j in range(ROWS_PER_BATCH):
        n = batch * ROWS_PER_BATCH + j
        instant = _instant(batch, j)
        rows.append(
            {
                "id": None if n % 13 == 5 else batch * 100 + j * 7 - 150,
                "name": NAMES[(n * 5) % len(NAMES)],
                "d": None if n % 11 == 3 else instant.date(),
                "ts": None if n % 17 == 4 else instant,
                "tstz": None if n % 19 == 6 else (instant + dt.timedelta(minutes=30)).replace(tzinfo=UTC),
                "amount": AMOUNTS[batch][j % len(AMOUNTS[batch])],
                "price": D("10.00") if batch == 1 else (None if n % 7 == 2 else D(n * 37 - 600).scaleb(-2)),
            }
        )
    return rows


BATCHES = [batch_rows(b) for b in range(4)]
ALL_ROWS = [row for batch in BATCHES for row in batch]


# ----------------------------------------------------------------------------------------------
# filters: one tree, built for icefloe and for Java's Expressions


@dataclass(frozen=True)
class F:
    op: str
    column: str = ""
    value: Any = None
    children: tuple[F, ...] = ()

    def leaves(self) -> list[F]:
        return [leaf for c in self.children for leaf in c.leaves()] if self.children else [self]

    def icefloe(self) -> Expression:
        if self.op in ("and", "or", "not"):
            parts = [c.icefloe() for c in self.children]
            return {"and": and_, "or": or_, "not": not_}[self.op](*parts)
        if self.op in _UNARY:
            return _UNARY[self.op](self.column)
        value = list(self.value) if self.op in ("in", "not_in") else self.value
        return _BINARY[self.op](self.column, value)

    def java(self) -> list[Any]:
        """JSON for ``_JAVA_PLAN``: [op, children...] or [op, column, typed value(s)]."""
        if self.children:
            return [self.op, *(c.java() for c in self.children)]
        if self.op in _UNARY:
            return [self.op, self.column]
        if self.op in ("in", "not_in"):
            return [self.op, self.column, [_java_value(self.column, v) for v in self.value]]
        return [self.op, self.column, _java_value(self.column, self.value)]

    def __str__(self) -> str:
        return str(self.icefloe())


_UNARY: dict[str, Callable[[str], Expression]] = {
    "is_null": is_null,
    "not_null": not_null,
    "is_nan": is_nan,
    "not_nan": not_nan,
}
_BINARY: dict[str, Callable[[str, Any], Expression]] = {
    "=": equal,
    "!=": not_equal,
    "<": less_than,
    "<=": less_than_or_equal,
    ">": greater_than,
    ">=": greater_than_or_equal,
    "in": is_in,
    "not_in": not_in,
    "like": starts_with,
    "not_like": not_starts_with,
}


def _java_value(column: str, value: Any) -> list[Any]:
    """A literal as Java's ``Expressions`` takes it; dates and timestamps as ISO strings, which
    Iceberg converts to the column's type when binding (as Spark's filter pushdown does)."""
    kind = COLUMNS[column][0]
    if kind == "date":
        return ["str", value.isoformat()]
    if kind == "timestamp":
        return ["str", value.isoformat()]
    if kind == "timestamptz":
        return ["str", value.astimezone(UTC).isoformat()]
    if kind.startswith("decimal"):
        return ["decimal", str(value)]
    if kind == "double":
        return ["double", "Infinity" if value == INF else "-Infinity" if value == -INF else repr(value)]
    return ["plain", value]


def _leaf(op: str) -> Callable[..., F]:
    return lambda column, value=None: F(op, column, value)


eq, ne, lt, le, gt, ge, like, not_like = (
    _leaf(o) for o in ("=", "!=", "<", "<=", ">", ">=", "like", "not_like")
)


def in_(column: str, *values: Any) -> F:
    return F("in", column, tuple(values))


def nin(column: str, *values: Any) -> F:
    return F("not_in", column, tuple(values))


def null(column: str) -> F:
    return F("is_null", column)


def nonnull(column: str) -> F:
    return F("not_null", column)


def nan(column: str) -> F:
    return F("is_nan", column)


def notnan(column: str) -> F:
    return F("not_nan", column)


def AND(*children: F) -> F:
    return F("and", children=children)


def OR(*children: F) -> F:
    return F("or", children=children)


def NOT(child: F) -> F:
    return F("not", children=(child,))


T = dt.datetime
TZ = lambda *args: dt.datetime(*args, tzinfo=UTC)  # noqa: E731

#: Filters every table gets (metrics pruning on the other columns, NaN, signed zeros, nesting).
COMMON = [
    lt("id", 0),
    in_("id", 5, 107, 2000),
    nan("amount"),
    gt("amount", 1.5),
    eq("amount", 0.0),  # batch 2's files hold only -0.0: Java skips them
    ne("price", D("10.00")),  # batch 1's files hold only 10.00: icefloe skips them
    NOT(OR(null("name"), gt("id", 250))),
    OR(AND(ge("ts", T(2022, 1, 1)), notnan("amount")), lt("price", D("-5.00"))),
]
STRINGS = [
    eq("name", "apple"),
    ne("name", "apple"),
    in_("name", "apple", "Zed", "nope"),
    nin("name", "apple", "banana"),
    like("name", "ap"),
    not_like("name", "ap"),
    like("name", "apricot"),  # longer than a truncation width
    like("name", "日本"),
    null("name"),
    lt("name", "b"),
    ge("name", "\uff5a"),  # U+FF5A: after '🧊' (U+1F9CA) in UTF-16, before it in code points
    NOT(eq("name", "apple")),
]
IDS = [
    eq("id", 107),
    eq("id", -150),
    in_("id", -143, 79, 9999),
    ne("id", 107),
    nin("id", -150, -143),
    lt("id", -100),
    ge("id", 250),
    null("id"),
    nonnull("id"),
    AND(gt("id", 0), lt("id", 60)),
    OR(eq("id", 34), null("id")),
    NOT(in_("id", 6, 13)),
]
DATES = [
    eq("d", dt.date(1969, 12, 31)),
    eq("d", dt.date(1970, 1, 1)),
    le("d", dt.date(1969, 12, 31)),
    lt("d", dt.date(1969, 1, 1)),
    gt("d", dt.date(1969, 12, 31)),
    ge("d", dt.date(2022, 1, 1)),
    in_("d", dt.date(1968, 12, 31), dt.date(2020, 6, 8)),
    ne("d", dt.date(1970, 1, 1)),
    null("d"),
    AND(ge("d", dt.date(2020, 1, 1)), lt("d", dt.date(2021, 1, 1))),
    nin("d", dt.date(1969, 12, 31), dt.date(1970, 1, 1)),
    NOT(lt("d", dt.date(2024, 1, 1))),
]


def _instants(column: str, make: Callable[..., dt.datetime]) -> list[F]:
    return [
        eq(column, make(1969, 12, 31, 23, 59, 59, 999999)),
        le(column, make(1969, 12, 31, 23, 59, 59, 999999)),
        lt(column, make(1970, 1, 1)),
        ge(column, make(1970, 1, 1)),
        gt(column, make(1969, 12, 31, 23)),
        eq(column, make(1969, 1, 1)),
        AND(ge(column, make(2022, 3, 1)), lt(column, make(2022, 4, 1))),
        in_(column, make(1970, 1, 1, 0, 59, 59, 999999), make(2024, 1, 1)),
        ne(column, make(1970, 1, 1)),
        null(column),
        gt(column, make(2024, 6, 1, 12)),
        NOT(ge(column, make(2020, 1, 1))),
    ]


@dataclass(frozen=True)
class Case:
    """One partition transform: icefloe's partition terms and Spark's DDL for the same spec."""

    name: str
    icefloe_terms: list[str]
    spark_ddl: str
    filters: list[F]
    format_version: int = 2
    drop_partition_field: str | None = None  # Java's void: a dropped field of a v1 table


CASES = [
    Case("identity", ["name"], "PARTITIONED BY (name)", STRINGS),
    Case("bucket", ["bucket(8, id)"], "PARTITIONED BY (bucket(8, id))", IDS),
    Case("truncate", ["truncate(3, name)"], "PARTITIONED BY (truncate(3, name))", STRINGS),
    Case("year", ["year(d)"], "PARTITIONED BY (years(d))", DATES),
    Case("month", ["month(ts)"], "PARTITIONED BY (months(ts))", _instants("ts", T)),
    Case("day", ["day(tstz)"], "PARTITIONED BY (days(tstz))", _instants("tstz", TZ)),
    Case("hour", ["hour(ts)"], "PARTITIONED BY (hours(ts))", _instants("ts", T)),
    Case("void", ["void(name)"], "PARTITIONED BY (name)", STRINGS, 1, "name"),
    Case("none", [], "", IDS[:4] + DATES[:4] + STRINGS[:4]),
]


# ----------------------------------------------------------------------------------------------
# the tables: written by icefloe and by Java


def _spark_literal(column: str, value: Any) -> str:
    if value is None:
        return "NULL"
    kind = COLUMNS[column][0]
    if kind == "string":
        assert "'" not in value and "\\" not in value
        return f"'{value}'"
    if kind == "date":
        return f"DATE'{value.isoformat()}'"
    if kind == "timestamp":
        return f"TIMESTAMP_NTZ'{value.isoformat(sep=' ')}'"
    if kind == "timestamptz":
        return f"TIMESTAMP'{value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}Z'"
    if kind == "double":
        if math.isnan(value) or math.isinf(value):
            return f"CAST('{'NaN' if math.isnan(value) else 'Infinity' if value > 0 else '-Infinity'}' AS DOUBLE)"
        return f"{value!r}D"
    if kind.startswith("decimal"):
        return f"{value}BD"
    return str(value)


ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("d", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("amount", pa.float64()),
        ("price", pa.decimal128(10, 2)),
    ]
)


def _insert(rows: list[dict[str, Any]]) -> str:
    values = ", ".join("(" + ", ".join(_spark_literal(c, row[c]) for c in COLUMNS) + ")" for row in rows)
    return f"INSERT INTO {{t}} VALUES {values}"


@dataclass
class Written:
    """One table of a case: who wrote it, icefloe's handle and its folder."""

    case: Case
    writer: str  # "icefloe" or "java"
    table: icefloe.Table
    location: str


class Tables:
    """The 18 tables, each built on first use."""

    def __init__(self, java: JavaEngine, warehouse: Path):
        self.java = java
        self.warehouse = warehouse
        self.catalog = hadoop_catalog(warehouse)
        self.catalog.create_namespace("db")
        self.java_catalog = java.hadoop_catalog(warehouse)
        self.built: dict[tuple[str, str], Written] = {}

    def get(self, case: Case, writer: str) -> Written:
        key = (case.name, writer)
        if key not in self.built:
            self.built[key] = self._icefloe(case) if writer == "icefloe" else self._java(case)
        return self.built[key]

    def _icefloe(self, case: Case) -> Written:
        table = self.catalog.create_table(
            f"db.ice_{case.name}",
            SCHEMA,
            partition_by=case.icefloe_terms,
            properties={"format-version": str(case.format_version)},
        )
        for batch in BATCHES:
            table.append(pa.Table.from_pylist(batch, schema=ARROW_SCHEMA))
        return Written(case, "icefloe", table, table.location().removeprefix("file:"))

    def _java(self, case: Case) -> Written:
        name = f"java_{case.name}"
        columns = ", ".join(f"{c} {t[1]}" for c, t in COLUMNS.items())
        statements = [
            f"CREATE TABLE {{t}} ({columns}) USING iceberg {case.spark_ddl}"
            f" TBLPROPERTIES ('format-version' = '{case.format_version}')"
        ]
        if case.drop_partition_field:
            statements.append(f"ALTER TABLE {{t}} DROP PARTITION FIELD {case.drop_partition_field}")
        statements += [_insert(batch) for batch in BATCHES]
        spark_name = f"{self.java_catalog}.db.{name}"
        self.java.sql(*(s.format(t=spark_name) for s in statements))
        table = self.catalog.load_table(f"db.{name}")
        return Written(case, "java", table, str(self.warehouse / "db" / name))


@pytest.fixture(scope="module")
def tables(java_engine: JavaEngine, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    return Tables(java_engine, tmp_path_factory.mktemp("java-planning"))


# ----------------------------------------------------------------------------------------------
# Java's planner, in the engine's JVM

_JAVA_PLAN = """
E = jvm.org.apache.iceberg.expressions.Expressions
table = jvm.org.apache.iceberg.hadoop.HadoopTables(sc._jsc.hadoopConfiguration()).load(location)
METHODS = {"=": "equal", "!=": "notEqual", "<": "lessThan", "<=": "lessThanOrEqual",
           ">": "greaterThan", ">=": "greaterThanOrEqual", "like": "startsWith",
           "not_like": "notStartsWith", "is_null": "isNull", "not_null": "notNull",
           "is_nan": "isNaN", "not_nan": "notNaN", "in": "in", "not_in": "notIn"}

def literal(typed):
    kind, value = typed
    if kind == "decimal":
        return jvm.java.math.BigDecimal(value)
    if kind == "double":
        return jvm.java.lang.Double.valueOf(value)
    return value

def build(node):
    op = node[0]
    if op in ("and", "or"):
        result = build(node[1])
        for child in node[2:]:
            result = getattr(E, op)(result, build(child))
        return result
    if op == "not":
        return getattr(E, "not")(build(node[1]))
    method = getattr(E, METHODS[op])
    if len(node) == 2:
        return method(node[1])
    if op in ("in", "not_in"):
        values = jvm.java.util.ArrayList()  # the Iterable overload (py4j cannot call varargs)
        for value in node[2]:
            values.add(literal(value))
        return method(node[1], values)
    return method(node[1], literal(node[2]))

def plan(expression):
    tasks = table.newScan().filter(expression).planFiles()
    try:
        files = []
        iterator = tasks.iterator()
        while iterator.hasNext():
            files.append(str(iterator.next().file().location()))
    finally:
        tasks.close()
    return sorted(files)

result = {"all": plan(E.alwaysTrue()), "filters": [[str(build(f)), plan(build(f))] for f in filters]}
"""


def java_plans(
    java: JavaEngine, location: str, filters: list[F]
) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Java's ``planFiles()`` of the table at LOCATION: all files, then (Java's text of the
    filter, its files) per filter."""
    answer = java.exec(_JAVA_PLAN, location=location, filters=[f.java() for f in filters])
    return answer["all"], [(text, files) for text, files in answer["filters"]]


def own_plan(table: icefloe.Table, flt: F | None) -> list[str]:
    scan = table.new_scan()
    if flt is not None:
        scan = scan.filter(flt.icefloe())
    return sorted(task.file.file_path for task in scan.plan_files())


def _icefloe_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row read by pyarrow in icefloe's value representation."""
    out = dict(row)
    if row["d"] is not None:
        out["d"] = (row["d"] - dt.date(1970, 1, 1)).days
    for column in ("ts", "tstz"):
        value = row[column]
        if value is not None:
            naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
            delta = naive - dt.datetime(1970, 1, 1)
            out[column] = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return out


def matching_rows(path: str, flt: F) -> int:
    """How many rows of the data file at PATH the filter matches (icefloe's row evaluator)."""
    evaluator = Evaluator(SCHEMA, flt.icefloe())
    rows = pq.read_table(path.removeprefix("file:")).to_pylist()
    return sum(1 for row in rows if evaluator.eval(_icefloe_row(row)))


def _may_prune_more(flt: F) -> tuple[bool, bool]:
    """(icefloe may prune more, Java may prune more) for FLT (see the module docstring): icefloe
    where a negation (!=, NOT IN, NOT LIKE, NOT) or a comparison of a double column is involved;
    Java where a double column is compared with zero."""
    nodes = _nodes(flt)
    negated = any(n.op in ("not", "!=", "not_in", "not_like") for n in nodes)
    on_double = [n for n in nodes if COLUMNS.get(n.column, ("",))[0] == "double" and n.op in _BINARY]
    return negated or bool(on_double), any(n.value == 0.0 and n.op != "in" for n in on_double)


def _nodes(flt: F) -> list[F]:
    return [flt, *(n for c in flt.children for n in _nodes(c))]


@pytest.fixture(scope="module")
def differences() -> dict[str, list[str]]:
    """Where the planners differed, by direction (filled by the tests, checked at the end)."""
    return {"icefloe prunes more": [], "java prunes more": [], "pruned": []}


@pytest.mark.parametrize("writer", ["icefloe", "java"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_icefloe_plans_the_files_java_plans(
    case: Case, writer: str, tables: Tables, java_engine: JavaEngine, differences: dict[str, list[str]]
) -> None:
    written = tables.get(case, writer)
    table = written.table
    filters = case.filters + COMMON
    assert len(filters) == 20
    all_java, java = java_plans(java_engine, written.location, filters)
    all_files = own_plan(table, None)
    assert all_files == all_java
    assert len(all_files) >= 4, "too few files to prune"
    if case.name not in ("none", "void"):
        assert len(all_files) > 8, "a partitioned table writes several files per batch"
    # icefloe's rows for every filter are its row evaluator's (planning and residuals are sound).
    evaluators = {str(f): Evaluator(SCHEMA, f.icefloe()) for f in filters}
    failures = []
    for flt, (java_text, java_files) in zip(filters, java):
        own = own_plan(table, flt)
        name = f"{written.writer}/{case.name}: {flt} (Java: {java_text})"
        rows = normalize_arrow(table.new_scan().filter(flt.icefloe()).to_arrow())["rows"]
        expected = normalize_rows(
            [[r[c] for c in COLUMNS] for r in ALL_ROWS if evaluators[str(flt)].eval(_icefloe_row(r))]
        )
        if json.dumps(rows) != json.dumps(expected):  # as text: -0.0 is not 0.0
            failures.append(f"{name}: icefloe read {len(rows)} rows, its evaluator matches {len(expected)}")
        if own != java_files:
            icefloe_more, java_more = _may_prune_more(flt)
            only_java = sorted(set(java_files) - set(own))
            only_own = sorted(set(own) - set(java_files))
            if only_java:  # files icefloe skips: only where documented, and only without matches
                if not icefloe_more:
                    failures.append(f"{name}: icefloe skips {only_java}, which Java keeps")
                elif any(matching_rows(path, flt) for path in only_java):
                    failures.append(f"{name}: icefloe skipped a file holding matching rows: {only_java}")
                else:
                    differences["icefloe prunes more"].append(f"{name}: {len(only_java)} files")
            if only_own:  # files Java skips: -0.0 against 0.0 (they hold rows icefloe matches)
                if not java_more:
                    failures.append(f"{name}: Java skips {only_own}, which icefloe keeps")
                elif not any(matching_rows(path, flt) for path in only_own):
                    failures.append(f"{name}: Java skips {only_own}, without matching rows")
                else:
                    differences["java prunes more"].append(f"{name}: {len(only_own)} files")
        if len(java_files) < len(all_files):
            differences["pruned"].append(name)
    assert not failures, "\n".join(failures)


def test_the_exceptions_occur_and_pruning_happens(differences: dict[str, list[str]]) -> None:
    """Runs after the comparisons: both documented directions were seen, and Java pruned."""
    print("\n" + "\n".join(f"{k}: {len(v)}" for k, v in differences.items()))
    for kind in ("icefloe prunes more", "java prunes more"):
        print(f"{kind}:\n  " + "\n  ".join(differences[kind]))
    assert differences["icefloe prunes more"] and differences["java prunes more"]
    assert len(differences["pruned"]) > 200


def test_java_skips_negative_zeros_spark_matches(tables: Tables, java_engine: JavaEngine) -> None:
    """The documented difference, end to end: Spark matches -0.0 with ``amount = 0.0``, but
    Java's planner skips the files holding only -0.0, so Spark's filtered read misses their
    rows; icefloe returns them."""
    written = tables.get(CASES[0], "java")
    flt = eq("amount", 0.0)
    own = normalize_arrow(written.table.new_scan().filter(flt.icefloe()).to_arrow())["rows"]
    zeros = [row for row in own if row[5] in (0.0, -0.0)]
    assert len(own) == len(zeros) and any(json.dumps(row[5]) == "-0.0" for row in own)
    metadata = written.table.metadata_location
    pushed = java_engine.read(metadata, where="amount = 0.0")["rows"]
    everything = java_engine.read(metadata)["rows"]
    spark_zeros = [row for row in everything if row[5] in (0.0, -0.0)]  # Spark's own -0.0 = 0.0
    assert json.dumps(spark_zeros) == json.dumps(own)
    assert len(pushed) < len(own) and all(row in own for row in pushed)
