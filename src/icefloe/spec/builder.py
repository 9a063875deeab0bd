"""MetadataBuilder: the one place where updates turn into a new TableMetadata.

It follows Java's ``TableMetadata.Builder``: equal schemas, specs and sort orders are reused
instead of added twice; ids are assigned here; ``last-column-id``, ``last-partition-id``,
``last-sequence-number`` and (v3) ``next-row-id`` are maintained; the snapshot log records each
change of the main branch (without the intermediate snapshots of a multi-operation commit, and
without history that expired snapshots invalidate); the metadata log records the previous
metadata file, trimmed to ``write.metadata.previous-versions-max``.
"""

from __future__ import annotations

import itertools
import time
import uuid as uuid_module
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from icefloe.errors import ValidationError, ValidationException
from icefloe.spec.encryption import check_encryption_properties, check_key_id_unchanged
from icefloe.spec.partitioning import (
    PARTITION_DATA_ID_START,
    PartitionField,
    PartitionSpec,
    SpecProblem,
    spec_binding_problem,
)
from icefloe.spec.properties import (
    METADATA_PREVIOUS_VERSIONS_MAX,
    METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT,
    int_property,
    persisted_properties,
)
from icefloe.spec.schema import Schema, assign_fresh_ids
from icefloe.spec.snapshots import MAIN_BRANCH, HistoryEntry, MetadataLogEntry, Snapshot, SnapshotRef
from icefloe.spec.sorting import UNSORTED_SORT_ORDER, SortField, SortOrder, sort_order_binding_problem
from icefloe.spec.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.spec.table_metadata import (
    RESERVED_PROPERTIES,
    SUPPORTED_FORMAT_VERSIONS,
    EncryptedKey,
    TableMetadata,
)
from icefloe.spec.updates import (
    LAST_ADDED,
    AddEncryptionKey,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssignUUID,
    RemoveEncryptionKey,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableUpdate,
    UpgradeFormatVersion,
)

__all__ = ["DEFAULT_FORMAT_VERSION", "MetadataBuilder", "new_table_metadata", "updates_for_new_table"]

DEFAULT_FORMAT_VERSION = 2


def _now_ms() -> int:
    return int(time.time() * 1000)


class MetadataBuilder:
    """Applies updates to a base TableMetadata (or to nothing, for a new table).

    Args:
        base: the metadata the updates apply to; None when creating a table.
        metadata_location: the file ``base`` was read from; recorded in the metadata log.
    """

    def __init__(self, base: TableMetadata | None, *, metadata_location: str | None = None):
        self.base = base
        self.base_location = metadata_location
        self.changes: list[TableUpdate] = []
        self._last_added_schema_id: int | None = None
        self._last_added_spec_id: int | None = None
        self._last_added_order_id: int | None = None
        self._last_updated_ms: int | None = None
        self._added_snapshot_ids: list[int] = []
        self._snapshot_ids: set[int] | None = None  # see _has_snapshot
        if base is None:
            self.format_version = DEFAULT_FORMAT_VERSION
            self.table_uuid: str | None = None
            self.location: str | None = None
            self.last_sequence_number = 0
            self.last_column_id = 0
            self.schemas: list[Schema] = []
            self.current_schema_id = -1
            self.specs: list[PartitionSpec] = []
            self.default_spec_id = -1
            self.last_partition_id = PARTITION_DATA_ID_START - 1
            self.properties: dict[str, str] = {}
            self.current_snapshot_id: int | None = None
            self.snapshots: list[Snapshot] = []
            self.snapshot_log: list[HistoryEntry] = []
            self.metadata_log: list[MetadataLogEntry] = []
            self.sort_orders: list[SortOrder] = []
            self.default_sort_order_id = -1
            self.refs: dict[str, SnapshotRef] = {}
            self.statistics: list[StatisticsFile] = []
            self.partition_statistics: list[PartitionStatisticsFile] = []
            self.next_row_id: int | None = None
            self.encryption_keys: list[EncryptedKey] = []
        else:
            self.format_version = base.format_version
            self.table_uuid = base.table_uuid
            self.location = base.location
            self.last_sequence_number = base.last_sequence_number
            self.last_column_id = base.last_column_id
            self.schemas = list(base.schemas)
            self.current_schema_id = base.current_schema_id
            self.specs = list(base.partition_specs)
            self.default_spec_id = base.default_spec_id
            self.last_partition_id = base.last_partition_id
            self.properties = dict(base.properties)
            self.current_snapshot_id = base.current_snapshot_id
            self.snapshots = list(base.snapshots)
            self.snapshot_log = list(base.snapshot_log)
            self.metadata_log = list(base.metadata_log)
            self.sort_orders = list(base.sort_orders)
            self.default_sort_order_id = base.default_sort_order_id
            self.refs = dict(base.refs)
            self.statistics = list(base.statistics)
            self.partition_statistics = list(base.partition_statistics)
            self.next_row_id = base.next_row_id
            self.encryption_keys = list(base.encryption_keys)

    # ---- applying updates --------------------------------------------------------------------

    def apply_all(self, updates: Iterable[TableUpdate]) -> MetadataBuilder:
        for update in updates:
            self.apply(update)
        return self

    def apply(self, update: TableUpdate) -> MetadataBuilder:
        handler = _HANDLERS.get(type(update))
        if handler is None:
            raise ValidationError(f"unknown metadata update {update!r}")
        handler(self, update)
        return self

    def _record(self, update: TableUpdate) -> None:
        self.changes.append(update)

    def _assign_uuid(self, update: AssignUUID) -> None:
        if self.table_uuid == update.uuid:
            return
        if self.base is not None and self.table_uuid is not None:
            raise ValidationException(f"cannot reassign table uuid {self.table_uuid} to {update.uuid}")
        self.table_uuid = str(uuid_module.UUID(update.uuid))
        self._record(update)

    def _upgrade_format_version(self, update: UpgradeFormatVersion) -> None:
        version = update.format_version
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise ValidationError(
                f"unsupported format-version {version}; icefloe supports {list(SUPPORTED_FORMAT_VERSIONS)}"
            )
        if self.base is not None and version < self.format_version:
            raise ValidationException(
                f"cannot downgrade format-version from {self.format_version} to {version}"
            )
        if version == self.format_version and self.base is not None:
            return
        self.format_version = version
        if version >= 3 and self.next_row_id is None:
            self.next_row_id = 0
        self._record(update)

    def _add_schema(self, update: AddSchema) -> None:
        schema = update.schema
        new_last = max(self.last_column_id, schema.highest_field_id, update.last_column_id or 0)
        existing = next((s for s in self.schemas if s.same_structure(schema)), None)
        if existing is not None:
            self._last_added_schema_id = existing.schema_id
            self.last_column_id = new_last
            return
        new_id = max((s.schema_id for s in self.schemas), default=-1) + 1
        self.schemas.append(schema.replace(schema_id=new_id))
        self.last_column_id = new_last
        self._last_added_schema_id = new_id
        self._record(AddSchema(self.schemas[-1], new_last))

    def _set_current_schema(self, update: SetCurrentSchema) -> None:
        schema_id = update.schema_id
        if schema_id == LAST_ADDED:
            if self._last_added_schema_id is None:
                raise ValidationError("cannot set the last added schema: no schema was added")
            schema_id = self._last_added_schema_id
        if not any(s.schema_id == schema_id for s in self.schemas):
            raise ValidationError(f"cannot set current schema to unknown schema id {schema_id}")
        if schema_id == self.current_schema_id:
            return
        self.current_schema_id = schema_id
        self._record(SetCurrentSchema(schema_id))

    def _add_spec(self, update: AddPartitionSpec) -> None:
        spec = update.spec
        existing = next(
            (s for s in self.specs if s.fields == spec.fields),
            None,
        )
        if existing is not None:
            self._last_added_spec_id = existing.spec_id
            return
        new_id = max((s.spec_id for s in self.specs), default=-1) + 1
        spec = replace(spec, spec_id=new_id)
        self.specs.append(spec)
        self.last_partition_id = max(self.last_partition_id, spec.last_assigned_field_id)
        self._last_added_spec_id = new_id
        self._record(AddPartitionSpec(spec))

    def _set_default_spec(self, update: SetDefaultSpec) -> None:
        spec_id = update.spec_id
        if spec_id == LAST_ADDED:
            if self._last_added_spec_id is None:
                raise ValidationError("cannot set the last added partition spec: no spec was added")
            spec_id = self._last_added_spec_id
        if not any(s.spec_id == spec_id for s in self.specs):
            raise ValidationError(f"cannot set default partition spec to unknown spec id {spec_id}")
        if spec_id == self.default_spec_id:
            return
        self.default_spec_id = spec_id
        self._record(SetDefaultSpec(spec_id))

    def _add_sort_order(self, update: AddSortOrder) -> None:
        order = update.sort_order
        existing = next((o for o in self.sort_orders if o.fields == order.fields), None)
        if existing is not None:
            self._last_added_order_id = existing.order_id
            return
        if order.is_unsorted:
            new_id = 0
        else:
            new_id = max((o.order_id for o in self.sort_orders), default=0) + 1
        order = replace(order, order_id=new_id)
        self.sort_orders.append(order)
        self._last_added_order_id = new_id
        self._record(AddSortOrder(order))

    def _set_default_sort_order(self, update: SetDefaultSortOrder) -> None:
        order_id = update.sort_order_id
        if order_id == LAST_ADDED:
            if self._last_added_order_id is None:
                raise ValidationError("cannot set the last added sort order: no sort order was added")
            order_id = self._last_added_order_id
        if not any(o.order_id == order_id for o in self.sort_orders):
            raise ValidationError(f"cannot set default sort order to unknown order id {order_id}")
        if order_id == self.default_sort_order_id:
            return
        self.default_sort_order_id = order_id
        self._record(SetDefaultSortOrder(order_id))

    def _add_snapshot(self, update: AddSnapshot) -> None:
        snapshot = update.snapshot
        if self._has_snapshot(snapshot.snapshot_id):
            raise ValidationException(f"snapshot {snapshot.snapshot_id} already exists")
        if (
            self.format_version > 1
            and snapshot.parent_snapshot_id is not None
            and snapshot.sequence_number <= self.last_sequence_number
        ):
            raise ValidationException(
                f"cannot add snapshot {snapshot.snapshot_id} with sequence number {snapshot.sequence_number}: "
                f"not newer than the table's last sequence number {self.last_sequence_number}"
            )
        if self.format_version >= 3:
            if snapshot.first_row_id is None or snapshot.added_rows is None:
                raise ValidationException(
                    f"cannot add snapshot {snapshot.snapshot_id} to a v3 table without first-row-id and added-rows"
                )
            if snapshot.first_row_id < (self.next_row_id or 0):
                raise ValidationException(
                    f"cannot add snapshot {snapshot.snapshot_id}: first-row-id {snapshot.first_row_id} is behind "
                    f"the table's next-row-id {self.next_row_id}"
                )
            self.next_row_id = snapshot.first_row_id + snapshot.added_rows
        self.snapshots.append(snapshot)
        if self._snapshot_ids is not None:
            self._snapshot_ids.add(snapshot.snapshot_id)
        self._added_snapshot_ids.append(snapshot.snapshot_id)
        self._last_updated_ms = snapshot.timestamp_ms
        self.last_sequence_number = max(self.last_sequence_number, snapshot.sequence_number)
        self._record(update)

    def _has_snapshot(self, snapshot_id: int) -> bool:
        # A set of the ids, made on first need: a scan of the snapshots per added snapshot and
        # ref grew every commit's cost with the table's history.
        if self._snapshot_ids is None:
            self._snapshot_ids = {s.snapshot_id for s in self.snapshots}
        return snapshot_id in self._snapshot_ids

    def _set_ref(self, update: SetSnapshotRef) -> None:
        if not self._has_snapshot(update.snapshot_id):
            raise ValidationException(
                f"cannot set ref '{update.ref_name}' to unknown snapshot {update.snapshot_id}"
            )
        ref = SnapshotRef(
            update.snapshot_id,
            update.type,
            update.min_snapshots_to_keep,
            update.max_snapshot_age_ms,
            update.max_ref_age_ms,
        )
        if update.ref_name == MAIN_BRANCH and not ref.is_branch:
            raise ValidationException("'main' must be a branch, not a tag")
        if self.refs.get(update.ref_name) == ref:
            return
        self.refs[update.ref_name] = ref
        if update.ref_name == MAIN_BRANCH:
            self.current_snapshot_id = ref.snapshot_id
            if self._last_updated_ms is None:
                self._last_updated_ms = _now_ms()
            self.snapshot_log.append(HistoryEntry(self._last_updated_ms, ref.snapshot_id))
        self._record(update)

    def _remove_snapshots(self, update: RemoveSnapshots) -> None:
        to_remove = set(update.snapshot_ids)
        if self.current_snapshot_id in to_remove:
            raise ValidationException(f"cannot remove the current snapshot {self.current_snapshot_id}")
        before = len(self.snapshots)
        self.snapshots = [s for s in self.snapshots if s.snapshot_id not in to_remove]
        if len(self.snapshots) == before:
            return
        self._snapshot_ids = None
        self.statistics = [s for s in self.statistics if s.snapshot_id not in to_remove]
        self.partition_statistics = [s for s in self.partition_statistics if s.snapshot_id not in to_remove]
        # Refs to removed snapshots are no longer valid.
        for name in [n for n, r in self.refs.items() if r.snapshot_id in to_remove]:
            del self.refs[name]
        self._record(update)

    def _remove_ref(self, update: RemoveSnapshotRef) -> None:
        if update.ref_name not in self.refs:
            return
        del self.refs[update.ref_name]
        if update.ref_name == MAIN_BRANCH:
            self.current_snapshot_id = None
        self._record(update)

    def _set_location(self, update: SetLocation) -> None:
        location = update.location.rstrip("/") or update.location
        if location == self.location:
            return
        self.location = location
        self._record(SetLocation(location))

    def _set_properties(self, update: SetProperties) -> None:
        reserved = sorted(set(update.updates) & RESERVED_PROPERTIES)
        if reserved:
            raise ValidationError(
                f"table properties {reserved} are reserved: they are set through the metadata itself "
                "(format-version through an upgrade)"
            )
        if all(self.properties.get(k) == v for k, v in update.updates.items()):
            return
        for key, value in update.updates.items():
            if not isinstance(value, str):
                raise ValidationError(f"table property '{key}' must be a string, not {value!r}")
            self.properties[key] = value
        self._record(update)

    def _remove_properties(self, update: RemoveProperties) -> None:
        present = [k for k in update.removals if k in self.properties]
        if not present:
            return
        for key in present:
            del self.properties[key]
        self._record(update)

    def _set_statistics(self, update: SetStatistics) -> None:
        stats = update.statistics
        self.statistics = [s for s in self.statistics if s.snapshot_id != stats.snapshot_id] + [stats]
        self._record(update)

    def _remove_statistics(self, update: RemoveStatistics) -> None:
        kept = [s for s in self.statistics if s.snapshot_id != update.snapshot_id]
        if len(kept) != len(self.statistics):
            self.statistics = kept
            self._record(update)

    def _set_partition_statistics(self, update: SetPartitionStatistics) -> None:
        stats = update.partition_statistics
        self.partition_statistics = [
            s for s in self.partition_statistics if s.snapshot_id != stats.snapshot_id
        ] + [stats]
        self._record(update)

    def _remove_partition_statistics(self, update: RemovePartitionStatistics) -> None:
        kept = [s for s in self.partition_statistics if s.snapshot_id != update.snapshot_id]
        if len(kept) != len(self.partition_statistics):
            self.partition_statistics = kept
            self._record(update)

    def _remove_specs(self, update: RemovePartitionSpecs) -> None:
        if self.default_spec_id in update.spec_ids:
            raise ValidationException(f"cannot remove the default partition spec {self.default_spec_id}")
        kept = [s for s in self.specs if s.spec_id not in update.spec_ids]
        if len(kept) != len(self.specs):
            self.specs = kept
            self._record(update)

    def _remove_schemas(self, update: RemoveSchemas) -> None:
        if self.current_schema_id in update.schema_ids:
            raise ValidationException(f"cannot remove the current schema {self.current_schema_id}")
        kept = [s for s in self.schemas if s.schema_id not in update.schema_ids]
        if len(kept) != len(self.schemas):
            self.schemas = kept
            self._record(update)

    def _add_encryption_key(self, update: AddEncryptionKey) -> None:
        # As Java's addEncryptionKey: a key id is added once; a repeated id changes nothing.
        if any(k.key_id == update.encryption_key.key_id for k in self.encryption_keys):
            return
        self.encryption_keys.append(update.encryption_key)
        self._record(update)

    def _remove_encryption_key(self, update: RemoveEncryptionKey) -> None:
        kept = [k for k in self.encryption_keys if k.key_id != update.key_id]
        if len(kept) != len(self.encryption_keys):
            self.encryption_keys = kept
            self._record(update)

    # ---- building ----------------------------------------------------------------------------

    def build(self) -> TableMetadata:
        """The new metadata (the base itself when nothing changed).

        Raises:
            ValidationError: when a new table lacks a schema, spec, sort order or location, or
                a partition field's name is a column sourced elsewhere.
            ValidationException: the default partition spec or sort order does not resolve in
                the current schema.
        """
        if self.base is not None and not self.changes:
            return self.base
        if self.table_uuid is None:
            self.table_uuid = str(uuid_module.uuid4())
        missing = [
            name
            for name, ok in (
                ("location", self.location is not None),
                ("a current schema", self.current_schema_id >= 0),
                ("a default partition spec", self.default_spec_id >= 0),
            )
            if not ok
        ]
        if missing:
            raise ValidationError(f"cannot build table metadata without {', '.join(missing)}")
        if self.default_sort_order_id < 0:
            if not any(o.order_id == 0 for o in self.sort_orders):
                self.sort_orders.insert(0, UNSORTED_SORT_ORDER)
            self.default_sort_order_id = 0
        self._check_bindings()
        if self.base is not None:
            check_key_id_unchanged(self.base.properties, self.properties)
        # As Java: the timestamp of the snapshot this change added, otherwise now.
        last_updated = self._last_updated_ms if self._last_updated_ms is not None else _now_ms()

        metadata_log = list(self.metadata_log)
        if self.base is not None and self.base_location is not None:
            metadata_log.append(MetadataLogEntry(self.base.last_updated_ms, self.base_location))
        keep = max(
            1,
            int_property(
                self.properties, METADATA_PREVIOUS_VERSIONS_MAX, METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT
            ),
        )
        if len(metadata_log) > keep:
            metadata_log = metadata_log[len(metadata_log) - keep :]

        return TableMetadata(
            format_version=self.format_version,
            table_uuid=self.table_uuid,
            location=self.location or "",
            last_sequence_number=self.last_sequence_number,
            last_updated_ms=last_updated,
            last_column_id=self.last_column_id,
            schemas=tuple(self.schemas),
            current_schema_id=self.current_schema_id,
            partition_specs=tuple(self.specs),
            default_spec_id=self.default_spec_id,
            last_partition_id=self.last_partition_id,
            properties=dict(self.properties),
            current_snapshot_id=self.current_snapshot_id,
            snapshots=tuple(self.snapshots),
            snapshot_log=tuple(self._updated_snapshot_log()),
            metadata_log=tuple(metadata_log),
            sort_orders=tuple(self.sort_orders),
            default_sort_order_id=self.default_sort_order_id,
            refs=dict(self.refs),
            statistics=tuple(self.statistics),
            partition_statistics=tuple(self.partition_statistics),
            next_row_id=self.next_row_id if self.format_version >= 3 else None,
            encryption_keys=tuple(self.encryption_keys),
        )

    def _check_bindings(self) -> None:
        """What Java checks when specs and sort orders are bound to the current schema, so that
        no metadata is written that Java (or icefloe, see ``loads_metadata``) refuses to load."""
        schema = next((s for s in self.schemas if s.schema_id == self.current_schema_id), None)
        if schema is None:
            return
        for spec in self.specs:
            _raise_problem(
                spec_binding_problem(spec, schema, check_sources=spec.spec_id == self.default_spec_id)
            )
        for order in self.sort_orders:
            if order.order_id == self.default_sort_order_id:
                _raise_problem(sort_order_binding_problem(order, schema))

    def _updated_snapshot_log(self) -> list[HistoryEntry]:
        """Drop log entries of intermediate snapshots, and history that removals invalidated.

        If the log is [(t1, s1), (t2, s2), (t3, s3)] and s2 is removed, [(t1, s1), (t3, s3)] would
        claim s1 was current until t3; so everything up to a removed entry is dropped (as Java).
        """
        # Snapshots this change added and made current, then superseded (a multi-operation commit).
        superseded = set(self._added_snapshot_ids) - {self.current_snapshot_id}
        intermediate = superseded & {e.snapshot_id for e in self.snapshot_log} if superseded else set()
        removed_any = any(isinstance(c, RemoveSnapshots) for c in self.changes)
        if not intermediate and not removed_any:
            return self.snapshot_log
        live = {s.snapshot_id for s in self.snapshots}
        result: list[HistoryEntry] = []
        for entry in self.snapshot_log:
            if entry.snapshot_id in live:
                if entry.snapshot_id not in intermediate:
                    result.append(entry)
            elif removed_any:
                result.clear()
        return result


_HANDLERS: dict[type, Any] = {
    AssignUUID: MetadataBuilder._assign_uuid,
    UpgradeFormatVersion: MetadataBuilder._upgrade_format_version,
    AddSchema: MetadataBuilder._add_schema,
    SetCurrentSchema: MetadataBuilder._set_current_schema,
    AddPartitionSpec: MetadataBuilder._add_spec,
    SetDefaultSpec: MetadataBuilder._set_default_spec,
    AddSortOrder: MetadataBuilder._add_sort_order,
    SetDefaultSortOrder: MetadataBuilder._set_default_sort_order,
    AddSnapshot: MetadataBuilder._add_snapshot,
    SetSnapshotRef: MetadataBuilder._set_ref,
    RemoveSnapshots: MetadataBuilder._remove_snapshots,
    RemoveSnapshotRef: MetadataBuilder._remove_ref,
    SetLocation: MetadataBuilder._set_location,
    SetProperties: MetadataBuilder._set_properties,
    RemoveProperties: MetadataBuilder._remove_properties,
    SetStatistics: MetadataBuilder._set_statistics,
    RemoveStatistics: MetadataBuilder._remove_statistics,
    SetPartitionStatistics: MetadataBuilder._set_partition_statistics,
    RemovePartitionStatistics: MetadataBuilder._remove_partition_statistics,
    RemovePartitionSpecs: MetadataBuilder._remove_specs,
    RemoveSchemas: MetadataBuilder._remove_schemas,
    AddEncryptionKey: MetadataBuilder._add_encryption_key,
    RemoveEncryptionKey: MetadataBuilder._remove_encryption_key,
}


# ---- new tables ------------------------------------------------------------------------------


def updates_for_new_table(
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    location: str,
    properties: Mapping[str, str] | None = None,
    *,
    format_version: int | None = None,
    table_uuid: str | None = None,
) -> list[TableUpdate]:
    """The updates that create a table, with fresh ids as Java assigns them.

    Column ids are renumbered from 1; the spec and sort order are re-pointed by column name to
    the renumbered schema and partition field ids start at 1000. ``format-version`` may come in
    ``properties`` (as users pass it) or as the keyword; it is not stored as a property.
    As in Java, every catalog's new table gets ``write.parquet.compression-codec=zstd``
    unless ``properties`` names a codec (``persisted_properties``).
    """
    props = dict(properties or {})
    version_text = props.pop("format-version", None)
    if format_version is None:
        try:
            format_version = int(version_text) if version_text is not None else DEFAULT_FORMAT_VERSION
        except ValueError:
            # A typed error naming the property, not int()'s bare ValueError.
            raise ValidationError(f"format-version must be an integer, not {version_text!r}") from None
    counter = itertools.count(1)
    check_encryption_properties(props, format_version)
    fresh_schema = assign_fresh_ids(schema, lambda: next(counter))
    for field in fresh_schema.fields:
        _check_type_allowed(field.field_type, format_version, field.name)
    fresh_spec = _fresh_spec(spec, schema, fresh_schema)
    fresh_order = _fresh_sort_order(sort_order, schema, fresh_schema)
    return [
        AssignUUID(table_uuid or str(uuid_module.uuid4())),
        UpgradeFormatVersion(format_version),
        AddSchema(fresh_schema, fresh_schema.highest_field_id),
        SetCurrentSchema(LAST_ADDED),
        AddPartitionSpec(fresh_spec),
        SetDefaultSpec(LAST_ADDED),
        AddSortOrder(fresh_order),
        SetDefaultSortOrder(LAST_ADDED),
        SetLocation(location),
        SetProperties(persisted_properties(props)),
    ]


def new_table_metadata(
    schema: Schema,
    spec: PartitionSpec,
    sort_order: SortOrder,
    location: str,
    properties: Mapping[str, str] | None = None,
    *,
    format_version: int | None = None,
    table_uuid: str | None = None,
) -> TableMetadata:
    """The metadata of a new, empty table (see ``updates_for_new_table``)."""
    updates = updates_for_new_table(
        schema, spec, sort_order, location, properties, format_version=format_version, table_uuid=table_uuid
    )
    return MetadataBuilder(None).apply_all(updates).build()


def _raise_problem(problem: SpecProblem | None) -> None:
    if problem is None:
        return
    # Java: a name conflict is an IllegalArgumentException, an unresolved source a ValidationException.
    if problem.key == "name":
        raise ValidationError(problem.message)
    raise ValidationException(problem.message)


def _check_type_allowed(field_type: Any, format_version: int, name: str) -> None:
    minimum = getattr(field_type, "min_format_version", 1)
    if minimum > format_version:
        raise ValidationError(f"column '{name}': type {field_type} needs format-version {minimum} or later")
    if field_type.is_nested:
        for child in field_type.fields:
            _check_type_allowed(child.field_type, format_version, f"{name}.{child.name}")


def _fresh_spec(spec: PartitionSpec, old: Schema, new: Schema) -> PartitionSpec:
    fields = []
    for index, pf in enumerate(spec.fields):
        fields.append(
            PartitionField(
                _renumbered_source(pf.source_id, old, new, "partition field " + pf.name),
                PARTITION_DATA_ID_START + index,
                pf.transform,
                pf.name,
            )
        )
    return PartitionSpec(tuple(fields), spec_id=0)


def _fresh_sort_order(order: SortOrder, old: Schema, new: Schema) -> SortOrder:
    if order.is_unsorted:
        return UNSORTED_SORT_ORDER
    fields = [
        SortField(
            _renumbered_source(f.source_id, old, new, "sort field"), f.transform, f.direction, f.null_order
        )
        for f in order.fields
    ]
    return SortOrder(tuple(fields), order_id=1)


def _renumbered_source(source_id: int, old: Schema, new: Schema, what: str) -> int:
    name = old.find_column_name(source_id)
    if name is None:
        raise ValidationError(f"{what}: source column id {source_id} is not in the schema")
    return new.field(name).field_id
