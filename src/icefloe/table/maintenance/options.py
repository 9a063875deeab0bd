"""The options of the maintenance actions, by Java's names, parsed once for both
implementations (``icefloe.actions`` and ``icefloe.spark.actions``): the size thresholds of
Java's ``SizeBasedFileRewriter`` that ``rewrite_data_files`` and ``rewrite_position_deletes``
share, each action's options, and parsing that names the action and option in its errors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe.errors import ValidationError
from icefloe.expressions import Expression, always_true, parse
from icefloe.spec.properties import (
    DELETE_TARGET_FILE_SIZE_BYTES,
    DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT,
    WRITE_TARGET_FILE_SIZE_BYTES,
    WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT,
)

__all__ = [
    "REWRITE_STRATEGIES",
    "FileSizeOptions",
    "RewriteDataFilesOptions",
    "RewritePositionDeletesOptions",
    "int_option",
    "row_filter",
    "to_millis",
    "true_option",
]

REWRITE_STRATEGIES = ("binpack", "sort")


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


@dataclass(frozen=True, slots=True)
class RewriteDataFilesOptions:
    """The options of ``rewrite_data_files`` (Java's names; see the action's docstring)."""

    sizes: FileSizeOptions
    delete_threshold: int
    rewrite_all: bool
    partial_progress: bool
    max_commits: int

    @classmethod
    def parse(
        cls, options: Mapping[str, Any] | None, properties: Mapping[str, str], *, strategy: str
    ) -> RewriteDataFilesOptions:
        """Raises ValidationError: an unknown strategy, a malformed option."""
        if strategy not in REWRITE_STRATEGIES:
            raise ValidationError(f"unknown rewrite strategy '{strategy}'; expected 'binpack' or 'sort'")
        opts = dict(options or {})
        action = "rewrite_data_files"
        default_target = int(
            properties.get(WRITE_TARGET_FILE_SIZE_BYTES, WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT)
        )
        return cls(
            sizes=FileSizeOptions.parse(opts, default_target, action=action),
            delete_threshold=int_option(opts, "delete-file-threshold", 1, action=action),
            rewrite_all=true_option(opts, "rewrite-all"),
            partial_progress=true_option(opts, "partial-progress.enabled"),
            max_commits=int_option(opts, "partial-progress.max-commits", 10, action=action),
        )


_POSITION_DELETE_OPTIONS = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
)


@dataclass(frozen=True, slots=True)
class RewritePositionDeletesOptions:
    """The options of ``rewrite_position_deletes``."""

    sizes: FileSizeOptions
    rewrite_all: bool

    @classmethod
    def parse(
        cls, options: Mapping[str, Any] | None, properties: Mapping[str, str]
    ) -> RewritePositionDeletesOptions:
        """Raises ValidationError: an unknown or malformed option."""
        opts = dict(options or {})
        unknown = sorted(set(opts) - set(_POSITION_DELETE_OPTIONS))
        if unknown:
            raise ValidationError(
                f"rewrite_position_deletes does not support the options {unknown}; "
                f"expected {', '.join(_POSITION_DELETE_OPTIONS)}"
            )
        default_target = int(
            properties.get(DELETE_TARGET_FILE_SIZE_BYTES, DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT)
        )
        return cls(
            FileSizeOptions.parse(opts, default_target, action="rewrite_position_deletes"),
            true_option(opts, "rewrite-all"),
        )


def row_filter(where: Expression | str | None) -> Expression:
    """A ``where=`` argument as an expression (filter text is parsed; None is every row)."""
    if where is None:
        return always_true()
    return parse(where) if isinstance(where, str) else where


def to_millis(value: dt.datetime | int, name: str) -> int:
    """Epoch milliseconds of a datetime (naive means UTC, as in scans' ``as_of_time``) or an
    int of milliseconds.

    Raises:
        ValidationError: anything else, naming the argument.
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValidationError(f"{name} must be a datetime or an int of epoch milliseconds, not {value!r}")
