"""Spark on a REST catalog's table on S3 where the only storage credentials are the ones the
server vends: they reach the tasks inside the pickled FileIO (no environment variables on the
executors), expired ones are renewed in the tasks, and no secret shows in plans, job
descriptions or tags, or the driver's log."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icefloe
from icefloe import spark as isp
from support.vended import PAST_RENEWAL_S, SECRET, Served, vended_rest_server


@pytest.fixture(scope="module")
def served(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with vended_rest_server(moto_endpoint, tmp_path_factory.mktemp("vended-spark")) as done:
        yield done


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _frame(spark: Any, start: int, n: int) -> Any:
    return spark.createDataFrame([(i, f"r{i}") for i in range(start, start + n)], "id bigint, name string")


@pytest.mark.every_session
def test_spark_reads_and_writes_through_vended_credentials_only(
    spark: Any, served: Served, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="icefloe")
    catalog = served.client(token="client-token-" + SECRET)
    catalog.create_namespace_if_not_exists("static")
    table = catalog.create_table("static.spark_t", SCHEMA)
    isp.write(_frame(spark, 0, 200).repartition(2), table)  # icefloe's writer in the tasks

    # The data source reads in its own Python workers: the registered catalog travels pickled.
    isp.register(spark, catalogs={"vended": catalog})
    read = spark.read.format("icefloe").option("catalog", "vended").load("static.spark_t")
    assert sorted(r.id for r in read.collect()) == list(range(200))

    read.explain(mode="extended")
    plans = capsys.readouterr().out
    assert "static.spark_t" in plans or "icefloe" in plans
    context = spark.sparkContext if hasattr(spark, "sparkContext") else None
    shown = [plans, caplog.text, repr(catalog), repr(table.io())]
    if context is not None:  # classic sessions: what icefloe leaves in the job's properties
        shown += [
            str(context.getLocalProperty("spark.job.description")),
            str(context.getLocalProperty("spark.job.tags")),
        ]
    shown += [str(spark.getTags())]
    assert not [text for text in shown if SECRET in text]
    # Every S3 request was signed with a key the server vended for this table.
    used = {key for key, count in served.gate.seen.items() if count}
    assert {k for k in used if k and k.startswith("vended-spark_t-")}
    assert served.gate.refused.get(None, 0) == 0


def test_expired_vended_credentials_are_renewed_in_the_tasks(spark: Any, served: Served) -> None:
    catalog = served.client()
    catalog.create_namespace_if_not_exists("expiring")
    table = catalog.create_table("expiring.spark_t", SCHEMA)
    vendor = served.vendors["expiring"]
    time.sleep(PAST_RENEWAL_S)  # the table's FileIO now holds a key due for renewal
    calls = vendor.calls
    isp.write(_frame(spark, 0, 100).repartition(2), table)
    assert vendor.calls > calls  # renewed (by the driver or the tasks), nothing refused
    isp.register(spark, catalogs={"vended": catalog})
    read = spark.read.format("icefloe").option("catalog", "vended").load("expiring.spark_t")
    assert read.count() == 100


def test_isp_read_plans_show_no_catalog_secret(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A local table whose catalog holds secrets (unused for local files): the plan of
    # isp.read names files and columns, never a property.
    secrets = {"s3.secret-access-key": SECRET, "s3.session-token": SECRET + "-session", "token": SECRET}
    catalog = icefloe.load_catalog("local_secrets", type="sql", warehouse=str(tmp_path / "wh"), **secrets)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", SCHEMA)
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]}))
    frame = isp.read(spark, table)
    frame.explain(mode="extended")
    plans = capsys.readouterr().out
    assert "Relation" in plans or "Scan" in plans
    assert SECRET not in plans
    if hasattr(frame, "_jdf"):  # classic: the query execution's own text too
        assert SECRET not in frame._jdf.queryExecution().toString()
    catalog.close()
