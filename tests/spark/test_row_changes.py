"""isp.delete / isp.update / isp.merge_into: the rows they leave, in both write modes and
format versions, the delete files they commit, and the MERGE cardinality rule."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

from icefloe import Catalog, Table
from icefloe import spark as isp
from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.manifest import FileContent, FileFormat
from support.spark import spark_rows

MODES = ("copy-on-write", "merge-on-read")
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.string()), pa.field("amount", pa.float64())])


def _table(catalog: Catalog, version: int, mode: str) -> Table:
    table = catalog.create_table(
        "db.changes",
        SCHEMA,
        partition_by=["g"],
        properties={
            "format-version": str(version),
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    table.append(
        pa.table(
            {
                "id": list(range(20)),
                "g": ["a" if i < 10 else "b" for i in range(20)],
                "amount": [float(i) for i in range(20)],
            }
        )
    )
    return table


def _rows(table: Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in table.new_scan().to_arrow().to_pylist())


def _delete_kinds(table: Table) -> set[tuple[object, object]]:
    return {(d.content, d.file_format) for t in table.new_scan().plan_files() for d in t.deletes}


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_delete(spark: object, catalog: Catalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    snapshot = isp.delete(spark, table, "id < 3 OR id = 12")
    assert snapshot is not None and table.current_snapshot().snapshot_id == snapshot.snapshot_id
    assert [r[0] for r in _rows(table)] == [i for i in range(20) if not (i < 3 or i == 12)]
    if mode == "merge-on-read":
        assert _delete_kinds(table) == {
            (FileContent.POSITION_DELETES, FileFormat.PUFFIN if version == 3 else FileFormat.PARQUET)
        }
    else:
        assert _delete_kinds(table) == set()
    # A whole partition goes without reading it (a metadata-only delete, as Java's).
    gone = isp.delete(spark, table, "g = 'b'")
    assert gone is not None and gone.operation == "delete"
    assert [r[0] for r in _rows(table)] == [3, 4, 5, 6, 7, 8, 9]
    assert sorted(spark_rows(isp.read(spark, table))) == _rows(table)


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_update(spark: object, catalog: Catalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    isp.update(spark, table, set={"amount": "amount * 2", "g": "g"}, where="g = 'a' AND id >= 8")
    isp.update(spark, table, set={"amount": "-1"}, where="id = 19")
    expected = sorted(
        (i, "a" if i < 10 else "b", -1.0 if i == 19 else float(i) * (2 if 8 <= i < 10 else 1))
        for i in range(20)
    )
    assert _rows(table) == expected
    assert sorted(spark_rows(isp.read(spark, table))) == expected
    with pytest.raises(ValidationError, match="nope"):
        isp.update(spark, table, set={"nope": "1"})


@pytest.mark.every_session
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_merge_into(spark: object, catalog: Catalog, version: int, mode: str) -> None:
    table = _table(catalog, version, mode)
    source = spark.createDataFrame(  # type: ignore[attr-defined]
        [(1, "a", 100.0, "U"), (2, "a", 0.0, "D"), (50, "b", 5.0, "I"), (51, "b", 6.0, "D")],
        "id long, g string, amount double, op string",
    )
    snapshot = (
        isp.merge_into(source, table, "t.id = s.id")
        .when_matched("s.op = 'D'")
        .delete()
        .when_matched()
        .update({"amount": "s.amount"})
        .when_not_matched("s.op != 'D'")
        .insert_all()
        .when_not_matched_by_source("t.id >= 18")
        .delete()
        .merge()
    )
    assert snapshot is not None
    expected = sorted(
        [
            (i, "a" if i < 10 else "b", 100.0 if i == 1 else float(i))
            for i in range(20)
            if i not in (2, 18, 19)
        ]
        + [(50, "b", 5.0)]
    )
    assert _rows(table) == expected
    assert sorted(spark_rows(isp.read(spark, table))) == expected


@pytest.mark.every_session
def test_merge_rejects_a_target_row_matched_twice(spark: object, catalog: Catalog) -> None:
    table = _table(catalog, 2, "merge-on-read")
    before = table.current_snapshot().snapshot_id
    source = spark.createDataFrame([(1, 1.0), (1, 2.0)], "id long, amount double")  # type: ignore[attr-defined]
    with pytest.raises(ValidationError, match="more than one source row"):
        isp.merge_into(source, table, "t.id = s.id").when_matched().update({"amount": "s.amount"}).merge()
    assert table.refresh().current_snapshot().snapshot_id == before


def test_merge_update_all_and_insert_values(spark: object, catalog: Catalog) -> None:
    table = _table(catalog, 2, "copy-on-write")
    source = spark.createDataFrame([(3, "a", 33.0), (70, "b", 7.0)], "id long, g string, amount double")  # type: ignore[attr-defined]
    (
        isp.merge_into(source, table, "t.id = s.id")
        .when_matched()
        .update_all()
        .when_not_matched()
        .insert({"id": "s.id + 1000", "g": "'z'"})
        .merge()
    )
    rows = _rows(table)
    assert (3, "a", 33.0) in rows and (1070, "z", None) in rows and len(rows) == 21


@pytest.mark.parametrize("mode", MODES)
def test_conditions_are_spark_sql(spark: object, catalog: Catalog, mode: str) -> None:
    """delete / update take any Spark SQL condition: arithmetic, functions, subqueries; the
    convertible part prunes (a whole partition still goes unread)."""
    table = _table(catalog, 2, mode)
    assert isp.delete(spark, table, "id % 3 = 0 AND g = 'a'") is not None
    assert [r[0] for r in _rows(table)] == [i for i in range(20) if not (i % 3 == 0 and i < 10)]
    isp.update(spark, table, set={"amount": "amount + 0.5"}, where="upper(g) = 'B' AND id % 5 = 0")
    assert {r[0]: r[2] for r in _rows(table)}[15] == 15.5
    spark.createDataFrame([(4,), (11,)], "id long").createOrReplaceTempView("doomed")  # type: ignore[attr-defined]
    isp.delete(spark, table, "id IN (SELECT id FROM doomed)")
    ids = [r[0] for r in _rows(table)]
    assert 4 not in ids and 11 not in ids and len(ids) == 14
    # icefloe expressions keep Iceberg's semantics, as table.delete does
    from icefloe.expressions import equal

    isp.delete(spark, table, equal("id", 13))
    assert 13 not in [r[0] for r in _rows(table)]
    assert sorted(spark_rows(isp.read(spark, table))) == _rows(table)


def test_overwrite_where_spark_sql(spark: object, catalog: Catalog) -> None:
    table = _table(catalog, 2, "copy-on-write")
    replacement = spark.createDataFrame([(100, "b", 1.0)], "id long, g string, amount double")  # type: ignore[attr-defined]
    # Not convertible: Spark counts each file's matching rows; partition b matches wholly.
    snapshot = isp.write(replacement, table, mode="overwrite", where="upper(g) = 'B'")
    assert snapshot is not None and snapshot.operation == "overwrite"
    assert [r[0] for r in _rows(table)] == [*range(10), 100]
    before = table.current_snapshot().snapshot_id
    with pytest.raises(ValidationException, match="some, but not all"):
        isp.write(replacement, table, mode="overwrite", where="id % 2 = 0")
    assert table.refresh().current_snapshot().snapshot_id == before


MERGE_CLAUSES = {
    "matched_update": lambda m: m.when_matched("s.v > 0").update({"amount": "s.v * 1.0"}),
    "matched_delete": lambda m: m.when_matched().delete(),
    "insert": lambda m: m.when_not_matched().insert({"id": "s.id", "g": "'n'", "amount": "s.v * 1.0"}),
    "by_source_update": lambda m: m.when_not_matched_by_source("t.id >= 15").update({"amount": "-1.0"}),
    "by_source_delete": lambda m: m.when_not_matched_by_source().delete(),
}


def _merge_model(rows: list[tuple], source: list[tuple], kinds: tuple[str, ...]) -> list[tuple]:
    """SQL MERGE semantics on Python tuples: the first clause of a row's situation that applies."""
    by_id = {s[0]: s for s in source}
    target_ids = {r[0] for r in rows}
    result = []
    for row in rows:
        match = by_id.get(row[0])
        if match is not None:
            if "matched_update" in kinds and match[1] > 0:
                result.append((row[0], row[1], float(match[1])))
            elif "matched_delete" in kinds:
                pass
            else:
                result.append(row)
        else:
            if "by_source_update" in kinds and row[0] >= 15:
                result.append((row[0], row[1], -1.0))
            elif "by_source_delete" in kinds:
                pass
            else:
                result.append(row)
    if "insert" in kinds:
        result += [(s[0], "n", float(s[1])) for s in source if s[0] not in target_ids]
    return sorted(result)


@pytest.mark.parametrize(
    "kinds",
    [
        combo
        for size in range(1, len(MERGE_CLAUSES) + 1)
        for combo in itertools.combinations(MERGE_CLAUSES, size)
    ],
    ids="+".join,
)
def test_merge_every_combination_of_clause_kinds(
    spark: object, catalog: Catalog, kinds: tuple[str, ...]
) -> None:
    mode = MODES[len(kinds) % 2]
    table = _table(catalog, 2, mode)
    before = _rows(table)
    data = [(2, 0), (3, 7), (12, 5), (40, 1)]
    source = spark.createDataFrame(data, "id long, v int")  # type: ignore[attr-defined]
    merge = isp.merge_into(source, table, "t.id = s.id")
    for kind in kinds:
        merge = MERGE_CLAUSES[kind](merge)
    merge.merge()
    assert _rows(table) == _merge_model(before, data, kinds)


def test_merge_prunes_target_files_by_the_condition(spark: object, catalog: Catalog) -> None:
    """A condition on the target alone limits what the merge reads and may conflict with."""
    table = _table(catalog, 2, "merge-on-read")
    source = spark.createDataFrame([(3, 30.0), (15, 150.0)], "id long, amount double")  # type: ignore[attr-defined]
    (
        isp.merge_into(source, table, "t.id = s.id AND t.g = 'a'")
        .when_matched()
        .update({"amount": "s.amount"})
        .when_not_matched()
        .insert({"id": "s.id", "g": "'c'", "amount": "s.amount"})
        .merge()
    )
    rows = _rows(table)
    assert (3, "a", 30.0) in rows
    assert (15, "b", 15.0) in rows and (15, "c", 150.0) in rows  # 15 is in partition b: no match
    assert len(rows) == 21


def test_row_changes_on_a_branch(spark: object, catalog: Catalog) -> None:
    """delete / update / merge_into with ``branch=`` read the branch's head and commit to it;
    on v3 a second delete in a file merges with the branch's deletion vector, not main's."""
    table = _table(catalog, 3, "merge-on-read")
    main_rows = _rows(table)
    main_head = table.current_snapshot().snapshot_id
    isp.delete(spark, table, "id = 1", branch="dev")  # creates dev from main
    isp.delete(spark, table, "id = 2", branch="dev")
    isp.update(spark, table, set={"amount": "amount + 100"}, where="id = 3", branch="dev")
    source = spark.createDataFrame([(4, "a", -4.0), (50, "b", 50.0)], "id long, g string, amount double")  # type: ignore[attr-defined]
    isp.merge_into(
        source, table, "t.id = s.id", branch="dev"
    ).when_matched().update_all().when_not_matched().insert_all().merge()

    assert table.current_snapshot().snapshot_id == main_head and _rows(table) == main_rows
    dev = sorted(tuple(r.values()) for r in table.new_scan().use_ref("dev").to_arrow().to_pylist())
    expected = {r[0]: r for r in main_rows if r[0] not in (1, 2)}
    expected[3] = (3, "a", 103.0)
    expected[4] = (4, "a", -4.0)
    expected[50] = (50, "b", 50.0)
    assert dev == sorted(expected.values())
    dev_tasks = table.new_scan().use_ref("dev").plan_files()
    vectors = [d for t in dev_tasks for d in t.deletes]
    assert all(d.file_format == FileFormat.PUFFIN for d in vectors)
    # one vector per data file: the second delete merged into the first
    assert len({d.referenced_data_file for d in vectors}) == len(vectors)
    table.manage_snapshots().create_tag("t1", main_head).commit()
    with pytest.raises(ValidationError, match="tag"):
        isp.delete(spark, table, "id = 5", branch="t1")
