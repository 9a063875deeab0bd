"""Every benchmark under bench/ still imports: the code it reaches into moves as icefloe grows
(the PyIceberg helpers run in the engine's own venv and are left out)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_pyiceberg"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_the_benchmark_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    if not script.name.startswith("_"):  # the helpers (_planning_tables.py, ...) are imported
        assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
