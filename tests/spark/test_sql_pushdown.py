"""``isp.sql`` reads only what a statement can use: the table columns it names and the files its
WHERE clause can match (``spark/sql/pushdown.py``), and answers exactly as a whole read would."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pytest
import sqlglot
from pyspark.sql import SparkSession

from icefloe import Catalog
from icefloe import spark as isp
from icefloe.spark.read.choice import nan_safe_options
from icefloe.spark.sql.pushdown import named_identifiers

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("name", pa.string()),
        ("x", pa.float64()),
        ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])),
        ("payload", pa.string()),
    ]
)


def _batch(start: int) -> pa.Table:
    ids = range(start, start + 10)
    return pa.table(
        {
            "id": list(ids),
            "name": [f"n{i % 4}" for i in ids],
            "x": [float("nan") if i % 5 == 0 else i / 2 for i in ids],
            "s": [{"a": i % 3, "b": f"b{i}"} for i in ids],
            "payload": ["p" * 20] * 10,
        },
        schema=SCHEMA,
    )


@contextmanager
def _reader(spark: SparkSession, reader: str) -> Iterator[None]:
    spark.conf.set("icefloe.spark.reader", reader)
    try:
        yield
    finally:
        spark.conf.unset("icefloe.spark.reader")


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def _answer(frame: Any) -> list[str]:
    """The rows as comparable text (NaN equals NaN)."""
    return sorted(repr(tuple(r)) for r in frame.collect())


def _three_files(catalog: Catalog) -> Any:
    table = catalog.create_table("db.pushed", SCHEMA)
    for start in (0, 10, 20):  # one file each, ids 0-9, 10-19, 20-29
        table.append(_batch(start))
    return table


@pytest.mark.parametrize("reader", ["spark", "icefloe"])
def test_a_query_opens_only_files_its_where_clause_can_match(
    spark: SparkSession, catalog: Catalog, reader: str
) -> None:
    table = _three_files(catalog)
    first = min(table.new_scan().plan_files(), key=lambda task: task.file.lower_bounds[1])
    os.remove(first.file.file_path.removeprefix("file:"))  # ids 0-9 are gone from storage

    with _reader(spark, reader):
        rows = _rows(
            isp.sql(spark, "SELECT id, name FROM db.pushed WHERE id >= 10 AND name <> 'zz'", catalog=catalog)
        )
        assert [r[0] for r in rows] == list(range(10, 30))
        aliased = isp.sql(
            spark, "SELECT count(*) FROM db.pushed AS p WHERE p.id BETWEEN 12 AND 14", catalog=catalog
        )
        assert _rows(aliased) == [(3,)]
        with pytest.raises(Exception, match=r"(?i)not.?found|no such file|does not exist"):
            isp.sql(spark, "SELECT id FROM db.pushed WHERE id >= 5", catalog=catalog).collect()


@pytest.mark.every_session
def test_icefloe_reader_decodes_only_the_columns_a_query_names(
    spark: SparkSession, catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    _three_files(catalog)
    with _reader(spark, "icefloe"):
        frame = isp.sql(spark, "SELECT upper(NAME) AS n, s.a FROM db.pushed WHERE id < 3", catalog=catalog)
        capsys.readouterr()
        frame.explain()
        plan = capsys.readouterr().out
        assert "MapInArrow" in plan and "name#" in plan and "s#" in plan
        assert "payload" not in plan and "x#" not in plan
        assert _rows(frame) == [("N0", 0), ("N1", 1), ("N2", 2)]
        frame = isp.sql(spark, "SELECT count(*) FROM db.pushed", catalog=catalog)
        assert _rows(frame) == [(30,)]


#: Statements over ``db.pushed`` (and the Spark view ``other``) whose answers must not change
#: when the read is pruned; ``{t}`` is the table.
STATEMENTS = [
    "SELECT * FROM {t} WHERE id < 4",
    "SELECT t.* FROM {t} t WHERE t.x > 3",
    "SELECT count(*), count(x), sum(s.a) FROM {t}",
    "SELECT 1 FROM {t} WHERE name = 'n1'",
    "SELECT id FROM {t} WHERE x = double('NaN') OR x < 1",
    "SELECT id FROM {t} WHERE NOT (x > 5) AND id > 2",
    "SELECT id, name FROM {t} WHERE upper(name) = 'N2' AND id % 2 = 0",
    "SELECT * FROM {t} NATURAL JOIN other",
    "SELECT t.id, o.tag FROM {t} t JOIN other o ON t.name = o.name WHERE t.id > 20",
    "SELECT id FROM {t} t WHERE EXISTS (SELECT 1 FROM other o WHERE o.name = t.name AND o.tag = 'one')",
    "SELECT * FROM (SELECT name, id % 2 AS odd, x FROM {t}) PIVOT (count(x) FOR odd IN (0, 1))",
    "WITH c AS (SELECT * FROM {t}) SELECT max(id) FROM c WHERE name = 'n3'",
    "SELECT ID, Name FROM {t} WHERE ID IN (1, 2, 25) OR S.A = 2",
    "SELECT id, e FROM {t} LATERAL VIEW explode(array(id, id + 1)) ex AS e WHERE e > 28",
    "SELECT name, max(id) FROM {t} WHERE id > 5 GROUP BY name HAVING max(id) > 20",
]


def test_pruned_statements_answer_as_whole_reads(spark: SparkSession, catalog: Catalog) -> None:
    table = _three_files(catalog)
    spark.createDataFrame([("n1", "one"), ("n2", "two")], "name string, tag string").createOrReplaceTempView(
        "other"
    )
    isp.read(spark, table).createOrReplaceTempView("whole")
    with _reader(spark, "icefloe"):
        for statement in STATEMENTS:
            expected = _answer(spark.sql(statement.format(t="whole")))
            assert expected, statement
            assert _answer(isp.sql(spark, statement.format(t="db.pushed"), catalog=catalog)) == expected, (
                statement
            )


def test_time_travel_prunes_by_the_schema_of_the_snapshot_read(spark: SparkSession, catalog: Catalog) -> None:
    table = _three_files(catalog)
    before = table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.update_schema().rename_column("name", "label").commit()
    old = f"SELECT name FROM db.pushed VERSION AS OF {before} WHERE name = 'n1' AND id < 10"
    new = "SELECT label FROM db.pushed WHERE label = 'n1' AND id < 10"
    with _reader(spark, "icefloe"):
        assert _rows(isp.sql(spark, old, catalog=catalog)) == [("n1",)] * 3
        assert _rows(isp.sql(spark, new, catalog=catalog)) == [("n1",)] * 3


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("SELECT a, t.b FROM t WHERE c > 1", {"a", "t", "b", "c"}),
        ("SELECT count(*) FROM t", {"t"}),
        ("SELECT `Mixed Case` FROM t", {"mixed case", "t"}),
        ("SELECT * FROM t", None),
        ("SELECT x.* FROM t x", None),
        ("SELECT count(*) FROM (SELECT * FROM t)", None),
        ("SELECT a FROM t NATURAL JOIN u", None),
        ("SELECT a FROM t PIVOT (sum(v) FOR k IN (1, 2))", None),
        ("SELECT a FROM t UNPIVOT (v FOR k IN (b, c))", None),
    ],
)
def test_named_identifiers(statement: str, named: set[str] | None) -> None:
    found = named_identifiers(sqlglot.parse_one(statement, read="spark"))
    assert (None if found is None else set(found)) == named


@pytest.mark.parametrize("reader", ["spark", "icefloe"])
def test_nan_rows_match_spark_comparisons_whichever_reader(
    spark: SparkSession, catalog: Catalog, reader: str
) -> None:
    """Spark orders NaN above every number and finds NaN = NaN; Parquet's statistics leave NaN
    out of min and max, so row groups whose only match is a NaN must not be skipped."""
    table = _three_files(catalog)
    nan_ids = [i for i in range(30) if i % 5 == 0]
    with _reader(spark, reader):
        frame = isp.read(spark, table)
        assert sorted(r.id for r in frame.where("x > 100").collect()) == nan_ids
        assert sorted(r.id for r in frame.where("x = double('NaN')").collect()) == nan_ids
        statement = "SELECT id FROM db.pushed WHERE x >= double('NaN') OR id = 1"
        assert sorted(r.id for r in isp.sql(spark, statement, catalog=catalog).collect()) == sorted(
            [1, *nan_ids]
        )


def test_parquet_skipping_stays_on_where_no_read_column_may_hold_nan(catalog: Catalog) -> None:
    table = _three_files(catalog)  # x holds NaN in every file
    tasks = table.new_scan().plan_files()
    schema = table.schema()
    assert nan_safe_options(table.metadata, tasks, schema)["parquet.filter.stats.enabled"] == "false"
    assert nan_safe_options(table.metadata, tasks, schema.select("id", "name")) == {}
    no_nan = catalog.create_table("db.no_nan", SCHEMA)
    no_nan.append(_batch(1).set_column(2, "x", pa.array([1.5] * 10)))
    assert nan_safe_options(no_nan.metadata, no_nan.new_scan().plan_files(), no_nan.schema()) == {}
