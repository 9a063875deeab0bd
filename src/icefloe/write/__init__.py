"""Writing data and delete files (layer L4): Parquet data files with Iceberg metrics,
position and equality delete files, and deletion vectors (Puffin).

Start with :func:`write_data_files`; :mod:`icefloe.write.metrics` has the metrics modes
(:class:`MetricsConfig`) and the metrics computation, :class:`ParquetWriteOptions` the
``write.parquet.*`` settings. Row-level deletes: :func:`write_position_deletes` (v2),
:func:`write_equality_deletes`, :func:`write_deletion_vectors` (v3).
"""

from icefloe.write.deletes import (
    position_delete_schema,
    write_equality_deletes,
    write_position_deletes,
    write_position_deletes_for,
)
from icefloe.write.deletion_vectors import DeletionVectorWriter, write_deletion_vectors
from icefloe.write.metrics import (
    MetricsCollector,
    MetricsConfig,
    MetricsMode,
    footer_metrics,
    truncate_binary_max,
    truncate_binary_min,
    truncate_string_max,
    truncate_string_min,
)
from icefloe.write.options import ParquetWriteOptions
from icefloe.write.parquet import DEFAULT_MAX_OPEN_FILES, file_name_prefix, split_offsets, write_data_files
from icefloe.write.sorting import can_sort, sort_table

__all__ = [
    "DEFAULT_MAX_OPEN_FILES",
    "DeletionVectorWriter",
    "MetricsCollector",
    "MetricsConfig",
    "MetricsMode",
    "ParquetWriteOptions",
    "can_sort",
    "file_name_prefix",
    "footer_metrics",
    "position_delete_schema",
    "sort_table",
    "split_offsets",
    "truncate_binary_max",
    "truncate_binary_min",
    "truncate_string_max",
    "truncate_string_min",
    "write_data_files",
    "write_deletion_vectors",
    "write_equality_deletes",
    "write_position_deletes",
    "write_position_deletes_for",
]
