"""Deletion vectors (v3): the ``deletion-vector-v1`` Puffin blob and its Roaring bitmaps.

A deletion vector is the set of deleted row positions of one data file. The blob (Puffin spec,
"``deletion-vector-v1`` blob type") is::

    length (4 bytes, big-endian) = len(magic) + len(vector)
    magic  D1 D3 39 64
    vector: the positions in Roaring's portable 64-bit format
    CRC-32 of magic + vector (4 bytes, big-endian)

The 64-bit format is a little-endian count of 32-bit bitmaps (8 bytes), then per bitmap, in
ascending key order, its key (the high 32 bits of its positions, 4 bytes) and a standard
32-bit Roaring bitmap of the low 32 bits (RoaringFormatSpec "General layout": a cookie, a
descriptive header of 16-bit keys and cardinalities, an optional offset header, then array,
bitset and run containers).

Everything works on numpy arrays of sorted positions, container by container; nothing loops per
position. Writing picks per container what Java's ``runOptimize()`` picks: a run container when
it is smaller than the array (at most 4096 values) or bitset container, so the bytes equal
Java's for the same positions (Java also writes empty bitmaps for the keys below its largest;
this writer omits them, which the format allows and every reader accepts).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection
from typing import Any

import numpy as np

from icefloe.errors import InvalidDataFileError, ValidationError

__all__ = [
    "DV_BLOB_TYPE",
    "DV_MAGIC",
    "MAX_POSITION",
    "deserialize_deletion_vector",
    "deserialize_roaring64",
    "serialize_deletion_vector",
    "serialize_roaring64",
]

#: Puffin blob type of a deletion vector.
DV_BLOB_TYPE = "deletion-vector-v1"
#: The magic bytes that open a deletion vector, after its length.
DV_MAGIC = b"\xd1\xd3\x39\x64"
#: The largest position Java's bitmap accepts (its key must stay below 2**31 - 1).
MAX_POSITION = ((2**31 - 2) << 32) | 0xFFFFFFFF

_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX = 4096  # the largest array container; more values make a bitset
_BITSET_BYTES = 8192
_U16 = np.dtype("<u2")
_U32 = np.dtype("<u4")


class _Corrupt(ValueError):
    """The bytes do not follow the format (raised inside, reported with the file's name)."""


# ---------------------------------------------------------------------------------------------
# the blob


def serialize_deletion_vector(positions: Collection[int] | np.ndarray) -> bytes:
    """The ``deletion-vector-v1`` blob of a set of positions (any order, duplicates allowed).

    Raises:
        ValidationError: a position is negative or beyond :data:`MAX_POSITION`.
    """
    vector = serialize_roaring64(positions)
    body = DV_MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def deserialize_deletion_vector(blob: bytes, *, location: str | None = None) -> np.ndarray:
    """The deleted positions of a ``deletion-vector-v1`` blob: sorted, unique ``int64``.

    Args:
        blob: the blob's bytes (its ``content_size_in_bytes`` from ``content_offset``).
        location: the Puffin file, for error messages.

    Raises:
        InvalidDataFileError: the length, magic or CRC is wrong or the bitmap is malformed,
            naming ``location``.
    """
    where = f" in {location}" if location else ""
    if len(blob) < 12:
        raise InvalidDataFileError(
            f"deletion vector{where} is truncated ({len(blob)} bytes)", location=location
        )
    (length,) = struct.unpack_from(">I", blob, 0)
    if length + 8 != len(blob):
        raise InvalidDataFileError(
            f"deletion vector{where} declares {length} bytes of vector and magic but the blob "
            f"has {len(blob) - 8}",
            location=location,
        )
    body = blob[4 : 4 + length]
    if body[:4] != DV_MAGIC:
        raise InvalidDataFileError(
            f"deletion vector{where} has magic {body[:4].hex()}, expected {DV_MAGIC.hex()}", location=location
        )
    (stored_crc,) = struct.unpack_from(">I", blob, 4 + length)
    actual_crc = zlib.crc32(body)
    if stored_crc != actual_crc:
        raise InvalidDataFileError(
            f"deletion vector{where} fails its CRC-32 check (stored {stored_crc:08x}, computed {actual_crc:08x})",
            location=location,
        )
    try:
        positions, end = _read_roaring64(memoryview(body), 4)
    except _Corrupt as e:
        raise InvalidDataFileError(f"deletion vector{where} is malformed: {e}", location=location) from None
    if end != len(body):
        raise InvalidDataFileError(
            f"deletion vector{where} has {len(body) - end} bytes after its bitmap", location=location
        )
    return positions


# ---------------------------------------------------------------------------------------------
# the portable 64-bit format


def serialize_roaring64(positions: Collection[int] | np.ndarray) -> bytes:
    """Roaring's portable 64-bit serialization of a set of non-negative positions.

    Raises:
        ValidationError: a position is negative or beyond :data:`MAX_POSITION`.
    """
    values = _sorted_positions(positions)
    if len(values) and (values[0] < 0 or values[-1] > MAX_POSITION):
        bad = values[0] if values[0] < 0 else values[-1]
        raise ValidationError(f"deletion vector position {int(bad)} is outside [0, {MAX_POSITION}]")
    keys = (values >> 32).astype(np.int64)
    lows = (values & 0xFFFFFFFF).astype(np.uint32)
    starts = _group_starts(keys)
    parts = [struct.pack("<Q", len(starts))]
    for begin, end in zip(starts, [*starts[1:], len(values)]):
        parts.append(struct.pack("<I", int(keys[begin])))
        parts.append(_serialize_roaring32(lows[begin:end]))
    return b"".join(parts)


def deserialize_roaring64(data: bytes, *, location: str | None = None) -> np.ndarray:
    """The positions of a portable 64-bit Roaring bitmap: sorted, unique ``int64``.

    Raises:
        InvalidDataFileError: the bytes are malformed or have trailing bytes.
    """
    try:
        positions, end = _read_roaring64(memoryview(data), 0)
    except _Corrupt as e:
        where = f" in {location}" if location else ""
        raise InvalidDataFileError(f"Roaring bitmap{where} is malformed: {e}", location=location) from None
    if end != len(data):
        raise InvalidDataFileError(f"Roaring bitmap has {len(data) - end} trailing bytes", location=location)
    return positions


def _sorted_positions(positions: Any) -> np.ndarray:
    if isinstance(positions, np.ndarray):
        array = positions.astype(np.int64, copy=False).ravel()
    else:
        array = np.fromiter(positions, dtype=np.int64, count=len(positions))
    if len(array) > 1 and not bool(np.all(array[1:] > array[:-1])):
        array = np.unique(array)
    return array


def _group_starts(keys: np.ndarray) -> list[int]:
    """Start index of each run of equal values in a sorted array."""
    if len(keys) == 0:
        return []
    return [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist()]


def _read_roaring64(buffer: memoryview, offset: int) -> tuple[np.ndarray, int]:
    count = _unpack("<Q", buffer, offset)
    offset += 8
    if count > 2**31:
        raise _Corrupt(f"bitmap count {count} is impossible")
    chunks: list[np.ndarray] = []
    last_key = -1
    for _ in range(count):
        key = _unpack("<I", buffer, offset)
        offset += 4
        if key >= 2**31:
            raise _Corrupt(f"key {key} has its sign bit set (positions must be below 2**63)")
        if key <= last_key:
            raise _Corrupt(f"keys are not ascending ({key} after {last_key})")
        last_key = key
        lows, offset = _read_roaring32(buffer, offset)
        if len(lows):
            chunks.append((np.int64(key) << 32) | lows.astype(np.int64))
    if not chunks:
        return np.zeros(0, np.int64), offset
    return np.concatenate(chunks), offset


# ---------------------------------------------------------------------------------------------
# 32-bit bitmaps


def _serialize_roaring32(values: np.ndarray) -> bytes:
    """One standard 32-bit Roaring bitmap of sorted unique uint32 values."""
    highs = (values >> 16).astype(np.int64)
    lows = (values & 0xFFFF).astype(np.uint16)
    starts = _group_starts(highs)
    ends = [*starts[1:], len(values)]
    containers: list[bytes] = []
    is_run: list[bool] = []
    header = []
    for begin, end in zip(starts, ends):
        container, run = _container_bytes(lows[begin:end])
        containers.append(container)
        is_run.append(run)
        header.append(struct.pack("<HH", int(highs[begin]), end - begin - 1))
    size = len(containers)
    parts: list[bytes] = []
    if any(is_run):
        parts.append(struct.pack("<I", _SERIAL_COOKIE | ((size - 1) << 16)))
        flags = np.packbits(np.array(is_run, dtype=bool), bitorder="little")
        parts.append(flags.tobytes())
        with_offsets = size >= _NO_OFFSET_THRESHOLD
        start = 4 + len(flags) + 4 * size + (4 * size if with_offsets else 0)
    else:
        parts.append(struct.pack("<II", _SERIAL_COOKIE_NO_RUNCONTAINER, size))
        with_offsets = True
        start = 8 + 8 * size
    parts.extend(header)
    if with_offsets:
        offsets = np.cumsum([0, *(len(c) for c in containers[:-1])], dtype=np.int64) + start
        parts.append(offsets.astype(_U32).tobytes())
    parts.extend(containers)
    return b"".join(parts)


def _container_bytes(lows: np.ndarray) -> tuple[bytes, bool]:
    """The smallest encoding of one container's sorted low 16-bit values, and whether it is a
    run container (Java's choice after ``runOptimize()``)."""
    cardinality = len(lows)
    breaks = np.flatnonzero(np.diff(lows.astype(np.int32)) != 1) + 1
    runs = len(breaks) + 1
    run_size = 2 + 4 * runs
    plain_size = 2 * cardinality if cardinality <= _ARRAY_MAX else _BITSET_BYTES
    if run_size < plain_size:
        run_starts = np.concatenate(([0], breaks))
        run_ends = np.concatenate((breaks, [cardinality]))
        pairs = np.empty(2 * runs, dtype=_U16)
        pairs[0::2] = lows[run_starts]
        pairs[1::2] = (run_ends - run_starts - 1).astype(np.uint16)
        return struct.pack("<H", runs) + pairs.tobytes(), True
    if cardinality <= _ARRAY_MAX:
        return lows.astype(_U16).tobytes(), False
    bits = np.zeros(65536, dtype=bool)
    bits[lows] = True
    return np.packbits(bits, bitorder="little").tobytes(), False


def _read_roaring32(buffer: memoryview, offset: int) -> tuple[np.ndarray, int]:
    """The sorted uint32 values of the 32-bit bitmap at ``offset``, and the offset after it."""
    begin = offset
    cookie = _unpack("<I", buffer, offset)
    offset += 4
    if cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
        size = _unpack("<I", buffer, offset)
        offset += 4
        if size > 65536:
            raise _Corrupt(f"{size} containers (at most 65536)")
        run_flags = np.zeros(size, dtype=bool)
        with_offsets = True
    elif cookie & 0xFFFF == _SERIAL_COOKIE:
        size = (cookie >> 16) + 1
        flag_bytes = (size + 7) // 8
        raw = _take(buffer, offset, flag_bytes)
        offset += flag_bytes
        run_flags = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")[:size].astype(bool)
        with_offsets = size >= _NO_OFFSET_THRESHOLD
    else:
        raise _Corrupt(f"unknown cookie {cookie:#x}")
    header = np.frombuffer(_take(buffer, offset, 4 * size), dtype=_U16).reshape(size, 2)
    offset += 4 * size
    keys = header[:, 0].astype(np.int64)
    cardinalities = header[:, 1].astype(np.int64) + 1
    if size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise _Corrupt("container keys are not ascending")
    if with_offsets:
        offsets = np.frombuffer(_take(buffer, offset, 4 * size), dtype=_U32).astype(np.int64)
        offset += 4 * size
    chunks = []
    for index in range(size):
        if with_offsets and begin + int(offsets[index]) != offset:
            raise _Corrupt(
                f"container {index} is at byte {offset - begin}, its offset says {int(offsets[index])}"
            )
        cardinality = int(cardinalities[index])
        if run_flags[index]:
            values, offset = _read_run(buffer, offset, cardinality)
        elif cardinality <= _ARRAY_MAX:
            values = np.frombuffer(_take(buffer, offset, 2 * cardinality), dtype=_U16)
            offset += 2 * cardinality
            if cardinality > 1 and not bool(np.all(values[1:] > values[:-1])):
                raise _Corrupt(f"array container {index} is not sorted")
        else:
            bits = np.unpackbits(
                np.frombuffer(_take(buffer, offset, _BITSET_BYTES), np.uint8), bitorder="little"
            )
            offset += _BITSET_BYTES
            values = np.flatnonzero(bits)
            if len(values) != cardinality:
                raise _Corrupt(
                    f"bitset container {index} holds {len(values)} values, its header says {cardinality}"
                )
        chunks.append((keys[index] << 16) | values.astype(np.int64))
    if not chunks:
        return np.zeros(0, np.uint32), offset
    return np.concatenate(chunks).astype(np.uint32), offset


def _read_run(buffer: memoryview, offset: int, cardinality: int) -> tuple[np.ndarray, int]:
    runs = _unpack("<H", buffer, offset)
    offset += 2
    pairs = np.frombuffer(_take(buffer, offset, 4 * runs), dtype=_U16).reshape(runs, 2).astype(np.int64)
    offset += 4 * runs
    starts, lengths = pairs[:, 0], pairs[:, 1] + 1
    ends = starts + lengths
    if runs and (int(ends[-1]) > 65536 or (runs > 1 and not bool(np.all(starts[1:] >= ends[:-1])))):
        raise _Corrupt("run container has overlapping or out-of-range runs")
    total = int(lengths.sum())
    if total != cardinality:
        raise _Corrupt(f"run container holds {total} values, its header says {cardinality}")
    # Each value is its run's start plus its index within the run.
    run_of = np.repeat(np.arange(runs), lengths)
    first_index = np.cumsum(lengths) - lengths
    values = starts[run_of] + (np.arange(total) - first_index[run_of])
    return values, offset


def _take(buffer: memoryview, offset: int, length: int) -> bytes:
    if offset + length > len(buffer):
        raise _Corrupt(f"needs {length} bytes at {offset}, only {max(len(buffer) - offset, 0)} remain")
    return bytes(buffer[offset : offset + length])


def _unpack(fmt: str, buffer: memoryview, offset: int) -> int:
    size = struct.calcsize(fmt)
    value: int = struct.unpack(fmt, _take(buffer, offset, size))[0]
    return value
