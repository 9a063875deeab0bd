"""Rebuilding Arrow arrays into the exact shape of an Iceberg type (private).

One recursive walk serves both directions:

- reading a data file (:mod:`icefloe.arrow.reader`): children are matched by field id, a
  missing field becomes its ``initial_default`` (or a constant, or nulls), and file types are
  promoted (int -> long, ...);
- conforming data to a table before writing (``to_requested_schema``): children are matched by
  name, a missing field becomes its ``write_default`` (or nulls; required ones fail), extra
  columns and nulls in required fields fail.

The output of :func:`project_columns` always has the types of ``type_to_arrow(target)``, so
batches projected from different sources concatenate.

Nested arrays are rebuilt from their children without copying values: lists and maps keep
their offsets (which index the unsliced child array) and validity; structs keep validity.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow._types import arrow_type_to_iceberg, field_id_of
from icefloe.arrow.convert import repeat_value
from icefloe.errors import InvalidDataFileError, InvalidSchemaError, ValidationError
from icefloe.spec.types import (
    BinaryType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    UnknownType,
    UUIDType,
)

__all__ = ["ReadRules", "Rules", "WriteRules", "project_columns"]

_NAIVE_TS = (TimestampType, TimestampNanoType)
_TZ_TS = (TimestamptzType, TimestamptzNanoType)
_UUID = pa.uuid()


def _plain_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if isinstance(t, pa.DictionaryType) else t


def _source_iceberg_type(t: pa.DataType) -> IcebergType | None:
    try:
        return arrow_type_to_iceberg(_plain_type(t), format_version=3)
    except InvalidSchemaError:
        return None


def _is_list_like(t: pa.DataType) -> bool:
    types = pa.types
    return bool(
        types.is_list(t)
        or types.is_large_list(t)
        or types.is_fixed_size_list(t)
        or types.is_list_view(t)
        or types.is_large_list_view(t)
    )


class Rules:
    """How one direction matches, fills, casts and checks. Subclasses override the hooks."""

    check_nulls = False
    verb = "read"
    #: Dictionary arrays of the target's value type are kept as they are (not decoded).
    keep_dictionaries = False

    def matcher(self, sources: Sequence[pa.Field]) -> Callable[[NestedField], int | None]:
        """A function giving the index of the source child that holds a target field, or None."""
        raise NotImplementedError

    def missing(self, target: NestedField, target_field: pa.Field, length: int, path: str) -> pa.Array:
        raise NotImplementedError

    def extra(self, sources: Sequence[pa.Field], used: set[int], path: str) -> None:
        """Called with the source children no target field matched."""

    def error(self, message: str) -> Exception:
        raise NotImplementedError

    def promotion_allowed(self, source: IcebergType, target: IcebergType, arrow_source: pa.DataType) -> bool:
        raise NotImplementedError

    # ---- shared helpers ----------------------------------------------------------------------

    def default_fill(
        self,
        target: NestedField,
        target_field: pa.Field,
        length: int,
        default: Any,
        path: str,
        *,
        write: bool,
    ) -> pa.Array:
        """A column of ``default`` (a struct default fills each child from its own default)."""
        field_type = target.field_type
        if default is not None and isinstance(field_type, StructType):
            arrow_type = target_field.type
            children = [
                self.default_fill(
                    child,
                    arrow_type.field(i),
                    length,
                    child.write_default if write else child.initial_default,
                    f"{path}.{child.name}",
                    write=write,
                )
                for i, child in enumerate(field_type.fields)
            ]
            return pa.StructArray.from_arrays(children, fields=list(arrow_type))
        try:
            return repeat_value(default, field_type, length, target_field.type)
        except ValidationError as e:
            raise self.error(f"invalid default for column '{path}': {e}") from e


class ReadRules(Rules):
    """Reading a data file: match by id, fill from constants / initial defaults / nulls.

    Args:
        location: the file, for error messages.
        constants: values by field id for fields the file lacks (identity partition values,
            metadata columns such as ``_file``).
        special: arrays by field id for fields the file lacks, for this batch (``_pos``).
    """

    def __init__(
        self, location: str, constants: dict[int, Any] | None = None, *, keep_dictionaries: bool = False
    ):
        self.location = location
        self.constants = constants or {}
        self.special: dict[int, pa.Array] = {}
        self.keep_dictionaries = keep_dictionaries

    def matcher(self, sources: Sequence[pa.Field]) -> Callable[[NestedField], int | None]:
        by_id: dict[int, int] = {}
        for i, f in enumerate(sources):
            fid = field_id_of(f)
            if fid is not None:
                by_id.setdefault(fid, i)
        return lambda target: by_id.get(target.field_id)

    def missing(self, target: NestedField, target_field: pa.Field, length: int, path: str) -> pa.Array:
        special = self.special.get(target.field_id)
        if special is not None:
            return special
        if target.field_id in self.constants:
            # a constant is a whole value (a struct constant holds its fields' values)
            try:
                return repeat_value(
                    self.constants[target.field_id], target.field_type, length, target_field.type
                )
            except ValidationError as e:
                raise ValidationError(f"invalid constant for column '{path}': {e}") from e
        if target.required and target.initial_default is None:
            # as Java: a required column added later always has an initial default
            raise self.error(f"required column '{path}' (id {target.field_id}) is missing")
        return self.default_fill(target, target_field, length, target.initial_default, path, write=False)

    def error(self, message: str) -> Exception:
        return InvalidDataFileError(f"{message} in data file {self.location}", location=self.location)

    def promotion_allowed(self, source: IcebergType, target: IcebergType, arrow_source: pa.DataType) -> bool:
        if source == target:
            return True
        if isinstance(source, UnknownType):
            return True
        if isinstance(source, IntegerType) and isinstance(target, LongType):
            return True
        if isinstance(source, FloatType) and isinstance(target, DoubleType):
            return True
        if isinstance(source, DecimalType) and isinstance(target, DecimalType):
            return source.scale == target.scale and source.precision <= target.precision
        if isinstance(source, DateType) and isinstance(target, _NAIVE_TS):
            return True
        # INT96 and other legacy timestamps come back as timestamp[ns] of either kind.
        if isinstance(source, (*_NAIVE_TS, *_TZ_TS)) and isinstance(target, (*_NAIVE_TS, *_TZ_TS)):
            return True
        if isinstance(target, UUIDType):
            return isinstance(source, FixedType) and source.length == 16
        return isinstance(target, FixedType) and isinstance(source, BinaryType)


class WriteRules(Rules):
    """Conforming data to a table schema: match by name, fill write defaults, check nulls.

    Conversions are lossless or checked: promotions, other Arrow forms of the same Iceberg
    type, long -> int and decimal precision/scale changes (checked by the cast), timestamp
    units (checked), double -> float (rounded to the nearest float, as Java's cast).
    """

    check_nulls = True
    verb = "written"

    def matcher(self, sources: Sequence[pa.Field]) -> Callable[[NestedField], int | None]:
        by_name: dict[str, int] = {}
        for i, f in enumerate(sources):
            if f.name in by_name:
                raise ValidationError(f"duplicate column name '{f.name}' in the data")
            by_name[f.name] = i
        return lambda target: by_name.get(target.name)

    def missing(self, target: NestedField, target_field: pa.Field, length: int, path: str) -> pa.Array:
        if target.write_default is None and target.required:
            raise ValidationError(
                f"required column '{path}' is missing from the data and has no write-default"
            )
        return self.default_fill(target, target_field, length, target.write_default, path, write=True)

    def extra(self, sources: Sequence[pa.Field], used: set[int], path: str) -> None:
        unused = [f.name for i, f in enumerate(sources) if i not in used]
        if unused:
            where = f" of '{path}'" if path else ""
            names = ", ".join(repr(f"{path}.{n}" if path else n) for n in unused)
            raise ValidationError(f"columns{where} not in the table schema: {names}")

    def error(self, message: str) -> Exception:
        return ValidationError(message)

    def promotion_allowed(self, source: IcebergType, target: IcebergType, arrow_source: pa.DataType) -> bool:
        if source == target or isinstance(source, UnknownType):
            return True
        # Python ints arrive as int64: narrowing to int is allowed, the cast checks the range
        if isinstance(source, (IntegerType, LongType)) and isinstance(target, (IntegerType, LongType)):
            return True
        if isinstance(source, FloatType) and isinstance(target, DoubleType):
            return True
        # Python floats arrive as double: they round to the nearest float, as Java's (float) cast
        if isinstance(source, DoubleType) and isinstance(target, FloatType):
            return True
        if isinstance(source, DecimalType) and isinstance(target, DecimalType):
            # the cast checks that each value fits the target precision and scale exactly
            return True
        # units may change (the cast fails if it would lose precision), the zone kind may not
        if isinstance(source, _NAIVE_TS) and isinstance(target, _NAIVE_TS):
            return True
        if isinstance(source, _TZ_TS) and isinstance(target, _TZ_TS):
            return True
        if isinstance(target, UUIDType):
            return isinstance(source, (FixedType, BinaryType))
        return isinstance(target, FixedType) and isinstance(source, (FixedType, BinaryType))


# ---------------------------------------------------------------------------------------------
# the walk


def project_columns(
    columns: Sequence[pa.Array],
    sources: Sequence[pa.Field],
    target: StructType,
    target_fields: Sequence[pa.Field],
    length: int,
    rules: Rules,
    *,
    valid: np.ndarray | None = None,
    path: str = "",
) -> list[pa.Array]:
    """Arrays for each field of ``target`` from the source columns (one per ``sources`` field).

    Args:
        columns: the source arrays, all of ``length``.
        sources: the Arrow fields of ``columns``.
        target: the Iceberg struct to produce.
        target_fields: ``type_to_arrow`` of each target field, as Arrow fields.
        rules: matching, filling and checking (:class:`ReadRules` or :class:`WriteRules`).
        valid: for null checks, which rows are valid in the parent (None: all).
        path: the dotted name of the parent, for messages.
    """
    result: list[pa.Array] = []
    used: set[int] = set()
    match = rules.matcher(sources)
    for target_child, target_field in zip(target.fields, target_fields):
        child_path = f"{path}.{target_child.name}" if path else target_child.name
        index = match(target_child)
        if index is None:
            result.append(rules.missing(target_child, target_field, length, child_path))
            continue
        used.add(index)
        result.append(
            _project(columns[index], sources[index], target_child, target_field, rules, valid, child_path)
        )
    rules.extra(sources, used, path)
    return result


def _check_nulls(array: pa.Array, valid: np.ndarray | None, path: str) -> None:
    if array.null_count == 0:
        return
    if valid is None:
        bad = array.null_count
    else:
        nulls = array.is_null().to_numpy(zero_copy_only=False)
        bad = int(np.count_nonzero(nulls & valid))
    if bad:
        raise ValidationError(f"required column '{path}' has {bad} null value(s)")


def _and_valid(valid: np.ndarray | None, array: pa.Array) -> np.ndarray | None:
    if array.null_count == 0:
        return valid
    own: np.ndarray = array.is_valid().to_numpy(zero_copy_only=False)
    return own if valid is None else own & valid


def _list_parts(array: pa.Array) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """Offsets (from 0), child values and entry lengths of a list or map array, compacted.

    The child array of a list holds values outside the (sliced) array and, under null
    entries, values of no meaning; both are dropped so that only real values are projected.
    """
    offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    values = array.values
    lengths = np.diff(offsets)
    if array.null_count:
        null_entries = array.is_null().to_numpy(zero_copy_only=False)
        if np.any(lengths[null_entries]):
            lengths = np.where(null_entries, 0, lengths)
            new_offsets = np.concatenate(([0], np.cumsum(lengths)))
            indices = np.arange(new_offsets[-1], dtype=np.int64) + np.repeat(
                offsets[:-1] - new_offsets[:-1], lengths
            )
            return pa.array(new_offsets), values.take(pa.array(indices)), lengths
    if len(offsets) and (offsets[0] != 0 or offsets[-1] != len(values)):
        values = values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        return pa.array(offsets - offsets[0]), values, lengths
    return pa.array(offsets), values, lengths


def _repeat_valid(valid: np.ndarray | None, lengths: np.ndarray) -> np.ndarray | None:
    """Validity of child values from their parent rows' validity (null entries have none)."""
    return None if valid is None else np.repeat(valid, lengths)


def _null_mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _project(
    array: pa.Array,
    source: pa.Field,
    target: NestedField,
    target_field: pa.Field,
    rules: Rules,
    valid: np.ndarray | None,
    path: str,
) -> pa.Array:
    target_type = target.field_type
    if isinstance(target_type, UnknownType):
        # spec: a column read as unknown is ignored and replaced with nulls
        return pa.nulls(len(array), target_field.type)
    if isinstance(array.type, pa.DictionaryType):
        if rules.keep_dictionaries and array.type.value_type.equals(target_field.type):
            return array
        array = array.dictionary_decode()
    if rules.check_nulls and target.required:
        _check_nulls(array, valid, path)
    if array.type.equals(target_field.type, check_metadata=True) and not (
        rules.check_nulls and target_type.is_nested
    ):
        return fill_hidden_nulls(array) if target_type.is_nested else array
    if pa.types.is_null(array.type):
        if target.required and rules.check_nulls and len(array):
            raise ValidationError(f"required column '{path}' has {len(array)} null value(s)")
        return pa.nulls(len(array), target_field.type)

    if isinstance(target_type, StructType):
        if not pa.types.is_struct(array.type):
            raise rules.error(f"column '{path}' is {array.type}, expected a struct")
        struct_type = source.type  # the source field's type carries the ids (maybe mapped)
        sources = [struct_type.field(i) for i in range(struct_type.num_fields)]
        # flatten() nulls the children under null structs: what they hold there is unspecified
        children = array.flatten() if array.null_count else [array.field(i) for i in range(len(sources))]
        child_valid = _and_valid(valid, array) if rules.check_nulls else None
        arrow_type = target_field.type
        target_fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        projected = project_columns(
            children, sources, target_type, target_fields, len(array), rules, valid=child_valid, path=path
        )
        if not target_fields:
            return pa.array([{}] * len(array), type=arrow_type, mask=_null_mask(array))
        projected = [
            _without_nulls(child) if not f.nullable and child.null_count else child
            for child, f in zip(projected, target_fields, strict=True)
        ]
        return pa.StructArray.from_arrays(projected, fields=target_fields, mask=_null_mask(array))

    if isinstance(target_type, ListType):
        if not _is_list_like(array.type):
            raise rules.error(f"column '{path}' is {array.type}, expected a list")
        if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
            array = array.cast(pa.large_list(array.type.value_field))
        offsets, values, lengths = _list_parts(array)
        value_valid = _repeat_valid(valid, lengths) if rules.check_nulls else None
        new_values = _project(
            values,
            source.type.value_field,
            target_type.element_field,
            target_field.type.value_field,
            rules,
            value_valid,
            f"{path}.element",
        )
        return pa.ListArray.from_arrays(
            _int32_offsets(offsets, rules, path), new_values, type=target_field.type, mask=_null_mask(array)
        )

    if isinstance(target_type, MapType):
        if not pa.types.is_map(array.type):
            raise rules.error(f"column '{path}' is {array.type}, expected a map")
        offsets, entries, lengths = _list_parts(array)
        entry_valid = _repeat_valid(valid, lengths) if rules.check_nulls else None
        map_type = target_field.type
        new_keys = _project(
            entries.field(0),
            source.type.key_field,
            target_type.key_field,
            map_type.key_field,
            rules,
            entry_valid,
            f"{path}.key",
        )
        new_items = _project(
            entries.field(1),
            source.type.item_field,
            target_type.value_field,
            map_type.item_field,
            rules,
            entry_valid,
            f"{path}.value",
        )
        return pa.MapArray.from_arrays(
            _int32_offsets(offsets, rules, path), new_keys, new_items, type=map_type, mask=_null_mask(array)
        )

    return _cast_primitive(array, target_type, target_field.type, rules, path)


def fill_hidden_nulls(array: pa.Array) -> pa.Array:
    """``array`` without a null slot in any non-nullable nested field (the same object when it
    has none).

    Under a null struct, Arrow marks a required child null too (``flatten()``, Parquet readers),
    though nothing is there; Parquet writers refuse any null in a non-nullable field, so such a
    batch could not be written again. Those slots get placeholder values (zero, empty), which
    the null parent hides from every reader.
    """
    t = array.type
    if array.null_count == 0 and not t.num_fields:
        return array
    if pa.types.is_struct(t):
        children = [array.field(i) for i in range(t.num_fields)]
        fixed = [_fill_child(child, t.field(i)) for i, child in enumerate(children)]
        if all(new is old for new, old in zip(fixed, children, strict=True)):
            return array
        return pa.StructArray.from_arrays(fixed, fields=list(t), mask=_null_mask(array))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _fill_child(array.values, t.value_field)
        if values is array.values:
            return array
        return type(array).from_arrays(array.offsets, values, type=t, mask=_null_mask(array))
    if pa.types.is_map(t):
        keys, items = array.keys, array.items
        new_items = _fill_child(items, t.item_field)
        if new_items is items:
            return array
        return pa.MapArray.from_arrays(array.offsets, keys, new_items, type=t, mask=_null_mask(array))
    return array


def _fill_child(child: pa.Array, field: pa.Field) -> pa.Array:
    child = fill_hidden_nulls(child)
    return _without_nulls(child) if not field.nullable and child.null_count else child


def _without_nulls(array: pa.Array) -> pa.Array:
    """``array`` with placeholders in its null slots (only ever slots a null parent hides)."""
    t = array.type
    if isinstance(t, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(t, _without_nulls(array.storage))
    if pa.types.is_struct(t):
        children = [fill_hidden_nulls(array.field(i)) for i in range(t.num_fields)]
        children = [_without_nulls(c) if not f.nullable and c.null_count else c for c, f in zip(children, t)]
        return pa.StructArray.from_arrays(children, fields=list(t))
    if pa.types.is_map(t):
        offsets, entries, _ = _list_parts(array)  # null entries become empty
        return pa.MapArray.from_arrays(offsets.cast(pa.int32()), entries.field(0), entries.field(1), type=t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets, values, _ = _list_parts(array)
        offset_type = pa.int64() if pa.types.is_large_list(t) else pa.int32()
        return type(array).from_arrays(offsets.cast(offset_type), values, type=t)
    return pc.fill_null(array, _placeholder(t))


def _placeholder(t: pa.DataType) -> pa.Scalar:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        value: Any = ""
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        value = b""
    elif pa.types.is_fixed_size_binary(t):
        value = bytes(t.byte_width)
    elif pa.types.is_boolean(t):
        value = False
    elif pa.types.is_decimal(t):
        value = decimal.Decimal(0)
    else:
        value = 0
    return pa.scalar(value, type=t)


def _int32_offsets(offsets: pa.Array, rules: Rules, path: str) -> pa.Array:
    if offsets.type == pa.int32():
        return offsets
    try:
        return offsets.cast(pa.int32())
    except pa.ArrowInvalid as e:
        raise rules.error(f"column '{path}' holds more than 2 GiB of list values in one batch") from e


def _cast_primitive(
    array: pa.Array, target_type: IcebergType, arrow_type: pa.DataType, rules: Rules, path: str
) -> pa.Array:
    source_type = _source_iceberg_type(array.type)
    if source_type is None or not rules.promotion_allowed(source_type, target_type, array.type):
        what = f"{source_type}" if source_type is not None else f"Arrow {array.type}"
        raise rules.error(f"column '{path}' of type {what} cannot be {rules.verb} as {target_type}")
    try:
        if isinstance(target_type, UUIDType):
            if array.type == _UUID:
                return array
            storage = array.storage if isinstance(array, pa.ExtensionArray) else array
            return pa.ExtensionArray.from_storage(_UUID, storage.cast(pa.binary(16)))
        if isinstance(array, pa.ExtensionArray):
            array = array.storage
        if isinstance(source_type, DateType) and isinstance(target_type, _NAIVE_TS):
            # midnight of each day, in the target unit
            per_day = 86_400_000_000 if isinstance(target_type, TimestampType) else 86_400_000_000_000
            ints = pc.multiply_checked(array.cast(pa.int32()).cast(pa.int64()), per_day)
            return ints.cast(arrow_type)
        return array.cast(arrow_type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise rules.error(
            f"column '{path}' cannot be converted from {array.type} to {target_type}: {e}"
        ) from e
