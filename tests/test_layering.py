"""The layer contract of ARCHITECTURE.md, checked on the source tree with ``ast``.

Layers, bottom to top (imports point down only)::

    L0  errors, _util          (errors is the floor: _util may import errors, not the reverse)
    L1  spec
    L2  expressions, serde
    L3  io, arrow
    L4  manifests, write
    L5  scan, backends         (catalog backends: where metadata pointers live)
    L6  table
    L7  catalog                (the user-facing Catalog and load_catalog)
    L8  actions                (maintenance without Spark; the CLI runs it)
    L9  spark, cli, rest
    top icefloe/__init__.py and every top-level module file (icefloe/demo.py, re-export shims
        such as icefloe/types.py)

A module violates the contract when it

- imports a higher layer (``import icefloe`` itself counts as the top layer),
- imports a sibling package on its own layer (``scan`` -> ``catalog``),
- is in ``spec``, ``expressions`` or ``backends`` and imports pyarrow, pyspark or another engine
  library (pandas, polars, duckdb), anywhere in the module,
- imports an icefloe module inside a function body (the way to hide a cycle) without saying
  why: a deliberate lazy import, which keeps a heavy dependency (pyarrow, SQLAlchemy, fastavro)
  off the paths that do not need it, carries a ``# lazy: <what it defers>`` comment on its
  statement. A lazy import obeys every other rule (it points down or inside its own package)
  and counts in the cycle check like any import, so it cannot hide a cycle. A ``# lazy:``
  marker on a module-level import is an error (it defers nothing). Top-level module files
  (``icefloe/__init__.py``, ``icefloe/demo.py``) are exempt; packages on the top layer
  (``cli``) are not.

``importlib.import_module("icefloe...")`` and ``__import__("icefloe...")`` with a literal name
count as imports. A new top-level package must be added to the map below (and ARCHITECTURE.md).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "icefloe"
ROOT_PACKAGE = "icefloe"

TOP = 10
LAYERS: dict[str, int] = {
    "errors": 0,
    "_util": 0,
    "spec": 1,
    "expressions": 2,
    "serde": 2,
    "io": 3,
    "arrow": 3,
    "manifests": 4,
    "write": 4,
    "scan": 5,
    "backends": 5,
    "table": 6,
    "catalog": 7,
    "actions": 8,
    "spark": 9,
    "cli": 10,
    "rest": 9,
    "_demo": TOP,  # the main job's parts (icefloe.demo is its entry point)
}
# (importer, imported) pairs on one layer that are allowed: errors is the floor of L0.
ALLOWED_SIBLINGS = {("_util", "errors")}
PURE_PARTS = {"spec", "expressions", "backends"}
ENGINE_LIBRARIES = {"pyarrow", "pyspark", "pandas", "polars", "duckdb"}
LAZY_MARKER = re.compile(r"#\s*lazy:\s*\S")


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. icefloe.spec.types
    path: Path
    is_package: bool  # an __init__.py

    @property
    def part(self) -> str:
        """The first component below the root: ``spec`` for icefloe.spec.types, ``""`` for icefloe."""
        pieces = self.name.split(".")
        return pieces[1] if len(pieces) > 1 else ""


def _discover(src: Path) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        pieces = [ROOT_PACKAGE, *rel.parts]
        is_package = pieces[-1] == "__init__"
        if is_package:
            pieces = pieces[:-1]
        name = ".".join(pieces)
        modules[name] = Module(name, path, is_package)
    return modules


def _layer_of(part: str, src: Path) -> int | None:
    """The layer of a top-level part; ``None`` for an unknown package."""
    if part == "":
        return TOP
    if part in LAYERS:
        return LAYERS[part]
    if (src / f"{part}.py").is_file():
        return TOP  # a top-level module file: demo, a re-export shim
    return None


def _is_top_level_module(module: Module, src: Path) -> bool:
    """icefloe/__init__.py or a module file next to it (icefloe/demo.py), not a package (cli)."""
    return module.part == "" or (src / f"{module.part}.py").is_file()


def _layer_name(layer: int) -> str:
    return "top" if layer == TOP else f"L{layer}"


def _resolve_relative(module: Module, level: int, target: str | None) -> str:
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join([*package, target] if target else package)


@dataclass(frozen=True)
class _Import:
    target: str  # dotted module name
    line: int
    in_function: bool
    lazy: bool = False  # the statement carries a ``# lazy: ...`` comment


class _ImportCollector(ast.NodeVisitor):
    def __init__(self, module: Module, known: set[str], lines: list[str] | None = None) -> None:
        self.module = module
        self.known = known
        self.lines = lines or []  # the source, for ``# lazy:`` markers
        self.depth = 0  # function nesting
        self.found: list[_Import] = []

    def _add(self, target: str, node: ast.AST) -> None:
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", None) or first
        lazy = any(LAZY_MARKER.search(line) for line in self.lines[max(first - 1, 0) : last])
        self.found.append(_Import(target, first, self.depth > 0, lazy))

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = _resolve_relative(self.module, node.level, node.module) if node.level else (node.module or "")
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self._add(candidate if candidate in self.known else base, node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in {"import_module", "__import__"} and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                target = first.value
                if target.startswith("."):
                    stripped = target.lstrip(".")
                    target = _resolve_relative(self.module, len(target) - len(stripped), stripped or None)
                self._add(target, node)
        self.generic_visit(node)


def check_layers(src: Path = SRC) -> list[str]:
    """Every violation of the layer contract under SRC, as ``path:line: message`` lines."""
    modules = _discover(src)
    known = set(modules)
    problems: list[str] = []
    for module in modules.values():
        where = module.path.relative_to(src.parent.parent if src == SRC else src.parent)
        own = _layer_of(module.part, src)
        if own is None:
            problems.append(
                f"{where}:1: package icefloe.{module.part} is not in the layer map "
                "(add it to tests/test_layering.py and ARCHITECTURE.md)"
            )
            continue
        text = module.path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text, filename=str(module.path))
        except SyntaxError as exc:
            problems.append(f"{where}:{exc.lineno}: cannot parse: {exc.msg}")
            continue
        collector = _ImportCollector(module, known, text.splitlines())
        collector.visit(tree)
        for imp in collector.found:
            pieces = imp.target.split(".")
            prefix = f"{where}:{imp.line}: {module.name} ({_layer_name(own)})"
            if imp.lazy and not imp.in_function:
                problems.append(f"{prefix} marks a module-level import of {imp.target} lazy")
            if pieces[0] != ROOT_PACKAGE:
                if module.part in PURE_PARTS and pieces[0] in ENGINE_LIBRARIES:
                    problems.append(
                        f"{prefix} imports {pieces[0]}: icefloe.{module.part} stays free of "
                        "engine libraries (Arrow code lives in icefloe.arrow)"
                    )
                continue
            part = pieces[1] if len(pieces) > 1 else ""
            if imp.in_function and not imp.lazy and not _is_top_level_module(module, src):
                problems.append(
                    f"{prefix} imports {imp.target} inside a function: import at module level (a "
                    "cycle means a layer is wrong), or mark a deliberate lazy import '# lazy: <why>'"
                )
            if part == module.part and own != TOP:
                continue  # inside its own package
            theirs = _layer_of(part, src)
            if theirs is None:
                problems.append(f"{prefix} imports {imp.target}, which is in no known layer")
            elif theirs > own:
                problems.append(f"{prefix} imports {imp.target} ({_layer_name(theirs)}), a higher layer")
            elif theirs == own and own != TOP and (module.part, part) not in ALLOWED_SIBLINGS:
                problems.append(f"{prefix} imports {imp.target}, a sibling package on the same layer")
    return problems


def import_cycles(src: Path = SRC) -> list[list[str]]:
    """Every cycle of imports between modules under SRC (type-only imports count: they tie the
    modules as tightly for a reader), as the sorted module names of each strongly connected
    component."""
    modules = _discover(src)
    known = set(modules)
    edges: dict[str, set[str]] = {}
    for module in modules.values():
        collector = _ImportCollector(module, known)
        collector.visit(ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path)))
        edges[module.name] = {imp.target for imp in collector.found if imp.target in known} - {module.name}
    # Tarjan's strongly connected components, iteratively (deep chains would hit the recursion limit).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycles() -> None:
    cycles = import_cycles()
    assert not cycles, "import cycles (type-only imports included):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles
    )


def test_the_source_tree_keeps_its_layers() -> None:
    problems = check_layers()
    assert not problems, "layer violations:\n" + "\n".join(problems)


MAX_MODULE_LINES = 700


def test_no_module_is_overgrown() -> None:
    """A module past 700 lines holds more than one concept: split it into a package."""
    long = {
        str(path.relative_to(SRC.parent)): lines
        for path in SRC.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_every_top_level_package_has_a_layer() -> None:
    unknown = [
        p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__" and p.name not in LAYERS
    ]
    assert not unknown, f"add these packages to the layer map: {unknown}"


# ----------------------------------------------------------------------------------------------
# the checker itself, on a synthetic tree

SYNTHETIC = {
    "__init__.py": "from icefloe.table import Table\n\ndef lazy():\n    import icefloe.spark\n",
    "demo.py": "import icefloe\nfrom icefloe.spark import session\n",
    "types.py": "from icefloe.spec.types import *  # noqa\n",
    "errors.py": "from icefloe._util import helper\n",
    "_util/__init__.py": "",
    "_util/helper.py": "from icefloe.errors import IcefloeError\nfrom ..errors import IcefloeError as E\n",
    "spec/__init__.py": "",
    "spec/types.py": "import pyarrow as pa\nfrom . import schema\nfrom icefloe.table import Table\n",
    "spec/schema.py": "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
    "if TYPE_CHECKING:\n    from icefloe.scan import Plan\n",
    "expressions/__init__.py": "from .visitors import bind\n",
    "expressions/visitors.py": "from icefloe.serde import json\n\ndef bind():\n    import pyspark\n",
    "serde/__init__.py": "",
    "serde/json.py": "from icefloe.spec import types\nfrom icefloe.spec.types import IntegerType\n",
    "io/__init__.py": "",
    "io/local.py": "def open_file():\n    from icefloe.spec import types\n",
    "arrow/__init__.py": "",
    "arrow/schema.py": "import pyarrow as pa\nfrom icefloe import errors, spec\n",
    "scan/__init__.py": "",
    "scan/planner.py": "from icefloe.backends import base\nimport importlib\n"
    "x = importlib.import_module('icefloe.table')\n",
    "backends/__init__.py": "",
    "backends/base.py": "from icefloe import Table\nimport sqlalchemy\nimport pandas\n",
    "table/__init__.py": "",
    "table/table.py": "from ..scan import planner\nfrom ..backends import base\nfrom ..spec.types import IntegerType\n",
    "mystery/__init__.py": "",
}


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    src = tmp_path / "icefloe"
    for name, text in SYNTHETIC.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return src


def test_the_cycle_finder_sees_type_only_cycles(synthetic: Path) -> None:
    (synthetic / "spec" / "schema.py").write_text(
        "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from icefloe.spec.types import X\n"
    )
    assert ["icefloe.spec.schema", "icefloe.spec.types"] in import_cycles(synthetic)


def test_the_checker_finds_each_kind_of_violation(synthetic: Path) -> None:
    assert sorted(check_layers(synthetic)) == [
        "icefloe/backends/base.py:1: icefloe.backends.base (L5) imports icefloe (top), a higher layer",
        "icefloe/backends/base.py:3: icefloe.backends.base (L5) imports pandas: icefloe.backends stays free of "
        "engine libraries (Arrow code lives in icefloe.arrow)",
        "icefloe/errors.py:1: icefloe.errors (L0) imports icefloe._util.helper, a sibling package on the same "
        "layer",
        "icefloe/expressions/visitors.py:1: icefloe.expressions.visitors (L2) imports icefloe.serde.json, "
        "a sibling package on the same layer",
        "icefloe/expressions/visitors.py:4: icefloe.expressions.visitors (L2) imports pyspark: "
        "icefloe.expressions stays free of engine libraries (Arrow code lives in icefloe.arrow)",
        "icefloe/io/local.py:2: icefloe.io.local (L3) imports icefloe.spec.types inside a function: "
        "import at module level (a cycle means a layer is wrong), or mark a deliberate lazy import "
        "'# lazy: <why>'",
        "icefloe/mystery/__init__.py:1: package icefloe.mystery is not in the layer map "
        "(add it to tests/test_layering.py and ARCHITECTURE.md)",
        "icefloe/scan/planner.py:1: icefloe.scan.planner (L5) imports icefloe.backends.base, a sibling "
        "package on the same layer",
        "icefloe/scan/planner.py:3: icefloe.scan.planner (L5) imports icefloe.table (L6), a higher layer",
        "icefloe/spec/schema.py:4: icefloe.spec.schema (L1) imports icefloe.scan (L5), a higher layer",
        "icefloe/spec/types.py:1: icefloe.spec.types (L1) imports pyarrow: icefloe.spec stays free of "
        "engine libraries (Arrow code lives in icefloe.arrow)",
        "icefloe/spec/types.py:3: icefloe.spec.types (L1) imports icefloe.table (L6), a higher layer",
    ]


def test_a_lazy_import_says_so_and_keeps_the_other_rules(synthetic: Path) -> None:
    (synthetic / "io" / "local.py").write_text(
        "def open_file():\n"
        "    from icefloe.spec import types  # lazy: the spec model, for the start time\n"
        "    from icefloe.scan import (  # lazy: still a higher layer\n"
        "        planner,\n"
        "    )\n"
        "from icefloe.spec import types  # lazy: nothing, at module level\n"
    )
    found = [p for p in check_layers(synthetic) if p.startswith("icefloe/io/")]
    assert found == [
        "icefloe/io/local.py:3: icefloe.io.local (L3) imports icefloe.scan.planner (L5), a higher layer",
        "icefloe/io/local.py:6: icefloe.io.local (L3) marks a module-level import of icefloe.spec.types lazy",
    ]


def test_a_lazy_import_cannot_hide_a_cycle(synthetic: Path) -> None:
    (synthetic / "spec" / "schema.py").write_text("from icefloe.spec import types\n")
    (synthetic / "spec" / "types.py").write_text(
        "def later():\n    from icefloe.spec import schema  # lazy: a cycle all the same\n"
    )
    assert ["icefloe.spec.schema", "icefloe.spec.types"] in import_cycles(synthetic)


def test_packages_on_the_top_layer_mark_their_lazy_imports(synthetic: Path) -> None:
    (synthetic / "cli").mkdir()
    (synthetic / "cli" / "__init__.py").write_text("")
    (synthetic / "cli" / "look.py").write_text(
        "def describe():\n    from icefloe.table import table\n"
        "def files():\n    from icefloe.table import table  # lazy: pyarrow\n"
    )
    found = [p for p in check_layers(synthetic) if p.startswith("icefloe/cli/")]
    assert found == [
        "icefloe/cli/look.py:2: icefloe.cli.look (top) imports icefloe.table.table inside a function: import at "
        "module level (a cycle means a layer is wrong), or mark a deliberate lazy import '# lazy: <why>'"
    ]
