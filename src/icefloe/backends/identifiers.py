"""Namespace and table identifiers: parsing and validation.

An identifier names a table as a tuple of parts, the namespace levels followed by the table
name: ``("db", "events")``, ``("a", "b", "events")``. Users may also write the dotted form
``"db.events"``. Rejected: empty parts, ``.``, ``..``, NUL and other control characters, and
a dot inside a part: the SQL catalog stores a namespace as its levels joined by ``.`` (as
Java's JDBC catalog does), so ``("a.b",)`` and ``("a", "b")`` would be the same namespace,
and the dotted form could not name the table.

A ``/`` (or ``\\``) is a character of a name like any other (Java's catalogs and the REST
spec allow it: ``new/db``). Each part becomes one directory name in the default table
layout, ``location_segment(part)``, which escapes ``/``, ``\\`` and ``~`` as ``~2F``,
``~5C``, ``~7E``: no name reaches outside its own directory and no two names share a
location (the Hadoop catalog, whose names are its directories, refuses them). The escape is
not ``%2F``: Hadoop's ``Path`` decodes ``%XX``, so Java would look for another directory.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import TypeAlias

from icefloe.errors import InvalidIdentifierError

__all__ = [
    "Identifier",
    "Namespace",
    "identifier_to_string",
    "location_segment",
    "parse_identifier",
    "parse_namespace",
    "split_identifier",
]

#: What callers may pass: ``"db.table"`` or a sequence of parts (``("db", "table")``).
Identifier: TypeAlias = str | Sequence[str]
#: A parsed namespace: its levels, outermost first. ``()`` is the catalog's root.
Namespace: TypeAlias = tuple[str, ...]

# File systems limit one path component to 255 bytes.
_MAX_PART_BYTES = 255


def _check_part(part: object, what: str, whole: object) -> str:
    if not isinstance(part, str):
        raise InvalidIdentifierError(f"{what} {whole!r}: part {part!r} is not a string")
    if part == "":
        raise InvalidIdentifierError(f"{what} {whole!r}: empty part")
    if part in (".", ".."):
        raise InvalidIdentifierError(
            f"{what} {whole!r}: part {part!r} would address a directory outside its own"
        )
    if "." in part:
        raise InvalidIdentifierError(
            f"{what} {whole!r}: part {part!r} contains '.', which separates namespace levels"
        )
    for char in part:
        if unicodedata.category(char) == "Cc":  # NUL, C0 and C1 controls, DEL
            raise InvalidIdentifierError(
                f"{what} {whole!r}: part {part!r} contains the control character U+{ord(char):04X}"
            )
    if len(location_segment(part).encode("utf-8")) > _MAX_PART_BYTES:
        raise InvalidIdentifierError(
            f"{what} {whole!r}: part {part[:20]!r}... is longer than {_MAX_PART_BYTES} bytes"
        )
    return part


_SEGMENT_ESCAPES = str.maketrans({"~": "~7E", "/": "~2F", "\\": "~5C"})


def location_segment(part: str) -> str:
    """The directory name of an identifier part in the default layout: the part, with ``~``,
    ``/`` and ``\\`` escaped (``new/db`` -> ``new~2Fdb``), so it is one path segment and no
    two parts give the same one."""
    return part.translate(_SEGMENT_ESCAPES)


def _parts(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split("."))
    if isinstance(value, Sequence):
        return tuple(value)
    raise InvalidIdentifierError(
        f"{what} must be a string or a sequence of strings, not {type(value).__name__}"
    )


def parse_namespace(namespace: str | Sequence[str], *, allow_root: bool = False) -> Namespace:
    """The validated levels of a namespace: ``"a.b"`` or ``("a", "b")`` -> ``("a", "b")``.

    Args:
        namespace: the dotted form or a sequence of levels.
        allow_root: accept ``()`` (and ``""``) as the catalog's root namespace.

    Raises:
        InvalidIdentifierError: naming the offending part.
    """
    if allow_root and (namespace == "" or (not isinstance(namespace, str) and len(namespace) == 0)):
        return ()
    parts = _parts(namespace, "namespace")
    if not parts:
        raise InvalidIdentifierError("namespace must have at least one level")
    return tuple(_check_part(p, "namespace", namespace) for p in parts)


def parse_identifier(identifier: Identifier) -> tuple[str, ...]:
    """The validated parts of a table identifier: namespace levels, then the table name.

    ``"db.t"`` and ``("db", "t")`` give ``("db", "t")``. A table must be in a namespace.

    Raises:
        InvalidIdentifierError: naming the offending part, or when there is no namespace.
    """
    parts = _parts(identifier, "table identifier")
    if len(parts) < 2:
        raise InvalidIdentifierError(
            f"table identifier {identifier!r} needs a namespace and a table name, like 'db.table'"
        )
    return tuple(_check_part(p, "table identifier", identifier) for p in parts)


def split_identifier(identifier: Identifier) -> tuple[Namespace, str]:
    """``(namespace, table name)`` of a table identifier (validated like ``parse_identifier``)."""
    parts = parse_identifier(identifier)
    return parts[:-1], parts[-1]


def identifier_to_string(identifier: Sequence[str]) -> str:
    """The dotted form of a parsed identifier or namespace: ``("db", "t")`` -> ``"db.t"``."""
    return ".".join(identifier)
