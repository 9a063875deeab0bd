"""A Spark driver killed (SIGKILL) in the middle of a write and of a MERGE on an S3 table (moto's
server on 127.0.0.1): the table stays readable, every file it references is in the bucket, no
batch is half there, and the next commit goes through.

The driver is a separate process (its own Spark session) so that it can be killed as a crashed
driver is: the whole process group at once, JVM included, without a chance to clean up. Its
jobs are slowed in their tasks so that the kill lands while tasks are writing files.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from support.s3_tables import referenced_locations, stored_locations

pytestmark = pytest.mark.slow

_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])

# Run by the killed driver: the catalog's properties arrive as JSON in argv[1], the step in
# argv[2]. It prints "started" when the slow job begins; its tasks take a few seconds each.
_DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import icefloe
    from icefloe import spark as isp

    properties, step = json.loads(sys.argv[1]), sys.argv[2]
    catalog = icefloe.load_catalog("killed", **properties)
    table = catalog.load_table("db.t")
    spark = isp.local_session("local[2]", app_name="killed-driver")

    def slow(batches):
        for batch in batches:
            time.sleep(3)  # the kill lands here, while tasks hold open files
            yield batch

    rows = spark.range(1000, 1400).selectExpr("id", "concat('new-', id) AS v").repartition(4)
    slowed = rows.mapInArrow(slow, rows.schema)
    print("started", flush=True)
    if step == "write":
        isp.write(slowed, table)
    else:
        isp.merge_into(slowed, table, "t.id = s.id").when_not_matched().insert_all().merge()
    print("committed", flush=True)
    """
)


def _kill_while_running(properties: dict[str, str], step: str, tmp_path: Path) -> None:
    """Start the driver, wait until its slow job runs and its tasks have begun, SIGKILL its
    process group."""
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    log = tmp_path / "driver.log"
    with log.open("w") as errors:
        driver = subprocess.Popen(
            [sys.executable, str(script), json.dumps(properties), step],
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
            start_new_session=True,  # its own process group: the JVM dies with it
            text=True,
        )
    assert driver.stdout is not None
    with driver.stdout:
        try:
            line = driver.stdout.readline()
            time.sleep(2.5)  # tasks are running: each sleeps 3 s before writing its batch
            running = driver.poll() is None
        finally:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
    tail = log.read_text()[-3000:]
    assert line.strip() == "started", f"the driver did not start its job (printed {line!r}):\n{tail}"
    assert running, f"the driver ended before it could be killed:\n{tail}"


@pytest.mark.parametrize("step", ["write", "merge"])
def test_a_killed_driver_leaves_the_table_whole(
    s3_properties: dict[str, str], tmp_path: Path, step: str
) -> None:
    catalog_properties = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
        "warehouse": f"s3://{s3_properties['test.bucket']}/wh",
        **{k: v for k, v in s3_properties.items() if k != "test.bucket"},
    }
    catalog = icefloe.load_catalog("killed", **catalog_properties)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", _SCHEMA, properties={"write.merge.mode": "merge-on-read"})
    before = pa.table({"id": list(range(100)), "v": [f"old-{i}" for i in range(100)]}, schema=_SCHEMA)
    table.append(before)
    snapshot = table.current_snapshot()

    _kill_while_running(catalog_properties, step, tmp_path)

    table = catalog.load_table("db.t")
    # Nothing was committed: the table is as it was, no batch half there.
    assert table.current_snapshot() == snapshot
    assert table.new_scan().to_arrow().sort_by("id").equals(before)
    assert referenced_locations(table) | {table.metadata_location} <= stored_locations(
        s3_properties, "wh/db/t/"
    )
    # The next commit goes through.
    table.append(pa.table({"id": [500], "v": ["after"]}, schema=_SCHEMA))
    assert table.new_scan().to_arrow().num_rows == 101
