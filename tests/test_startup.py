"""What starting icefloe imports, read from ``sys.modules`` of a fresh interpreter (not timed:
the structure that keeps the start fast, see ARCHITECTURE.md "Imports"; ``bench/startup.py``
measures the times).

- ``import icefloe``: the standard library and a few icefloe modules, nothing else;
- ``icefloe --help``: no catalog, no SQLAlchemy, no pyarrow;
- ``icefloe list`` and ``icefloe describe`` on the embedded catalog: SQLAlchemy, not pyarrow
  (nor numpy, fastavro, the REST client, Spark, a YAML parser without a configuration file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
import icefloe.backends
import icefloe.table

SRC = Path(__file__).resolve().parents[1] / "src"

# Runs in the child: ``import icefloe`` (no arguments) or the icefloe command with the given
# arguments, then writes the exit code and the imported modules as JSON to the file named last.
PROBE = """
import json, sys
*args, out = sys.argv[1:]
code = 0
if args == ["--import"]:
    import icefloe
else:
    sys.argv = ["icefloe", *args]
    from icefloe.cli import main
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

#: Libraries no look at a table's metadata needs.
HEAVY = {
    "pyarrow",
    "numpy",
    "fastavro",
    "httpx",
    "pyspark",
    "pandas",
    "polars",
    "duckdb",
    "starlette",
    "sqlglot",
}


def _environment() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ICEFLOE_CATALOG") and k != "ICEFLOE_CLI_CATALOG"
    }
    env["ICEFLOE_CONFIG"] = os.devnull
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _imported(cwd: Path, *args: str) -> tuple[set[str], str]:
    """The modules a fresh interpreter has imported after running ``args``, and its stdout."""
    out = cwd / "probe.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args, str(out)],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["code"] == 0, (args, done.stdout, done.stderr)
    return set(found["modules"]), done.stdout


def _libraries(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def _baseline(cwd: Path) -> set[str]:
    """What the interpreter imports by itself here (site hooks of the venv included)."""
    out = cwd / "baseline.json"
    code = f"import json, sys; json.dump(sorted(sys.modules), open({str(out)!r}, 'w'))"
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_environment(), check=True, timeout=60)
    return set(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose ./warehouse holds the embedded catalog with db.t (one snapshot)."""
    folder = tmp_path_factory.mktemp("startup")
    catalog = icefloe.load_catalog("default", type="sql", warehouse=str(folder / "warehouse"))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]), partition_by=["id"])
    table.append(pa.table({"id": [1, 2, 3]}))
    catalog.close()
    return folder


def test_import_icefloe_imports_only_the_standard_library(tmp_path: Path) -> None:
    modules, _ = _imported(tmp_path, "--import")
    added = modules - _baseline(tmp_path)
    foreign = {
        m for m in added if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "icefloe"
    }
    assert not foreign, f"import icefloe imports {sorted(foreign)}"
    assert not {"icefloe.catalog", "icefloe.table", "icefloe.backends", "icefloe.expressions"} & modules


def test_help_imports_no_catalog(tmp_path: Path) -> None:
    modules, stdout = _imported(tmp_path, "--help")
    assert "describe" in stdout and "compact" in stdout
    assert not (HEAVY | {"sqlalchemy", "yaml"}) & _libraries(modules)
    assert (
        not {"icefloe.catalog", "icefloe.table", "icefloe.backends", "icefloe.actions", "icefloe.rest"}
        & modules
    )


@pytest.mark.parametrize(
    ("args", "shown"),
    [(["list"], "db"), (["list", "db"], "db.t"), (["describe", "db.t"], "identity(id)")],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_looking_at_the_embedded_catalog_imports_no_pyarrow(
    embedded: Path, args: list[str], shown: str
) -> None:
    modules, stdout = _imported(embedded, *args)
    assert shown in stdout
    assert "sqlalchemy" in _libraries(modules)  # it did read the catalog
    assert not (HEAVY | {"yaml"}) & _libraries(modules), sorted(HEAVY & _libraries(modules))
    assert not {"icefloe.manifests", "icefloe.scan", "icefloe.arrow", "icefloe.backends.rest"} & modules


@pytest.mark.parametrize("package", [icefloe, icefloe.backends, icefloe.table], ids=lambda p: p.__name__)
def test_lazy_names_are_all_there(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert set(names) <= set(dir(package))
    for name in names:
        assert getattr(package, name) is not None, name
    with pytest.raises(AttributeError):
        package.no_such_name  # type: ignore[attr-defined]  # noqa: B018
