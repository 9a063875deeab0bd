"""Deletion vectors: the ``deletion-vector-v1`` blob and Roaring's portable 64-bit format.

The Java fixture ``fixtures/java-1.9.2-dv.puffin`` was written by Iceberg 1.9.2 on Spark 3.5
(``DELETE FROM t WHERE (id % 2 = 0 AND id < 65536) OR (id >= 70000 AND id < 80000) OR id IN
(140000, 140007, 150000)`` on one data file of ids 0..199999, merge-on-read, v3): one bitmap
with a bitset, a run and an array container.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icefloe.errors import InvalidDataFileError, ValidationError
from icefloe.io import LocalFileIO
from icefloe.io.deletion_vector import (
    DV_MAGIC,
    MAX_POSITION,
    deserialize_deletion_vector,
    deserialize_roaring64,
    serialize_deletion_vector,
    serialize_roaring64,
)
from icefloe.io.puffin import PuffinReader

FIXTURES = Path(__file__).parent / "fixtures"
JAVA_DV = FIXTURES / "java-1.9.2-dv.puffin"
JAVA_POSITIONS = np.unique(
    np.concatenate([np.arange(0, 65536, 2), np.arange(70000, 80000), [140000, 140007, 150000]])
)


def _blob(vector: bytes) -> bytes:
    body = DV_MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _bitmap32_no_runs(containers: list[tuple[int, bytes, int]]) -> bytes:
    """A 32-bit bitmap with the no-run cookie: (key, container bytes, cardinality) each."""
    header = b"".join(struct.pack("<HH", key, card - 1) for key, _, card in containers)
    start = 8 + 8 * len(containers)
    offsets = []
    for _, data, _ in containers:
        offsets.append(struct.pack("<I", start))
        start += len(data)
    body = b"".join(data for _, data, _ in containers)
    return struct.pack("<II", 12346, len(containers)) + header + b"".join(offsets) + body


# ---- the Java fixture ------------------------------------------------------------------------


def test_java_deletion_vector_decodes_and_reencodes_byte_for_byte() -> None:
    reader = PuffinReader(LocalFileIO(), str(JAVA_DV))
    ((blob, data),) = reader.read_all()
    assert blob.properties["cardinality"] == str(len(JAVA_POSITIONS))
    positions = deserialize_deletion_vector(data, location=str(JAVA_DV))
    assert positions.dtype == np.int64
    np.testing.assert_array_equal(positions, JAVA_POSITIONS)
    # Java writes a bitset (container 0), a run (1) and an array container (2); so do we.
    assert serialize_deletion_vector(positions) == data


def test_blob_layout_length_magic_and_crc_are_big_endian() -> None:
    blob = serialize_deletion_vector([3, 1, 2])
    (length,) = struct.unpack(">I", blob[:4])
    assert length == len(blob) - 8
    assert blob[4:8] == bytes.fromhex("d1d33964")
    assert struct.unpack(">I", blob[-4:])[0] == zlib.crc32(blob[4:-4])
    vector = blob[8:-4]
    assert struct.unpack_from("<Q", vector, 0)[0] == 1  # one 32-bit bitmap
    assert struct.unpack_from("<I", vector, 8)[0] == 0  # with key 0
    # 1, 2, 3 is one run: a run container (2 + 4 bytes) beats an array (6 bytes) by nothing,
    # so it stays an array, as Java's runOptimize decides.
    assert struct.unpack_from("<I", vector, 12)[0] == 12346


# ---- round trips -----------------------------------------------------------------------------


def test_empty_vector() -> None:
    vector = serialize_roaring64([])
    assert vector == struct.pack("<Q", 0)
    assert deserialize_roaring64(vector).tolist() == []
    assert deserialize_deletion_vector(serialize_deletion_vector([])).tolist() == []


def test_positions_beyond_32_bits_use_more_keys() -> None:
    positions = [5, 2**32 - 1, 2**32, 2**32 + 7, 3 * 2**32 + 65536, MAX_POSITION]
    vector = serialize_roaring64(positions)
    assert struct.unpack_from("<Q", vector, 0)[0] == 4  # keys 0, 1, 3, 2**31 - 2
    assert deserialize_roaring64(vector).tolist() == positions


def test_duplicates_and_order_do_not_matter() -> None:
    assert deserialize_roaring64(serialize_roaring64([9, 1, 9, 4, 1])).tolist() == [1, 4, 9]
    assert deserialize_roaring64(serialize_roaring64(np.array([7, 7, 0]))).tolist() == [0, 7]


@pytest.mark.parametrize("bad", [-1, MAX_POSITION + 1])
def test_positions_out_of_range_are_refused(bad: int) -> None:
    with pytest.raises(ValidationError, match=str(bad)):
        serialize_deletion_vector([0, bad])


def test_container_kinds_chosen_by_size() -> None:
    dense = np.arange(0, 65536, 3)  # 21846 values, no runs: a bitset (8 KiB)
    ranges = np.arange(70000, 100000)  # one run in container 1
    sparse = np.array([200000, 200002])  # an array in container 3
    vector = serialize_roaring64(np.concatenate([dense, ranges, sparse]))
    cookie = struct.unpack_from("<I", vector, 12)[0]
    assert cookie & 0xFFFF == 12347 and (cookie >> 16) + 1 == 3  # three containers, with runs
    assert vector[16] == 0b010  # the second is a run container
    keys_and_cards = struct.unpack_from("<6H", vector, 17)
    assert keys_and_cards == (0, len(dense) - 1, 1, len(ranges) - 1, 3, 1)
    decoded = deserialize_roaring64(vector)
    np.testing.assert_array_equal(decoded, np.concatenate([dense, ranges, sparse]))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 70_000),
            st.integers(0, MAX_POSITION),
            st.integers(2**32 - 70_000, 2**32 + 70_000),
        ),
        max_size=300,
    ),
    st.lists(st.tuples(st.integers(0, 2**33), st.integers(1, 9000)), max_size=3),
)
def test_round_trip_random_sets(points: list[int], ranges: list[tuple[int, int]]) -> None:
    chunks = [np.array(points, dtype=np.int64)] + [np.arange(s, s + n, dtype=np.int64) for s, n in ranges]
    expected = np.unique(np.concatenate(chunks))
    blob = serialize_deletion_vector(expected[::-1].copy())
    np.testing.assert_array_equal(deserialize_deletion_vector(blob), expected)


# ---- decoding hand-built bytes ----------------------------------------------------------------


def test_run_containers_from_hand_built_bytes() -> None:
    # SERIAL_COOKIE with 2 containers (size - 1 = 1 in the high half), both runs; below
    # NO_OFFSET_THRESHOLD, so no offset header.
    runs_key0 = struct.pack("<H", 2) + struct.pack("<HHHH", 10, 4, 100, 0)  # 10..14, 100
    runs_key5 = struct.pack("<H", 1) + struct.pack("<HH", 65530, 5)  # 65530..65535
    bitmap = (
        struct.pack("<I", 12347 | (1 << 16))
        + bytes([0b11])
        + struct.pack("<HHHH", 0, 6 - 1, 5, 6 - 1)
        + runs_key0
        + runs_key5
    )
    vector = struct.pack("<Q", 1) + struct.pack("<I", 2) + bitmap
    decoded = deserialize_deletion_vector(_blob(vector))
    base = 2 << 32
    expected = [10, 11, 12, 13, 14, 100] + [(5 << 16) + v for v in range(65530, 65536)]
    assert decoded.tolist() == [base + v for v in expected]


def test_run_cookie_with_offsets_and_mixed_containers() -> None:
    # Four containers (offset header present): run, array, bitset, array.
    run = struct.pack("<H", 1) + struct.pack("<HH", 0, 65535)  # the whole container
    array = struct.pack("<HH", 1, 65535)
    bits = np.zeros(65536, dtype=bool)
    bits[::2] = True
    bitset = np.packbits(bits, bitorder="little").tobytes()
    array2 = struct.pack("<H", 7)
    containers = [(0, run, 65536), (1, array, 2), (2, bitset, 32768), (9, array2, 1)]
    flags = bytes([0b0001])
    head = struct.pack("<I", 12347 | (3 << 16)) + flags
    header = b"".join(struct.pack("<HH", k, c - 1) for k, _, c in containers)
    start = len(head) + len(header) + 4 * len(containers)
    offsets = b""
    for _, data, _ in containers:
        offsets += struct.pack("<I", start)
        start += len(data)
    bitmap = head + header + offsets + b"".join(d for _, d, _ in containers)
    vector = struct.pack("<Q", 1) + struct.pack("<I", 0) + bitmap
    decoded = deserialize_roaring64(vector)
    expected = np.concatenate(
        [np.arange(65536), [65536 + 1, 65536 + 65535], 2 * 65536 + np.arange(0, 65536, 2), [9 * 65536 + 7]]
    )
    np.testing.assert_array_equal(decoded, expected)


def test_empty_32_bit_bitmaps_as_java_writes_for_gap_keys() -> None:
    # Java's RoaringPositionBitmap serializes every key below its largest, empty ones included.
    empty = _bitmap32_no_runs([])
    one = _bitmap32_no_runs([(0, struct.pack("<H", 3), 1)])
    vector = struct.pack("<Q", 3) + struct.pack("<I", 0) + empty + struct.pack("<I", 1) + empty
    vector += struct.pack("<I", 2) + one
    assert deserialize_roaring64(vector).tolist() == [(2 << 32) + 3]


# ---- corrupt input -----------------------------------------------------------------------------


def test_bad_crc_names_the_file() -> None:
    blob = bytearray(serialize_deletion_vector([1, 2, 3]))
    blob[-1] ^= 0xFF
    with pytest.raises(InvalidDataFileError, match=r"CRC-32.*|s3://b/x\.puffin") as raised:
        deserialize_deletion_vector(bytes(blob), location="s3://b/x.puffin")
    assert raised.value.location == "s3://b/x.puffin"
    assert "CRC" in str(raised.value) and "s3://b/x.puffin" in str(raised.value)


def test_bad_magic_length_and_truncation() -> None:
    good = serialize_deletion_vector([1, 2, 3])
    bad_magic = good[:4] + b"\x00\x00\x00\x00" + good[8:]
    with pytest.raises(InvalidDataFileError, match="magic"):
        deserialize_deletion_vector(bad_magic, location="f.puffin")
    with pytest.raises(InvalidDataFileError, match="declares"):
        deserialize_deletion_vector(good[:-1], location="f.puffin")
    with pytest.raises(InvalidDataFileError, match="truncated"):
        deserialize_deletion_vector(good[:6], location="f.puffin")


@pytest.mark.parametrize(
    ("vector", "message"),
    [
        (struct.pack("<Q", 1) + struct.pack("<I", 0), "needs 4 bytes"),
        (struct.pack("<Q", 1) + struct.pack("<I", 0) + struct.pack("<I", 99), "unknown cookie"),
        (struct.pack("<Q", 1) + struct.pack("<I", 2**31) + _bitmap32_no_runs([]), "sign bit"),
        (
            struct.pack("<Q", 2)
            + struct.pack("<I", 3)
            + _bitmap32_no_runs([])
            + struct.pack("<I", 3)
            + _bitmap32_no_runs([]),
            "not ascending",
        ),
        (
            struct.pack("<Q", 1)
            + struct.pack("<I", 0)
            + _bitmap32_no_runs([(0, struct.pack("<HH", 5, 2), 2)]),
            "not sorted",
        ),
        (
            struct.pack("<Q", 1)
            + struct.pack("<I", 0)
            + struct.pack("<I", 12347)
            + bytes([1])
            + struct.pack("<HH", 0, 9)
            + struct.pack("<H", 1)
            + struct.pack("<HH", 0, 3),
            "header says 10",
        ),
    ],
    ids=["truncated", "cookie", "sign-bit", "keys-order", "array-order", "run-cardinality"],
)
def test_malformed_bitmaps_raise_typed_errors(vector: bytes, message: str) -> None:
    with pytest.raises(InvalidDataFileError, match=message):
        deserialize_deletion_vector(_blob(vector), location="f.puffin")
