"""The state of one partition spec update, applied to one base metadata (Java's
``BaseUpdatePartitionSpec`` bookkeeping).

``SpecChanges`` records adds, removals and renames against the default spec of ``base`` and
runs Java's checks as each change is made; ``apply()`` builds the fields of the new spec.
``table/updates/update_spec.py`` replays the recorded calls on fresh metadata when a commit retries.

Rules, as in Java:

- A removed field disappears from a v2+ spec; in v1 (where partition field ids were positional)
  it stays, with a ``void`` transform, so that the remaining fields keep their ids.
- Re-adding a field removed in the same update restores it (renamed if a new name is given).
- v2+: a field added with the source column and transform of a field of any earlier spec
  reuses that field's id (and, without an explicit name, its name).
- A field equal (same column, same transform) to a kept field of the current spec, or to one
  already added, is refused; so are two time transforms (year/month/day/hour) of one column
  added in one update. A time transform next to an existing one of another granularity is
  allowed, as Java allows it, so that specs that already have both keep working.
- A new name that is taken by a void (removed v1) field renames that field to
  ``<name>_<field id>``; any other taken name is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from icefloe.errors import ValidationError
from icefloe.expressions.model import Reference
from icefloe.spec.partitioning import PARTITION_DATA_ID_START, PartitionField, parse_partition_term
from icefloe.spec.schema import Schema
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.transforms import (
    BucketTransform,
    TimeTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    parse_transform,
)

__all__ = ["SpecChanges", "TermInput", "TransformInput"]

#: What ``add_field`` / ``remove_field`` take as a term: a column name, a Spark term
#: (``"bucket(16, id)"``) or an expression ``Reference``.
TermInput = str | Reference
#: A transform: a ``Transform``, its spec name (``"bucket[16]"``, ``"day"``) or Spark form
#: (``"bucket(16)"``, ``"days"``).
TransformInput = Transform | str

_TRANSFORM_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*(\d+)\s*\))?\s*$")


@dataclass(frozen=True, slots=True)
class _Resolved:
    source_id: int
    transform: Transform
    text: str  # the term as the user wrote it, for messages

    @property
    def key(self) -> tuple[int, str]:
        return (self.source_id, str(self.transform))


def parse_transform_input(value: TransformInput) -> Transform:
    """A Transform from ``value``; refuses transforms this version cannot apply.

    Raises:
        ValidationError: naming the text that is not a known transform.
    """
    if isinstance(value, Transform):
        transform = value
    elif isinstance(value, str):
        transform = parse_transform(value.strip())
        if isinstance(transform, UnknownTransform):
            match = _TRANSFORM_CALL.match(value)
            if match is None:
                raise ValidationError(f"unknown partition transform {value!r}")
            name, width = match.group(1), match.group(2)
            # Spark's spellings (days, hours, bucket(16), ...) through the PARTITIONED BY parser.
            term = f"{name}({width}, c)" if width is not None else f"{name}(c)"
            transform = parse_partition_term(term)[1]
    else:
        raise ValidationError(f"a partition transform must be a Transform or a string, not {value!r}")
    if isinstance(transform, UnknownTransform):
        raise ValidationError(f"unknown partition transform {str(transform)!r}")
    return transform


def default_field_name(column: str, transform: Transform) -> str:
    """The name Java's ``BaseUpdatePartitionSpec`` gives an added field without one.

    Unlike ``partition_by`` (and Java's ``PartitionSpec.Builder``), bucket and truncate names
    carry their width (``id_bucket_16``), so that fields of several widths do not collide.
    """
    if transform.is_identity:
        return column
    if transform.is_void:
        return f"{column}_null"
    if isinstance(transform, BucketTransform):
        return f"{column}_bucket_{transform.num_buckets}"
    if isinstance(transform, TruncateTransform):
        return f"{column}_trunc_{transform.width}"
    return f"{column}_{transform}"


class SpecChanges:
    """Adds, removals and renames against the default spec of ``base``.

    Every method raises ValidationError at once when Java's ``BaseUpdatePartitionSpec`` would
    raise; a method that raises may leave this object half-changed (the caller replays).

    Raises:
        ValidationError: (constructor) the default spec has a transform this version does
            not know; such a spec cannot be evolved safely.
    """

    def __init__(self, base: TableMetadata):
        self.base = base
        self.format_version = base.format_version
        self.spec = base.spec()
        self.schema: Schema = base.schema()
        self.case_sensitive = True
        self.last_assigned_partition_id = base.last_partition_id
        unknown = next((f for f in self.spec.fields if isinstance(f.transform, UnknownTransform)), None)
        if unknown is not None:
            raise ValidationError(f"cannot update partition spec with unknown transform: {unknown}")
        self.name_to_field = {f.name: f for f in self.spec.fields}
        self.transform_to_field = {(f.source_id, str(f.transform)): f for f in self.spec.fields}
        self.adds: list[PartitionField] = []
        self.added_time_fields: dict[int, PartitionField] = {}
        self.transform_to_added_field: dict[tuple[int, str], PartitionField] = {}
        self.name_to_added_field: dict[str, PartitionField] = {}
        self.deletes: set[int] = set()
        self.renames: dict[str, str] = {}

    # ---- changes -------------------------------------------------------------------------------

    def set_case_sensitive(self, value: bool) -> None:
        self.case_sensitive = bool(value)

    def add_field(self, term: TermInput, transform: TransformInput | None, name: str | None) -> None:
        if name is not None:
            _check_name(name)
            already = self.name_to_added_field.get(name)
            if already is not None:
                raise ValidationError(
                    f"cannot add duplicate partition field '{name}': already added as {already}"
                )
        resolved = self._resolve(term, transform)
        existing = self.transform_to_field.get(resolved.key)
        if existing is not None and existing.field_id in self.deletes:
            # Removed earlier in this update and added back: keep the field (Java's
            # rewriteDeleteAndAddField), under the new name if one is given.
            self.deletes.discard(existing.field_id)
            if name is not None and name != existing.name:
                self.rename_field(existing.name, name)
            return
        if existing is not None:
            raise ValidationError(
                f"cannot add duplicate partition field {name or resolved.text}: conflicts with "
                f"existing field {existing.name} ({existing})"
            )
        added = self.transform_to_added_field.get(resolved.key)
        if added is not None:
            raise ValidationError(
                f"cannot add duplicate partition field {name or resolved.text}: already added as {added.name}"
            )
        field = self._recycle_or_create(resolved, name)
        if field.name in self.name_to_added_field:
            raise ValidationError(f"cannot add duplicate partition field name '{field.name}': already added")
        if isinstance(field.transform, TimeTransform):
            other = self.added_time_fields.get(field.source_id)
            if other is not None:
                raise ValidationError(
                    f"cannot add redundant partition field {field.name} ({field.transform}): "
                    f"conflicts with {other.name} ({other.transform}) added in this update"
                )
            self.added_time_fields[field.source_id] = field
        taken = self.name_to_field.get(field.name)
        if taken is not None and taken.field_id not in self.deletes:
            if not taken.transform.is_void:
                raise ValidationError(
                    f"cannot add duplicate partition field name '{field.name}': used by {taken}"
                )
            # A v1 removed field keeps its name; it moves aside for the new field.
            self.rename_field(taken.name, f"{taken.name}_{taken.field_id}")
        elif taken is not None:
            self.renames[taken.name] = f"{taken.name}_{taken.field_id}"
        self.transform_to_added_field[resolved.key] = field
        self.name_to_added_field[field.name] = field
        self.adds.append(field)

    def remove_field(self, name_or_term: TermInput) -> None:
        if isinstance(name_or_term, str) and (
            name_or_term in self.name_to_field or name_or_term in self.name_to_added_field
        ):
            self._remove_by_name(name_or_term)
            return
        try:
            resolved = self._resolve(name_or_term, None)
        except ValidationError as e:
            raise ValidationError(f"cannot find partition field to remove: {name_or_term} ({e})") from None
        added = self.transform_to_added_field.get(resolved.key)
        if added is not None:
            raise ValidationError(f"cannot delete newly added field: {added.name} ({added})")
        field = self.transform_to_field.get(resolved.key)
        if field is None:
            raise ValidationError(
                f"cannot find partition field to remove: {resolved.text} (spec {self.spec.spec_id}: {self.spec})"
            )
        if field.name in self.renames:
            raise ValidationError(f"cannot rename and delete partition field: {field.name}")
        self.deletes.add(field.field_id)

    def _remove_by_name(self, name: str) -> None:
        added = self.name_to_added_field.get(name)
        if added is not None:
            raise ValidationError(f"cannot delete newly added field: {name} ({added})")
        if name in self.renames:
            raise ValidationError(f"cannot rename and delete partition field: {name}")
        self.deletes.add(self.name_to_field[name].field_id)

    def rename_field(self, name: str, new_name: str) -> None:
        _check_name(new_name)
        taken = self.name_to_field.get(new_name)
        if taken is not None and taken.transform.is_void and taken.name != name:
            # A v1 removed field moves aside for the renamed one.
            self.rename_field(taken.name, f"{taken.name}_{taken.field_id}")
        if name in self.name_to_added_field:
            raise ValidationError(f"cannot rename newly added partition field: {name}")
        field = self.name_to_field.get(name)
        if field is None:
            raise ValidationError(
                f"cannot find partition field to rename: {name} (spec {self.spec.spec_id}: {self.spec})"
            )
        if field.field_id in self.deletes:
            raise ValidationError(f"cannot delete and rename partition field: {name}")
        self.renames[name] = new_name

    # ---- result --------------------------------------------------------------------------------

    def apply(self) -> tuple[PartitionField, ...]:
        """The fields of the new spec: the current ones (renamed, removed or in v1 voided),
        then the added ones.

        Raises:
            ValidationError: two fields would share a name, a new or renamed field's name is
                a schema column other than its identity source, or a field's source column
                is missing or of a type its transform does not take.
        """
        fields: list[PartitionField] = []
        changed: set[int] = set()
        for pf in self.spec.fields:
            new_name = self.renames.get(pf.name, pf.name)
            if new_name != pf.name:
                changed.add(pf.field_id)
            if pf.field_id not in self.deletes:
                fields.append(replace(pf, name=new_name))
            elif self.format_version < 2:
                # v1 partition data is positional: a removed field keeps its place as void.
                fields.append(PartitionField(pf.source_id, pf.field_id, VoidTransform(), new_name))
        fields.extend(self.adds)
        changed.update(f.field_id for f in self.adds)
        seen: dict[str, PartitionField] = {}
        for pf in fields:
            other = seen.get(pf.name)
            if other is not None:
                raise ValidationError(
                    f"cannot use partition name more than once: '{pf.name}' ({other} and {pf})"
                )
            seen[pf.name] = pf
            if pf.field_id in changed:
                self._check_name_against_schema(pf)
            self._check_source(pf)
        return tuple(fields)

    # ---- helpers -------------------------------------------------------------------------------

    def _resolve(self, term: TermInput, transform: TransformInput | None) -> _Resolved:
        if isinstance(term, Reference):
            column = term.name
            if transform is None:
                parsed, text = parse_transform("identity"), str(term)
            else:
                parsed = parse_transform_input(transform)
                text = f"{parsed}({term})"
        elif isinstance(term, str):
            if not term.strip():
                raise ValidationError("a partition term must be a column name or a transform term, not ''")
            if transform is None:
                column, parsed = parse_partition_term(term)
                if isinstance(parsed, UnknownTransform):
                    raise ValidationError(f"unknown partition transform in {term!r}")
                text = term.strip()
            else:
                column, parsed = term, parse_transform_input(transform)
                text = f"{parsed}({term})"
        else:
            raise ValidationError(
                f"a partition term must be a column name, a term like 'bucket(16, id)' or a Reference, not {term!r}"
            )
        source = self.schema.find_field(column, self.case_sensitive)
        if source is None:
            raise ValidationError(
                f"cannot find source column '{column}' of partition term {text} in schema "
                f"{self.schema.schema_id}: {self.schema.column_names}"
            )
        if not parsed.is_void and not parsed.can_transform(source.field_type):
            raise ValidationError(
                f"cannot partition column '{column}' of type {source.field_type} by {parsed} (term {text})"
            )
        return _Resolved(source.field_id, parsed, text)

    def _recycle_or_create(self, resolved: _Resolved, name: str | None) -> PartitionField:
        if self.format_version >= 2:
            # An earlier spec's field of the same column and transform: reuse its id, so that
            # partition data of both specs lines up (Java's recycleOrCreatePartitionField).
            in_use = {f.field_id for f in self.spec.fields} | {f.field_id for f in self.adds}
            for spec in sorted(self.base.partition_specs, key=lambda s: -s.spec_id):
                for pf in spec.fields:
                    if (
                        pf.source_id == resolved.source_id
                        and pf.transform == resolved.transform
                        and (name is None or pf.name == name)
                        and pf.field_id not in in_use  # ids of pre-v2 specs may repeat
                    ):
                        return pf
            self.last_assigned_partition_id += 1
            field_id = self.last_assigned_partition_id
        else:
            # v1 field ids are positions from 1000; removed fields stay as void, so an added
            # field's position is after every field of the current spec.
            field_id = PARTITION_DATA_ID_START + len(self.spec.fields) + len(self.adds)
            self.last_assigned_partition_id = max(self.last_assigned_partition_id, field_id)
        if name is None:
            column = self.schema.find_column_name(resolved.source_id) or resolved.text
            name = default_field_name(column, resolved.transform)
        return PartitionField(resolved.source_id, field_id, resolved.transform, name)

    def _check_name_against_schema(self, pf: PartitionField) -> None:
        """Java's partition-name rule: an identity (or void) field may share its own source
        column's name; no other field may take a column's name."""
        column = self.schema.find_field(pf.name)
        if column is None:
            return
        if pf.transform.is_identity or pf.transform.is_void:
            if column.field_id != pf.source_id:
                raise ValidationError(
                    f"cannot create identity partition sourced from different field in schema: '{pf.name}' "
                    f"is column {column.field_id}, the partition's source is column {pf.source_id}"
                )
            return
        raise ValidationError(
            f"cannot create partition from name that exists in schema: '{pf.name}' ({pf.transform} "
            f"partition of column '{self.schema.find_column_name(pf.source_id)}')"
        )

    def _check_source(self, pf: PartitionField) -> None:
        if pf.transform.is_void:
            return  # a removed v1 field; its column may be gone
        source = self.schema.find_field(pf.source_id)
        if source is None:
            raise ValidationError(f"cannot find source column for partition field: {pf}")
        if not pf.transform.can_transform(source.field_type):
            raise ValidationError(
                f"invalid source type {source.field_type} for transform {pf.transform} of {pf}"
            )


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"a partition field name must be a non-empty string, not {name!r}")
