"""The README's Python snippets run as pasted (in a fresh directory, with no user configuration).

Snippets that need Spark (they use ``spark`` or ``isp``) run with the Spark tests' engines,
not here: this file starts no JVM.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
PLAIN = [block for block in BLOCKS if not re.search(r"\b(spark|isp)\b", block)]


def test_the_readme_has_plain_python_snippets() -> None:
    assert PLAIN, "no Python snippet without Spark found in README.md"


@pytest.mark.parametrize("snippet", PLAIN, ids=lambda s: s.strip().splitlines()[-1][:40])
def test_snippet_runs_as_pasted(snippet: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICEFLOE_CONFIG", str(tmp_path / "no-such-config.yaml"))
    for name in [n for n in os.environ if n.startswith("ICEFLOE_CATALOG__")]:
        monkeypatch.delenv(name)
    exec(compile(snippet, str(README), "exec"), {"__name__": "__readme__"})
