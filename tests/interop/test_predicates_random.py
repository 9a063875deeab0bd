"""2,000 random predicates over every primitive type: icefloe's planning and residual filtering
return exactly the rows its row evaluator selects, never skip a file holding a matching row,
prune, and agree with Java Iceberg on Spark on every row.

The tables
    ``db.preds`` holds every primitive type (``time`` included) in 50 Parquet data files that
    icefloe writes, partitioned by ``month(ts)``, ``bucket(4, i)`` and ``truncate(2, s)``. Each
    file holds one partition and its own range of values per column, so manifest pruning
    (partition summaries), partition pruning and metrics pruning all apply. The data has
    nulls (and all-null files), NaN (and NaN-only files), -0.0, infinities, subnormals, empty
    strings and binaries, the extremes of every type, strings whose bounds are truncated or
    have no upper bound (U+10FFFF, 0xFF), LIKE wildcards and backslashes inside strings, and
    columns with reduced metrics (``dec38``: counts only; ``bin``: ``truncate(4)``).
    ``db.preds_spark`` holds the same rows in the same files without the ``time`` column: Spark
    3.5 cannot read a table that has one, so predicates on ``t`` are checked by icefloe only.

The predicates
    seeded, deterministic: every operation (=, !=, <, <=, >, >=, IN, NOT IN, IS [NOT] NULL,
    IS [NOT] NAN, LIKE 'prefix%', NOT LIKE) on every column it applies to, nested in
    AND / OR / NOT, with literals drawn from the data, just beside it (the next value of the
    type, a value between two adjacent ones, a longer or shorter string) and beyond the type's
    range. Each one is built with icefloe's builders and must read back from its text
    (``parse(str(p)) == p``).

For each predicate ``p``:
  (a) ``table.new_scan().filter(p).to_arrow()`` (planning, Parquet row-group pruning, each
      task's residual) returns exactly the rows of the full scan that
      ``icefloe.expressions.Evaluator`` selects; so does each task of ``plan_files()`` with its
      residual applied to its file's rows (``icefloe.arrow.row_filter``);
  (b) Java Iceberg 1.9.2 on Spark 3.5 selects the same rows with the predicate translated to
      Spark SQL (every predicate Spark can evaluate exactly, see below). Spark evaluates them
      over one cached read of the table, a hundred predicates per query: per row
      ``IF(<where>, '1', '0')`` for each, which marks exactly the rows ``WHERE <where>`` selects.
      (Java's own file planning is compared in ``test_java_planning.py``; Java 1.9.2 cannot push
      a uuid predicate into its Parquet reader, see ``test_icefloe_writes.test_uuid_filters``.)
  (c) ``plan_files()`` keeps every file that holds a matching row (pruning is sound), and a
      healthy share of the predicates prune at least one file (pruning happens).

Translating to Spark SQL (where the semantics differ, and how the translation bridges them):
  - NaN. Spark orders NaN above every number and equal to itself, so Spark's ``x != 1``,
    ``x > 1`` and ``x NOT IN (1)`` select NaN rows. In Iceberg (Java's row evaluator and the
    metrics evaluators, which assume it) and in icefloe a comparison with NaN is never true:
    only IS NAN sees NaN. It is never false either but unknown, as a comparison with NULL, so
    ``NOT (x < 1)`` does not select NaN rows. The faithful Spark form of a comparison, IN or
    NOT IN on a float or double column ``x`` is therefore ``IF(isnan(x), NULL, <comparison>)``:
    NULL, not FALSE, because ``<comparison> AND NOT isnan(x)`` is right at the top of a filter
    but wrong under NOT.
  - IS NAN / IS NOT NAN are ``isnan(x)`` / ``NOT isnan(x)``; ``isnan(NULL)`` is false, so
    IS NOT NAN selects nulls in both (icefloe: IS [NOT] NULL / NAN are never unknown).
  - -0.0 equals 0.0 in both (icefloe follows IEEE / SQL; Java Iceberg's comparators order -0.0
    below 0.0, see test_java_planning.py).
  - Float literals: icefloe (like Java Iceberg) converts a literal to the column's type before
    comparing, so ``f < 1.1`` on a float column compares with the float nearest 1.1, while
    Spark widens the float to double and compares with the double 1.1. The literals for the
    float column here are float values (from the data, or the next float beside one), on which
    both agree.
  - uuid is a string in Spark; the canonical text orders like the unsigned 128-bit values
    icefloe compares. fixed and binary compare as unsigned bytes in both.
  - LIKE: Spark's pattern escapes ``%``, ``_`` and ``\\`` with a backslash (and its string
    literals unescape backslashes once more). Spark 3.5's LIKE with an escape in the pattern
    fails to match strings holding characters beyond U+FFFF (it quotes the pattern's UTF-16
    halves one by one: ``'🧊a%b' LIKE '🧊a\\%%'`` is false), so prefixes with ``%``, ``_`` or
    ``\\`` are translated to Spark's ``startswith(s, prefix)``, which compares correctly.
  - Spark 3.5 answers TRUE (not NULL) for ``NULL < 9223372036854775808`` on a bigint column
    (a literal beyond the long range; also ``<=``, ``>``, ``>=``), so those comparisons are
    translated as ``IF(l IS NULL, NULL, <comparison>)``.
  - Spark compares decimal(38, 10) with a literal of a finer scale or more integer digits
    (``0.00000000001``, ``1E+28``) in a common type capped at 38 digits, which cannot hold
    both: values that do not fit become NULL (non-ANSI mode), and so does the comparison.
    Predicates with such literals are checked by icefloe only, like those on ``t``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import struct
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe.arrow.row_filter import filter_table
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
    parse,
    starts_with,
)
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import parse_transform
from icefloe.spec.types import IntegerType, NestedField

from .engines import JavaEngine
from .normalize import normalize_arrow
from .tables import assert_same_rows, hadoop_catalog

pytestmark = pytest.mark.interop

SEED = 20250611
FILES = 50
ROWS_PER_FILE = 20
PREDICATES = 2000
JAVA_BATCH = 100
#: Predicates (of 2,000) that must prune at least one of the 50 files.
MIN_PRUNING_SHARE = 0.75

D = Decimal
UTC = dt.UTC
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
F32_MAX = 3.4028234663852886e38
F64_MAX = 1.7976931348623157e308
DEC9_MAX = D("9999999.99")
DEC38_MAX = D("9999999999999999999999999999.9999999999")
DEC38_LIMIT = D("1E+28")
MICROS_PER_DAY = 86_400_000_000
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
MIN_TS = dt.datetime(1, 1, 1)
MAX_TS = dt.datetime(9999, 12, 31, 23, 59, 59, 999999)
INF = math.inf
NAN = math.nan

COLUMNS = {
    "id": "int",
    "b": "boolean",
    "i": "int",
    "l": "long",
    "f": "float",
    "d": "double",
    "dec": "decimal(9, 2)",
    "dec38": "decimal(38, 10)",
    "dt": "date",
    "t": "time",
    "ts": "timestamp",
    "tstz": "timestamptz",
    "s": "string",
    "u": "uuid",
    "fx": "fixed[4]",
    "bin": "binary",
}
ARROW_TYPES = {
    "id": pa.int32(),
    "b": pa.bool_(),
    "i": pa.int32(),
    "l": pa.int64(),
    "f": pa.float32(),
    "d": pa.float64(),
    "dec": pa.decimal128(9, 2),
    "dec38": pa.decimal128(38, 10),
    "dt": pa.date32(),
    "t": pa.time64("us"),
    "ts": pa.timestamp("us"),
    "tstz": pa.timestamp("us", tz="UTC"),
    "s": pa.string(),
    "u": pa.uuid(),
    "fx": pa.binary(4),
    "bin": pa.binary(),
}
PARTITION_BY = ["month(ts)", "bucket(4, i)", "truncate(2, s)"]
PARTITION_COLUMNS = ("ts", "i", "s")
PROPERTIES = {
    "write.metadata.metrics.column.dec38": "counts",  # no bounds: metrics cannot prune dec38
    "write.metadata.metrics.column.bin": "truncate(4)",
}
FLOATING = ("f", "d")
SPARK_COLUMNS = [c for c in COLUMNS if c != "t"]


def _schema(columns: list[str]) -> Schema:
    return Schema(*(NestedField(n + 1, c, COLUMNS[c], required=c == "id") for n, c in enumerate(columns)))


def _arrow_schema(columns: list[str]) -> pa.Schema:
    return pa.schema([pa.field(c, ARROW_TYPES[c], nullable=c != "id") for c in columns])


# ----------------------------------------------------------------------------------------------
# the data: 50 files, each its own partition and its own ranges

BUCKET_I = parse_transform("bucket[4]").bind(IntegerType())


def f32(value: float) -> float:
    """The float (32-bit) nearest VALUE, as a Python float."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def next_f32(value: float, up: bool) -> float:
    """The adjacent float value (32-bit) above or below VALUE (a finite float value)."""
    if value == 0.0:
        tiny = f32(1e-45)
        return tiny if up else -tiny
    bits = struct.unpack("<i", struct.pack("<f", value))[0]
    bits += 1 if (value > 0) == up else -1
    return float(struct.unpack("<f", struct.pack("<i", bits))[0])


def micros(value: dt.datetime) -> int:
    naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
    delta = naive - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(value: int, *, zoned: bool = False) -> dt.datetime:
    result = EPOCH + dt.timedelta(microseconds=value)
    return result.replace(tzinfo=UTC) if zoned else result


def time_micros(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def time_of(value: int) -> dt.time:
    seconds, micro = divmod(value, 1_000_000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micro)


# The month (since 1970-01) of each file's ts; the specials hold the extreme months.
MONTH_MIN = (1 - 1970) * 12  # 0001-01
MONTH_MAX = (9999 - 1970) * 12 + 11  # 9999-12
MONTH_BEFORE_EPOCH = -1  # 1969-12

STRING_PREFIXES = ["ab", "ac", "ba", "zz", "Ze", "é!", "日本", "🧊a", "a_", "%x", "a\\", "q ", "\x00a", "AB"]
STRING_TAIL = "abxyz_%\\é日🧊\x00 "


def _month_range(month: int) -> tuple[int, int]:
    """The first and last microsecond of a month (months since 1970-01)."""
    year, index = divmod(month, 12)
    start = dt.datetime(1970 + year, index + 1, 1)
    if (1970 + year, index) == (9999, 11):
        return micros(start), micros(MAX_TS)
    following = dt.datetime(1970 + year + index // 11, (index + 1) % 12 + 1, 1)
    return micros(start), micros(following) - 1


class _FileData:
    """The rows of file K: one partition, per-column ranges and special cases."""

    def __init__(self, k: int, month: int):
        self.k = k
        self.rng = random.Random(SEED * 1000 + k)
        self.month = month
        self.n = ROWS_PER_FILE

    def special(self, column: str) -> int | None:
        """The special case (0-7) column COLUMN has in this file, if any: column c's cases sit in
        files 5c .. 5c+7, so each file is special for a few columns only."""
        kind = (self.k - 5 * list(COLUMNS).index(column)) % FILES
        return kind if kind < 8 else None

    def pick(self, values: list[Any]) -> list[Any]:
        return [self.rng.choice(values) for _ in range(self.n)]

    def spread(self, center: int, widths: list[int]) -> list[int]:
        width = self.rng.choice(widths)
        return [center + self.rng.randint(0, width) for _ in range(self.n)]

    def with_nulls(self, column: str, values: list[Any]) -> list[Any]:
        if column == "id" or column in PARTITION_COLUMNS:
            return values  # a null would put the row in another partition, i.e. another file
        rate = self.rng.choice([0.0, 0.0, 0.1, 0.3])
        return [None if self.rng.random() < rate else v for v in values]

    def column(self, name: str) -> list[Any]:
        kind = self.special(name)
        if kind == 0 and name != "id":
            return [None] * self.n
        return self.with_nulls(name, getattr(self, "col_" + name)(kind))

    def rows(self) -> list[dict[str, Any]]:
        columns = {name: self.column(name) for name in COLUMNS}
        return [{name: columns[name][j] for name in COLUMNS} for j in range(self.n)]

    # -- one method per column: n values, the special case KIND (1-7) or ordinary ones ----------

    def col_id(self, kind: int | None) -> list[int]:
        return [self.k * 100 + j for j in range(self.n)]

    def col_b(self, kind: int | None) -> list[bool]:
        return self.pick({1: [True], 2: [False]}.get(kind or 0, [True, False]))

    def col_i(self, kind: int | None) -> list[int]:
        if kind == 1:
            candidates = [INT_MIN + self.rng.randint(0, 300) for _ in range(200)] + [INT_MIN]
        elif kind == 2:
            candidates = [INT_MAX - self.rng.randint(0, 300) for _ in range(200)] + [INT_MAX]
        elif kind == 3:
            candidates = [self.rng.randint(-8, 8) for _ in range(200)] + [0]
        else:
            center = self.rng.randint(-20_000, 20_000) * 100_000
            width = self.rng.choice([0, 3, 1_000, 90_000])
            candidates = [center + self.rng.randint(0, width) for _ in range(200)]
        # Every row of the file in one bucket: the bucket of the last candidate.
        target = BUCKET_I(candidates[-1])
        return self.pick([c for c in candidates if BUCKET_I(c) == target])

    def col_l(self, kind: int | None) -> list[int]:
        if kind == 1:
            return self.pick([LONG_MIN, LONG_MIN + 1, LONG_MIN + 7, -(10**18)])
        if kind == 2:
            return self.pick([LONG_MAX, LONG_MAX - 1, 10**18])
        if kind == 3:
            return self.pick([LONG_MIN, 0, LONG_MAX])
        return self.spread(self.rng.randint(-(10**15), 10**15), [0, 10, 10**6, 10**12])

    def _floats(
        self, kind: int | None, big: float, tiny: float, cast: Callable[[float], float]
    ) -> list[float]:
        choices = {
            1: [NAN],
            2: [NAN, cast(1.5), cast(-2.25), cast(1e10)],
            3: [-0.0, 0.0],
            4: [-0.0],
            5: [INF, -INF, cast(3.25), cast(-7.5)],
            6: [big, -big, tiny, -tiny],
            7: [NAN, None],
        }
        if kind in choices:
            return self.pick(choices[kind])
        scale = 10.0 ** self.rng.randint(-3, 12)
        center = self.rng.uniform(-1, 1) * scale
        width = self.rng.choice([0.0, 1e-6, 0.01, 1.0]) * scale
        return [cast(center + self.rng.uniform(0, width)) for _ in range(self.n)]

    def col_f(self, kind: int | None) -> list[float]:
        return self._floats(kind, F32_MAX, f32(1e-45), f32)

    def col_d(self, kind: int | None) -> list[float]:
        return self._floats(kind, F64_MAX, 5e-324, float)

    def _decimals(self, kind: int | None, maximum: Decimal, scale: int) -> list[Decimal]:
        unit = D(1).scaleb(-scale)
        if kind == 1:
            return self.pick([-maximum, -maximum + unit, -maximum + 100 * unit])
        if kind == 2:
            return self.pick([maximum, maximum - unit])
        if kind == 3:
            return self.pick([D(0).quantize(unit), unit, -unit])
        limit = int(maximum.scaleb(scale))
        center = self.rng.randint(-limit // 2, limit // 2)
        width = self.rng.choice([0, 5, 10_000, limit // 1000])
        return [D(v).scaleb(-scale) for v in self.spread(center, [width])]

    def col_dec(self, kind: int | None) -> list[Decimal]:
        return self._decimals(kind, DEC9_MAX, 2)

    def col_dec38(self, kind: int | None) -> list[Decimal]:
        return self._decimals(kind, DEC38_MAX, 10)

    def col_dt(self, kind: int | None) -> list[dt.date]:
        first, last = dt.date(1, 1, 1), dt.date(9999, 12, 31)
        if kind == 1:
            days = [0, 0, 1, 400]
            return [first + dt.timedelta(days=d) for d in self.pick(days)]
        if kind == 2:
            return [last - dt.timedelta(days=d) for d in self.pick([0, 0, 1, 31])]
        if kind == 3:
            return [EPOCH_DATE + dt.timedelta(days=d) for d in self.pick([-1, 0, 1])]
        days = self.spread(self.rng.randint(-30_000, 30_000), [0, 1, 30, 3_000])
        return [EPOCH_DATE + dt.timedelta(days=d) for d in days]

    def col_t(self, kind: int | None) -> list[dt.time]:
        if kind == 1:
            values = self.pick([0, 1, 999_999])
        elif kind == 2:
            values = self.pick([MICROS_PER_DAY - 1, MICROS_PER_DAY - 2])
        elif kind == 3:
            values = self.pick([0, MICROS_PER_DAY - 1])
        else:
            center = self.rng.randrange(MICROS_PER_DAY // 2)
            values = self.spread(center, [0, 1, 10**6, 10**10])
        return [time_of(v) for v in values]

    def col_ts(self, kind: int | None) -> list[dt.datetime]:
        # One month per file (the partition); the extreme months are special cases.
        month = {1: MONTH_MIN, 2: MONTH_MAX, 3: MONTH_BEFORE_EPOCH}.get(kind or 0, self.month)
        first, last = _month_range(month)
        edges = [first, last, first + 1, last - 1]
        values = [self.rng.randint(first, last) for _ in range(self.n)]
        values = [self.rng.choice(edges) if self.rng.random() < 0.2 else v for v in values]
        if kind:
            values[:2] = [first, last]
        return [from_micros(v) for v in values]

    def col_tstz(self, kind: int | None) -> list[dt.datetime]:
        if kind == 1:
            values = self.pick([micros(MIN_TS), micros(MIN_TS) + 1])
        elif kind == 2:
            values = self.pick([micros(MAX_TS), micros(MAX_TS) - 1])
        elif kind == 3:
            values = self.pick([-1, 0, 1])
        else:
            values = self.spread(self.rng.randint(-(3 * 10**15), 3 * 10**15), [0, 1, 10**6, 10**12])
        return [from_micros(v, zoned=True) for v in values]

    def col_s(self, kind: int | None) -> list[str]:
        # Every string of the file truncates (to 2 code points) to the same partition value.
        if kind == 1:
            return [""] * self.n
        if kind == 2:
            return ["a"] * self.n
        if kind == 3:  # longer than the metrics' 16 code points: truncated bounds
            return ["lo" + "".join(self.rng.choice("ab") for _ in range(30)) for _ in range(self.n)]
        if kind == 4:  # no upper bound exists for a truncated run of U+10FFFF
            top = "\U0010ffff"
            return self.pick([top * 2, top * 20, top * 20 + "x", top * 17])
        prefix = self.rng.choice(STRING_PREFIXES)
        return [
            prefix + "".join(self.rng.choice(STRING_TAIL) for _ in range(self.rng.randint(0, 5)))
            for _ in range(self.n)
        ]

    def col_u(self, kind: int | None) -> list[uuid.UUID]:
        if kind == 1:
            values = self.pick([0, 1, 2**64])
        elif kind == 2:
            values = self.pick([2**128 - 1, 2**128 - 2])
        elif kind == 3:  # straddles the top bit (Java's signed comparison bug)
            values = self.pick([2**127 - 1, 2**127, 2**127 + 12345, 2**126])
        else:
            top = (self.k * 5) % 256
            values = self.spread(top << 120, [0, 2**64, 2**118])
        return [uuid.UUID(int=v) for v in values]

    def col_fx(self, kind: int | None) -> list[bytes]:
        if kind == 1:
            return [bytes(4)] * self.n
        if kind == 2:
            return self.pick([b"\xff" * 4, b"\xff\xff\xff\xfe"])
        first = self.rng.randrange(256)
        return [bytes([first]) + self.rng.randbytes(3) for _ in range(self.n)]

    def col_bin(self, kind: int | None) -> list[bytes]:
        if kind == 1:
            return [b""] * self.n
        if kind == 2:  # truncated to 4 bytes of 0xFF: no upper bound
            return self.pick([b"\xff" * 30, b"\xff" * 4, b"\xff" * 5 + b"\x00"])
        if kind == 3:
            return [self.rng.randbytes(50) for _ in range(self.n)]
        first = bytes([self.rng.randrange(256)])
        return [first + self.rng.randbytes(self.rng.randint(0, 12)) for _ in range(self.n)]


def generate_files() -> list[list[dict[str, Any]]]:
    """The rows of each of the 50 files (each file's partition is distinct)."""
    rng = random.Random(SEED)
    special = {MONTH_MIN, MONTH_MAX, MONTH_BEFORE_EPOCH}
    months = rng.sample([m for m in range(-12 * 80, 12 * 80) if m not in special], FILES)
    with decimal.localcontext(prec=100):  # 38-digit decimals: no rounding
        return [_FileData(k, months[k]).rows() for k in range(FILES)]


def to_icefloe_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row in icefloe's value representation (what the row evaluator reads)."""
    out = dict(row)
    if row["dt"] is not None:
        out["dt"] = (row["dt"] - EPOCH_DATE).days
    if row["t"] is not None:
        out["t"] = time_micros(row["t"])
    for name in ("ts", "tstz"):
        if row[name] is not None:
            out[name] = micros(row[name])
    return out


# ----------------------------------------------------------------------------------------------
# predicates: one tree, rendered for icefloe (builders) and for Spark SQL

COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
LEAF_OPS = {  # operation -> weight
    **dict.fromkeys(COMPARISONS, 4),
    "in": 3,
    "not_in": 3,
    "is_null": 2,
    "not_null": 2,
    "is_nan": 2,
    "not_nan": 2,
    "like": 3,
    "not_like": 3,
}
_BUILDERS: dict[str, Callable[..., Expression]] = {
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
_UNARY: dict[str, Callable[..., Expression]] = {
    "is_null": is_null,
    "not_null": not_null,
    "is_nan": is_nan,
    "not_nan": not_nan,
}


@dataclass(frozen=True)
class P:
    """A predicate tree: ``op`` is a leaf operation (``LEAF_OPS``), ``and``, ``or`` or ``not``.

    A leaf holds its column and value (a tuple of values for ``in`` / ``not_in``, the prefix for
    ``like`` / ``not_like``) as Python values of the column's type.
    """

    op: str
    column: str = ""
    value: Any = None
    children: tuple[P, ...] = ()

    def columns(self) -> set[str]:
        if self.children:
            return set().union(*(c.columns() for c in self.children))
        return {self.column}

    def leaves(self) -> Iterator[P]:
        if self.children:
            for child in self.children:
                yield from child.leaves()
        else:
            yield self

    def icefloe(self) -> Expression:
        if self.op == "and":
            return and_(*(c.icefloe() for c in self.children))
        if self.op == "or":
            return or_(*(c.icefloe() for c in self.children))
        if self.op == "not":
            return not_(self.children[0].icefloe())
        if self.op in _UNARY:
            return _UNARY[self.op](self.column)
        value = list(self.value) if self.op in ("in", "not_in") else self.value
        return _BUILDERS[self.op](self.column, value)

    def spark(self) -> str:
        if self.op in ("and", "or"):
            return "(" + f" {self.op.upper()} ".join(c.spark() for c in self.children) + ")"
        if self.op == "not":
            return f"(NOT {self.children[0].spark()})"
        col = f"`{self.column}`"
        if self.op == "is_null":
            return f"{col} IS NULL"
        if self.op == "not_null":
            return f"{col} IS NOT NULL"
        if self.op == "is_nan":
            return f"isnan({col})"
        if self.op == "not_nan":
            return f"(NOT isnan({col}))"
        if self.op in ("like", "not_like"):
            if any(c in self.value for c in "%_\\"):
                # Spark's LIKE with an escape misses strings with characters beyond U+FFFF.
                test = f"startswith({col}, {spark_string(self.value)})"
                return test if self.op == "like" else f"(NOT {test})"
            keyword = "LIKE" if self.op == "like" else "NOT LIKE"
            return f"{col} {keyword} {spark_like(self.value)}"
        values = self.value if self.op in ("in", "not_in") else (self.value,)
        if self.op in ("in", "not_in"):
            keyword = "IN" if self.op == "in" else "NOT IN"
            text = f"{col} {keyword} ({', '.join(spark_literal(self.column, v) for v in values)})"
        else:
            text = f"{col} {self.op} {spark_literal(self.column, self.value)}"
        if self.column in FLOATING:
            # Unknown for NaN, as in icefloe (see the module docstring).
            return f"IF(isnan({col}), NULL, {text})"
        if COLUMNS[self.column] == "long" and any(not LONG_MIN <= v <= LONG_MAX for v in values):
            # Spark 3.5 answers TRUE for NULL < 9223372036854775808 on a bigint column.
            return f"IF({col} IS NULL, NULL, {text})"
        return f"({text})"

    def spark_comparable(self) -> bool:
        """Whether Spark can evaluate the predicate exactly: not on ``t`` (Spark has no time
        type), and no decimal(38, 10) literal beyond that type (the common decimal type Spark
        compares in would need 39 digits: Spark answers NULL)."""
        for leaf in self.leaves():
            if leaf.column == "t":
                return False
            if leaf.column == "dec38" and leaf.op in (*COMPARISONS, "in", "not_in"):
                values = leaf.value if leaf.op in ("in", "not_in") else (leaf.value,)
                if any(v.as_tuple().exponent < -10 or abs(v) >= DEC38_LIMIT for v in values):
                    return False
        return True


def spark_string(text: str) -> str:
    """A Spark SQL string literal (Spark unescapes backslashes in literals)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_like(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return spark_string(escaped + "%")


def _spark_float(value: float) -> str:
    if math.isinf(value):
        return "CAST('Infinity' AS DOUBLE)" if value > 0 else "CAST('-Infinity' AS DOUBLE)"
    return f"{value!r}D"


def spark_literal(column: str, value: Any) -> str:
    kind = COLUMNS[column]
    if kind == "boolean":
        return "TRUE" if value else "FALSE"
    if kind in ("int", "long"):
        return str(value)  # Spark types it int, bigint or decimal(n, 0): compared exactly
    if kind in ("float", "double"):
        return _spark_float(value)
    if kind.startswith("decimal"):
        return f"{value:f}BD"
    if kind == "date":
        return f"DATE'{value.isoformat()}'"
    if kind == "timestamp":
        return f"TIMESTAMP_NTZ'{value.isoformat(sep=' ')}'"
    if kind == "timestamptz":
        return f"TIMESTAMP'{value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}Z'"
    if kind in ("string", "uuid"):
        return spark_string(str(value))
    if kind.startswith("fixed") or kind == "binary":
        return f"X'{value.hex()}'"
    raise AssertionError(f"no Spark literal for {column} ({kind})")


def _outside(column: str) -> list[Any]:
    """Literals at or beyond the edges of the data and of the column's type."""
    return {
        "id": [-1, 5_000, INT_MIN, INT_MAX + 1],
        "b": [True, False],
        "i": [INT_MIN - 1, INT_MAX + 1, LONG_MAX, 0],
        "l": [LONG_MIN - 1, LONG_MAX + 1, 0],
        "f": [INF, -INF, F32_MAX, -F32_MAX, 0.0, -0.0, f32(1e-45)],
        "d": [INF, -INF, F64_MAX, -F64_MAX, 5e-324, 0.0, -0.0],
        "dec": [D("10000000.00"), D("-10000000.00"), D("0.00"), D("0.001")],
        "dec38": [
            D("10000000000000000000000000000"),
            D("-10000000000000000000000000000"),
            D("0"),
            D("1E-11"),
        ],
        "dt": [dt.date(1, 1, 1), dt.date(9999, 12, 31), EPOCH_DATE],
        "t": [dt.time(0), time_of(MICROS_PER_DAY - 1), dt.time(12)],
        "ts": [MIN_TS, MAX_TS, EPOCH],
        "tstz": [MIN_TS.replace(tzinfo=UTC), MAX_TS.replace(tzinfo=UTC), EPOCH.replace(tzinfo=UTC)],
        "s": ["", "\U0010ffff" * 3, "a", "zzzz", "日本語", "a_b", "%", "\\"],
        "u": [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID(int=2**127)],
        "fx": [bytes(4), b"\xff" * 4, b"\x80\x00\x00\x00"],
        "bin": [b"", b"\xff" * 10, b"\x00"],
    }[column]


def _beside(column: str, value: Any, rng: random.Random) -> Any:
    """A literal next to VALUE in the column's type (or between two of its values)."""
    up = rng.random() < 0.5
    step = 1 if up else -1
    kind = COLUMNS[column]
    try:
        if kind in ("int", "long"):
            return value + step
        if kind == "boolean":
            return not value
        if kind == "float":
            return value if math.isinf(value) else next_f32(value, up)
        if kind == "double":
            return math.nextafter(value, INF if up else -INF)
        if kind.startswith("decimal"):
            unit = D("0.01") if column == "dec" else D("1E-10")
            if rng.random() < 0.3 and abs(value) < D("1E+20"):
                return value + unit / 2  # between two values of the column's type
            result = value + step * unit
            return result if abs(result) <= DEC38_MAX else result.quantize(D(1))
        if kind == "date":
            return value + dt.timedelta(days=step)
        if kind == "time":
            return time_of(min(max(time_micros(value) + step, 0), MICROS_PER_DAY - 1))
        if kind in ("timestamp", "timestamptz"):
            return value + dt.timedelta(microseconds=step)
        if kind == "string":
            return rng.choice([value + "a", value[:-1], value + "\U0010ffff", value + "\x00"])
        if kind == "uuid":
            return uuid.UUID(int=min(max(value.int + step, 0), 2**128 - 1))
        if kind.startswith("fixed"):
            number = min(max(int.from_bytes(value, "big") + step, 0), 2**32 - 1)
            return number.to_bytes(4, "big")
        if kind == "binary":
            return rng.choice([value + b"\x00", value[:-1], value + b"\xff"])
    except OverflowError:  # beyond datetime's range: the value itself
        return value
    raise AssertionError(column)


class PredicateGenerator:
    """Seeded random predicates over the data's columns and values."""

    def __init__(self, rows: list[dict[str, Any]], seed: int):
        self.rng = random.Random(seed)
        self.values = {
            c: [r[c] for r in rows if r[c] is not None and not (isinstance(r[c], float) and math.isnan(r[c]))]
            for c in COLUMNS
        }

    def literal(self, column: str) -> Any:
        roll = self.rng.random()
        if roll < 0.15 or not self.values[column]:
            return self.rng.choice(_outside(column))
        value = self.rng.choice(self.values[column])
        return value if roll < 0.65 else _beside(column, value, self.rng)

    def prefix(self) -> str:
        if self.rng.random() < 0.15:
            return self.rng.choice(_outside("s"))
        value: str = self.rng.choice(self.values["s"])
        return value[: self.rng.randint(0, min(len(value), 4))]

    def leaf(self) -> P:
        op = self.rng.choices(list(LEAF_OPS), weights=list(LEAF_OPS.values()))[0]
        if op in ("is_nan", "not_nan"):
            return P(op, self.rng.choice(FLOATING))
        if op in ("like", "not_like"):
            return P(op, "s", self.prefix())
        column = self.rng.choice(list(COLUMNS))
        if op in ("is_null", "not_null"):
            return P(op, column)
        if op in ("in", "not_in"):
            return P(op, column, tuple(self.literal(column) for _ in range(self.rng.randint(2, 5))))
        return P(op, column, self.literal(column))

    def tree(self, depth: int = 0) -> P:
        roll = self.rng.random()
        if depth < 3 and roll < 0.4:
            op = "and" if self.rng.random() < 0.55 else "or"
            return P(op, children=tuple(self.tree(depth + 1) for _ in range(self.rng.randint(2, 3))))
        if depth < 3 and roll < 0.5:
            return P("not", children=(self.tree(depth + 1),))
        return self.leaf()


def generate_predicates(rows: list[dict[str, Any]]) -> list[P]:
    generator = PredicateGenerator(rows, SEED)
    with decimal.localcontext(prec=100):  # 38-digit decimals: no rounding
        return [generator.tree() for _ in range(PREDICATES)]


# ----------------------------------------------------------------------------------------------
# the tables and the expected answers


@dataclass
class Setup:
    table: icefloe.Table  # db.preds
    spark_table: icefloe.Table  # db.preds_spark: the same files without ``t``
    rows: list[dict[str, Any]]  # as written, by id
    file_of: dict[int, str]  # id -> the data file of db.preds holding the row
    predicates: list[P]


def _write(table: icefloe.Table, files: list[list[dict[str, Any]]], columns: list[str]) -> None:
    """Ten appends of five files each (so that planning prunes manifests too)."""
    schema = _arrow_schema(columns)
    for start in range(0, FILES, 5):
        rows = [{c: row[c] for c in columns} for file in files[start : start + 5] for row in file]
        table.append(pa.Table.from_pylist(rows, schema=schema))


def _files_by_id(table: icefloe.Table) -> dict[int, str]:
    found: dict[int, str] = {}
    for task in table.new_scan().plan_files():
        path = task.file.file_path
        for row_id in pq.read_table(path.removeprefix("file:"), columns=["id"])["id"].to_pylist():
            found[row_id] = path
    return found


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    warehouse: Path = tmp_path_factory.mktemp("random-predicates")
    catalog = hadoop_catalog(warehouse)
    catalog.create_namespace("db")
    files = generate_files()
    rows = [row for file in files for row in file]
    table = catalog.create_table(
        "db.preds", _schema(list(COLUMNS)), partition_by=PARTITION_BY, properties=PROPERTIES
    )
    _write(table, files, list(COLUMNS))
    spark_table = catalog.create_table(
        "db.preds_spark", _schema(SPARK_COLUMNS), partition_by=PARTITION_BY, properties=PROPERTIES
    )
    _write(spark_table, files, SPARK_COLUMNS)
    file_of = _files_by_id(table)
    assert len(set(file_of.values())) == FILES and len(file_of) == len(rows)
    assert len(table.current_snapshot().data_manifests(table.io())) == FILES // 5
    return Setup(table, spark_table, rows, file_of, generate_predicates(rows))


def test_the_data_covers_the_edge_cases(setup: Setup) -> None:
    """The generated data holds what the module docstring promises (a test that the test data
    does not silently lose its edge cases)."""
    rows = setup.rows
    values = {c: [r[c] for r in rows] for c in COLUMNS}
    for column in COLUMNS:
        if column != "id":
            assert None in values[column], column
    for column in FLOATING:
        floats = [v for v in values[column] if v is not None]
        assert any(math.isnan(v) for v in floats) and INF in floats and -INF in floats
        assert any(v == 0.0 and math.copysign(1, v) < 0 for v in floats), column
    assert {INT_MIN, INT_MAX} <= set(values["i"]) and {LONG_MIN, LONG_MAX} <= set(values["l"])
    assert {DEC9_MAX, -DEC9_MAX} <= set(values["dec"])
    assert {DEC38_MAX, DEC38_MAX.copy_negate()} <= set(values["dec38"])
    assert {dt.date(1, 1, 1), dt.date(9999, 12, 31)} <= set(values["dt"])
    assert {MIN_TS, MAX_TS} <= set(values["ts"])
    assert {"", "a"} <= set(values["s"]) and any("\\" in s for s in values["s"] if s)
    assert b"" in values["bin"] and bytes(4) in values["fx"]
    # Files where every value of a column is null or NaN, or every value is -0.0.
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_file.setdefault(setup.file_of[row["id"]], []).append(row)
    for column in FLOATING:
        assert any(all(r[column] is None for r in fr) for fr in by_file.values())
        assert any(
            all(r[column] is None or math.isnan(r[column]) for r in fr)
            and any(r[column] is None for r in fr)
            and any(r[column] is not None for r in fr)
            for fr in by_file.values()
        ), column
        assert any(
            all(r[column] is None or (r[column] == 0 and math.copysign(1, r[column]) < 0) for r in fr)
            and any(r[column] is not None for r in fr)
            for fr in by_file.values()
        ), column
    # The metrics: no upper bound for some strings and binaries, no bounds for dec38.
    field_ids = {c: n + 1 for n, c in enumerate(COLUMNS)}
    files = [task.file for task in setup.table.new_scan().include_column_stats().plan_files()]
    for column in ("s", "bin"):
        assert any(
            f.value_counts[field_ids[column]] > f.null_value_counts[field_ids[column]]
            and field_ids[column] not in (f.upper_bounds or {})
            for f in files
        ), column
    assert not any(field_ids["dec38"] in (f.lower_bounds or {}) for f in files)
    # icefloe reads back exactly what was written.
    written = pa.Table.from_pylist(rows, schema=_arrow_schema(list(COLUMNS)))
    got = normalize_arrow(setup.table.new_scan().to_arrow())
    assert got["columns"] == list(COLUMNS)
    assert_same_rows("icefloe", got["rows"], normalize_arrow(written)["rows"])


def test_predicates_cover_every_operation(setup: Setup) -> None:
    leaves = [leaf for p in setup.predicates for leaf in p.leaves()]
    ops = Counter(leaf.op for leaf in leaves)
    assert set(ops) == set(LEAF_OPS), ops
    assert min(ops.values()) >= 100, ops
    columns = Counter(leaf.column for leaf in leaves if leaf.op in COMPARISONS)
    assert set(columns) == set(COLUMNS) and min(columns.values()) >= 30, columns
    kinds = Counter(p.op for p in setup.predicates)
    assert kinds["and"] > 200 and kinds["or"] > 200 and kinds["not"] > 100, kinds
    # Every predicate reads back from its text.
    for p in setup.predicates:
        expr = p.icefloe()
        assert parse(str(expr)) == expr, str(expr)


@dataclass
class Outcome:
    predicate: P
    expected: list[int]  # ids the row evaluator selects
    planned: set[str]  # files plan_files() keeps


@pytest.fixture(scope="module")
def outcomes(setup: Setup, java_answers: Future[dict[int, list[int]]]) -> list[Outcome]:
    """(a) and (c) for every predicate; the expected ids are kept for the Java comparison
    (``java_answers`` is only started here, to run alongside).

    Each predicate is planned (``plan_files()``), each planned task's residual filters the rows
    of its file as the read path does (``icefloe.arrow.row_filter``, on rows icefloe read from
    that file once: a difference here points at planning or residuals), and the whole read
    ``table.new_scan().filter(p).select("id").to_arrow()`` runs (Parquet row-group pruning
    and the reader's residuals; the filter's columns are read whatever is selected).
    """
    table = setup.table
    schema = table.schema()
    rows = [to_icefloe_row(r) for r in setup.rows]
    full = table.new_scan().to_arrow()
    ids = full["id"].to_pylist()
    rows_of_file = {
        path: full.filter(pa.array([setup.file_of[i] == path for i in ids]))
        for path in set(setup.file_of.values())
    }
    results = []
    failures = []
    started, cpu = time.monotonic(), time.process_time()
    for number, p in enumerate(setup.predicates):
        expr = p.icefloe()
        evaluator = Evaluator(schema, expr)
        expected = sorted(r["id"] for r in rows if evaluator.eval(r))
        scan = table.new_scan().filter(expr)
        tasks = scan.plan_files()
        planned = {task.file.file_path for task in tasks}
        # Files with the same residual are filtered together (one Arrow filter per residual).
        by_residual: dict[Expression, list[pa.Table]] = {}
        for task in tasks:
            by_residual.setdefault(task.residual, []).append(rows_of_file[task.file.file_path])
        got = sorted(
            i
            for residual, parts in by_residual.items()
            for i in filter_table(pa.concat_tables(parts), residual, schema)["id"].to_pylist()
        )
        if got != expected:
            failures.append(f"#{number} {expr}: planned residuals {len(got)} rows, evaluator {len(expected)}")
        read = sorted(scan.select("id").to_arrow()["id"].to_pylist())
        if read != expected:
            failures.append(f"#{number} {expr}: icefloe scan {len(read)} rows, evaluator {len(expected)}")
        skipped = {setup.file_of[i] for i in expected} - planned
        if skipped:
            failures.append(f"#{number} {expr}: pruned files holding matching rows: {sorted(skipped)}")
        results.append(Outcome(p, expected, planned))
    print(
        f"\nicefloe: {len(results)} predicates in {time.monotonic() - started:.1f}s"
        f" ({time.process_time() - cpu:.1f}s CPU)"
    )
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])
    return results


def test_scan_returns_the_evaluators_rows_and_prunes_soundly(outcomes: list[Outcome]) -> None:
    """(a) and (c): checked while computing ``outcomes``; here the pruning statistics."""
    pruning = [o for o in outcomes if len(o.planned) < FILES]
    share = len(pruning) / len(outcomes)
    planned = sum(len(o.planned) for o in outcomes) / len(outcomes)
    matching = sum(1 for o in outcomes if o.expected)
    print(
        f"\n{len(pruning)} of {len(outcomes)} predicates pruned at least one file ({share:.0%});"
        f" {planned:.1f} of {FILES} files planned on average; {matching} predicates match rows"
    )
    assert share >= MIN_PRUNING_SHARE
    # Both outcomes occur often: predicates that match nothing and ones that match many rows.
    assert 0.2 * len(outcomes) < matching < 0.95 * len(outcomes)


# ----------------------------------------------------------------------------------------------
# (b) Java Iceberg on Spark

_SPARK_LOAD = """
df = spark.read.format("iceberg").option("vectorization-enabled", "false").load(path).cache()
state["preds"] = df
result = sorted(r[0] for r in df.select("id").collect())
"""
# One query per batch: per row, one character per predicate ('1': the WHERE would select it).
# Whole-stage code generation of a hundred predicates costs more than it saves on 1,000 rows.
_SPARK_BATCH = """
spark.conf.set("spark.sql.codegen.wholeStage", "false")
try:
    mask = "concat(" + ", ".join(f"IF({w}, '1', '0')" for w in wheres) + ")"
    rows = state["preds"].selectExpr("id", mask).collect()
finally:
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
result = [sorted(r[0] for r in rows if r[1][i] == "1") for i in range(len(wheres))]
"""


def _java_answers(java: JavaEngine, setup: Setup) -> dict[int, list[int]]:
    """Spark's ids for each predicate it can evaluate exactly, by the predicate's index."""
    loaded = java.exec(_SPARK_LOAD, path=setup.spark_table.metadata_location)
    assert loaded == sorted(r["id"] for r in setup.rows), "Spark reads other rows than were written"
    indexes = [n for n, p in enumerate(setup.predicates) if p.spark_comparable()]
    answers: dict[int, list[int]] = {}
    for start in range(0, len(indexes), JAVA_BATCH):
        batch = indexes[start : start + JAVA_BATCH]
        answers.update(
            zip(batch, java.exec(_SPARK_BATCH, wheres=[setup.predicates[n].spark() for n in batch]))
        )
    return answers


@pytest.fixture(scope="module")
def java_answers(java_engine: JavaEngine, setup: Setup) -> Iterator[Future[dict[int, list[int]]]]:
    """Spark's answers, computed in the background: Spark works while icefloe does."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="spark-predicates")
    try:
        yield pool.submit(_java_answers, java_engine, setup)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def test_java_selects_the_same_rows(
    java_answers: Future[dict[int, list[int]]], setup: Setup, outcomes: list[Outcome]
) -> None:
    """(b): every predicate Spark can evaluate exactly, translated to Spark SQL."""
    waited = time.monotonic()
    answers = java_answers.result()
    print(f"\njava: {len(answers)} predicates ({time.monotonic() - waited:.1f}s waited after icefloe's)")
    assert len(answers) > 0.8 * PREDICATES
    failures = []
    for number, answer in answers.items():
        outcome = outcomes[number]
        if answer != outcome.expected:
            failures.append(
                f"#{number} {outcome.predicate.icefloe()}\n    spark: WHERE {outcome.predicate.spark()}\n"
                f"    java {len(answer)} rows, icefloe {len(outcome.expected)};"
                f" only java: {sorted(set(answer) - set(outcome.expected))[:5]},"
                f" only icefloe: {sorted(set(outcome.expected) - set(answer))[:5]}"
            )
    assert not failures, f"{len(failures)} of {len(answers)} differ:\n" + "\n".join(failures[:10])
