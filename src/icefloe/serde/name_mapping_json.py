"""JSON form of name mappings (spec Appendix C "Name Mapping Serialization"), the value of the
``schema.name-mapping.default`` table property.

Written as Java's ``NameMappingParser`` writes it: pretty-printed JSON, each field as
``{"field-id", "names", "fields" (when it has nested fields)}``. Read as Java reads it:
``field-id`` may be absent (an unmapped field), ``names`` defaults to none.
"""

from __future__ import annotations

import json
from typing import Any

from icefloe.errors import InvalidMetadataError
from icefloe.serde._jackson import pretty
from icefloe.serde._reader import JsonReader, join_path
from icefloe.spec.name_mapping import MappedField, NameMapping

__all__ = ["dumps_name_mapping", "loads_name_mapping", "name_mapping_from_json", "name_mapping_to_json"]


def name_mapping_to_json(mapping: NameMapping) -> list[dict[str, Any]]:
    """The mapping as a ``json``-module-ready list of field objects."""
    return [_field_to_json(f) for f in mapping.fields]


def _field_to_json(mapped: MappedField) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if mapped.field_id is not None:
        result["field-id"] = mapped.field_id
    result["names"] = list(mapped.names)
    if mapped.fields:
        result["fields"] = [_field_to_json(f) for f in mapped.fields]
    return result


def dumps_name_mapping(mapping: NameMapping) -> str:
    """The property value, as Java writes it (Jackson's pretty printer)."""
    return pretty(name_mapping_to_json(mapping))


def name_mapping_from_json(obj: Any, *, location: str | None = None) -> NameMapping:
    """Read a mapping from its parsed JSON list.

    Raises:
        InvalidMetadataError: naming the field path that is wrong (``[2].fields[0].names``).
    """
    r = JsonReader(location, "name mapping")
    return NameMapping(r.guard_depth(lambda: _read_fields(r, obj, "")))


def loads_name_mapping(text: str | bytes, *, location: str | None = None) -> NameMapping:
    """Parse the ``schema.name-mapping.default`` property value.

    Args:
        text: the JSON text.
        location: where it came from (e.g. ``"<table> property schema.name-mapping.default"``),
            for error messages.

    Raises:
        InvalidMetadataError: the text is not JSON or not a valid mapping.
    """
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise InvalidMetadataError(f"invalid name mapping: not valid JSON: {e}", location=location) from e
    return name_mapping_from_json(obj, location=location)


def _read_fields(r: JsonReader, value: Any, path: str) -> tuple[MappedField, ...]:
    items = r.array(value, path)
    result = []
    for i, item in enumerate(items):
        item_path = f"{path}[{i}]"
        obj = r.obj(item, item_path)
        field_id = r.opt_int(obj, "field-id", item_path)
        names = r.str_list(obj, "names", item_path, required=False) or []
        nested: tuple[MappedField, ...] = ()
        if obj.get("fields") is not None:
            nested = _read_fields(r, obj["fields"], join_path(item_path, "fields"))
        result.append(MappedField(field_id, tuple(names), nested))
    return tuple(result)
