"""Partition transforms on whole Arrow arrays (the scalar reference is :mod:`icefloe.spec.transforms`).

:func:`apply_transform` gives, for every value of an Arrow array, what
:meth:`Transform.apply <icefloe.spec.transforms.Transform.apply>` gives for that value, computed
with numpy and Arrow compute kernels over the whole array: no Python work per value. Nulls map
to nulls. :func:`bucket_hashes` exposes the spec's Appendix B hash (Murmur3 x86 32, seed 0) the
bucket transform is built on.

Murmur3 runs in numpy across all values at once: fixed-width inputs (int, long, date, time,
timestamps, uuid, fixed) as columns of 32-bit words; variable-length inputs (string, binary,
the minimal bytes of decimals) block by block, where step ``j`` mixes the ``j``-th 4-byte word of
every value that has one. Values are ordered longest first so that the values still active at
step ``j`` are a prefix, and the total work is proportional to the number of bytes.

Decisions shared with the scalar transforms, all as Java Iceberg:

* ``day`` produces ``date32`` (Java's result type ``date``); ``year``, ``month``, ``hour`` and
  ``bucket`` produce ``int32``; ``truncate`` keeps the input's Arrow type; ``void`` produces
  nulls of the source type.
* Time transforms floor values before 1970 (the hour before the epoch is -1).
* ``truncate`` of int and long evaluates ``v - (((v % W) + W) % W)`` in wrapping 32/64-bit
  arithmetic, so values within ``W`` of the minimum wrap around as they do in Java.
* ``bucket`` of a nanosecond timestamp hashes its microseconds (floor), so both precisions
  share buckets.
* ``hour`` of a microsecond timestamp past year 246,970 (or before -243,000) does not fit an
  int; it wraps to 32 bits like Java's ``(int)`` cast (the scalar transform returns the exact
  count). No other result can leave the int range.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow._types import type_to_arrow
from icefloe.errors import ValidationError
from icefloe.spec.conversions import MICROS_PER_DAY, NANOS_PER_DAY
from icefloe.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    MonthTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = ["apply_transform", "bucket_hashes"]

_NANO_TYPES = (TimestampNanoType, TimestamptzNanoType)
_MICRO_TYPES = (TimestampType, TimestamptzType)
_INT_MAX = 0x7FFFFFFF


# ---------------------------------------------------------------------------------------------
# the entry points


def apply_transform(
    transform: Transform, source_type: IcebergType, array: pa.Array | pa.ChunkedArray
) -> pa.Array:
    """Apply ``transform`` to every value of ``array`` (values of ``source_type``).

    Args:
        transform: any known transform.
        source_type: the Iceberg type of the values.
        array: the values, in the Arrow type of ``source_type`` (``type_to_arrow``) or one that
            casts to it safely (another timestamp unit, ``large_string``, a dictionary...).
            Chunked arrays are combined.

    Returns:
        One result per value, nulls for nulls, in the Arrow type of
        ``transform.result_type(source_type)`` (``date32`` for ``day``), except that
        ``identity`` returns the (combined, dictionary-decoded) input itself and ``truncate``
        keeps the input's string/binary flavour (``large_string`` stays ``large_string``).

    Raises:
        ValidationError: ``transform`` cannot be applied to ``source_type``, or ``array`` does
            not hold values of ``source_type``.
        UnsupportedFeatureError: ``transform`` is unknown to this version.
    """
    if not transform.can_transform(source_type):
        raise ValidationError(f"cannot apply transform {transform} to type {source_type}")
    transform.bind(source_type)  # unknown transforms refuse to be applied here as well
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if transform.is_void:
        return pa.nulls(len(array), type_to_arrow(transform.result_type(source_type)))
    if isinstance(array.type, pa.DictionaryType):
        if transform.is_identity:
            return array.dictionary_decode()
        # Each distinct value once, then spread to the rows: the dictionary is the distinct set.
        return apply_transform(transform, source_type, array.dictionary).take(array.indices)
    if transform.is_identity:
        return array
    array = _coerce(array, source_type)
    if isinstance(transform, TimeTransform):
        return _time_transform(transform, source_type, array)
    if isinstance(transform, BucketTransform):
        hashes = _hashes(source_type, array)
        buckets = ((hashes & np.uint32(_INT_MAX)) % np.uint32(transform.num_buckets)).astype(np.int32)
        return _with_nulls(pa.int32(), buckets, array)
    if isinstance(transform, TruncateTransform):
        return _truncate(transform.width, source_type, array)
    raise ValidationError(f"cannot apply transform {transform} to Arrow arrays")  # pragma: no cover


def bucket_hashes(source_type: IcebergType, array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The spec's Appendix B 32-bit hash of every value of ``array`` as signed ``int32``.

    This is :meth:`BucketTransform.hash <icefloe.spec.transforms.BucketTransform.hash>` over a
    whole array (before ``& Integer.MAX_VALUE`` and the modulo); nulls stay null.

    Raises:
        ValidationError: the type cannot be bucketed, or ``array`` does not hold its values.
    """
    if not BucketTransform(1).can_transform(source_type):
        raise ValidationError(f"cannot bucket type {source_type}")
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if isinstance(array.type, pa.DictionaryType):
        return bucket_hashes(source_type, array.dictionary).take(array.indices)
    array = _coerce(array, source_type)
    return _with_nulls(pa.int32(), _hashes(source_type, array).view(np.int32), array)


# ---------------------------------------------------------------------------------------------
# inputs and outputs


def _expected_arrow_type(source_type: IcebergType) -> pa.DataType:
    if isinstance(source_type, UUIDType):
        return pa.binary(16)  # the storage of the uuid extension type
    return type_to_arrow(source_type)


def _coerce(array: pa.Array, source_type: IcebergType) -> pa.Array:
    """``array`` as the plain Arrow type the kernels read for ``source_type``.

    String and binary arrays keep 32- or 64-bit offsets; views become 64-bit offsets. Other
    types are cast safely (a cast that loses information is an error)."""
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    actual = array.type
    if isinstance(source_type, StringType):
        if pa.types.is_string(actual) or pa.types.is_large_string(actual):
            return array
        target: pa.DataType = pa.large_string()
    elif isinstance(source_type, BinaryType):
        if pa.types.is_binary(actual) or pa.types.is_large_binary(actual):
            return array
        target = pa.large_binary()
    elif isinstance(source_type, DecimalType):
        if pa.types.is_decimal128(actual) and actual.scale == source_type.scale:
            return array
        target = _expected_arrow_type(source_type)
    elif isinstance(source_type, (*_MICRO_TYPES, *_NANO_TYPES)):
        # The zone of a timestamp does not change its instant: any zone is read as is.
        target = _expected_arrow_type(source_type)
        if pa.types.is_timestamp(actual) and actual.unit == target.unit:
            return array
    else:
        target = _expected_arrow_type(source_type)
        if actual == target:
            return array
    try:
        return array.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ValidationError(f"cannot read Arrow {actual} values as Iceberg {source_type}: {e}") from e


def _fixed_values(array: pa.Array, dtype: str) -> np.ndarray:
    """The values buffer of a fixed-width array as numpy (zero copy; null slots hold anything)."""
    width = np.dtype(dtype).itemsize
    byte_width = array.type.byte_width
    buffer = array.buffers()[1]
    if buffer is None or len(array) == 0:
        raw = np.zeros(len(array) * byte_width, dtype=np.uint8)
    else:
        start = array.offset * byte_width
        raw = np.frombuffer(buffer, dtype=np.uint8, count=len(array) * byte_width, offset=start)
    return (
        raw.view(dtype) if width == byte_width else raw.view(dtype).reshape(len(array), byte_width // width)
    )


def _validity(array: pa.Array) -> pa.Buffer | None:
    """A validity bitmap for ``array`` starting at bit 0 (None when there are no nulls)."""
    if array.null_count == 0:
        return None
    if array.offset == 0 and array.buffers()[0] is not None:
        return array.buffers()[0]
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _with_nulls(arrow_type: pa.DataType, values: np.ndarray, nulls_from: pa.Array) -> pa.Array:
    """An Arrow array of ``values`` with the nulls of ``nulls_from`` (same length)."""
    data = pa.py_buffer(np.ascontiguousarray(values))
    return pa.Array.from_buffers(
        arrow_type, len(values), [_validity(nulls_from), data], null_count=nulls_from.null_count
    )


def _long_values(source_type: IcebergType, array: pa.Array) -> np.ndarray:
    """int64 values of an int/long/date/time/timestamp array (dates widened to days as long)."""
    if isinstance(source_type, (IntegerType, DateType)):
        return _fixed_values(array, "<i4").astype(np.int64)
    return _fixed_values(array, "<i8")


# ---------------------------------------------------------------------------------------------
# time transforms


def _civil_year_month(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(year, month) of day counts since 1970-01-01 (int64), proleptic Gregorian, any year."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month


def _time_transform(transform: TimeTransform, source_type: IcebergType, array: pa.Array) -> pa.Array:
    values = _long_values(source_type, array)
    if isinstance(source_type, DateType):
        days = values
    else:
        per_day = NANOS_PER_DAY if isinstance(source_type, _NANO_TYPES) else MICROS_PER_DAY
        if isinstance(transform, HourTransform):
            # Beyond 2**31 hours (year 246,970) this wraps like Java's (int) cast.
            hours = np.floor_divide(values, per_day // 24).astype(np.int32)
            return _with_nulls(pa.int32(), hours, array)
        days = np.floor_divide(values, per_day)
    if isinstance(transform, DayTransform):
        return _with_nulls(pa.date32(), days.astype(np.int32), array)
    year, month = _civil_year_month(days)
    if isinstance(transform, YearTransform):
        result = year - 1970
    elif isinstance(transform, MonthTransform):
        result = (year - 1970) * 12 + month - 1
    else:  # pragma: no cover - the four time transforms are handled above
        raise ValidationError(f"unsupported time transform {transform}")
    return _with_nulls(pa.int32(), result.astype(np.int32), array)


# ---------------------------------------------------------------------------------------------
# truncate


def _truncate(width: int, source_type: IcebergType, array: pa.Array) -> pa.Array:
    if isinstance(source_type, (IntegerType, LongType)):
        dtype = np.int32 if isinstance(source_type, IntegerType) else np.int64
        values = _fixed_values(array, "<i4" if dtype is np.int32 else "<i8")
        w = dtype(width)
        # Java's expression step by step; numpy array arithmetic wraps like Java's, and fmod
        # (the remainder with the dividend's sign) is Java's '%'.
        rem = np.fmod(values, w)
        rem += w
        np.fmod(rem, w, out=rem)
        return _with_nulls(array.type, values - rem, array)
    if isinstance(source_type, DecimalType):
        return _truncate_decimal(width, array)
    if isinstance(source_type, StringType):
        # utf8_slice_codeunits counts code points (Java's UnicodeUtil.truncateString does too).
        return pc.utf8_slice_codeunits(array, 0, width)
    return pc.binary_slice(array, 0, width)


def _decimal_halves(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(low 64 bits as uint64, high 64 bits as int64) of each decimal128 unscaled value."""
    pairs = _fixed_values(array, "<u8")
    return pairs[:, 0], pairs[:, 1].view(np.int64)


def _truncate_decimal(width: int, array: pa.Array) -> pa.Array:
    lo, hi = _decimal_halves(array)
    w = np.uint64(width)
    # floor-mod of the 128-bit value hi * 2**64 + lo by W < 2**31, from the mods of its halves;
    # every product and sum stays below 2**63.
    hi_mod = np.remainder(hi, np.int64(width)).view(np.uint64)
    rem = (hi_mod * np.uint64((1 << 64) % width) + lo % w) % w
    # value - rem, with the borrow from the low half
    out_lo = lo - rem
    out_hi = hi - (lo < rem).astype(np.int64)
    out = np.empty((len(lo), 2), dtype=np.uint64)
    out[:, 0] = out_lo
    out[:, 1] = out_hi.view(np.uint64)
    # The result can have one digit more than the precision (Java keeps it too); Arrow does not
    # check precisions of arrays built from buffers.
    return _with_nulls(array.type, out, array)


# ---------------------------------------------------------------------------------------------
# Murmur3 x86 32 over numpy arrays; everything uint32, wrapping


_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_TAIL_MASKS = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF], dtype=np.uint32)


def _mix(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    """One block: h ^= mix(k); h = rotl(h, 13) * 5 + 0xe6546b64 (k is consumed)."""
    k *= _C1
    k = (k << np.uint32(15)) | (k >> np.uint32(17))
    k *= _C2
    h = h ^ k
    h = (h << np.uint32(13)) | (h >> np.uint32(19))
    h *= np.uint32(5)
    h += np.uint32(0xE6546B64)
    return h


def _mix_tail(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The tail word (zero-padded; zero when there is no tail, which leaves h unchanged)."""
    k *= _C1
    k = (k << np.uint32(15)) | (k >> np.uint32(17))
    k *= _C2
    result: np.ndarray = h ^ k
    return result


def _finalize(h: np.ndarray, lengths: np.ndarray | int) -> np.ndarray:
    h ^= np.asarray(lengths).astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def _hash_words(words: np.ndarray, length: int) -> np.ndarray:
    """Hash rows of equal ``length`` bytes given as (rows, ceil(length / 4)) little-endian words,
    zero-padded after ``length``."""
    h = np.zeros(words.shape[0], dtype=np.uint32)
    for j in range(length // 4):
        h = _mix(h, words[:, j].copy())
    if length % 4:
        h = _mix_tail(h, words[:, length // 4].copy())
    return _finalize(h, length)


def _hash_fixed_bytes(matrix: np.ndarray) -> np.ndarray:
    """Hash each row of a (rows, L) uint8 matrix."""
    rows, length = matrix.shape
    padded_width = -(-length // 4) * 4
    if padded_width != length:
        padded = np.zeros((rows, padded_width), dtype=np.uint8)
        padded[:, :length] = matrix
        matrix = padded
    return _hash_words(np.ascontiguousarray(matrix).view("<u4"), length)


def _hash_longs(values: np.ndarray) -> np.ndarray:
    """Hash int64 values as their 8 little-endian bytes (Appendix B ``hashLong``)."""
    words = np.ascontiguousarray(values, dtype="<i8").view("<u4").reshape(-1, 2)
    return _hash_words(words, 8)


def _hash_var(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Hash ``data[starts[i] : starts[i] + lengths[i]]`` for every i (data: uint8)."""
    count = len(starts)
    # Four zero bytes after the data make every 4-byte read in bounds, and zero the tail words.
    padded = np.zeros(len(data) + 4, dtype=np.uint8)
    padded[: len(data)] = data
    # word_at[p] is the little-endian uint32 of bytes p..p+3: an unaligned view, no copy.
    word_at = np.ndarray((len(data) + 1,), dtype="<u4", buffer=padded, strides=(1,))
    blocks = lengths >> 2
    most = int(blocks.max()) if count else 0
    h = np.zeros(count, dtype=np.uint32)
    if most:
        # Longest values first: the values still having a j-th block are then a prefix.
        key = (most - blocks).astype(np.uint16 if most < 1 << 16 else np.int64)
        order = np.argsort(key, kind="stable")  # a radix sort for 16-bit keys
        # active[j] = how many values have more than j blocks
        active = count - np.searchsorted(blocks[order][::-1], np.arange(most), side="right")
        positions = starts[order]
        hashes = np.zeros(count, dtype=np.uint32)
        for j in range(most):
            n = int(active[j])
            hashes[:n] = _mix(hashes[:n], word_at[positions[:n] + 4 * j])
        h[order] = hashes
    tails = lengths & 3
    h = _mix_tail(h, word_at[starts + 4 * blocks] & _TAIL_MASKS[tails])
    return _finalize(h, lengths)


def _var_binary_parts(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data bytes, starts, lengths) of a string/binary array with 32- or 64-bit offsets."""
    offset_type = (
        "<i8" if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type) else "<i4"
    )
    _, offsets_buffer, data_buffer = array.buffers()[:3]
    count = len(array)
    if offsets_buffer is None or count == 0:
        empty = np.zeros(count, dtype=np.int64)
        return np.zeros(0, dtype=np.uint8), empty, empty
    item = np.dtype(offset_type).itemsize
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type, count=count + 1, offset=array.offset * item)
    offsets = offsets.astype(np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    if data_buffer is None or first == last:
        data = np.zeros(0, dtype=np.uint8)
    else:  # only the bytes of this (possibly sliced) array
        data = np.frombuffer(data_buffer, dtype=np.uint8, count=last - first, offset=first)
    return data, offsets[:-1] - first, offsets[1:] - offsets[:-1]


def _decimal_min_bytes(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The minimal big-endian two's-complement bytes of each unscaled value (Java's
    ``BigInteger.toByteArray``), as a zero-padded (rows, 16) uint8 matrix and the lengths."""
    lo, hi = _decimal_halves(array)
    negative = hi < 0
    # a value needs as many bytes as its non-negative image x (~v when negative) plus a sign bit
    x_lo = np.where(negative, ~lo, lo)
    x_hi = np.where(negative, ~hi, hi).view(np.uint64)
    lengths = np.ones(len(lo), dtype=np.int64)
    for k in range(1, 16):
        bit = 8 * k - 1  # x >= 2**bit needs more than k bytes
        if bit < 64:
            lengths += (x_hi > 0) | (x_lo >= np.uint64(1 << bit))
        else:
            lengths += x_hi >= np.uint64(1 << (bit - 64))
    big_endian = _fixed_values(array, "<u8").view(np.uint8).reshape(-1, 16)[:, ::-1]
    columns = np.arange(16)
    # left-align the last `length` bytes of each row
    source = np.minimum(16 - lengths[:, None] + columns, 15)
    matrix = np.take_along_axis(big_endian, source, axis=1)
    matrix[columns >= lengths[:, None]] = 0
    return np.ascontiguousarray(matrix), lengths


def _hash_decimals(array: pa.Array) -> np.ndarray:
    matrix, lengths = _decimal_min_bytes(array)
    padded = np.zeros((len(lengths), 20), dtype=np.uint8)  # one zero word after the longest
    padded[:, :16] = matrix
    words = padded.view("<u4")
    blocks = lengths >> 2
    h = np.zeros(len(lengths), dtype=np.uint32)
    for j in range(4):
        h = np.where(j < blocks, _mix(h, words[:, j].copy()), h)
    h = _mix_tail(h, words[np.arange(len(lengths)), blocks].copy())
    return _finalize(h, lengths)


def _hashes(source_type: IcebergType, array: pa.Array) -> np.ndarray:
    """Unsigned Murmur3 hashes (uint32) of every slot of a coerced array (nulls: anything)."""
    if isinstance(source_type, (IntegerType, LongType, DateType, TimeType, *_MICRO_TYPES)):
        return _hash_longs(_long_values(source_type, array))
    if isinstance(source_type, _NANO_TYPES):
        return _hash_longs(np.floor_divide(_long_values(source_type, array), 1000))
    if isinstance(source_type, DecimalType):
        return _hash_decimals(array)
    if isinstance(source_type, (UUIDType, FixedType)):
        return _hash_fixed_bytes(_fixed_values(array, "u1").reshape(len(array), array.type.byte_width))
    if isinstance(source_type, (StringType, BinaryType)):
        return _hash_var(*_var_binary_parts(array))
    raise ValidationError(f"cannot bucket type {source_type}")  # pragma: no cover
