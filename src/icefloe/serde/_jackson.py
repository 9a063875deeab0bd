"""JSON text as Java's Jackson writes it, so that icefloe's files match Java's byte for byte.

- :func:`compact`: Jackson's default generator (no whitespace), what Java 1.9 uses for table
  metadata files.
- :func:`pretty`: Jackson's ``DefaultPrettyPrinter``, what Java uses for the name mapping
  property (and what older Java versions used for metadata files): objects put each entry on its
  own line, indented two spaces per object level, ``"key" : value``; arrays stay on one line,
  ``[ a, b ]``, and do not indent; empty containers are ``{ }`` and ``[ ]``.

Strings are written as UTF-8 text (no ``\\u`` escapes for non-ASCII), control characters as
Jackson escapes them (``\\n``, ``\\t``, ... and ``\\u001F`` with upper-case hex).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["compact", "pretty"]

_encode_scalar = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
# An escaped backslash, or a control-character escape: Python writes its hex in lower case,
# Jackson in upper case (``\u001F``). Matching pairs of backslashes first keeps ``\\u00..``
# (a backslash followed by the text "u00..") untouched.
_ESCAPES = re.compile(r"\\(\\|u00[0-9a-f]{2})")


def _upper_hex(text: str) -> str:
    if "\\u00" not in text:
        return text
    return _ESCAPES.sub(
        lambda m: "\\u00" + m.group(1)[3:].upper() if m.group(1)[0] == "u" else m.group(0), text
    )


def _scalar(value: Any) -> str:
    return _upper_hex(_encode_scalar(value))


def compact(value: Any) -> str:
    return _upper_hex(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def pretty(value: Any) -> str:
    parts: list[str] = []
    _pretty(value, 0, parts)
    return "".join(parts)


def _pretty(value: Any, level: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{ }")
            return
        indent = "\n" + "  " * (level + 1)
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + indent + _scalar(str(key)) + " : ")
            _pretty(item, level + 1, out)
        out.append("\n" + "  " * level + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[ ]")
            return
        out.append("[ ")
        for i, item in enumerate(value):
            if i:
                out.append(", ")
            _pretty(item, level, out)
        out.append(" ]")
    else:
        out.append(_scalar(value))
