"""Table property names and typed views over them (Java's ``TableProperties``).

Properties are strings in the metadata; each consumer parses the ones it needs once, through
the option objects here, so a malformed value fails with the property's name.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from icefloe.errors import ValidationError
from icefloe.spec.properties import (  # noqa: F401  (re-exported for table-layer callers)
    DELETE_AFTER_COMMIT,
    METADATA_COMPRESSION,
    PREVIOUS_VERSIONS_MAX,
    bool_property,
    int_property,
)

__all__ = [
    "CommitRetryOptions",
    "bool_property",
    "int_property",
]

COMMIT_NUM_RETRIES = "commit.retry.num-retries"
COMMIT_MIN_RETRY_WAIT_MS = "commit.retry.min-wait-ms"
COMMIT_MAX_RETRY_WAIT_MS = "commit.retry.max-wait-ms"
COMMIT_TOTAL_RETRY_TIME_MS = "commit.retry.total-timeout-ms"

WRITE_TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
WRITE_PARQUET_COMPRESSION = "write.parquet.compression-codec"
WRITE_PARQUET_COMPRESSION_LEVEL = "write.parquet.compression-level"
WRITE_PARQUET_ROW_GROUP_SIZE_BYTES = "write.parquet.row-group-size-bytes"
WRITE_PARQUET_PAGE_SIZE_BYTES = "write.parquet.page-size-bytes"
WRITE_SUMMARY_PARTITION_LIMIT = "write.summary.partition-limit"
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
DEFAULT_NAME_MAPPING = "schema.name-mapping.default"
AVRO_COMPRESSION = "write.avro.compression-codec"


@dataclass(frozen=True, slots=True)
class CommitRetryOptions:
    """``commit.retry.*`` with Java's defaults."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> CommitRetryOptions:
        """The retry settings of a table.

        Raises:
            ValidationError: naming the property that is malformed, negative, or (max wait)
                below the min wait.
        """
        options = cls(
            num_retries=int_property(properties, COMMIT_NUM_RETRIES, 4, minimum=0),
            min_wait_ms=int_property(properties, COMMIT_MIN_RETRY_WAIT_MS, 100, minimum=0),
            max_wait_ms=int_property(properties, COMMIT_MAX_RETRY_WAIT_MS, 60_000, minimum=0),
            total_timeout_ms=int_property(properties, COMMIT_TOTAL_RETRY_TIME_MS, 1_800_000, minimum=0),
        )
        if options.max_wait_ms < options.min_wait_ms:
            raise ValidationError(
                f"table property '{COMMIT_MAX_RETRY_WAIT_MS}' ({options.max_wait_ms}) must not be below "
                f"'{COMMIT_MIN_RETRY_WAIT_MS}' ({options.min_wait_ms})"
            )
        return options

    def wait_ms(self, attempt: int) -> float:
        """Java's exponential backoff: min-wait doubled per attempt, capped, plus up to 10% jitter."""
        delay = min(self.min_wait_ms * (2.0 ** max(attempt - 1, 0)), float(self.max_wait_ms))
        return delay + random.uniform(0, max(1.0, delay * 0.1))
