"""Which Parquet columns and row groups a projected, filtered read needs (private)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.arrow._types import field_id_of, schema_to_arrow
from icefloe.spec.schema import Schema
from icefloe.spec.types import IcebergType, ListType, MapType, StructType, UnknownType

__all__ = ["prune_row_groups", "same_names", "selected_leaves"]


# ---------------------------------------------------------------------------------------------
# which Parquet leaf columns the projection needs


def _leaf_count(t: pa.DataType) -> int:
    if isinstance(t, pa.DictionaryType):
        return 1
    if pa.types.is_struct(t):
        return sum(_leaf_count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_count(t.value_type)
    return 1


class _LeafSelector:
    """Parquet leaf indices needed for a projection, walking the file's Arrow schema (with ids).

    Arrow fields and Parquet leaf columns are in the same depth-first order, so leaf ``i`` of
    the Arrow schema is ``ParquetSchema.column(i)``.
    """

    def __init__(self) -> None:
        self.selected: list[int] = []

    def struct(self, fields: Sequence[pa.Field], target: StructType, start: int) -> bool:
        """Select what ``target`` needs among ``fields``; returns whether anything was selected."""
        by_id = {f.field_id: f for f in target.fields}
        offset = start
        found = False
        for f in fields:
            count = _leaf_count(f.type)
            fid = field_id_of(f)
            wanted = by_id.get(fid) if fid is not None else None
            if wanted is not None and not isinstance(wanted.field_type, UnknownType):
                self.type(f.type, wanted.field_type, offset, count)
                found = True
            offset += count
        return found

    def type(self, t: pa.DataType, target: IcebergType, start: int, count: int) -> None:
        if isinstance(target, StructType) and pa.types.is_struct(t):
            fields = [t.field(i) for i in range(t.num_fields)]
            if not self.struct(fields, target, start) and count:
                # none of the wanted subfields is in the file: read one leaf for the validity
                self.selected.append(start)
            return
        if isinstance(target, ListType) and (pa.types.is_list(t) or pa.types.is_large_list(t)):
            self.type(t.value_type, target.element_type, start, count)
            return
        if isinstance(target, MapType) and pa.types.is_map(t):
            key_count = _leaf_count(t.key_type)
            self.selected.extend(range(start, start + key_count))
            self.type(t.item_type, target.value_type, start + key_count, count - key_count)
            return
        self.selected.extend(range(start, start + count))


def selected_leaves(file_schema: pa.Schema, projected: Schema) -> tuple[int, list[int]]:
    """The number of Parquet leaf columns the file schema (with ids) has, and the sorted leaf
    indices the projection needs (valid when that number is the Parquet schema's)."""
    total = sum(_leaf_count(f.type) for f in file_schema)
    selector = _LeafSelector()
    selector.struct(list(file_schema), projected.as_struct(), 0)
    return total, sorted(set(selector.selected))


# ---------------------------------------------------------------------------------------------
# row-group pruning


def same_names(file_fields: Sequence[pa.Field], target: StructType, *, valued: Collection[int]) -> bool:
    """Whether a filter written against ``target``'s names means the same on the file's names.

    True when every projected field is either in the file under the same name (at the same
    path), or absent with no value other than null (no initial-default, no constant) and no
    other file column uses its name. ``valued`` are the ids of columns the reader fills with
    values (constants, ``_pos``, inherited row lineage).
    """
    by_id: dict[int, pa.Field] = {}
    by_name = {f.name: f for f in file_fields}
    for f in file_fields:
        fid = field_id_of(f)
        if fid is not None:
            by_id[fid] = f
    for field in target.fields:
        found = by_id.get(field.field_id)
        if found is None:
            if field.initial_default is not None or field.field_id in valued or field.name in by_name:
                return False
            continue
        if found.name != field.name:
            return False
        if isinstance(field.field_type, StructType) and pa.types.is_struct(found.type):
            children = [found.type.field(i) for i in range(found.type.num_fields)]
            if not same_names(children, field.field_type, valued=()):
                return False
    return True


def prune_row_groups(
    source: Any,
    file_schema: pa.Schema,
    projected: Schema,
    row_filter: pc.Expression,
    *,
    decryption_properties: Any = None,
) -> list[int] | None:
    """Row groups whose statistics may match ``row_filter``, or None when pruning is not possible.

    ``decryption_properties`` opens an encrypted file (``pyarrow.parquet.FileDecryptionProperties``).
    """
    dataset_fields = list(file_schema)
    names = {f.name for f in dataset_fields}
    for f in schema_to_arrow(projected):
        if f.name not in names:
            dataset_fields.append(f)
    try:
        # Imported here: pyarrow.dataset imports pandas (40 MB), which planning never needs.
        import pyarrow.dataset as ds

        file_format = (
            ds.ParquetFileFormat()
            if decryption_properties is None
            else ds.ParquetFileFormat(
                default_fragment_scan_options=ds.ParquetFragmentScanOptions(
                    decryption_properties=decryption_properties
                )
            )
        )
        fragment = file_format.make_fragment(source)
        pieces = fragment.split_by_row_group(row_filter, schema=pa.schema(dataset_fields))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
        # the filter does not bind to the file's columns (e.g. a type that differs): no pruning
        return None
    return [piece.row_groups[0].id for piece in pieces]
