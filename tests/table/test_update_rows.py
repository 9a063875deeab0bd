"""``table.update(set=..., where=..., new_values=...)`` and writing to a branch from Python (``branch=`` on
append, overwrite, delete, update, upsert, replace_partitions)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icefloe
from icefloe.errors import (
    ExpressionEvaluationError,
    InvalidExpressionError,
    UnsupportedFeatureError,
    ValidationError,
)
from support.catalogs import make_catalog

SCHEMA = pa.schema(
    [pa.field("id", pa.int64()), pa.field("country", pa.string()), pa.field("amount", pa.float64())]
)


def _table(catalog: icefloe.Catalog, name: str, **properties: str) -> icefloe.Table:
    table = catalog.create_table(f"db.{name}", SCHEMA, partition_by=["country"], properties=properties)
    table.append(
        pa.table(
            {"id": [1, 2, 3, 4], "country": ["NL", "US", "NL", "VN"], "amount": [1.0, 2.0, 3.0, 4.0]},
            schema=SCHEMA,
        )
    )
    return table


def _rows(table: icefloe.Table, ref: str | None = None) -> list[tuple[object, ...]]:
    scan = table.new_scan() if ref is None else table.new_scan().use_ref(ref)
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


@pytest.mark.parametrize(
    ("version", "mode"), [("2", "copy-on-write"), ("2", "merge-on-read"), ("3", "merge-on-read")]
)
def test_update(warehouse: Path, version: str, mode: str) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "u", **{"format-version": version, "write.update.mode": mode})
    # set= strings are Spark SQL expressions of the row, as isp.update reads them.
    snapshot = table.update({"amount": "amount * 2", "country": "'XX'"}, where="country = 'NL' AND id > 1")
    assert snapshot is not None and snapshot.operation == "overwrite"
    # Arrow expressions, functions of the matched rows; every new value comes from the old row.
    table.update({"amount": lambda rows: pc.add(rows["amount"], 0.5)}, where="id = 2")
    table.update({"id": pc.field("id") * 10, "amount": "id + 0.5"}, where="id = 4")
    assert _rows(table) == [(1, "NL", 1.0), (2, "US", 2.5), (3, "XX", 6.0), (40, "VN", 4.5)]
    before = table.current_snapshot()
    assert before is not None
    nothing = table.update({"amount": "0"}, where="id = 99")  # as Java's UPDATE: a snapshot all the same
    assert nothing is not None and nothing.operation == "overwrite"
    assert nothing.parent_snapshot_id == before.snapshot_id
    assert nothing.summary["changed-partition-count"] == "0"
    assert nothing.summary["total-records"] == before.summary["total-records"]
    table.update(new_values={"country": "ZZ", "amount": None}, where="id = 1")  # literal values
    assert _rows(table)[0] == (1, "ZZ", None)
    table.update({"amount": None})  # every row, a null constant
    assert {r[2] for r in _rows(table)} == {None}


def test_set_expressions_are_spark_sql(warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "s")
    table.update(
        {
            "country": "CASE WHEN amount > 2 THEN lower(country) || '-' || id ELSE country END",
            "amount": "round(amount / 3, 2)",  # `/` divides as a DOUBLE
            "id": "amount",  # a DOUBLE into a BIGINT column: truncated, as Spark assigns it
        }
    )
    assert _rows(table) == [(1, "NL", 0.33), (2, "US", 0.67), (3, "nl-3", 1.0), (4, "vn-4", 1.33)]
    table.update({"country": "country", "amount": "-amount"}, where="id = 1")  # a swap-like read
    assert _rows(table)[0] == (1, "NL", -0.33)


def test_update_refuses_what_spark_refuses(warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "r")
    head = table.current_snapshot().snapshot_id
    with pytest.raises(InvalidExpressionError, match=r"ZZ is not a column .*'ZZ'.*new_values="):
        table.update({"country": "ZZ"})  # a literal without quotes is a column name
    with pytest.raises(
        InvalidExpressionError, match="STRING value cannot be assigned to the DOUBLE column amount"
    ):
        table.update({"amount": "'12'"})  # store assignment: CAST('12' AS DOUBLE) converts
    with pytest.raises(ExpressionEvaluationError, match=r"set amount = amount / \(id - 2\).*DIVIDE_BY_ZERO"):
        table.update({"amount": "amount / (id - 2)"})
    with pytest.raises(ExpressionEvaluationError, match="CAST_INVALID_INPUT"):
        table.update({"id": "CAST(country AS BIGINT)"})
    assert table.current_snapshot().snapshot_id == head  # nothing was written
    # a branch that does not divide by zero on the rows that reach it
    table.update({"amount": "CASE WHEN id = 2 THEN 0 ELSE amount / (id - 2) END"})
    assert [r[2] for r in _rows(table)] == [-1.0, 0.0, 3.0, 2.0]
    with pytest.raises(UnsupportedFeatureError, match=r"set country = .*sha2"):
        table.update({"country": "sha2(country, 256)"})
    with pytest.raises(ValidationError, match="'nope' is not a top-level column"):
        table.update({"nope": "1"})
    with pytest.raises(ValidationError, match="does not fit"):
        table.update(new_values={"amount": "not a number"}, where="id = 1")
    with pytest.raises(ValidationError, match="'amount' is given two new values"):
        table.update({"amount": "1"}, new_values={"amount": 2})
    with pytest.raises(ValidationError, match="new_values= takes values"):
        table.update(new_values={"amount": pc.field("amount")})
    with pytest.raises(ValidationError, match="set="):
        table.update({})


def test_case_sensitivity_is_the_calls(warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "c")
    table.update({"AMOUNT": "AMOUNT + ID"}, where="id = 1", case_sensitive=False)
    assert _rows(table)[0] == (1, "NL", 2.0)
    with pytest.raises(InvalidExpressionError, match="AMOUNT is not a column"):
        table.update({"amount": "AMOUNT + 1"})


def test_a_transaction_updates_with_sql(warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "t")
    transaction = table.new_transaction()
    transaction.update({"amount": "amount * 10"}, where="country = 'US'")
    transaction.update(new_values={"country": "BE"}, where="id = 1")
    transaction.commit_transaction()
    table.refresh()
    assert _rows(table)[:2] == [(1, "BE", 1.0), (2, "US", 20.0)]


def test_writes_to_a_branch(warehouse: Path) -> None:
    catalog = make_catalog("sql", warehouse)
    table = _table(catalog, "b", **{"write.delete.mode": "merge-on-read"})
    main = _rows(table)
    head = table.current_snapshot().snapshot_id
    more = pa.table({"id": [5], "country": ["NL"], "amount": [5.0]}, schema=SCHEMA)
    created = table.append(more, branch="dev")  # a new branch starts from the current snapshot
    assert created.parent_snapshot_id == head and table.refs()["dev"].snapshot_id == created.snapshot_id
    table.delete("id = 1", branch="dev")
    table.update({"amount": 9.0}, where="id = 2", branch="dev")
    table.upsert(
        pa.table({"id": [3, 6], "country": ["NL", "US"], "amount": [30.0, 6.0]}, schema=SCHEMA),
        on=["id"],
        branch="dev",
    )
    table.overwrite(
        pa.table({"id": [7], "country": ["VN"], "amount": [7.0]}, schema=SCHEMA),
        "country = 'VN'",
        branch="dev",
    )
    table.replace_partitions(
        pa.table({"id": [8], "country": ["US"], "amount": [8.0]}, schema=SCHEMA), branch="dev"
    )
    assert _rows(table, "dev") == [(3, "NL", 30.0), (5, "NL", 5.0), (7, "VN", 7.0), (8, "US", 8.0)]
    assert _rows(table) == main and table.current_snapshot().snapshot_id == head
    table.manage_snapshots().create_tag("t", head).commit()
    with pytest.raises(ValidationError, match="is a tag"):
        table.delete("id = 1", branch="t")
