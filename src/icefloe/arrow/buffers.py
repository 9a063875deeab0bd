"""Arrow arrays to numpy and back through their buffers, without pyarrow's own conversions.

pyarrow imports pandas (0.3 s and 40 MB, in a process that plans and never needs it) the first
time it converts between Arrow and Python or numpy values (``to_numpy``, ``pa.array``,
``pa.scalar``, ``fill_null``, ``cast``). Planning reads its columns through their buffers here
instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["booleans", "int64_array", "null_mask", "numpy_view", "validity"]

_DTYPES: dict[pa.DataType, np.dtype[Any]] = {
    kind: np.dtype(name)
    for kind, name in (
        (pa.int8(), "i1"),
        (pa.int16(), "i2"),
        (pa.int32(), "i4"),
        (pa.int64(), "i8"),
        (pa.uint8(), "u1"),
        (pa.uint16(), "u2"),
        (pa.uint32(), "u4"),
        (pa.uint64(), "u8"),
        (pa.float32(), "f4"),
        (pa.float64(), "f8"),
    )
}


def numpy_view(array: pa.Array) -> np.ndarray | None:
    """The values of a fixed-width integer or float array, as a numpy view of its buffer (the
    values under nulls are undefined); None for an array of another type."""
    dtype = _DTYPES.get(array.type)
    if dtype is None:
        return None
    return np.frombuffer(
        array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize
    )


def _bits(buffer: pa.Buffer | None, array: pa.Array, default: bool) -> np.ndarray:
    """The bitmap ``buffer`` of ``array`` (its validity or boolean values), a bool per element;
    ``default`` for every element when there is no buffer."""
    n = len(array)
    if buffer is None:
        return np.full(n, default, dtype=bool)
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    result: np.ndarray = bits[array.offset : array.offset + n].astype(bool)
    return result


def validity(array: pa.Array) -> np.ndarray:
    """Per element, whether it is not null."""
    return _bits(array.buffers()[0], array, True)


def null_mask(array: pa.Array) -> np.ndarray | None:
    """Which values are null (None: none is)."""
    if not array.null_count:
        return None
    return ~validity(array)


def booleans(array: pa.BooleanArray) -> tuple[np.ndarray, np.ndarray]:
    """A boolean array's values (false where null) and validity."""
    valid = validity(array)
    return _bits(array.buffers()[1], array, False) & valid, valid


def int64_array(values: Any) -> pa.Array:
    """Integers (a numpy array or a list) as an Arrow int64 array, e.g. for ``take``."""
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])
