"""Table property names shared across layers, and the two ways of reading property values.

Strict readers (``int_property``, ``bool_property``) raise a ValidationError naming the property
when its value is malformed: used wherever a bad value should stop an operation before it
writes anything. Lenient readers (``lenient_int``, ``lenient_bool``) never raise and follow
Java's parsing (``Boolean.parseBoolean``: only "true", in any case, is true): used after a commit
has happened, when nothing may fail any more.
"""

from __future__ import annotations

from collections.abc import Mapping

from icefloe.errors import ValidationError

__all__ = [
    "DELETE_AFTER_COMMIT",
    "METADATA_COMPRESSION",
    "PREVIOUS_VERSIONS_MAX",
    "WRITE_METADATA_PATH",
    "bool_property",
    "int_property",
    "lenient_bool",
    "lenient_int",
]

METADATA_COMPRESSION = "write.metadata.compression-codec"
DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
WRITE_METADATA_PATH = "write.metadata.path"


def int_property(
    properties: Mapping[str, str], name: str, default: int, *, minimum: int | None = None
) -> int:
    """The integer value of ``name``, or ``default`` when it is not set.

    Raises:
        ValidationError: naming the property when the value is not an integer or is below
            ``minimum``.
    """
    raw = properties.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"table property '{name}' must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ValidationError(f"table property '{name}' must be at least {minimum}, not {value}")
    return value


def bool_property(properties: Mapping[str, str], name: str, default: bool) -> bool:
    """The boolean value of ``name`` ("true" / "false", any case), or ``default``.

    Raises:
        ValidationError: naming the property when the value is neither true nor false.
    """
    raw = properties.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered not in ("true", "false"):
        raise ValidationError(f"table property '{name}' must be true or false, not {raw!r}")
    return lowered == "true"


def lenient_bool(properties: Mapping[str, str], name: str, default: bool) -> bool:
    """Java's ``Boolean.parseBoolean`` of the value, or ``default`` when unset. Never raises."""
    raw = properties.get(name)
    return default if raw is None else raw.strip().lower() == "true"


def lenient_int(properties: Mapping[str, str], name: str, default: int) -> int:
    """The integer value, or ``default`` when unset or malformed. Never raises."""
    raw = properties.get(name)
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default
