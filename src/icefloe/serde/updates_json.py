"""REST JSON of the commit currency: ``TableUpdate`` (``"action": ...``) and ``TableRequirement``
(``"type": ...``), per the Iceberg REST catalog OpenAPI spec and Java's ``MetadataUpdateParser``
/ ``UpdateRequirementParser``.

Field names follow the OpenAPI spec. Where Java 1.9 still writes a deprecated field that its
older servers require, it is written too (``add-schema``'s ``last-column-id`` when known,
``set-statistics``'s ``snapshot-id``); on reading, Java's legacy spellings are accepted
(``set-properties``'s ``updated``, ``remove-properties``'s ``removed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from icefloe.errors import ValidationError
from icefloe.serde._reader import JsonReader, join_path
from icefloe.serde.schema_json import (
    read_schema,
    read_sort_order,
    read_spec,
    schema_to_json,
    sort_order_to_json,
    spec_to_json,
)
from icefloe.serde.snapshot_json import (
    encryption_key_to_json,
    partition_statistics_file_to_json,
    read_encryption_key,
    read_partition_statistics_file,
    read_snapshot,
    read_statistics_file,
    snapshot_to_json,
    statistics_file_to_json,
)
from icefloe.spec.partitioning import PartitionSpec
from icefloe.spec.snapshots import SnapshotRefType
from icefloe.spec.updates import (
    AddEncryptionKey,
    AddPartitionSpec,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
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
    TableRequirement,
    TableUpdate,
    UpgradeFormatVersion,
)

__all__ = ["requirement_from_json", "requirement_to_json", "update_from_json", "update_to_json"]


# ---- updates: writing -----------------------------------------------------------------------


def _set_snapshot_ref_to_json(u: SetSnapshotRef) -> dict[str, Any]:
    result: dict[str, Any] = {"ref-name": u.ref_name, "snapshot-id": u.snapshot_id, "type": u.type.value}
    if u.min_snapshots_to_keep is not None:
        result["min-snapshots-to-keep"] = u.min_snapshots_to_keep
    if u.max_snapshot_age_ms is not None:
        result["max-snapshot-age-ms"] = u.max_snapshot_age_ms
    if u.max_ref_age_ms is not None:
        result["max-ref-age-ms"] = u.max_ref_age_ms
    return result


def _add_schema_to_json(u: AddSchema) -> dict[str, Any]:
    result: dict[str, Any] = {"schema": schema_to_json(u.schema)}
    if u.last_column_id is not None:
        result["last-column-id"] = u.last_column_id
    return result


_UPDATE_WRITERS: dict[type[TableUpdate], Callable[[Any], dict[str, Any]]] = {
    AssignUUID: lambda u: {"uuid": u.uuid},
    UpgradeFormatVersion: lambda u: {"format-version": u.format_version},
    AddSchema: _add_schema_to_json,
    SetCurrentSchema: lambda u: {"schema-id": u.schema_id},
    AddPartitionSpec: lambda u: {"spec": spec_to_json(u.spec)},
    SetDefaultSpec: lambda u: {"spec-id": u.spec_id},
    AddSortOrder: lambda u: {"sort-order": sort_order_to_json(u.sort_order)},
    SetDefaultSortOrder: lambda u: {"sort-order-id": u.sort_order_id},
    AddSnapshot: lambda u: {"snapshot": snapshot_to_json(u.snapshot)},
    SetSnapshotRef: _set_snapshot_ref_to_json,
    RemoveSnapshots: lambda u: {"snapshot-ids": list(u.snapshot_ids)},
    RemoveSnapshotRef: lambda u: {"ref-name": u.ref_name},
    SetLocation: lambda u: {"location": u.location},
    SetProperties: lambda u: {"updates": dict(u.updates)},
    RemoveProperties: lambda u: {"removals": list(u.removals)},
    SetStatistics: lambda u: {
        "snapshot-id": u.statistics.snapshot_id,
        "statistics": statistics_file_to_json(u.statistics),
    },
    RemoveStatistics: lambda u: {"snapshot-id": u.snapshot_id},
    SetPartitionStatistics: lambda u: {
        "partition-statistics": partition_statistics_file_to_json(u.partition_statistics)
    },
    RemovePartitionStatistics: lambda u: {"snapshot-id": u.snapshot_id},
    RemovePartitionSpecs: lambda u: {"spec-ids": list(u.spec_ids)},
    RemoveSchemas: lambda u: {"schema-ids": list(u.schema_ids)},
    AddEncryptionKey: lambda u: {"encryption-key": encryption_key_to_json(u.encryption_key)},
    RemoveEncryptionKey: lambda u: {"key-id": u.key_id},
}


def update_to_json(update: TableUpdate) -> dict[str, Any]:
    """The REST JSON of an update: ``{"action": ..., <fields>}``.

    Raises:
        ValidationError: not a known update class.
    """
    writer = _UPDATE_WRITERS.get(type(update))
    if writer is None:
        raise ValidationError(f"cannot write update of type {type(update).__name__} as JSON")
    return {"action": update.action, **writer(update)}


# ---- updates: reading -----------------------------------------------------------------------

_Reader = Callable[[JsonReader, dict[str, Any], str], TableUpdate]


def _read_set_snapshot_ref(r: JsonReader, o: dict[str, Any], p: str) -> TableUpdate:
    type_text = r.req_str(o, "type", p)
    ref_type = {t.value: t for t in SnapshotRefType}.get(type_text.lower())
    if ref_type is None:
        r.fail(join_path(p, "type"), f"expected 'branch' or 'tag', got {type_text!r}")
    return SetSnapshotRef(
        ref_name=r.req_str(o, "ref-name", p),
        snapshot_id=r.req_long(o, "snapshot-id", p),
        type=ref_type,
        min_snapshots_to_keep=r.opt_int(o, "min-snapshots-to-keep", p),
        max_snapshot_age_ms=r.opt_long(o, "max-snapshot-age-ms", p),
        max_ref_age_ms=r.opt_long(o, "max-ref-age-ms", p),
    )


def _read_set_properties(r: JsonReader, o: dict[str, Any], p: str) -> TableUpdate:
    key = "updates" if o.get("updates") is not None or o.get("updated") is None else "updated"
    return SetProperties(r.str_map(o, key, p, required=True))


def _read_remove_properties(r: JsonReader, o: dict[str, Any], p: str) -> TableUpdate:
    key = "removals" if o.get("removals") is not None or o.get("removed") is None else "removed"
    return RemoveProperties(tuple(r.str_list(o, key, p) or ()))


def _read_new_spec(r: JsonReader, o: dict[str, Any], p: str) -> PartitionSpec:
    spec = r.obj(_required(r, o, "spec", p), join_path(p, "spec"))
    if spec.get("spec-id") is None:
        # The OpenAPI spec marks spec-id read-only (clients may leave it out): the table assigns
        # the id of an added spec anyway.
        spec = {**spec, "spec-id": 0}
    return read_spec(r, spec, join_path(p, "spec"))


def _required(r: JsonReader, o: dict[str, Any], key: str, p: str) -> Any:
    value = o.get(key)
    if value is None:
        r.fail(join_path(p, key), "missing required field")
    return value


_UPDATE_READERS: dict[str, _Reader] = {
    AssignUUID.action: lambda r, o, p: AssignUUID(r.req_str(o, "uuid", p)),
    UpgradeFormatVersion.action: lambda r, o, p: UpgradeFormatVersion(r.req_int(o, "format-version", p)),
    AddSchema.action: lambda r, o, p: AddSchema(
        read_schema(r, _required(r, o, "schema", p), join_path(p, "schema")),
        r.opt_int(o, "last-column-id", p),
    ),
    SetCurrentSchema.action: lambda r, o, p: SetCurrentSchema(r.req_int(o, "schema-id", p)),
    AddPartitionSpec.action: lambda r, o, p: AddPartitionSpec(_read_new_spec(r, o, p)),
    SetDefaultSpec.action: lambda r, o, p: SetDefaultSpec(r.req_int(o, "spec-id", p)),
    AddSortOrder.action: lambda r, o, p: AddSortOrder(
        read_sort_order(r, _required(r, o, "sort-order", p), join_path(p, "sort-order"))
    ),
    SetDefaultSortOrder.action: lambda r, o, p: SetDefaultSortOrder(r.req_int(o, "sort-order-id", p)),
    AddSnapshot.action: lambda r, o, p: AddSnapshot(
        read_snapshot(r, _required(r, o, "snapshot", p), join_path(p, "snapshot"))
    ),
    SetSnapshotRef.action: _read_set_snapshot_ref,
    RemoveSnapshots.action: lambda r, o, p: RemoveSnapshots(
        tuple(r.int_list(o, "snapshot-ids", p, long=True) or ())
    ),
    RemoveSnapshotRef.action: lambda r, o, p: RemoveSnapshotRef(r.req_str(o, "ref-name", p)),
    SetLocation.action: lambda r, o, p: SetLocation(r.req_str(o, "location", p)),
    SetProperties.action: _read_set_properties,
    RemoveProperties.action: _read_remove_properties,
    SetStatistics.action: lambda r, o, p: SetStatistics(
        read_statistics_file(r, _required(r, o, "statistics", p), join_path(p, "statistics"))
    ),
    RemoveStatistics.action: lambda r, o, p: RemoveStatistics(r.req_long(o, "snapshot-id", p)),
    SetPartitionStatistics.action: lambda r, o, p: SetPartitionStatistics(
        read_partition_statistics_file(
            r, _required(r, o, "partition-statistics", p), join_path(p, "partition-statistics")
        )
    ),
    RemovePartitionStatistics.action: lambda r, o, p: RemovePartitionStatistics(
        r.req_long(o, "snapshot-id", p)
    ),
    RemovePartitionSpecs.action: lambda r, o, p: RemovePartitionSpecs(
        tuple(r.int_list(o, "spec-ids", p) or ())
    ),
    RemoveSchemas.action: lambda r, o, p: RemoveSchemas(tuple(r.int_list(o, "schema-ids", p) or ())),
    AddEncryptionKey.action: lambda r, o, p: AddEncryptionKey(
        read_encryption_key(r, _required(r, o, "encryption-key", p), join_path(p, "encryption-key"))
    ),
    RemoveEncryptionKey.action: lambda r, o, p: RemoveEncryptionKey(r.req_str(o, "key-id", p)),
}


def update_from_json(obj: Any, *, location: str | None = None) -> TableUpdate:
    """Read a REST ``TableUpdate``.

    Args:
        obj: the parsed JSON object.
        location: what is being read (a request, a file), for error messages.

    Raises:
        InvalidMetadataError: a missing or unknown ``action``, or a malformed field (named).
    """
    r = JsonReader(location, "table update")
    o = r.obj(obj, "")
    action = r.req_str(o, "action", "")
    reader = _UPDATE_READERS.get(action)
    if reader is None:
        r.fail("action", f"unknown update action {action!r}")
    return r.guard_depth(lambda: r.wrap("", lambda: reader(r, o, "")))


# ---- requirements ---------------------------------------------------------------------------


def requirement_to_json(requirement: TableRequirement) -> dict[str, Any]:
    """The REST JSON of a requirement: ``{"type": ..., <fields>}``.

    Raises:
        ValidationError: not a known requirement class.
    """
    result: dict[str, Any] = {"type": requirement.type}
    if isinstance(requirement, AssertCreate):
        pass
    elif isinstance(requirement, AssertTableUUID):
        result["uuid"] = requirement.uuid
    elif isinstance(requirement, AssertRefSnapshotId):
        result["ref"] = requirement.ref
        result["snapshot-id"] = requirement.snapshot_id  # null: the ref must not exist
    elif isinstance(requirement, AssertLastAssignedFieldId):
        result["last-assigned-field-id"] = requirement.last_assigned_field_id
    elif isinstance(requirement, AssertCurrentSchemaId):
        result["current-schema-id"] = requirement.current_schema_id
    elif isinstance(requirement, AssertLastAssignedPartitionId):
        result["last-assigned-partition-id"] = requirement.last_assigned_partition_id
    elif isinstance(requirement, AssertDefaultSpecId):
        result["default-spec-id"] = requirement.default_spec_id
    elif isinstance(requirement, AssertDefaultSortOrderId):
        result["default-sort-order-id"] = requirement.default_sort_order_id
    else:
        raise ValidationError(f"cannot write requirement of type {type(requirement).__name__} as JSON")
    return result


def requirement_from_json(obj: Any, *, location: str | None = None) -> TableRequirement:
    """Read a REST ``TableRequirement``.

    Raises:
        InvalidMetadataError: a missing or unknown ``type``, or a malformed field (named).
    """
    r = JsonReader(location, "table requirement")
    o = r.obj(obj, "")
    kind = r.req_str(o, "type", "")
    if kind == AssertCreate.type:
        return AssertCreate()
    if kind == AssertTableUUID.type:
        return AssertTableUUID(r.req_str(o, "uuid", ""))
    if kind == AssertRefSnapshotId.type:
        # "snapshot-id": null (or absent) asserts that the ref does not exist.
        return AssertRefSnapshotId(r.req_str(o, "ref", ""), r.opt_long(o, "snapshot-id", ""))
    if kind == AssertLastAssignedFieldId.type:
        return AssertLastAssignedFieldId(r.req_int(o, "last-assigned-field-id", ""))
    if kind == AssertCurrentSchemaId.type:
        return AssertCurrentSchemaId(r.req_int(o, "current-schema-id", ""))
    if kind == AssertLastAssignedPartitionId.type:
        return AssertLastAssignedPartitionId(r.req_int(o, "last-assigned-partition-id", ""))
    if kind == AssertDefaultSpecId.type:
        return AssertDefaultSpecId(r.req_int(o, "default-spec-id", ""))
    if kind == AssertDefaultSortOrderId.type:
        return AssertDefaultSortOrderId(r.req_int(o, "default-sort-order-id", ""))
    r.fail("type", f"unknown requirement type {kind!r}")
