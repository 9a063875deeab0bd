"""Values between Arrow and icefloe's representation (see :mod:`icefloe.spec.types`).

icefloe represents dates as int days, times and timestamps as int micros (nanos for the
``_ns`` types), UUIDs as ``uuid.UUID``, decimals as ``Decimal`` and fixed/binary as ``bytes``.
Arrow's ``to_pylist`` gives ``datetime`` objects instead, so these helpers reinterpret temporal
arrays as their integer storage (a zero-copy view) before converting to Python, which is both
exact (no lost nanoseconds) and fast.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from icefloe.arrow._types import type_to_arrow
from icefloe.errors import ValidationError
from icefloe.spec.types import (
    DateType,
    IcebergType,
    ListType,
    MapType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
)

__all__ = [
    "from_arrow_array",
    "from_arrow_scalar",
    "repeat_value",
    "to_arrow_array",
    "to_arrow_scalar",
]

_TEMPORAL_STORAGE: dict[type[IcebergType], pa.DataType] = {
    DateType: pa.int32(),
    TimeType: pa.int64(),
    TimestampType: pa.int64(),
    TimestamptzType: pa.int64(),
    TimestampNanoType: pa.int64(),
    TimestamptzNanoType: pa.int64(),
}


def _plain(array: pa.Array) -> pa.Array:
    """Decode dictionaries and unwrap extension arrays to their storage."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if isinstance(array.type, pa.DictionaryType):
        array = array.dictionary_decode()
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    return array


def from_arrow_array(array: pa.Array | pa.ChunkedArray, iceberg_type: IcebergType) -> list[Any]:
    """The values of an Arrow array as a list in icefloe's representation (None for nulls).

    Temporal arrays are read through their integer storage, so any Arrow unit is accepted only
    when it already matches the Iceberg type's unit (cast first otherwise).
    """
    array = _plain(array)
    storage = _TEMPORAL_STORAGE.get(type(iceberg_type))
    if storage is not None:
        if pa.types.is_date64(array.type):
            array = array.cast(pa.date32())
        return array.view(storage).to_pylist()  # type: ignore[no-any-return]
    if isinstance(iceberg_type, UUIDType):
        return [None if b is None else uuid.UUID(bytes=b) for b in array.to_pylist()]
    if isinstance(iceberg_type, StructType):
        children = [from_arrow_array(array.field(i), f.field_type) for i, f in enumerate(iceberg_type.fields)]
        names = [f.name for f in iceberg_type.fields]
        valid = array.is_valid().to_pylist()
        return [
            dict(zip(names, row)) if ok else None
            for ok, row in zip(valid, zip(*children) if children else [()] * len(array))
        ]
    if isinstance(iceberg_type, (ListType, MapType)):
        if pa.types.is_fixed_size_list(array.type):
            array = array.cast(pa.list_(array.type.value_field))
        # offsets index the unsliced child array; null entries may cover any range
        offsets = array.offsets.to_numpy(zero_copy_only=False)
        valid = array.is_valid().to_pylist()
        if isinstance(iceberg_type, ListType):
            items = from_arrow_array(array.values, iceberg_type.element_type)
            return [items[offsets[i] : offsets[i + 1]] if ok else None for i, ok in enumerate(valid)]
        keys = from_arrow_array(array.keys, iceberg_type.key_type)
        values = from_arrow_array(array.items, iceberg_type.value_type)
        return [
            dict(zip(keys[offsets[i] : offsets[i + 1]], values[offsets[i] : offsets[i + 1]])) if ok else None
            for i, ok in enumerate(valid)
        ]
    return array.to_pylist()  # type: ignore[no-any-return]


def from_arrow_scalar(scalar: pa.Scalar, iceberg_type: IcebergType) -> Any:
    """One Arrow scalar as a value in icefloe's representation (None for null)."""
    if not scalar.is_valid:
        return None
    return from_arrow_array(pa.repeat(scalar, 1), iceberg_type)[0]


def to_arrow_array(
    values: Sequence[Any], iceberg_type: IcebergType, arrow_type: pa.DataType | None = None
) -> pa.Array:
    """An Arrow array (of ``type_to_arrow(iceberg_type)`` unless given) from icefloe values.

    Raises:
        ValidationError: a value does not fit the type.
    """
    target = arrow_type if arrow_type is not None else type_to_arrow(iceberg_type)
    try:
        return _to_arrow(list(values), iceberg_type, target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
        raise ValidationError(f"values do not fit type {iceberg_type}: {e}") from e


def _to_arrow(values: list[Any], iceberg_type: IcebergType, target: pa.DataType) -> pa.Array:
    if isinstance(iceberg_type, UnknownType):
        return pa.nulls(len(values), target)
    if isinstance(iceberg_type, UUIDType):
        storage = pa.array([None if v is None else v.bytes for v in values], pa.binary(16))
        return (
            pa.ExtensionArray.from_storage(target, storage)
            if isinstance(target, pa.BaseExtensionType)
            else storage
        )
    if isinstance(iceberg_type, StructType):
        mask = pa.array([v is None for v in values], pa.bool_())
        children = []
        for i, f in enumerate(iceberg_type.fields):
            child_values = [None if v is None else _struct_value(v, f.name, i) for v in values]
            children.append(_to_arrow(child_values, f.field_type, target.field(i).type))
        return pa.StructArray.from_arrays(
            children, fields=[target.field(i) for i in range(target.num_fields)], mask=mask
        )
    if isinstance(iceberg_type, ListType):
        lengths = [0 if v is None else len(v) for v in values]
        offsets = pa.array(np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int32))
        flat = [item for v in values if v is not None for item in v]
        elements = _to_arrow(flat, iceberg_type.element_type, target.value_type)
        mask = pa.array([v is None for v in values], pa.bool_())
        return pa.ListArray.from_arrays(offsets, elements, type=target, mask=mask)
    if isinstance(iceberg_type, MapType):
        items = [list(v.items()) if v is not None else None for v in values]
        lengths = [0 if v is None else len(v) for v in items]
        offsets = pa.array(np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int32))
        keys = _to_arrow([k for v in items if v for k, _ in v], iceberg_type.key_type, target.key_type)
        vals = _to_arrow([x for v in items if v for _, x in v], iceberg_type.value_type, target.item_type)
        mask = pa.array([v is None for v in values], pa.bool_())
        return pa.MapArray.from_arrays(offsets, keys, vals, type=target, mask=mask)
    return pa.array(values, type=target)


def _struct_value(value: Any, name: str, index: int) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    return value[index]


def to_arrow_scalar(
    value: Any, iceberg_type: IcebergType, arrow_type: pa.DataType | None = None
) -> pa.Scalar:
    """An Arrow scalar (of ``type_to_arrow(iceberg_type)`` unless given) from an icefloe value."""
    return to_arrow_array([value], iceberg_type, arrow_type)[0]


def repeat_value(
    value: Any, iceberg_type: IcebergType, length: int, arrow_type: pa.DataType | None = None
) -> pa.Array:
    """An array of ``length`` copies of one icefloe value (nulls when ``value`` is None)."""
    target = arrow_type if arrow_type is not None else type_to_arrow(iceberg_type)
    if value is None:
        return pa.nulls(length, target)
    one = to_arrow_array([value], iceberg_type, target)
    if isinstance(iceberg_type, (StructType, ListType, MapType)):
        # pa.repeat does not take every nested scalar; take() of index 0 repeated works for all
        return one.take(pa.array(np.zeros(length, dtype=np.int32)))
    return pa.repeat(one[0], length)
