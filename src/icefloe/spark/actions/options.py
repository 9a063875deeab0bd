"""The options of the rewrite actions, by Java's names (private): the size thresholds of
Java's ``SizeBasedFileRewriter`` that ``rewrite_data_files`` and ``rewrite_position_deletes``
share, and parsing that names the action and option in its errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe.errors import ValidationError

__all__ = ["FileSizeOptions", "int_option", "true_option"]


def int_option(options: Mapping[str, Any], name: str, default: int, *, action: str) -> int:
    """An integer option (``default`` when absent).

    Raises:
        ValidationError: not an integer, naming the action and the option.
    """
    value = options.get(name, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{action} option '{name}' must be an integer, not {value!r}") from None


def true_option(options: Mapping[str, Any], name: str) -> bool:
    """Whether an option is ``true`` (any case); absent or any other value is false, as in Java."""
    return str(options.get(name, "false")).lower() == "true"


@dataclass(frozen=True, slots=True)
class FileSizeOptions:
    """Which files a rewrite takes and what it aims for (Java's defaults: files under 75% or
    over 180% of the target are rewritten; a group needs ``min-input-files`` of them)."""

    target: int
    min_size: int
    max_size: int
    min_inputs: int

    @classmethod
    def parse(cls, options: Mapping[str, Any], default_target: int, *, action: str) -> FileSizeOptions:
        """``target-file-size-bytes``, ``min-file-size-bytes``, ``max-file-size-bytes`` and
        ``min-input-files`` from ``options``.

        Raises:
            ValidationError: a value that is not an integer (naming it).
        """
        target = int_option(options, "target-file-size-bytes", default_target, action=action)
        return cls(
            target=target,
            min_size=int_option(options, "min-file-size-bytes", int(target * 0.75), action=action),
            max_size=int_option(options, "max-file-size-bytes", int(target * 1.8), action=action),
            min_inputs=int_option(options, "min-input-files", 5, action=action),
        )
