"""Metrics modes and the column metrics of written Parquet files."""

from __future__ import annotations

import logging
import math
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icefloe.arrow.schema import schema_to_arrow, to_requested_schema
from icefloe.errors import ValidationError
from icefloe.io import load_file_io
from icefloe.spec.conversions import from_bytes
from icefloe.spec.manifest import DataFile
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.schema import Schema
from icefloe.spec.sorting import build_sort_order
from icefloe.spec.types import (
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)
from icefloe.write import (
    MetricsConfig,
    MetricsMode,
    footer_metrics,
    truncate_binary_max,
    truncate_binary_min,
    truncate_string_max,
    truncate_string_min,
    write_data_files,
)
from write._cases import MAX_CP, nested_schema, nested_table, primitive_schema, primitive_table

NAN = float("nan")


def write_one(
    tmp_path: Path, schema: Schema, table: pa.Table, properties: dict[str, str] | None = None
) -> DataFile:
    files = write_data_files(
        load_file_io({}, str(tmp_path)),
        table_location=str(tmp_path / "t"),
        properties=properties or {},
        schema=schema,
        spec=PartitionSpec(),
        data=table,
    )
    assert len(files) == 1
    return files[0]


def bounds(data_file: DataFile, schema: Schema) -> dict[str, tuple[Any, Any]]:
    """Decoded (lower, upper) by column name; None where a bound is missing."""
    result = {}
    assert data_file.lower_bounds is not None and data_file.upper_bounds is not None
    for field_id, name in schema.id_to_name().items():
        field_type = schema.find_type(field_id)
        assert field_type is not None
        low = data_file.lower_bounds.get(field_id)
        high = data_file.upper_bounds.get(field_id)
        if low is not None or high is not None:
            result[name] = (
                None if low is None else from_bytes(field_type, low),
                None if high is None else from_bytes(field_type, high),
            )
    return result


def by_name(mapping: Any, schema: Schema) -> dict[str, int]:
    names = schema.id_to_name()
    return {names[k]: v for k, v in (mapping or {}).items()}


# ---------------------------------------------------------------------------------------------
# modes and config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("none", MetricsMode("none")),
        ("Counts", MetricsMode("counts")),
        ("FULL", MetricsMode("full")),
        ("truncate(16)", MetricsMode("truncate", 16)),
        ("TRUNCATE(1)", MetricsMode("truncate", 1)),
    ],
)
def test_parse_mode(text: str, expected: MetricsMode) -> None:
    mode = MetricsMode.parse(text)
    assert mode == expected
    assert MetricsMode.parse(str(mode)) == mode


@pytest.mark.parametrize("text", ["truncate(0)", "truncate(-1)", "truncate", "some", "truncate(x)"])
def test_parse_invalid_mode(text: str) -> None:
    with pytest.raises(ValidationError):
        MetricsMode.parse(text)


SCHEMA3 = Schema(
    NestedField(1, "a", LongType()),
    NestedField(2, "s", StructType(NestedField(3, "x", StringType()), NestedField(4, "y", IntegerType()))),
    NestedField(5, "l", ListType(6, StringType())),
)


def test_config_defaults_to_truncate_16() -> None:
    config = MetricsConfig.from_properties({}, SCHEMA3)
    assert config.default_mode == MetricsMode.truncate(16)
    assert config.column_mode("s.x") == MetricsMode.truncate(16)


def test_config_default_and_column_overrides() -> None:
    config = MetricsConfig.from_properties(
        {
            "write.metadata.metrics.default": "counts",
            "write.metadata.metrics.column.s.x": "full",
            "write.metadata.metrics.column.a": "none",
            "write.metadata.metrics.column.l.element": "truncate(3)",
        },
        SCHEMA3,
    )
    assert config.column_mode("s.x") == MetricsMode("full")
    assert config.column_mode("a") == MetricsMode("none")
    assert config.column_mode("l.element") == MetricsMode.truncate(3)
    assert config.column_mode("s.y") == MetricsMode("counts")


def test_config_ignores_invalid_modes(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        config = MetricsConfig.from_properties(
            {"write.metadata.metrics.default": "bogus", "write.metadata.metrics.column.a": "truncate(0)"},
            SCHEMA3,
        )
    assert config.default_mode == MetricsMode.truncate(16)
    assert config.column_mode("a") == MetricsMode.truncate(16)
    assert "bogus" in caplog.text


def test_config_wide_tables_keep_metrics_for_the_first_columns() -> None:
    config = MetricsConfig.from_properties(
        {"write.metadata.metrics.max-inferred-column-defaults": "2"}, SCHEMA3
    )
    assert config.default_mode == MetricsMode("none")
    assert config.column_mode("a") == MetricsMode.truncate(16)
    assert config.column_mode("s.x") == MetricsMode.truncate(16)
    assert config.column_mode("l.element") == MetricsMode("none")
    # an explicit default wins over the inference
    explicit = MetricsConfig.from_properties(
        {
            "write.metadata.metrics.max-inferred-column-defaults": "2",
            "write.metadata.metrics.default": "full",
        },
        SCHEMA3,
    )
    assert explicit.column_mode("l.element") == MetricsMode("full")


def test_config_rejects_non_integer_max_inferred() -> None:
    with pytest.raises(ValidationError, match="max-inferred-column-defaults"):
        MetricsConfig.from_properties({"write.metadata.metrics.max-inferred-column-defaults": "x"}, SCHEMA3)


def test_config_promotes_sorted_columns() -> None:
    order = build_sort_order(SCHEMA3, ["s.y", "bucket(4, a)"])
    config = MetricsConfig.from_properties(
        {"write.metadata.metrics.default": "none"}, SCHEMA3, sort_order=order
    )
    assert config.column_mode("s.y") == MetricsMode.truncate(16)
    assert config.column_mode("a") == MetricsMode("none")  # bucket does not preserve order
    # explicit column settings win over the promotion
    config = MetricsConfig.from_properties(
        {"write.metadata.metrics.default": "none", "write.metadata.metrics.column.s.y": "counts"},
        SCHEMA3,
        sort_order=order,
    )
    assert config.column_mode("s.y") == MetricsMode("counts")


# ---------------------------------------------------------------------------------------------
# truncation


@pytest.mark.parametrize(
    ("value", "length", "lower", "upper"),
    [
        ("abc", 5, "abc", "abc"),
        ("abcdef", 3, "abc", "abd"),
        ("héllo wörld", 2, "hé", "hê"),
        ("日本語テキスト", 3, "日本語", "日本\u8a9f"),  # U+8A9E + 1
        ("a" + MAX_CP * 3, 2, "a" + MAX_CP, "b"),
        (MAX_CP * 3, 2, MAX_CP * 2, None),
        ("a\ud7ffxyz", 2, "a\ud7ff", "a\ue000"),  # skip the surrogate range
        ("az\U0001f600\U0001f600", 3, "az\U0001f600", "az\U0001f601"),
    ],
)
def test_truncate_string(value: str, length: int, lower: str, upper: str | None) -> None:
    assert truncate_string_min(value, length) == lower
    assert truncate_string_max(value, length) == upper
    if upper is not None:
        assert upper >= value and len(upper) <= length


@pytest.mark.parametrize(
    ("value", "length", "lower", "upper"),
    [
        (b"abc", 3, b"abc", b"abc"),
        (b"abcd", 3, b"abc", b"abd"),
        (b"a\xff\xffz", 3, b"a\xff\xff", b"b"),
        (b"\xff\xff\xff", 2, b"\xff\xff", None),
        (b"\x00\x00\x01", 1, b"\x00", b"\x01"),
    ],
)
def test_truncate_binary(value: bytes, length: int, lower: bytes, upper: bytes | None) -> None:
    assert truncate_binary_min(value, length) == lower
    assert truncate_binary_max(value, length) == upper


# ---------------------------------------------------------------------------------------------
# metrics of written files


def test_metrics_of_every_primitive_type(tmp_path: Path) -> None:
    schema = primitive_schema()
    data_file = write_one(tmp_path, schema, primitive_table())
    assert data_file.record_count == 6
    values = by_name(data_file.value_counts, schema)
    assert set(values.values()) == {6}  # nulls and NaN included
    assert set(values) == set(schema.id_to_name().values())
    nulls = by_name(data_file.null_value_counts, schema)
    assert nulls == {
        "b": 1, "b_true": 2, "i": 1, "l": 1, "f": 1, "f_negzero": 4, "f_poszero": 1, "f_nan_only": 2,
        "f_inf": 1, "d": 1, "d_zeros": 1, "d_nan_only": 0, "d_inf": 1, "dec9": 1, "dec18": 1, "dec38": 1,
        "dt": 1, "ts": 1, "tstz": 2, "s": 1, "s_empty": 2, "s_nulls": 6, "s_long": 1, "s_maxcp": 1,
        "s_nobound": 1, "s_surrogate": 1, "fx": 1, "bin": 1, "bin_nobound": 1, "bin_nulls": 6, "uuid": 1,
        "t": 1, "ts_ns": 1, "tstz_ns": 2,
    }  # fmt: skip
    # NaN counts for float and double columns only
    assert by_name(data_file.nan_value_counts, schema) == {
        "f": 1, "f_negzero": 0, "f_poszero": 0, "f_nan_only": 4, "f_inf": 1,
        "d": 1, "d_zeros": 0, "d_nan_only": 6, "d_inf": 1,
    }  # fmt: skip
    decoded = bounds(data_file, schema)
    expected = {
        "b": (False, True),
        "b_true": (True, True),
        "i": (-(2**31), 2**31 - 1),
        "l": (-(2**63), 2**63 - 1),
        "f": (-2.25, 1.5),
        "f_negzero": (-0.0, -0.0),
        "f_poszero": (0.0, 0.0),
        "f_inf": (-math.inf, math.inf),
        "d": (-1e-300, 1e300),
        "d_zeros": (-0.0, 0.0),
        "d_inf": (-math.inf, math.inf),
        "dec9": (Decimal("-9999999.99"), Decimal("1234567.89")),
        "dec18": (Decimal("-99999999999999.9999"), Decimal("99999999999999.9999")),
        "dec38": (
            Decimal("-9999999999999999999999999999.9999999999"),
            Decimal("9999999999999999999999999999.9999999999"),
        ),
        "dt": (-719162, 2932896),  # 0001-01-01 .. 9999-12-31
        "ts": (-2208988800000000, 9223286400000000),
        "tstz": (-302486399999999, 1893456000000000),
        "s": ("", "b"),
        "s_empty": ("", ""),
        "s_long": ("a", "日本語のテキストはここで十六文存"),  # 16 code points, last one + 1
        "s_maxcp": ("0", "b"),  # "a" + U+10FFFF...: only the "a" can be incremented
        "s_nobound": (MAX_CP, None),  # nothing can be incremented: no upper bound
        "s_surrogate": ("\ud7ff", "\ud7ff" * 15 + "\ue000"),
        "fx": (b"\x00" * 20, b"\xff" * 20),  # fixed is never truncated
        "bin": (b"", None),
        "bin_nobound": (b"\xff" * 16, None),
        "uuid": (uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)),
        "t": (0, 86_399_999_999),
        "ts_ns": (-5_000_000_000_000_000_000, 1_700_000_000_123_456_789),
        "tstz_ns": (-(2**62), 2**62),
    }
    assert decoded == expected
    # signed zeros survive (== would not tell them apart)
    assert math.copysign(1, decoded["f_negzero"][1]) == -1
    assert math.copysign(1, decoded["d_zeros"][0]) == -1 and math.copysign(1, decoded["d_zeros"][1]) == 1
    assert math.copysign(1, decoded["f_poszero"][0]) == 1
    assert data_file.column_sizes is not None
    assert set(data_file.column_sizes) == set(schema.id_to_name())


def test_truncated_bounds_contain_every_value(tmp_path: Path) -> None:
    schema = primitive_schema()
    table = primitive_table()
    data_file = write_one(tmp_path, schema, table)
    decoded = bounds(data_file, schema)
    for name in ("s", "s_long", "s_maxcp", "s_nobound", "s_surrogate", "bin", "bin_nobound"):
        low, high = decoded[name]
        for value in table.column(name).to_pylist():
            if value is not None:
                assert low <= value
                assert high is None or value <= high


def test_nested_columns(tmp_path: Path) -> None:
    schema = nested_schema()
    data_file = write_one(tmp_path, schema, nested_table())
    names = schema.id_to_name()
    leaves = {
        "id",
        "st.x",
        "st.y",
        "st.inner.z",
        "st.inner.w",
        "lst.element",
        "m.key",
        "m.value",
        "lst_st.element.q",
    }
    assert set(by_name(data_file.column_sizes, schema)) == leaves
    # inside lists and maps: a column size and nothing else, as Java
    counted = {"id", "st.x", "st.y", "st.inner.z", "st.inner.w"}
    assert set(by_name(data_file.value_counts, schema)) == counted
    assert set(by_name(data_file.null_value_counts, schema)) == counted
    assert set(by_name(data_file.nan_value_counts, schema)) == {"st.x", "st.inner.z"}
    # Java counts float values only where the enclosing structs are non-null; footer counts
    # of other types cover every row
    assert by_name(data_file.value_counts, schema) == {
        "id": 5,
        "st.x": 4,
        "st.y": 5,
        "st.inner.z": 3,
        "st.inner.w": 5,
    }
    assert by_name(data_file.null_value_counts, schema) == {
        "id": 0,
        "st.x": 1,
        "st.y": 2,
        "st.inner.z": 1,
        "st.inner.w": 3,
    }
    assert by_name(data_file.nan_value_counts, schema) == {"st.x": 1, "st.inner.z": 1}
    decoded = bounds(data_file, schema)
    assert decoded == {
        "id": (1, 5),
        "st.x": (-4.0, 1.5),
        "st.y": (-2, 9),
        "st.inner.z": (-0.0, -0.0),
        "st.inner.w": ("a", "zz"),
    }
    assert {names[i] for i in (data_file.lower_bounds or {})} == set(decoded)


@pytest.mark.parametrize(
    ("mode", "has_counts", "has_bounds", "string_bounds"),
    [
        ("none", False, False, None),
        ("counts", True, False, None),
        ("truncate(2)", True, True, ("ab", "bd")),
        ("full", True, True, ("abcdefgh", "bcdef")),
    ],
)
def test_metrics_modes(
    tmp_path: Path, mode: str, has_counts: bool, has_bounds: bool, string_bounds: tuple[str, str] | None
) -> None:
    schema = Schema(
        NestedField(1, "s", StringType()), NestedField(2, "f", FloatType()), NestedField(3, "n", LongType())
    )
    table = to_requested_schema(
        pa.table(
            {"s": ["abcdefgh", "bcdef", None], "f": pa.array([1.0, NAN, None], pa.float32()), "n": [1, 2, 3]}
        ),
        schema,
    )
    # the per-column setting applies to s and f; n keeps the default
    data_file = write_one(
        tmp_path,
        schema,
        table,
        {"write.metadata.metrics.column.s": mode, "write.metadata.metrics.column.f": mode},
    )
    for field_id in (1, 2):
        assert (field_id in (data_file.column_sizes or {})) == has_counts
        assert (field_id in (data_file.value_counts or {})) == has_counts
        assert (field_id in (data_file.null_value_counts or {})) == has_counts
        assert (field_id in (data_file.lower_bounds or {})) == has_bounds
        assert (field_id in (data_file.upper_bounds or {})) == has_bounds
    assert (2 in (data_file.nan_value_counts or {})) == has_counts
    if has_counts:
        assert data_file.value_counts is not None and data_file.null_value_counts is not None
        assert data_file.value_counts[1] == 3 and data_file.null_value_counts[1] == 1
        assert data_file.nan_value_counts == {2: 1}
    decoded = bounds(data_file, schema)
    assert decoded.get("s") == string_bounds
    assert decoded["n"] == (1, 3)


def test_default_mode_none_with_column_override(tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "a", LongType()), NestedField(2, "b", StringType()))
    table = to_requested_schema(pa.table({"a": [1, 2], "b": ["x", "y"]}), schema)
    data_file = write_one(
        tmp_path,
        schema,
        table,
        {"write.metadata.metrics.default": "none", "write.metadata.metrics.column.b": "full"},
    )
    assert data_file.value_counts == {2: 2}
    assert data_file.column_sizes is not None and set(data_file.column_sizes) == {2}
    assert bounds(data_file, schema) == {"b": ("x", "y")}


def test_bounds_merge_across_row_groups(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "d", DoubleType()), NestedField(2, "s", StringType()), NestedField(3, "n", LongType())
    )
    table = to_requested_schema(
        pa.table(
            {
                "d": [0.0, 5.0, NAN, -0.0, 1.0, None],
                "s": ["m", "n", "zz", "a", None, "b"],
                "n": [10, 20, 30, -5, 7, 100],
            }
        ),
        schema,
    )
    data_file = write_one(tmp_path, schema, table, {"write.parquet.row-group-limit": "2"})
    metadata = pq.ParquetFile(data_file.file_path).metadata
    assert metadata.num_row_groups == 3
    assert bounds(data_file, schema) == {"d": (-0.0, 5.0), "s": ("a", "zz"), "n": (-5, 100)}
    assert math.copysign(1, bounds(data_file, schema)["d"][0]) == -1
    assert data_file.nan_value_counts == {1: 1}
    assert data_file.null_value_counts == {1: 1, 2: 1, 3: 0}


def test_footer_metrics_is_java_file_metrics(tmp_path: Path) -> None:
    """Without the writer's float measurements, floats come from the footer: no NaN counts."""
    schema = primitive_schema()
    data_file = write_one(tmp_path, schema, primitive_table())
    metrics = footer_metrics(pq.ParquetFile(data_file.file_path).metadata, schema)
    assert metrics.nan_value_counts == {}
    assert metrics.value_counts == data_file.value_counts
    assert metrics.column_sizes == data_file.column_sizes
    for name in ("s", "dec38", "uuid", "ts"):
        field_id = schema.field(name).field_id
        assert metrics.lower_bounds is not None and data_file.lower_bounds is not None
        assert metrics.lower_bounds[field_id] == data_file.lower_bounds[field_id]
    # floats: NaN is never a bound in the footer either
    f_id = schema.field("f").field_id
    assert metrics.lower_bounds is not None and metrics.upper_bounds is not None
    assert from_bytes(FloatType(), metrics.upper_bounds[f_id]) == 1.5
    assert schema.field("f_nan_only").field_id not in metrics.lower_bounds


def test_footer_metrics_match_columns_by_field_id(tmp_path: Path) -> None:
    """Files from other writers: columns in another order, columns the table lacks."""
    schema = Schema(NestedField(1, "a", LongType()), NestedField(2, "b", StringType()))
    arrow_schema = pa.schema(
        [
            pa.field("b", pa.string(), metadata={b"PARQUET:field_id": b"2"}),
            pa.field("extra", pa.int32(), metadata={b"PARQUET:field_id": b"7"}),
            pa.field("a", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
        ]
    )
    path = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"b": ["x", None], "extra": [1, 2], "a": [5, 3]}, schema=arrow_schema), path)
    metrics = footer_metrics(pq.ParquetFile(path).metadata, schema)
    assert metrics.value_counts == {2: 2, 1: 2}
    assert metrics.null_value_counts == {2: 1, 1: 0}
    assert metrics.lower_bounds == {2: b"x", 1: (3).to_bytes(8, "little")}
    # without field ids the columns cannot be matched
    pq.write_table(pa.table({"a": [1]}), tmp_path / "no_ids.parquet")
    with pytest.raises(ValidationError, match="field ids"):
        footer_metrics(pq.ParquetFile(tmp_path / "no_ids.parquet").metadata, schema)


def test_schema_to_arrow_round_trip_of_cases() -> None:
    # the fixture tables really have the table's Arrow schema (field ids included)
    for schema, table in ((primitive_schema(), primitive_table()), (nested_schema(), nested_table())):
        assert table.schema.equals(schema_to_arrow(schema), check_metadata=True)
