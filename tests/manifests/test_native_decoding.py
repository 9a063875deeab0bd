"""Manifests and manifest lists decoded natively (arrow-avro) read exactly as with fastavro.

The corpus: manifests icefloe writes here, for format versions 1, 2 and 3 and every codec, with
a partition field of every type and transform, nulls, NaN and -0.0, entries without metrics,
EXISTING and DELETED entries, delete manifests (position, equality, deletion vectors); and the
files Java Iceberg 1.9.2 wrote (``fixtures/``: v1, v2 and v3 tables). PyIceberg's files are
checked in ``tests/interop/test_native_manifests_pyiceberg.py``. Each is decoded both ways and
compared entry by entry, field by field (``tests/support/native_manifests.py``).

Then what stays with fastavro: small files, a field of Avro type null (v3 ``unknown``), files
the native reader rejects or that are damaged (the error is fastavro's, as before), and a
process without the native decoder; each said once in the log, never for a damaged file.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from icefloe.errors import InvalidManifestError
from icefloe.io import LocalFileIO
from icefloe.manifests import ManifestWriter, _native, read_manifest_list, write_manifest_list
from icefloe.manifests._avro_file import read_header
from icefloe.scan._columnar import decode_manifest
from icefloe.spec.conversions import to_bytes
from icefloe.spec.manifest import DataFile, DeleteFile, FileContent, FileFormat, ManifestContent, ManifestFile
from icefloe.spec.partitioning import UNPARTITIONED_SPEC, PartitionSpecBuilder
from icefloe.spec.schema import Schema
from icefloe.spec.types import NestedField
from support.native_manifests import (
    assert_decode_together_alike,
    assert_list_decodes_alike,
    assert_manifest_decodes_alike,
    native_threshold,
)

from .conftest import FIXTURES, relocated

pytestmark = pytest.mark.skipif(not _native.native_available(), reason="needs icefloe[fast] (polars-avro)")

CODECS = ("gzip", "zstd", "snappy", "uncompressed")
TYPES = Schema(
    NestedField(1, "i", "int"),
    NestedField(2, "l", "long"),
    NestedField(3, "s", "string"),
    NestedField(4, "d", "date"),
    NestedField(5, "t", "time"),
    NestedField(6, "ts", "timestamp"),
    NestedField(7, "tstz", "timestamptz"),
    NestedField(8, "dec", "decimal(10, 2)"),
    NestedField(9, "dec2", "decimal(10, 2)"),
    NestedField(10, "big", "decimal(38, 10)"),
    NestedField(11, "u", "uuid"),
    NestedField(12, "bin", "binary"),
    NestedField(13, "b", "boolean"),
    NestedField(14, "f", "float"),
    NestedField(15, "db", "double"),
    NestedField(16, "fx", "fixed[7]"),
    NestedField(17, "ns", "timestamp_ns"),
)


def _spec(format_version: int) -> Any:
    builder = PartitionSpecBuilder(TYPES)
    for field in TYPES.fields:
        if format_version >= 3 or field.name != "ns":
            builder.identity(field.name, f"p_{field.name}")
    builder.bucket("l", 16).bucket("s", 8).bucket("u", 4).truncate("s", 3).truncate("dec", 50)
    return builder.truncate("bin", 2).day("ts").hour("tstz").month("d").year("ts").build()


def _value(rng: random.Random, name: str) -> Any:
    if rng.random() < 0.1:
        return None
    return {
        "i": lambda: rng.randint(-(2**31), 2**31 - 1),
        "l": lambda: rng.randint(-(2**63), 2**63 - 1),
        "s": lambda: rng.choice(["", "a", "héllo", "z" * 40, "日本"]),
        "d": lambda: rng.randint(-20000, 60000),
        "t": lambda: rng.randint(0, 86_400_000_000 - 1),
        "ts": lambda: rng.randint(-(2**55), 2**55),
        "tstz": lambda: rng.randint(-(2**55), 2**55),
        "dec": lambda: Decimal(rng.randint(-(10**9), 10**9)).scaleb(-2),
        "dec2": lambda: Decimal(rng.choice([0, -1, 5])).scaleb(-2),
        "big": lambda: Decimal(rng.randint(-(10**37), 10**37)).scaleb(-10),
        "u": lambda: uuid.UUID(int=rng.getrandbits(128)),
        "bin": lambda: rng.randbytes(rng.randint(0, 9)),
        "b": lambda: rng.random() < 0.5,
        "f": lambda: rng.choice([0.0, -0.0, 1.5, float("nan"), float("inf"), -3.25]),
        "db": lambda: rng.choice([0.0, -0.0, 1e300, float("nan"), -float("inf"), 2.5]),
        "fx": lambda: rng.randbytes(7),
        "ns": lambda: rng.randint(-(2**62), 2**62),
    }[name]()


def _data_file(rng: random.Random, spec: Any, k: int) -> DataFile:
    values = {f.field_id: _value(rng, f.name) for f in TYPES.fields}
    partition = tuple(
        None
        if values[pf.source_id] is None
        else pf.transform.apply(TYPES.find_field(pf.source_id).field_type, values[pf.source_id])  # type: ignore[union-attr]
        for pf in spec.fields
    )
    records = rng.randint(1, 10**6)
    bounds = {
        f.field_id: to_bytes(f.field_type, values[f.field_id])
        for f in TYPES.fields
        if values[f.field_id] is not None and not isinstance(values[f.field_id], float)
    }
    ids = [f.field_id for f in TYPES.fields]
    metrics: dict[str, Any] = {}
    if k % 7 != 3:  # some entries have no metrics maps at all
        metrics = {
            "column_sizes": {i: rng.randint(1, 2**40) for i in ids},
            "value_counts": {i: records for i in ids},
            "null_value_counts": {i: rng.randint(0, records) for i in ids},
            "nan_value_counts": {14: 0, 15: rng.randint(0, 3)},
            "lower_bounds": bounds,
            "upper_bounds": {i: b + b"\x01" for i, b in bounds.items()} if k % 2 else bounds,
        }
    return DataFile(
        file_path=f"s3://bucket/db/t/data/{k:05d}-{uuid.UUID(int=rng.getrandbits(128))}.parquet",
        file_format=FileFormat.PARQUET if k % 9 else FileFormat.AVRO,
        record_count=records,
        file_size_in_bytes=rng.randint(100, 10**9),
        partition=partition,
        split_offsets=(4, 1000) if k % 3 else None,
        sort_order_id=0 if k % 2 else None,
        key_metadata=b"\x01\x02" if k == 5 else None,
        **metrics,
    )


def _write_data(
    tmp_path: Path, format_version: int, codec: str, rng: random.Random, *, partitioned: bool = True
) -> ManifestFile:
    spec = _spec(format_version) if partitioned else UNPARTITIONED_SPEC
    path = str(tmp_path / f"data-v{format_version}-{codec}{'' if partitioned else '-unpartitioned'}.avro")
    writer = ManifestWriter(
        LocalFileIO(),
        path,
        spec=spec,
        schema=TYPES,
        format_version=format_version,
        snapshot_id=11,
        codec=codec,
    )
    for k in range(40):
        file = _data_file(rng, spec, k)
        if k % 10 == 8:
            sequence = 3 if format_version > 1 else None
            writer.existing(file, snapshot_id=7, data_sequence_number=sequence, file_sequence_number=sequence)
        elif k % 10 == 9:
            sequence = 2 if format_version > 1 else None
            writer.delete(file, snapshot_id=8, data_sequence_number=sequence, file_sequence_number=sequence)
        else:
            writer.add(file)
    return writer.close()


def _write_deletes(tmp_path: Path, format_version: int, rng: random.Random) -> ManifestFile:
    schema = Schema(NestedField(1, "id", "long"), NestedField(2, "d", "date"), NestedField(3, "s", "string"))
    spec = PartitionSpecBuilder(schema).day("d").bucket("id", 8).build()
    path = str(tmp_path / f"deletes-v{format_version}.avro")
    writer = ManifestWriter(
        LocalFileIO(),
        path,
        spec=spec,
        schema=schema,
        format_version=format_version,
        snapshot_id=12,
        content=ManifestContent.DELETES,
    )
    for k in range(15):
        partition = (rng.randint(19000, 19010), rng.randint(0, 7))
        target = f"s3://bucket/db/t/data/{k:05d}.parquet"
        common: dict[str, Any] = {"partition": partition, "record_count": rng.randint(1, 50)}
        if k % 3 == 0:
            file = DeleteFile(
                file_path=f"s3://bucket/db/t/data/pos-{k}.parquet",
                file_format=FileFormat.PARQUET,
                file_size_in_bytes=1000 + k,
                content=FileContent.POSITION_DELETES,
                referenced_data_file=target if k % 2 else None,
                lower_bounds={2147483546: target.encode()},
                upper_bounds={2147483546: target.encode()},
                **common,
            )
        elif k % 3 == 1:
            file = DeleteFile(
                file_path=f"s3://bucket/db/t/data/eq-{k}.parquet",
                file_format=FileFormat.PARQUET,
                file_size_in_bytes=900 + k,
                content=FileContent.EQUALITY_DELETES,
                equality_ids=(1, 3) if k % 2 else (1,),
                sort_order_id=0,
                **common,
            )
        elif format_version >= 3:
            file = DeleteFile(
                file_path="s3://bucket/db/t/data/dv.puffin",
                file_format=FileFormat.PUFFIN,
                file_size_in_bytes=5000,
                content=FileContent.POSITION_DELETES,
                referenced_data_file=target,
                content_offset=4 + 40 * k,
                content_size_in_bytes=40,
                **common,
            )
        else:
            continue
        writer.add(file)
    return writer.close()


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_icefloe_manifests_and_lists_decode_alike(tmp_path: Path, format_version: int) -> None:
    rng = random.Random(format_version)
    rows = [_write_data(tmp_path, format_version, codec, rng) for codec in CODECS]
    # Unpartitioned: the empty partition record, which arrow-avro reads only without it.
    rows += [_write_data(tmp_path, format_version, codec, rng, partitioned=False) for codec in CODECS]
    if format_version >= 2:
        rows.append(_write_deletes(tmp_path, format_version, rng))
    for row in rows:
        assert assert_manifest_decodes_alike(Path(row.manifest_path), row) >= 10
    # Decoded together (a few local files from their paths, more as one joined container, one
    # native call), each as alone.
    for codec, count in (("gzip", 3), ("uncompressed", 3), ("gzip", _native.FEW_LOCAL_FILES + 1)):
        same = [
            _write_data(tmp_path / f"{codec}-{count}-{k}", format_version, codec, rng) for k in range(count)
        ]
        assert_decode_together_alike(same)
        unpartitioned = [
            _write_data(tmp_path / f"{codec}-{count}-{k}", format_version, codec, rng, partitioned=False)
            for k in range(count)
        ]
        assert_decode_together_alike(unpartitioned)
    assert_decode_together_alike(rows, together=False)  # different codecs: one by one
    committed = [dataclasses.replace(r, sequence_number=4, min_sequence_number=4) for r in rows] * 4
    for codec in CODECS:
        location = tmp_path / f"list-{codec}.avro"
        write_manifest_list(
            LocalFileIO(), str(location), format_version, 21, 20, 5, committed, 100, codec=codec
        )
        assert len(assert_list_decodes_alike(location)) == len(committed)


def test_java_manifests_and_lists_decode_alike() -> None:
    """Every manifest and manifest list of the Java 1.9.2 fixtures (v1, v2, v3), manifests under
    the list rows Java wrote for them."""
    checked = set()
    for case in sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()):
        for snapshot_list in sorted((FIXTURES / case).glob("snap-*.avro")):
            for row in assert_list_decodes_alike(snapshot_list):
                local = relocated(case, row)
                assert_manifest_decodes_alike(Path(local.manifest_path), local)
                checked.add(local.manifest_path)
            rows = [relocated(case, row) for row in read_manifest_list(LocalFileIO(), str(snapshot_list))]
            if len(rows) > 1:  # together where they share a schema and codec
                assert_decode_together_alike(rows, together=None)
    assert len(checked) == len(list(FIXTURES.glob("*/*-m*.avro")))


def test_small_files_stay_with_fastavro(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rng = random.Random(5)
    row = _write_data(tmp_path, 2, "gzip", rng)
    data = Path(row.manifest_path).read_bytes()
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        _, values = decode_manifest(data, row)
        assert values is None  # natively decoded: 40 entries
        with native_threshold(41):
            _, values = decode_manifest(data, row)
            assert values is not None  # fastavro's flat values: below the threshold
    assert not caplog.records


def test_local_files_decode_from_their_bytes_when_the_file_differs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A local file is decoded natively from its path, but the bytes the caller read decide:
    a file of another size there (an encrypted file's ciphertext), or one of the same size
    that does not decode, leaves the decoding to those bytes, without a word."""
    rng = random.Random(9)
    path = Path(_write_data(tmp_path, 2, "gzip", rng).manifest_path)
    data = path.read_bytes()
    header = read_header(data, str(path))
    expected, _ = _native.decode(data, header, str(path))
    from_bytes, _ = _native.decode(data, header, "mem://elsewhere/m.avro")
    assert expected is not None and from_bytes is not None
    assert repr(from_bytes.to_pydict()) == repr(expected.to_pydict())  # repr: NaN equals NaN
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        for stored in (data + b"longer", bytes(len(data))):
            path.write_bytes(stored)
            batch, reason = _native.decode(data, header, str(path))
            assert reason is None and batch is not None
            assert repr(batch.to_pydict()) == repr(expected.to_pydict())
    assert not caplog.records


def test_null_typed_fields_fall_back_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A v3 ``unknown`` partition field is an Avro ``null`` field, which arrow-avro rejects."""
    schema = Schema(NestedField(1, "id", "long"), NestedField(2, "gone", "unknown"))
    spec = PartitionSpecBuilder(schema).identity("gone").bucket("id", 4).build()
    rows = []
    for k in range(2):
        path = str(tmp_path / f"unknown-{k}.avro")
        writer = ManifestWriter(
            LocalFileIO(), path, spec=spec, schema=schema, format_version=3, snapshot_id=1
        )
        for i in range(20):
            writer.add(
                DataFile(
                    file_path=f"/data/{k}-{i}.parquet",
                    file_format=FileFormat.PARQUET,
                    record_count=1,
                    file_size_in_bytes=10,
                    partition=(None, i % 4),
                )
            )
        rows.append(dataclasses.replace(writer.close(), sequence_number=1, first_row_id=0))
    _native._said.discard("unreadable")
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        for row in rows:
            decoded, values = decode_manifest(Path(row.manifest_path).read_bytes(), row)
            assert values is not None and decoded.count == 20
            assert decoded.partitions[0][0] is None
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and rows[0].manifest_path in warnings[0] and "null" in warnings[0]


@pytest.mark.parametrize("damage", ["truncated", "sync", "deflate"])
def test_damaged_files_fail_as_with_fastavro(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """The native reader does not check the container (a truncated file gives the complete
    blocks' records; a wrong sync marker passes): icefloe frames the blocks itself, and the
    error is fastavro's, as before. A damaged file is not reported as a decoder limitation."""
    row = _write_data(tmp_path, 2, "gzip", random.Random(9))
    path = Path(row.manifest_path)
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) - 40]
    elif damage == "sync":
        data[-3] ^= 0xFF
    else:
        data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    _native._said.discard("unreadable")
    errors = []
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        for threshold in (1, 1 << 62):
            with native_threshold(threshold), pytest.raises(InvalidManifestError) as raised:
                decode_manifest(bytes(data), row)
            errors.append(str(raised.value))
    assert errors[0] == errors[1] and str(path) in errors[0]
    assert not caplog.records


def test_without_the_native_decoder_fastavro_decodes_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    row = _write_data(tmp_path, 2, "gzip", random.Random(3))
    data = Path(row.manifest_path).read_bytes()
    native, _ = decode_manifest(data, row)
    monkeypatch.setattr(_native, "_module", None)  # as when polars-avro is not installed
    monkeypatch.setattr(_native, "_loaded", True)
    monkeypatch.setattr(_native, "_said", set())
    with caplog.at_level(logging.WARNING, logger="icefloe"):
        for _ in range(3):
            decoded, values = decode_manifest(data, row)
            assert values is not None
            assert decoded.file_path == native.file_path
        lists = tmp_path / "list.avro"
        committed = dataclasses.replace(row, sequence_number=1, min_sequence_number=1)
        write_manifest_list(LocalFileIO(), str(lists), 2, 2, None, 1, [committed] * 20)
        assert len(read_manifest_list(LocalFileIO(), str(lists))) == 20
    (warning,) = caplog.records
    assert "icefloe[fast]" in warning.getMessage()


def test_the_native_decoder_does_not_import_polars(tmp_path: Path) -> None:
    """polars-avro's package imports polars (0.3 s, 40 MB); icefloe loads only its reader."""
    row = _write_data(tmp_path, 2, "gzip", random.Random(4))
    code = (
        "import sys, pathlib\n"
        "from icefloe.manifests import _native\n"
        "from icefloe.manifests._avro_file import read_header\n"
        f"data = pathlib.Path({row.manifest_path!r}).read_bytes()\n"
        "batch, _ = _native.decode(data, read_header(data, 'm'), 'm')\n"
        "assert batch is not None and batch.num_rows == 40\n"
        "assert 'polars' not in sys.modules, sorted(m for m in sys.modules if 'polars' in m)\n"
        "import polars_avro\n"  # the package still imports afterwards, reusing the reader
        "assert polars_avro.AvroError is sys.modules['polars_avro._avro_rs'].AvroError\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
