"""Parquet write settings from table properties (Java's ``TableProperties`` names and defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spec.properties import (
    PARQUET_COMPRESSION,
    PARQUET_COMPRESSION_DEFAULT,
    PARQUET_COMPRESSION_LEVEL,
    PARQUET_DICT_SIZE_BYTES,
    PARQUET_DICT_SIZE_BYTES_DEFAULT,
    PARQUET_PAGE_ROW_LIMIT,
    PARQUET_PAGE_ROW_LIMIT_DEFAULT,
    PARQUET_PAGE_SIZE_BYTES,
    PARQUET_PAGE_SIZE_BYTES_DEFAULT,
    PARQUET_ROW_GROUP_LIMIT,
    PARQUET_ROW_GROUP_LIMIT_DEFAULT,
    PARQUET_ROW_GROUP_SIZE_BYTES,
    PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT,
    WRITE_TARGET_FILE_SIZE_BYTES,
    WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT,
    int_property,
)

__all__ = ["ParquetWriteOptions"]


# Java's codec names -> pyarrow's. Parquet's LZ4 is written as LZ4_RAW (what pyarrow writes for
# "lz4"), which Java's parquet-mr reads.
_CODECS = {
    "zstd": "zstd",
    "snappy": "snappy",
    "gzip": "gzip",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "brotli": "brotli",
    "uncompressed": "none",
    "none": "none",
}
# Codecs that take a level; Java passes the level to these only.
_LEVELED = {"zstd", "gzip", "brotli"}


@dataclass(frozen=True, slots=True)
class ParquetWriteOptions:
    """How data files are written. Defaults are Java's.

    Attributes:
        target_file_size_bytes: start a new file once a file reaches this size
            (``write.target-file-size-bytes``, 512 MiB).
        compression: pyarrow codec name (``write.parquet.compression-codec``, zstd).
        compression_level: ``write.parquet.compression-level`` (codec default if None).
        row_group_size_bytes: target on-disk size of a row group
            (``write.parquet.row-group-size-bytes``, 128 MiB).
        row_group_limit: most rows in a row group (``write.parquet.row-group-limit``, 1Mi).
        page_size_bytes: ``write.parquet.page-size-bytes`` (1 MiB).
        page_row_limit: ``write.parquet.page-row-limit`` (20000).
        dict_size_bytes: dictionary page size limit, ``write.parquet.dict-size-bytes`` (2 MiB).
    """

    target_file_size_bytes: int = WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
    compression: str = "zstd"
    compression_level: int | None = None
    row_group_size_bytes: int = PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT
    row_group_limit: int = PARQUET_ROW_GROUP_LIMIT_DEFAULT
    page_size_bytes: int = PARQUET_PAGE_SIZE_BYTES_DEFAULT
    page_row_limit: int = PARQUET_PAGE_ROW_LIMIT_DEFAULT
    dict_size_bytes: int = PARQUET_DICT_SIZE_BYTES_DEFAULT

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, str], *, target_file_size_bytes: int | None = None
    ) -> ParquetWriteOptions:
        """Parse the write properties once.

        Raises:
            ValidationError: naming a property whose value is malformed.
            UnsupportedFeatureError: a codec pyarrow cannot write (``lzo``).
        """
        codec_text = properties.get(PARQUET_COMPRESSION, PARQUET_COMPRESSION_DEFAULT)
        codec = _CODECS.get(codec_text.strip().lower())
        if codec is None:
            if codec_text.strip().lower() == "lzo":
                raise UnsupportedFeatureError(
                    f"table property '{PARQUET_COMPRESSION}': lzo cannot be written"
                )
            raise ValidationError(
                f"table property '{PARQUET_COMPRESSION}' must be one of zstd, snappy, gzip, lz4, brotli, "
                f"uncompressed; not {codec_text!r}"
            )
        level: int | None = None
        if properties.get(PARQUET_COMPRESSION_LEVEL) not in (None, ""):
            level = int_property(properties, PARQUET_COMPRESSION_LEVEL, 0, minimum=-(2**31))
        target = (
            target_file_size_bytes
            if target_file_size_bytes is not None
            else int_property(
                properties, WRITE_TARGET_FILE_SIZE_BYTES, WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT, minimum=1
            )
        )
        if target <= 0:
            raise ValidationError(f"target file size must be positive, not {target}")
        return cls(
            target_file_size_bytes=target,
            compression=codec,
            compression_level=level if codec in _LEVELED else None,
            row_group_size_bytes=int_property(
                properties, PARQUET_ROW_GROUP_SIZE_BYTES, PARQUET_ROW_GROUP_SIZE_BYTES_DEFAULT, minimum=1
            ),
            row_group_limit=int_property(
                properties, PARQUET_ROW_GROUP_LIMIT, PARQUET_ROW_GROUP_LIMIT_DEFAULT, minimum=1
            ),
            page_size_bytes=int_property(
                properties, PARQUET_PAGE_SIZE_BYTES, PARQUET_PAGE_SIZE_BYTES_DEFAULT, minimum=1
            ),
            page_row_limit=int_property(
                properties, PARQUET_PAGE_ROW_LIMIT, PARQUET_PAGE_ROW_LIMIT_DEFAULT, minimum=1
            ),
            dict_size_bytes=int_property(
                properties, PARQUET_DICT_SIZE_BYTES, PARQUET_DICT_SIZE_BYTES_DEFAULT, minimum=1
            ),
        )

    def writer_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``pyarrow.parquet.ParquetWriter``."""
        return {
            "compression": self.compression,
            "compression_level": self.compression_level,
            "data_page_size": self.page_size_bytes,
            "max_rows_per_page": self.page_row_limit,
            "dictionary_pagesize_limit": self.dict_size_bytes,
            # Decimals of precision <= 18 as int32/int64, as Appendix A and Java's writers do.
            "store_decimal_as_integer": True,
            "write_statistics": True,
            # A page index (each page's bounds and offset), as Java's writer (parquet-mr) writes:
            # selective reads skip the pages it rules out (``arrow/page_index.py``).
            "write_page_index": True,
            # Iceberg readers use the Parquet schema and field ids, not an Arrow schema blob.
            "store_schema": False,
        }
