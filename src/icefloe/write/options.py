"""Parquet write settings from table properties (Java's ``TableProperties`` names and defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icefloe.errors import UnsupportedFeatureError, ValidationError
from icefloe.spec.properties import int_property

__all__ = ["ParquetWriteOptions"]

TARGET_FILE_SIZE_BYTES = "write.target-file-size-bytes"
COMPRESSION_CODEC = "write.parquet.compression-codec"
COMPRESSION_LEVEL = "write.parquet.compression-level"
ROW_GROUP_SIZE_BYTES = "write.parquet.row-group-size-bytes"
ROW_GROUP_LIMIT = "write.parquet.row-group-limit"  # rows; PyIceberg's property, not Java's
PAGE_SIZE_BYTES = "write.parquet.page-size-bytes"
PAGE_ROW_LIMIT = "write.parquet.page-row-limit"
DICT_SIZE_BYTES = "write.parquet.dict-size-bytes"

_TARGET_FILE_SIZE_DEFAULT = 512 * 1024 * 1024
_ROW_GROUP_SIZE_DEFAULT = 128 * 1024 * 1024
_ROW_GROUP_LIMIT_DEFAULT = 1024 * 1024
_PAGE_SIZE_DEFAULT = 1024 * 1024
_PAGE_ROW_LIMIT_DEFAULT = 20_000
_DICT_SIZE_DEFAULT = 2 * 1024 * 1024

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

    target_file_size_bytes: int = _TARGET_FILE_SIZE_DEFAULT
    compression: str = "zstd"
    compression_level: int | None = None
    row_group_size_bytes: int = _ROW_GROUP_SIZE_DEFAULT
    row_group_limit: int = _ROW_GROUP_LIMIT_DEFAULT
    page_size_bytes: int = _PAGE_SIZE_DEFAULT
    page_row_limit: int = _PAGE_ROW_LIMIT_DEFAULT
    dict_size_bytes: int = _DICT_SIZE_DEFAULT

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, str], *, target_file_size_bytes: int | None = None
    ) -> ParquetWriteOptions:
        """Parse the write properties once.

        Raises:
            ValidationError: naming a property whose value is malformed.
            UnsupportedFeatureError: a codec pyarrow cannot write (``lzo``).
        """
        codec_text = properties.get(COMPRESSION_CODEC, "zstd")
        codec = _CODECS.get(codec_text.strip().lower())
        if codec is None:
            if codec_text.strip().lower() == "lzo":
                raise UnsupportedFeatureError(f"table property '{COMPRESSION_CODEC}': lzo cannot be written")
            raise ValidationError(
                f"table property '{COMPRESSION_CODEC}' must be one of zstd, snappy, gzip, lz4, brotli, "
                f"uncompressed; not {codec_text!r}"
            )
        level: int | None = None
        if properties.get(COMPRESSION_LEVEL) not in (None, ""):
            level = int_property(properties, COMPRESSION_LEVEL, 0, minimum=-(2**31))
        target = (
            target_file_size_bytes
            if target_file_size_bytes is not None
            else int_property(properties, TARGET_FILE_SIZE_BYTES, _TARGET_FILE_SIZE_DEFAULT, minimum=1)
        )
        if target <= 0:
            raise ValidationError(f"target file size must be positive, not {target}")
        return cls(
            target_file_size_bytes=target,
            compression=codec,
            compression_level=level if codec in _LEVELED else None,
            row_group_size_bytes=int_property(
                properties, ROW_GROUP_SIZE_BYTES, _ROW_GROUP_SIZE_DEFAULT, minimum=1
            ),
            row_group_limit=int_property(properties, ROW_GROUP_LIMIT, _ROW_GROUP_LIMIT_DEFAULT, minimum=1),
            page_size_bytes=int_property(properties, PAGE_SIZE_BYTES, _PAGE_SIZE_DEFAULT, minimum=1),
            page_row_limit=int_property(properties, PAGE_ROW_LIMIT, _PAGE_ROW_LIMIT_DEFAULT, minimum=1),
            dict_size_bytes=int_property(properties, DICT_SIZE_BYTES, _DICT_SIZE_DEFAULT, minimum=1),
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
            # Iceberg readers use the Parquet schema and field ids, not an Arrow schema blob.
            "store_schema": False,
        }
