"""The Iceberg SQL extensions ``isp.sql`` teaches sqlglot's Spark dialect (no Spark session)."""

from __future__ import annotations

import pytest
from sqlglot import exp

from icefloe.spark.sql import parse as p


def _action(statement: str) -> exp.Expression:
    tree = p.parse(statement)
    assert isinstance(tree, exp.Alter), statement
    [action] = tree.args["actions"]
    return action  # type: ignore[no-any-return]


def test_partition_fields_write_order_and_identifier_fields() -> None:
    add = _action("ALTER TABLE cat.db.t ADD PARTITION FIELD bucket(16, id) AS shard")
    assert (
        isinstance(add, p.PartitionField) and add.args["action"] == "add" and add.args["name"].name == "shard"
    )
    replace = _action("ALTER TABLE db.t REPLACE PARTITION FIELD ts_day WITH hours(ts)")
    assert replace.args["action"] == "replace" and replace.args["to"].name.lower() == "hours"
    assert _action("ALTER TABLE db.t DROP PARTITION FIELD days(ts)").args["action"] == "drop"
    order = _action(
        "ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id DESC NULLS LAST, s"
    )
    assert isinstance(order, p.WriteOrder) and order.args["distributed"] and order.args["locally"]
    assert [o.args.get("desc") or False for o in order.expressions] == [True, False]
    assert _action("ALTER TABLE db.t WRITE UNORDERED").args["unordered"]
    ids = _action("ALTER TABLE db.t SET IDENTIFIER FIELDS id, s.x")
    assert isinstance(ids, p.IdentifierFields) and len(ids.expressions) == 2
    assert _action("ALTER TABLE db.t DROP IDENTIFIER FIELDS id").args["action"] == "drop"


def test_branches_and_tags_with_retention() -> None:
    ref = _action(
        "ALTER TABLE db.t CREATE BRANCH IF NOT EXISTS b AS OF VERSION 7 RETAIN 2 DAYS "
        "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 4 HOURS"
    )
    assert isinstance(ref, p.BranchOrTag)
    assert (ref.args["action"], ref.args["kind"], ref.args["exists"], ref.args["snapshot_id"]) == (
        "create",
        "branch",
        True,
        7,
    )
    assert ref.args["max_ref_age_ms"] == 2 * 86_400_000
    assert (ref.args["min_snapshots_to_keep"], ref.args["max_snapshot_age_ms"]) == (3, 4 * 3_600_000)
    tag = _action("ALTER TABLE db.t CREATE OR REPLACE TAG v1 AS OF VERSION 9 RETAIN 30 MINUTES")
    assert (tag.args["action"], tag.args["kind"], tag.args["max_ref_age_ms"]) == (
        "create_or_replace",
        "tag",
        1_800_000,
    )
    assert _action("ALTER TABLE db.t REPLACE BRANCH b AS OF VERSION 3").args["action"] == "replace"
    assert _action("ALTER TABLE db.t DROP TAG IF EXISTS v1").args["exists"]
    with pytest.raises(Exception, match="DAYS, HOURS or MINUTES"):
        p.parse("ALTER TABLE db.t CREATE BRANCH b RETAIN 2 WEEKS")


def test_call_show_columns_and_time_travel() -> None:
    call = p.parse("CALL cat.system.expire_snapshots(table => 'db.t', retain_last => 2)")
    assert isinstance(call, p.Call)
    assert [i.name for i in call.this.expressions] == ["cat", "system", "expire_snapshots"]
    assert [a.this.name for a in call.expressions] == ["table", "retain_last"]
    positional = p.parse("CALL system.rollback_to_snapshot('db.t', 12)")
    assert isinstance(positional, p.Call) and [a.name for a in positional.expressions] == ["db.t", "12"]
    show = p.parse("SHOW TABLES IN cat.db")
    assert isinstance(show, p.ShowStatement) and show.args["kind"] == "tables"
    assert isinstance(p.parse("SHOW FUNCTIONS"), exp.Command)  # Spark's own: passed through
    move = _action("ALTER TABLE db.t ALTER COLUMN a.b AFTER c")
    assert isinstance(move, p.MoveColumn) and move.args["after"].name == "c"
    unset = _action("ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('k1', 'k2')")
    assert isinstance(unset, p.UnsetProperties) and unset.args["exists"] and len(unset.expressions) == 2
    for statement, kind in [
        ("SELECT * FROM db.t FOR SYSTEM_VERSION AS OF 5", "VERSION"),
        ("SELECT * FROM db.t VERSION AS OF 'dev'", "VERSION"),
        ("SELECT * FROM db.t FOR SYSTEM_TIME AS OF '2024-01-01'", "TIMESTAMP"),
        ("SELECT * FROM db.t TIMESTAMP AS OF '2024-01-01'", "TIMESTAMP"),
    ]:
        version = p.parse(statement).find(exp.Table).args["version"]  # type: ignore[union-attr]
        assert str(version.this).upper() == kind, statement
    replace = p.parse("REPLACE TABLE db.t USING iceberg AS SELECT 1 AS x")
    assert isinstance(replace, exp.Create) and replace.args["replace"]
