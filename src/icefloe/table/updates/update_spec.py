"""UpdateSpec: partition spec evolution (Java's ``UpdatePartitionSpec`` / ``BaseUpdatePartitionSpec``).

::

    (table.update_spec()
        .add_field("bucket(16, id)")              # Spark form; named id_bucket_16
        .add_field("ts", "day", "ts_day")         # column, transform, name
        .remove_field("category")                 # by partition field name ...
        .remove_field("truncate(4, data)")        # ... or by term
        .rename_field("shard", "id_shard")
        .commit())

Terms are column names (identity), Spark ``PARTITIONED BY`` terms (``"day(ts)"``,
``"bucket(16, id)"``, ``"truncate(4, name)"``), expression ``Reference``s, or a column with an
explicit ``transform`` (a ``Transform``, ``"bucket[16]"``, ``"day"``, ``"bucket(16)"``). Each
method runs Java's checks at once and raises ValidationError (see ``table/updates/_spec_changes.py``
for the rules: removed fields become void in v1 and disappear in v2+; v2+ reuses the field id
of an earlier spec's field with the same column and transform; duplicates and redundant time
transforms are refused). A failed call changes nothing.

``apply()`` returns the new PartitionSpec (with the id it gets or already has). ``commit()``
adds it and makes it the default, or with ``add_non_default_spec()`` only adds it. A new spec
equal to an existing one (same columns, transforms and names in the same order, as Java's
``compatibleWith``) is not added again: that spec becomes the default; one equal to the current
default is no change at all. The commit asserts the default spec id and the last assigned
partition id it started from, so a concurrent spec change makes it fail and retry: the recorded
calls are replayed on the fresh metadata, and a call that no longer applies raises
ValidationException.

Data written after the commit uses the new default spec; files written with earlier specs stay
as they are and are planned with their own spec.
"""

from __future__ import annotations

from typing import Any

from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    LAST_ADDED,
    AddPartitionSpec,
    AssertDefaultSpecId,
    AssertLastAssignedPartitionId,
    SetDefaultSpec,
    TableUpdate,
)
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.updates._spec_changes import SpecChanges, TermInput, TransformInput

__all__ = ["UpdateSpec"]


class UpdateSpec(PendingUpdate[PartitionSpec]):
    """``table.update_spec()``: add, remove and rename partition fields.

    Raises:
        ValidationError: (at creation) the default spec has a transform this version does not
            know, as Java refuses to evolve it.
    """

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        # Each change as (method name, args), replayed on fresh metadata on retry.
        self._log: list[tuple[str, tuple[Any, ...]]] = []
        self._set_as_default = True
        self._changes = SpecChanges(self._base)

    def _record(self, method: str, *args: Any) -> UpdateSpec:
        self._check_mutable()
        try:
            getattr(self._changes, method)(*args)
        except Exception:
            # A refused call must leave the update as it was; the state may be half-changed.
            self._changes = _replay(self._changes.base, self._log)
            raise
        self._log.append((method, args))
        return self

    # ---- builder methods -----------------------------------------------------------------------

    def case_sensitive(self, case_sensitive: bool = True) -> UpdateSpec:
        """Match column names in the terms of later calls case-insensitively (``False``)."""
        return self._record("set_case_sensitive", case_sensitive)

    def add_field(
        self, source_or_term: TermInput, transform: TransformInput | None = None, name: str | None = None
    ) -> UpdateSpec:
        """Add a partition field.

        Args:
            source_or_term: a column name, a Spark term (``"bucket(16, id)"``, ``"day(ts)"``)
                or a ``Reference``.
            transform: with a column name, its transform (``"bucket[16]"``, ``"day"``, a
                ``Transform``); default identity.
            name: the field's name; default as Java: the column for identity,
                ``<col>_bucket_<n>``, ``<col>_trunc_<w>``, ``<col>_day`` ... (v2+: the name of
                the earlier spec's field whose id is reused).

        Raises:
            ValidationError: an unknown column or transform, a transform the column's type does
                not take, a field equal to a kept or added one, a second time transform of a
                column in this update, a name taken by a partition field or (except by an
                identity field's own source) by a column.
        """
        return self._record("add_field", source_or_term, transform, name)

    def remove_field(self, name_or_term: TermInput) -> UpdateSpec:
        """Remove a field of the current spec, by its name or by its term (``"day(ts)"``).

        In v1 the field stays with a ``void`` transform (partition data is positional there);
        in v2+ it is dropped.

        Raises:
            ValidationError: no such field, a field added or renamed in this update.
        """
        return self._record("remove_field", name_or_term)

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        """Rename a field of the current spec.

        Raises:
            ValidationError: no such field, a field added or removed in this update; the new
                name is checked when the spec is built (``apply()`` / ``commit()``).
        """
        return self._record("rename_field", name, new_name)

    def add_non_default_spec(self) -> UpdateSpec:
        """Add the new spec without making it the table's default (Java's ``addNonDefaultSpec``)."""
        self._check_mutable()
        self._set_as_default = False
        return self

    # ---- producing -----------------------------------------------------------------------------

    def _changes_for(self, base: TableMetadata) -> SpecChanges:
        if base is self._changes.base:
            return self._changes
        # A retry, or a commit after the table moved on: replay the calls on its spec.
        try:
            return _replay(base, self._log)
        except ValidationError as e:
            raise ValidationException(
                f"partition spec update conflicts with the table's current spec {base.default_spec_id}: {e}"
            ) from e

    def _new_spec(self, base: TableMetadata) -> PartitionSpec:
        return PartitionSpec(self._changes_for(base).apply(), spec_id=base.default_spec_id)

    def _produce(self, base: TableMetadata) -> Changes:
        new_spec = self._new_spec(base)
        if new_spec.compatible_with(base.spec()):
            return Changes()
        updates: list[TableUpdate]
        existing = next((s for s in base.partition_specs if s.compatible_with(new_spec)), None)
        if existing is not None:
            updates = [SetDefaultSpec(existing.spec_id)] if self._set_as_default else []
        else:
            updates = [AddPartitionSpec(new_spec)]
            if self._set_as_default:
                updates.append(SetDefaultSpec(LAST_ADDED))
        if not updates:
            return Changes()
        return Changes(
            updates,
            [
                AssertDefaultSpecId(base.default_spec_id),
                AssertLastAssignedPartitionId(base.last_partition_id),
            ],
        )

    def _result(self, base: TableMetadata, changes: Changes) -> PartitionSpec:
        new_spec = self._new_spec(base)
        after = changes.apply_to(base)
        if after.spec().compatible_with(new_spec):
            return after.spec()
        return next(s for s in after.partition_specs if s.compatible_with(new_spec))


def _replay(base: TableMetadata, log: list[tuple[str, tuple[Any, ...]]]) -> SpecChanges:
    changes = SpecChanges(base)
    for method, args in log:
        getattr(changes, method)(*args)
    return changes
