"""Table property names and defaults (Java's ``TableProperties``), and the two ways of reading them.

Strict readers (``int_property``, ``bool_property``) raise a ValidationError naming the property
when its value is malformed: used wherever a bad value should stop an operation before it
writes anything. Lenient readers (``lenient_int``, ``lenient_bool``) never raise and follow
Java's parsing (``Boolean.parseBoolean``: only "true", in any case, is true): used after a commit
has happened, when nothing may fail any more.
"""

from __future__ import annotations

from collections.abc import Mapping

from icefloe.errors import ValidationError

#: Every table property icefloe reads, with Java's default where Java has one (Java's
#: ``TableProperties`` in snake case). Modules import the names from here, never spell them.

# ---- the table -----------------------------------------------------------------------------------
FORMAT_VERSION = "format-version"  # reserved: set through the metadata, not as a property
DEFAULT_NAME_MAPPING = "schema.name-mapping.default"
GC_ENABLED = "gc.enabled"
GC_ENABLED_DEFAULT = True
WRITE_AUDIT_PUBLISH_ENABLED = "write.wap.enabled"
WRITE_AUDIT_PUBLISH_ENABLED_DEFAULT = False

# ---- file formats --------------------------------------------------------------------------------
DEFAULT_FILE_FORMAT = "write.format.default"
DEFAULT_FILE_FORMAT_DEFAULT = "parquet"
PARQUET_COMPRESSION = "write.parquet.compression-codec"
PARQUET_COMPRESSION_DEFAULT = "zstd"
PARQUET_COMPRESSION_LEVEL = "write.parquet.compression-level"
PARQUET_ROW_GROUP_SIZE_BYTES = "write.parquet.row-group-size-bytes"
PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT = 128 * 1024 * 1024
PARQUET_ROW_GROUP_LIMIT = "write.parquet.row-group-limit"  # rows; PyIceberg's property, not Java's
PARQUET_ROW_GROUP_LIMIT_DEFAULT = 1024 * 1024
PARQUET_PAGE_SIZE_BYTES = "write.parquet.page-size-bytes"
PARQUET_PAGE_SIZE_BYTES_DEFAULT = 1024 * 1024
PARQUET_PAGE_ROW_LIMIT = "write.parquet.page-row-limit"
PARQUET_PAGE_ROW_LIMIT_DEFAULT = 20_000
PARQUET_DICT_SIZE_BYTES = "write.parquet.dict-size-bytes"
PARQUET_DICT_SIZE_BYTES_DEFAULT = 2 * 1024 * 1024
PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX = "write.parquet.bloom-filter-enabled.column."
PARQUET_COLUMN_STATS_ENABLED_PREFIX = "write.parquet.stats-enabled.column."
PARQUET_PREFIX = "write.parquet."
DELETE_PARQUET_PREFIX = "write.delete.parquet."  # write.delete.parquet.* override write.parquet.*
AVRO_COMPRESSION = "write.avro.compression-codec"
AVRO_COMPRESSION_DEFAULT = "gzip"

# ---- writing data --------------------------------------------------------------------------------
WRITE_TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT = 512 * 1024 * 1024
DELETE_TARGET_FILE_SIZE_BYTES = "write.delete.target-file-size-bytes"
DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT = 64 * 1024 * 1024
WRITE_DISTRIBUTION_MODE = "write.distribution-mode"
DELETE_DISTRIBUTION_MODE = "write.delete.distribution-mode"
UPDATE_DISTRIBUTION_MODE = "write.update.distribution-mode"
MERGE_DISTRIBUTION_MODE = "write.merge.distribution-mode"
DELETE_MODE = "write.delete.mode"
UPDATE_MODE = "write.update.mode"
MERGE_MODE = "write.merge.mode"
ROW_LEVEL_MODE_DEFAULT = "copy-on-write"
DELETE_ISOLATION_LEVEL = "write.delete.isolation-level"
UPDATE_ISOLATION_LEVEL = "write.update.isolation-level"
MERGE_ISOLATION_LEVEL = "write.merge.isolation-level"
ISOLATION_LEVEL_DEFAULT = "serializable"
WRITE_PARTITION_SUMMARY_LIMIT = "write.summary.partition-limit"
WRITE_PARTITION_SUMMARY_LIMIT_DEFAULT = 0
SPARK_WRITER = "icefloe.spark.writer"  # icefloe's: auto | icefloe | spark
SPARK_READER = "icefloe.spark.reader"  # icefloe's: auto | icefloe | spark (also a session setting)
# icefloe's: Iceberg scheme -> Hadoop scheme for Spark's reader, "s3=s3a,s3n=s3a" (also a session setting)
SPARK_HADOOP_SCHEMES = "icefloe.spark.hadoop-schemes"

# ---- metrics -------------------------------------------------------------------------------------
DEFAULT_WRITE_METRICS_MODE = "write.metadata.metrics.default"
METRICS_MODE_COLUMN_CONF_PREFIX = "write.metadata.metrics.column."
METRICS_MAX_INFERRED_COLUMN_DEFAULTS = "write.metadata.metrics.max-inferred-column-defaults"
METRICS_MAX_INFERRED_COLUMN_DEFAULTS_DEFAULT = 100

# ---- where files go ------------------------------------------------------------------------------
WRITE_DATA_LOCATION = "write.data.path"
WRITE_METADATA_LOCATION = "write.metadata.path"
OBJECT_STORE_ENABLED = "write.object-storage.enabled"
WRITE_OBJECT_STORE_PARTITIONED_PATHS = "write.object-storage.partitioned-paths"
OBJECT_STORE_PATH = "write.object-storage.path"  # deprecated in Java
WRITE_FOLDER_STORAGE_LOCATION = "write.folder-storage.path"  # deprecated in Java
WRITE_LOCATION_PROVIDER_IMPL = "write.py-location-provider.impl"  # PyIceberg's (a Python class)

# ---- metadata files ------------------------------------------------------------------------------
METADATA_COMPRESSION = "write.metadata.compression-codec"
METADATA_COMPRESSION_DEFAULT = "none"
METADATA_DELETE_AFTER_COMMIT_ENABLED = "write.metadata.delete-after-commit.enabled"
METADATA_PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT = 100

# ---- commits -------------------------------------------------------------------------------------
COMMIT_NUM_RETRIES = "commit.retry.num-retries"
COMMIT_NUM_RETRIES_DEFAULT = 4
COMMIT_MIN_RETRY_WAIT_MS = "commit.retry.min-wait-ms"
COMMIT_MIN_RETRY_WAIT_MS_DEFAULT = 100
COMMIT_MAX_RETRY_WAIT_MS = "commit.retry.max-wait-ms"
COMMIT_MAX_RETRY_WAIT_MS_DEFAULT = 60_000
COMMIT_TOTAL_RETRY_TIME_MS = "commit.retry.total-timeout-ms"
COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT = 1_800_000
COMMIT_NUM_STATUS_CHECKS = "commit.status-check.num-retries"
COMMIT_NUM_STATUS_CHECKS_DEFAULT = 3
COMMIT_STATUS_CHECKS_MIN_WAIT_MS = "commit.status-check.min-wait-ms"
COMMIT_STATUS_CHECKS_MIN_WAIT_MS_DEFAULT = 1000
COMMIT_STATUS_CHECKS_MAX_WAIT_MS = "commit.status-check.max-wait-ms"
COMMIT_STATUS_CHECKS_MAX_WAIT_MS_DEFAULT = 60_000
MANIFEST_TARGET_SIZE_BYTES = "commit.manifest.target-size-bytes"
MANIFEST_TARGET_SIZE_BYTES_DEFAULT = 8 * 1024 * 1024
MANIFEST_MIN_MERGE_COUNT = "commit.manifest.min-count-to-merge"
MANIFEST_MIN_MERGE_COUNT_DEFAULT = 100
MANIFEST_MERGE_ENABLED = "commit.manifest-merge.enabled"
MANIFEST_MERGE_ENABLED_DEFAULT = True

# ---- snapshot expiry -----------------------------------------------------------------------------
MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MAX_SNAPSHOT_AGE_MS_DEFAULT = 5 * 24 * 60 * 60 * 1000
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
MIN_SNAPSHOTS_TO_KEEP_DEFAULT = 1
MAX_REF_AGE_MS = "history.expire.max-ref-age-ms"
MAX_REF_AGE_MS_DEFAULT = (1 << 63) - 1  # Java's Long.MAX_VALUE: refs never age out

# ---- encryption (format v3) -----------------------------------------------------------------------
ENCRYPTION_TABLE_KEY = "encryption.key-id"  # the table's master key id in the KMS
ENCRYPTION_DEK_LENGTH = "encryption.data-key-length"  # bytes: 16, 24 or 32
ENCRYPTION_DEK_LENGTH_DEFAULT = 16
ENCRYPTION_AAD_LENGTH_DEFAULT = 16  # not a property in Java either: a constant

# ---- views (Java's ``ViewProperties``) ---------------------------------------------------------
VIEW_VERSION_HISTORY_SIZE = "version.history.num-entries"
VIEW_VERSION_HISTORY_SIZE_DEFAULT = 10
VIEW_METADATA_COMPRESSION_DEFAULT = "gzip"  # views default to gzip, tables to none
VIEW_COMMENT = "comment"
VIEW_REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
VIEW_REPLACE_DROP_DIALECT_ALLOWED_DEFAULT = False
SPARK_QUERY_COLUMN_NAMES = "spark.query-column-names"  # Spark's: the query's output names

# ---- reading -------------------------------------------------------------------------------------
SPLIT_SIZE = "read.split.target-size"
SPLIT_SIZE_DEFAULT = 128 * 1024 * 1024
SPLIT_LOOKBACK = "read.split.planning-lookback"
SPLIT_LOOKBACK_DEFAULT = 10
SPLIT_OPEN_FILE_COST = "read.split.open-file-cost"
SPLIT_OPEN_FILE_COST_DEFAULT = 4 * 1024 * 1024
# icefloe's: selective reads skip pages by the Parquet page index (DataFusion, the page-index
# extra) where it pays; "false" reads every file with pyarrow
READ_PAGE_INDEX_ENABLED = "read.parquet.page-index.enabled"
READ_PAGE_INDEX_ENABLED_DEFAULT = True


def persisted_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The properties a new or replaced table is given (Java's ``TableMetadata
    .persistedProperties``): the defaults that apply only to new tables
    (``write.parquet.compression-codec=zstd``, which Java has written since 1.4), then
    ``properties``, which win."""
    return {PARQUET_COMPRESSION: PARQUET_COMPRESSION_DEFAULT, **properties}


def row_level_mode_property(command: str) -> str:
    """``write.delete.mode`` / ``write.update.mode`` / ``write.merge.mode``."""
    return {"delete": DELETE_MODE, "update": UPDATE_MODE, "merge": MERGE_MODE}[command]


def isolation_level_property(command: str) -> str:
    """``write.<command>.isolation-level`` for delete, update and merge."""
    return {
        "delete": DELETE_ISOLATION_LEVEL,
        "update": UPDATE_ISOLATION_LEVEL,
        "merge": MERGE_ISOLATION_LEVEL,
    }[command]


def distribution_mode_property(command: str) -> str:
    """``write.distribution-mode`` (``write``) or ``write.<command>.distribution-mode``."""
    return {
        "write": WRITE_DISTRIBUTION_MODE,
        "delete": DELETE_DISTRIBUTION_MODE,
        "update": UPDATE_DISTRIBUTION_MODE,
        "merge": MERGE_DISTRIBUTION_MODE,
    }[command]


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
