"""A long-lived reference-engine server speaking line-delimited JSON on stdin/stdout.

    python serve.py java|pyiceberg|duckdb

Runs inside the engine's own virtual environment (see ``tests/interop/engines.py``), so it must
not import icefloe; it imports ``normalize.py`` from the folder above.

Protocol: once the engine is up the server writes one line ``{"ready": true, "engine": ...,
"versions": {...}, "startup_seconds": ...}`` (or ``{"ready": false, "error": {...}}`` and exits).
Then each request line ``{"id": N, "op": OP, "args": {...}}`` gets one response line
``{"id": N, "ok": true, "result": ...}`` or ``{"id": N, "ok": false, "error": {"type", "message",
"traceback"}}``. Ops:

- ``ping``: ``"pong"``.
- ``read``: args ``table`` (a metadata JSON file), ``snapshot_id``, ``where`` (in the engine's own
  filter language: Spark SQL, a PyIceberg row-filter string, DuckDB SQL), ``columns`` (a list);
  returns ``columns``, ``rows`` (normalised, sorted), ``current_snapshot_id``, ``snapshot_ids``.
- ``exec``: args ``code`` and ``params``: runs the code with the engine's objects and the params
  as variables and returns the normalised value of the variable ``result`` (``None`` if unset).
- java only: ``sql`` (args ``statements``, ``sort``) returns the last statement's ``columns`` and
  ``rows``; ``hadoop_catalog`` (args ``warehouse``, ``name``) registers a Hadoop catalog.
- ``shutdown``: answers, then stops the engine and exits.

Everything the engine (or exec'd code) prints goes to stderr: the protocol owns stdout.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
import traceback
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))

import normalize  # noqa: E402  (the folder above is put on sys.path first)

MAX_MESSAGE_LINES = 40


def _exception_message(exc: BaseException) -> str:
    """The engine's own words about a failure, without JVM stack frames."""
    java = getattr(exc, "java_exception", None)
    if java is not None:  # a Py4JJavaError: the Java exception and its causes
        parts = []
        while java is not None and len(parts) < 8:
            parts.append(str(java.toString()))
            java = java.getCause()
        text = "\ncaused by: ".join(parts)
    else:
        text = str(exc)
    if not text.strip():
        text = repr(exc)
    lines = [line for line in text.strip().splitlines() if not line.lstrip().startswith("at ")]
    if len(lines) > MAX_MESSAGE_LINES:
        lines = [*lines[:MAX_MESSAGE_LINES], f"... ({len(lines) - MAX_MESSAGE_LINES} more lines)"]
    return "\n".join(lines)


def _error(exc: BaseException) -> dict[str, str]:
    return {
        "type": type(exc).__name__,
        "message": _exception_message(exc),
        "traceback": "".join(traceback.format_exception(exc))[-8000:],
    }


def _read_result(columns: list[str], rows: list[Any], meta_path: str, snapshot_ids: list[int]) -> dict:
    opener = gzip.open if meta_path.endswith(".gz.metadata.json") else open
    with opener(meta_path, "rt", encoding="utf-8") as f:
        meta = json.load(f)
    current = meta.get("current-snapshot-id")
    if current == -1:  # v1 tables written by old Java versions use -1 for "no snapshot"
        current = None
    return {
        "columns": list(columns),
        "rows": normalize.normalize_rows(rows),
        "current_snapshot_id": current,
        "snapshot_ids": sorted(int(s) for s in snapshot_ids),
    }


class _Engine:
    name = "?"

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def versions(self) -> dict[str, str]:
        return {"python": sys.version.split()[0]}

    def namespace(self) -> dict[str, Any]:
        return {
            "json": json,
            "os": os,
            "state": self.state,
            "normalize_value": normalize.normalize_value,
            "normalize_rows": normalize.normalize_rows,
        }

    def op_ping(self) -> str:
        return "pong"

    def op_exec(self, code: str, params: dict[str, Any] | None = None) -> Any:
        scope = self.namespace()
        scope.update(params or {})
        scope["result"] = None
        exec(compile(code, "<exec>", "exec"), scope)
        return normalize.normalize_value(scope["result"])

    def op_read(
        self,
        table: str,
        snapshot_id: int | None = None,
        where: str | None = None,
        columns: list[str] | None = None,
    ) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        pass


class JavaEngine(_Engine):
    """Apache Iceberg (Java) on Spark, through PySpark."""

    name = "java"

    def __init__(self, workdir: str) -> None:
        super().__init__()
        import glob

        import snowpark_connect_deps_iceberg as deps
        from pyspark.sql import SparkSession

        pattern = os.path.join(os.path.dirname(deps.__file__), "jars", "iceberg-spark-runtime-3.5_2.12-*.jar")
        jars = sorted(glob.glob(pattern))
        if not jars:
            raise RuntimeError(f"no Iceberg Spark runtime jar matches {pattern}")
        self.jar = jars[-1]
        self.catalogs = 0
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        builder = (
            SparkSession.builder.master("local[2]")
            .appName("icefloe-interop")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.memory", os.environ.get("ICEFLOE_SPARK_DRIVER_MEMORY", "2g"))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.default.parallelism", "2")
            .config("spark.sql.warehouse.dir", os.path.join(workdir, "spark-warehouse"))
            .config("spark.local.dir", os.path.join(workdir, "spark-local"))
            .config("spark.jars", self.jar)
            .config(
                "spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            )
        )
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self.spark.sql("SELECT 1").collect()  # warm up the SQL machinery

    def versions(self) -> dict[str, str]:
        import pyspark

        return {
            **super().versions(),
            "spark": self.spark.version,
            "pyspark": pyspark.__version__,
            "iceberg_jar": os.path.basename(self.jar),
        }

    def namespace(self) -> dict[str, Any]:
        return {
            **super().namespace(),
            "spark": self.spark,
            "sc": self.spark.sparkContext,
            "jvm": self.spark._jvm,
        }

    def op_hadoop_catalog(self, warehouse: str, name: str | None = None) -> str:
        if name is None:
            self.catalogs += 1
            name = f"h{self.catalogs}"
        prefix = f"spark.sql.catalog.{name}"
        self.spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        self.spark.conf.set(f"{prefix}.type", "hadoop")
        self.spark.conf.set(f"{prefix}.warehouse", os.path.abspath(warehouse))
        # Other writers (icefloe) commit between statements: never serve a cached table.
        self.spark.conf.set(f"{prefix}.cache-enabled", "false")
        return name

    def op_rest_catalog(self, uri: str, name: str | None = None, credential: str | None = None) -> str:
        """A catalog named NAME (``r1``, ``r2``... by default) on the REST server at URI."""
        if name is None:
            self.catalogs += 1
            name = f"r{self.catalogs}"
        prefix = f"spark.sql.catalog.{name}"
        self.spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
        self.spark.conf.set(f"{prefix}.type", "rest")
        self.spark.conf.set(f"{prefix}.uri", uri)
        self.spark.conf.set(f"{prefix}.cache-enabled", "false")
        if credential:
            self.spark.conf.set(f"{prefix}.credential", credential)
        return name

    def op_sql(self, statements: list[str], sort: bool = True) -> dict:
        last = None
        for statement in statements:
            last = self.spark.sql(statement)
        if last is None:
            return {"columns": [], "rows": []}
        rows = [list(r) for r in last.collect()]
        return {"columns": list(last.columns), "rows": normalize.normalize_rows(rows, sort=sort)}

    def op_read(
        self,
        table: str,
        snapshot_id: int | None = None,
        where: str | None = None,
        columns: list[str] | None = None,
    ) -> dict:
        reader = self.spark.read.format("iceberg")
        if snapshot_id is not None:
            reader = reader.option("snapshot-id", str(snapshot_id))
        df = reader.load(table)
        if where:
            df = df.where(where)
        if columns:
            df = df.select(*columns)
        rows = [list(r) for r in df.collect()]
        snaps = self.spark.read.format("iceberg").load(table + "#snapshots").select("snapshot_id").collect()
        return _read_result(df.columns, rows, table, [r[0] for r in snaps])

    def close(self) -> None:
        self.spark.stop()


class PyIcebergEngine(_Engine):
    """PyIceberg, reading through its own scan planning into Arrow."""

    name = "pyiceberg"

    def __init__(self, workdir: str) -> None:
        super().__init__()
        import pyiceberg.table  # noqa: F401  (import errors surface at start-up)

    def versions(self) -> dict[str, str]:
        import pyarrow
        import pyiceberg

        return {**super().versions(), "pyiceberg": pyiceberg.__version__, "pyarrow": pyarrow.__version__}

    def namespace(self) -> dict[str, Any]:
        import pyarrow
        import pyiceberg
        from pyiceberg.table import StaticTable

        return {
            **super().namespace(),
            "pyiceberg": pyiceberg,
            "StaticTable": StaticTable,
            "pa": pyarrow,
            "arrow_rows": normalize.arrow_rows,
            "normalize_arrow": normalize.normalize_arrow,
        }

    def op_read(
        self,
        table: str,
        snapshot_id: int | None = None,
        where: str | None = None,
        columns: list[str] | None = None,
    ) -> dict:
        from pyiceberg.table import StaticTable

        tbl = StaticTable.from_metadata(table)
        scan = tbl.scan(
            row_filter=where or "True",
            selected_fields=tuple(columns) if columns else ("*",),
            snapshot_id=snapshot_id,
        )
        arrow = scan.to_arrow()
        if columns:  # PyIceberg returns the selected fields in schema order
            arrow = arrow.select(columns)
        rows = normalize.arrow_rows(arrow)
        snapshot_ids = [s.snapshot_id for s in tbl.metadata.snapshots]
        return _read_result(arrow.column_names, rows, table, snapshot_ids)


class DuckDBEngine(_Engine):
    """DuckDB with its iceberg extension (C++), loaded from the duckdb-extension-* packages."""

    name = "duckdb"

    def __init__(self, workdir: str) -> None:
        super().__init__()
        import importlib

        import duckdb

        self.duckdb = duckdb
        self.con = duckdb.connect(
            config={
                "allow_unsigned_extensions": "true",
                "autoinstall_known_extensions": "false",
                "autoload_known_extensions": "false",
            }
        )
        for ext in ("avro", "iceberg"):
            module = importlib.import_module(f"duckdb_extension_{ext}")
            folder = os.path.join(os.path.dirname(module.__file__), "extensions")
            files = sorted(
                os.path.join(root, f)
                for root, _, fs in os.walk(folder)
                for f in fs
                if f.endswith(".duckdb_extension")
            )
            if not files:
                raise RuntimeError(f"no .duckdb_extension file under {folder}")
            self.con.execute(f"LOAD {_sql_str(files[0])}")
        self.con.execute("SET TimeZone = 'UTC'")

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "duckdb": self.duckdb.__version__}

    def op_rest_attach(self, endpoint: str, name: str, httpfs: str) -> str:
        """ATTACH the REST catalog at ENDPOINT as NAME; HTTPFS is the folder of the httpfs
        extension (the iceberg extension needs it for REST catalogs)."""
        if not getattr(self, "httpfs_loaded", False):
            files = sorted(
                os.path.join(root, f)
                for root, _, fs in os.walk(httpfs)
                for f in fs
                if f.endswith(".duckdb_extension")
            )
            if not files:
                raise RuntimeError(f"no httpfs .duckdb_extension file under {httpfs}")
            self.con.execute(f"LOAD {_sql_str(files[0])}")
            self.httpfs_loaded = True
        self.con.execute(
            f"ATTACH 'warehouse' AS {name} (TYPE iceberg, ENDPOINT {_sql_str(endpoint)}, AUTHORIZATION_TYPE 'none')"
        )
        return name

    def namespace(self) -> dict[str, Any]:
        return {**super().namespace(), "duckdb": self.duckdb, "con": self.con}

    def op_read(
        self,
        table: str,
        snapshot_id: int | None = None,
        where: str | None = None,
        columns: list[str] | None = None,
    ) -> dict:
        opts = f", snapshot_from_id => {int(snapshot_id)}" if snapshot_id is not None else ""
        cols = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
        query = f"SELECT {cols} FROM iceberg_scan({_sql_str(table)}{opts})"
        if where:
            query += f" WHERE {where}"
        rel = self.con.sql(query)
        names = list(rel.columns)
        rows = [list(r) for r in rel.fetchall()]
        snaps = self.con.sql(f"SELECT snapshot_id FROM iceberg_snapshots({_sql_str(table)})").fetchall()
        return _read_result(names, rows, table, [r[0] for r in snaps])

    def close(self) -> None:
        self.con.close()


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


ENGINES = {"java": JavaEngine, "pyiceberg": PyIcebergEngine, "duckdb": DuckDBEngine}


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in ENGINES:
        print(f"usage: serve.py {'|'.join(ENGINES)}", file=sys.stderr)
        return 2
    # The protocol owns the original stdout; everything else printing to fd 1 (the JVM included,
    # which inherits it) lands in stderr, i.e. the server's log.
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(message: dict) -> None:
        proto.write(json.dumps(message, allow_nan=False) + "\n")
        proto.flush()

    started = time.monotonic()
    try:
        engine = ENGINES[sys.argv[1]](os.getcwd())
        versions = engine.versions()
    except BaseException as exc:
        traceback.print_exc()
        send({"ready": False, "error": _error(exc)})
        return 1
    send(
        {
            "ready": True,
            "engine": engine.name,
            "versions": versions,
            "pid": os.getpid(),
            "startup_seconds": round(time.monotonic() - started, 3),
        }
    )

    for line in sys.stdin:
        if not line.strip():
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            op = request["op"]
            if op == "shutdown":
                send({"id": request_id, "ok": True, "result": None})
                break
            handler = getattr(engine, f"op_{op}", None)
            if handler is None:
                raise ValueError(f"the {engine.name} engine does not support '{op}'")
            started = time.monotonic()
            result = handler(**request.get("args", {}))
            send(
                {
                    "id": request_id,
                    "ok": True,
                    "result": result,
                    "seconds": round(time.monotonic() - started, 4),
                }
            )
        except Exception as exc:
            traceback.print_exc()
            try:
                send({"id": request_id, "ok": False, "error": _error(exc)})
            except Exception as exc2:  # e.g. a result that is not JSON
                send({"id": request_id, "ok": False, "error": _error(exc2)})
    try:
        engine.close()
    except Exception:
        traceback.print_exc()
    return 0


if __name__ == "__main__":
    sys.exit(main())
