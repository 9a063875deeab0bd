"""ReplaceSortOrder, UpdateLocation, UpdateStatistics and UpdatePartitionStatistics."""

from __future__ import annotations

import pytest

from icefloe import Catalog
from icefloe.errors import ValidationError
from icefloe.spec.sorting import NullOrder, SortDirection
from icefloe.spec.statistics import BlobMetadata, PartitionStatisticsFile, StatisticsFile
from support.catalogs import ARROW_SCHEMA, rows


def test_replace_sort_order(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    order = table.replace_sort_order().asc("day(ts)").desc("bucket(16, id)").asc("name", "nulls-last").apply()
    assert table.sort_order().is_unsorted  # apply() commits nothing
    fields = [(str(f.transform), f.direction, f.null_order) for f in order.fields]
    assert fields == [
        ("day", SortDirection.ASC, NullOrder.NULLS_FIRST),
        ("bucket[16]", SortDirection.DESC, NullOrder.NULLS_LAST),
        ("identity", SortDirection.ASC, NullOrder.NULLS_LAST),
    ]
    table.replace_sort_order().asc("day(ts)").desc("bucket(16, id)").asc("name", "nulls-last").commit()
    loaded = catalog.load_table("db.t")
    assert loaded.sort_order().fields == order.fields and loaded.sort_order().order_id == 1
    first_id = loaded.sort_order().order_id

    table.replace_sort_order().case_sensitive(False).desc("ID", NullOrder.NULLS_FIRST).commit()
    assert table.sort_order().order_id == 2
    # Going back to an existing order reuses its id.
    table.replace_sort_order().asc("day(ts)").desc("bucket(16, id)").asc("name", "nulls-last").commit()
    assert catalog.load_table("db.t").sort_order().order_id == first_id
    assert len(table.sort_orders()) == 3
    # No term: unsorted.
    table.replace_sort_order().commit()
    assert catalog.load_table("db.t").sort_order().is_unsorted


def test_replace_sort_order_errors(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    with pytest.raises(ValidationError, match="nope"):
        table.replace_sort_order().asc("nope")
    with pytest.raises(ValidationError, match="ID"):
        table.replace_sort_order().asc("ID")
    with pytest.raises(ValidationError, match="day"):
        table.replace_sort_order().asc("day(name)")
    with pytest.raises(ValidationError, match="null order"):
        table.replace_sort_order().asc("id", "sideways")


def test_sort_order_in_transaction_with_schema_change(memory_catalog: Catalog) -> None:
    table = memory_catalog.create_table("db.t", ARROW_SCHEMA)
    txn = table.new_transaction()
    txn.update_schema().add_column("extra", "long").commit()
    txn.replace_sort_order().desc("extra").commit()
    txn.commit_transaction()
    field = table.sort_order().fields[0]
    assert table.schema().find_column_name(field.source_id) == "extra"


def test_concurrent_sort_order_change_retries(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    update = table.replace_sort_order().asc("id")
    catalog.load_table("db.t").replace_sort_order().desc("name").commit()
    update.commit()
    loaded = catalog.load_table("db.t")
    assert loaded.schema().find_column_name(loaded.sort_order().fields[0].source_id) == "id"


def test_update_location(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    new_location = str(tmp_path_factory.mktemp("moved"))
    update = table.update_location().set_location(new_location + "/")
    assert update.apply() == new_location
    if catalog.backend.__class__.__name__ == "HadoopCatalogBackend":
        # As Java's HadoopTableOperations: a path-based table cannot move.
        with pytest.raises(ValidationError, match="relocated"):
            update.commit()
        assert catalog.load_table("db.t").location() != new_location
        return
    update.commit()
    assert catalog.load_table("db.t").location() == new_location
    table.append(rows(3))
    data = table.current_snapshot().added_data_files(table.io())  # type: ignore[union-attr]
    assert all(f.file_path.startswith(new_location) or new_location in f.file_path for f in data)
    assert table.new_scan().to_arrow().num_rows == 3
    with pytest.raises(ValidationError):
        table.update_location().set_location("")
    assert table.update_location().apply() == new_location


def _stats(snapshot_id: int, path: str) -> StatisticsFile:
    return StatisticsFile(
        snapshot_id,
        path,
        100,
        20,
        (BlobMetadata("apache-datasketches-theta-v1", snapshot_id, 1, (1,), {"ndv": "3"}),),
    )


def test_update_statistics(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    s1 = table.append(rows(2)).snapshot_id  # type: ignore[union-attr]
    s2 = table.append(rows(2, start=5)).snapshot_id  # type: ignore[union-attr]
    result = (
        table.update_statistics()
        .set_statistics(_stats(s1, "/s1.puffin"))
        .set_statistics(_stats(s2, "/s2.puffin"))
        .apply()
    )
    assert [f.snapshot_id for f in result] == [s1, s2]
    assert table.statistics_files() == []
    table.update_statistics().set_statistics(_stats(s1, "/s1.puffin")).set_statistics(
        _stats(s2, "/s2.puffin")
    ).commit()
    loaded = catalog.load_table("db.t")
    assert loaded.statistics_files() == [_stats(s1, "/s1.puffin"), _stats(s2, "/s2.puffin")]
    # Replacing one snapshot's file, and removing another's; the last call per snapshot wins.
    table.update_statistics().remove_statistics(s1).set_statistics(_stats(s2, "/s2b.puffin")).set_statistics(
        _stats(s1, "/ignored.puffin")
    ).remove_statistics(s1).commit()
    assert catalog.load_table("db.t").statistics_files() == [_stats(s2, "/s2b.puffin")]
    with pytest.raises(ValidationError):
        table.update_statistics().set_statistics("x")  # type: ignore[arg-type]


def test_update_partition_statistics(catalog: Catalog) -> None:
    table = catalog.create_table("db.t", ARROW_SCHEMA)
    s1 = table.append(rows(2)).snapshot_id  # type: ignore[union-attr]
    s2 = table.append(rows(2, start=5)).snapshot_id  # type: ignore[union-attr]
    txn = table.new_transaction()
    txn.update_partition_statistics().set_partition_statistics(
        PartitionStatisticsFile(s1, "/p1.parquet", 10)
    ).set_partition_statistics(PartitionStatisticsFile(s2, "/p2.parquet", 20)).commit()
    txn.commit_transaction()
    loaded = catalog.load_table("db.t")
    assert loaded.partition_statistics_files() == [
        PartitionStatisticsFile(s1, "/p1.parquet", 10),
        PartitionStatisticsFile(s2, "/p2.parquet", 20),
    ]
    result = table.update_partition_statistics().remove_partition_statistics(s1).apply()
    assert result == [PartitionStatisticsFile(s2, "/p2.parquet", 20)]
    table.update_partition_statistics().remove_partition_statistics(s1).commit()
    assert catalog.load_table("db.t").partition_statistics_files() == result
