"""Metrics modes (Java's ``MetricsModes`` / ``MetricsConfig``) and bound truncation
(Java's ``UnicodeUtil`` / ``BinaryUtil``). Public through :mod:`icefloe.write.metrics`."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from icefloe.errors import ValidationError
from icefloe.spec.properties import (
    DEFAULT_WRITE_METRICS_MODE,
    METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
    METRICS_MODE_COLUMN_CONF_PREFIX,
)
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import SortOrder
from icefloe.spec.types import ListType, MapType, NestedField, StructType

__all__ = [
    "COUNTS",
    "DEFAULT_METRICS_MODE",
    "FULL",
    "NONE",
    "MetricsConfig",
    "MetricsMode",
    "truncate_binary_max",
    "truncate_binary_min",
    "truncate_string_max",
    "truncate_string_min",
]

log = logging.getLogger("icefloe.write.metrics")

MAX_INFERRED_COLUMNS_DEFAULT = 100

_TRUNCATE = re.compile(r"truncate\((\d+)\)")


@dataclass(frozen=True, slots=True)
class MetricsMode:
    """How much is recorded for a column: ``none``, ``counts``, ``truncate(N)`` or ``full``.

    Attributes:
        kind: one of ``"none"``, ``"counts"``, ``"truncate"``, ``"full"``.
        length: the truncation length for ``truncate``; 0 otherwise.
    """

    kind: str
    length: int = 0

    @staticmethod
    def parse(text: str) -> MetricsMode:
        """Parse a mode as Java's ``MetricsModes.fromString`` does (case-insensitive).

        Raises:
            ValidationError: the text is not a mode, or a truncate length is not positive.
        """
        lowered = text.strip().lower() if isinstance(text, str) else ""
        if lowered in ("none", "counts", "full"):
            return MetricsMode(lowered)
        match = _TRUNCATE.fullmatch(lowered)
        if match is not None:
            return MetricsMode.truncate(int(match.group(1)))
        raise ValidationError(f"invalid metrics mode {text!r}; expected none, counts, truncate(N) or full")

    @staticmethod
    def truncate(length: int) -> MetricsMode:
        if length <= 0:
            raise ValidationError(f"metrics truncate length must be positive, not {length}")
        return MetricsMode("truncate", length)

    @property
    def has_counts(self) -> bool:
        return self.kind != "none"

    @property
    def has_bounds(self) -> bool:
        return self.kind in ("truncate", "full")

    @property
    def truncate_length(self) -> int | None:
        """Code points (strings) or bytes (binary) kept in bounds; None for full bounds."""
        return self.length if self.kind == "truncate" else None

    def __str__(self) -> str:
        return f"truncate({self.length})" if self.kind == "truncate" else self.kind


NONE = MetricsMode("none")
COUNTS = MetricsMode("counts")
FULL = MetricsMode("full")
#: Java's ``write.metadata.metrics.default`` default.
DEFAULT_METRICS_MODE = MetricsMode.truncate(16)


@dataclass(frozen=True, slots=True)
class MetricsConfig:
    """Which metrics mode applies to each column, keyed by full dotted column name.

    Attributes:
        default_mode: the mode of columns without an entry.
        column_modes: modes by column name (``"a"``, ``"s.x"``, ``"l.element"``, ``"m.key"``).
    """

    default_mode: MetricsMode = DEFAULT_METRICS_MODE
    column_modes: Mapping[str, MetricsMode] = field(default_factory=dict)

    @classmethod
    def from_properties(
        cls,
        properties: Mapping[str, str],
        schema: Schema | None = None,
        *,
        sort_order: SortOrder | None = None,
    ) -> MetricsConfig:
        """The metrics config of a table, as Java's ``MetricsConfig.forTable`` builds it.

        * ``write.metadata.metrics.default`` sets the default mode (``truncate(16)`` if unset).
        * Without it, a schema with more top-level columns than
          ``write.metadata.metrics.max-inferred-column-defaults`` (100) keeps the default for
          the columns of the first 100 and records nothing for the rest.
        * Columns of the sort order (order-preserving transforms) are promoted to
          ``truncate(16)`` when the default is ``none`` or ``counts``.
        * ``write.metadata.metrics.column.<name>`` overrides one column.

        Invalid modes are logged and ignored (the default applies), as in Java.

        Raises:
            ValidationError: the max-inferred property is not an integer.
        """
        max_inferred = _max_inferred_columns(properties)
        column_modes: dict[str, MetricsMode] = {}
        configured = properties.get(DEFAULT_WRITE_METRICS_MODE)
        if configured is not None:
            default_mode = _parse_or(configured, DEFAULT_METRICS_MODE, "default")
        elif schema is None or len(schema.fields) <= max_inferred:
            default_mode = DEFAULT_METRICS_MODE
        else:
            # Wide tables: the first columns keep the default, the others record nothing.
            names = schema.id_to_name()
            for column in schema.fields[:max_inferred]:
                for field_id in _field_ids(column):
                    name = names.get(field_id)
                    if name is not None:
                        column_modes[name] = DEFAULT_METRICS_MODE
            default_mode = NONE

        if sort_order is not None and schema is not None:
            sorted_mode = DEFAULT_METRICS_MODE if default_mode in (NONE, COUNTS) else default_mode
            names = schema.id_to_name()
            for sort_field in sort_order.fields:
                name = names.get(sort_field.source_id)
                if sort_field.transform.preserves_order and name is not None:
                    column_modes[name] = sorted_mode

        for key, value in properties.items():
            if key.startswith(METRICS_MODE_COLUMN_CONF_PREFIX):
                column_name = key[len(METRICS_MODE_COLUMN_CONF_PREFIX) :]
                column_modes[column_name] = _parse_or(value, default_mode, f"column {column_name}")
        return cls(default_mode, column_modes)

    def column_mode(self, column_name: str | None) -> MetricsMode:
        """The mode of the column with this full dotted name."""
        if column_name is None:
            return self.default_mode
        return self.column_modes.get(column_name, self.default_mode)


def _parse_or(text: str, fallback: MetricsMode, context: str) -> MetricsMode:
    try:
        return MetricsMode.parse(text)
    except ValidationError:
        log.warning("Ignoring invalid metrics mode (%s): %s", context, text)
        return fallback


def _max_inferred_columns(properties: Mapping[str, str]) -> int:
    raw = properties.get(METRICS_MAX_INFERRED_COLUMN_DEFAULTS)
    if raw is None:
        return MAX_INFERRED_COLUMNS_DEFAULT
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(
            f"table property '{METRICS_MAX_INFERRED_COLUMN_DEFAULTS}' must be an integer, not {raw!r}"
        ) from None
    if value < 0:
        log.warning(
            "Invalid value for %s (negative): %s, falling back to 100",
            METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
            value,
        )
        return MAX_INFERRED_COLUMNS_DEFAULT
    return value


def _field_ids(column: NestedField) -> Iterator[int]:
    yield column.field_id
    field_type = column.field_type
    if isinstance(field_type, (StructType, ListType, MapType)):
        for child in field_type.fields:
            yield from _field_ids(child)


# ---------------------------------------------------------------------------------------------
# Bound truncation (Java's UnicodeUtil / BinaryUtil)


def truncate_string_min(value: str, length: int) -> str:
    """The first ``length`` code points: a lower bound of every string with this prefix."""
    return value[:length]


def truncate_string_max(value: str, length: int) -> str | None:
    """An upper bound of ``value`` with at most ``length`` code points, or None if none exists.

    As Java's ``UnicodeUtil.truncateStringMax``: the prefix's last code point that can be
    incremented is (skipping the surrogate range), and what follows it is dropped; when every
    code point is U+10FFFF there is no such bound.
    """
    if len(value) <= length:
        return value
    prefix = value[:length]
    for index in range(length - 1, -1, -1):
        code = ord(prefix[index])
        if code == 0x10FFFF:
            continue
        following = 0xE000 if code == 0xD7FF else code + 1
        return prefix[:index] + chr(following)
    return None


def truncate_binary_min(value: bytes, length: int) -> bytes:
    """The first ``length`` bytes."""
    return value[:length]


def truncate_binary_max(value: bytes, length: int) -> bytes | None:
    """An upper bound of ``value`` with at most ``length`` bytes, or None if none exists
    (Java's ``BinaryUtil.truncateBinaryMax``: increment the last byte below 0xFF)."""
    if len(value) <= length:
        return value
    for index in range(length - 1, -1, -1):
        if value[index] != 0xFF:
            return value[:index] + bytes((value[index] + 1,))
    return None
