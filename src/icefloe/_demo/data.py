"""The demo's tables and its generated data.

Batches are generated in Spark (``spark.range`` and hash expressions), so a day's rows depend
only on (seed, day), never on how Spark splits the work: re-running a day, or the test suite
regenerating one, gives the same rows.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:  # the demo checks that PySpark is installed before it generates anything
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "CHANNEL",
    "DAY_COLUMN",
    "FIRST_DAY",
    "ORDERS",
    "ORDERS_SCHEMA",
    "SALES",
    "SALES_SCHEMA",
    "corrections_frame",
    "orders_frame",
    "orders_rows",
    "sales_frame",
    "sales_rows",
]

NAMESPACE = "db"
ORDERS = "db.orders"
SALES = "db.sales"
FIRST_DAY = dt.date(2024, 1, 1)
DEFAULT_SEED = 20240101
IDS_PER_DAY = 10_000  # order / sale ids of day i are i * IDS_PER_DAY + 0, 1, ...

ORDERS_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64(), nullable=False),
        pa.field("customer", pa.string()),
        pa.field("country", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("grass_date", pa.date32()),
    ]
)
ORDERS_PARTITIONING = ["country", "grass_date"]
# Row-level changes write position deletes (merge-on-read) that compaction folds away later.
ORDERS_PROPERTIES = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
SALES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("amount", pa.float64()),
        pa.field("sale_date", pa.date32()),
    ]
)
SALES_PARTITIONING = ["sale_date"]
SALES_PROPERTIES = {"owner": "icefloe-demo", "write.parquet.compression-codec": "zstd"}
# What the tables must look like for the demo to continue them (Iceberg type strings); the
# schema change of the demo adds CHANNEL to db.orders.
EXPECTED_COLUMNS = {
    ORDERS: [
        ("order_id", "long"),
        ("customer", "string"),
        ("country", "string"),
        ("amount", "decimal(10, 2)"),
        ("grass_date", "date"),
    ],
    SALES: [("id", "int"), ("amount", "double"), ("sale_date", "date")],
}
CHANNEL = ("channel", "string")
DAY_COLUMN = {ORDERS: "grass_date", SALES: "sale_date"}

# Repeated names weigh the choice (Indonesia and Thailand order most).
_COUNTRIES = "'SG','MY','TH','ID','VN','PH','TW','BR','ID','TH'"
_CHANNELS = "'web','app','app','store'"
TEST_CUSTOMER = "qa-test"  # the QA team's test orders, deleted by every run (section 6)


def day_index(day: dt.date) -> int:
    return (day - FIRST_DAY).days


def orders_rows(day: dt.date, seed: int = DEFAULT_SEED) -> int:
    """How many orders arrive on ``day``: 2,500-4,000."""
    return int(np.random.default_rng([seed, day_index(day), 1]).integers(2_500, 4_001))


def sales_rows(day: dt.date, seed: int = DEFAULT_SEED) -> int:
    """How many sales ``day`` has: 1,200-1,800."""
    return int(np.random.default_rng([seed, day_index(day), 2]).integers(1_200, 1_801))


def _hash(seed: int, index: int, salt: str, modulus: int, column: str = "id") -> str:
    """A Spark SQL expression: a uniform integer in [0, modulus) from the row's ``column``."""
    return f"pmod(xxhash64({column}, {seed}, {index}, '{salt}'), {modulus})"


def orders_frame(spark: SparkSession, day: dt.date, seed: int, *, channel: bool) -> DataFrame:
    """The orders batch of ``day`` (about 3% of them placed the day before and arriving late;
    never before FIRST_DAY); with a ``channel`` column when ``channel``."""
    index = day_index(day)
    late = f"CASE WHEN {index} > 0 AND {_hash(seed, index, 'late', 100)} < 3 THEN 1 ELSE 0 END"
    columns = [
        f"CAST({index * IDS_PER_DAY} + id AS BIGINT) AS order_id",
        # One order in 200 is a test order of the QA team, which section 6 deletes.
        f"CASE WHEN {_hash(seed, index, 'qa', 200)} = 0 THEN '{TEST_CUSTOMER}' "
        f"ELSE format_string('cust-%04d', CAST({_hash(seed, index, 'customer', 5_000)} AS INT)) END AS customer",
        f"element_at(array({_COUNTRIES}), CAST({_hash(seed, index, 'country', 10)} + 1 AS INT)) AS country",
        f"CAST(({_hash(seed, index, 'amount', 50_000)} + 50) / 100 AS DECIMAL(10, 2)) AS amount",
        f"date_sub(DATE'{day.isoformat()}', {late}) AS grass_date",
    ]
    if channel:
        columns.append(
            f"element_at(array({_CHANNELS}), CAST({_hash(seed, index, 'channel', 4)} + 1 AS INT)) AS channel"
        )
    return spark.range(0, orders_rows(day, seed), numPartitions=2).selectExpr(*columns)


def sales_frame(spark: SparkSession, day: dt.date, seed: int, *, restated: bool = False) -> DataFrame:
    """The sales of ``day``; ``restated``: the day as the source system re-delivers it (about
    5% of the sales cancelled, the others' amounts recomputed)."""
    index = day_index(day)
    frame = spark.range(0, sales_rows(day, seed), numPartitions=2)
    salt = "restated" if restated else "amount"
    if restated:
        frame = frame.where(f"{_hash(seed, index, 'cancelled', 100)} >= 5")
    return frame.selectExpr(
        f"CAST({index * IDS_PER_DAY} + id AS INT) AS id",
        f"round(({_hash(seed, index, salt, 20_000)} + 100) / 100.0, 2) AS amount",
        f"DATE'{day.isoformat()}' AS sale_date",
    )


def corrections_frame(spark: SparkSession, days: list[dt.date], seed: int) -> DataFrame:
    """Late corrections for the orders of ``days``: per day, 40 existing orders with a new
    amount and 20 orders that never arrived (new ids), all columns of the table."""
    parts = []
    for day in days:
        index = day_index(day)
        rows = orders_rows(day, seed)
        stride = rows // 40  # 40 distinct existing ids of the day: 0, stride, 2 * stride, ...
        order_id = f"CASE WHEN id < 40 THEN id * {stride} ELSE {rows} + id - 40 END"
        parts.append(
            spark.range(0, 60, numPartitions=1).selectExpr(
                f"CAST({index * IDS_PER_DAY} + {order_id} AS BIGINT) AS order_id",
                f"format_string('cust-%04d', CAST({_hash(seed, index, 'late-customer', 5_000)} AS INT))"
                " AS customer",
                f"element_at(array({_COUNTRIES}), CAST({_hash(seed, index, 'late-country', 10)} + 1 AS INT))"
                " AS country",
                f"CAST(({_hash(seed, index, 'corrected', 50_000)} + 50) / 100 AS DECIMAL(10, 2)) AS amount",
                f"DATE'{day.isoformat()}' AS grass_date",
            )
        )
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.unionByName(part)
    return frame
