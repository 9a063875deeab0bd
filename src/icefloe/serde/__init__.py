"""JSON serialization of the spec model (spec Appendix C), written and read as Java Iceberg does.

- :mod:`icefloe.serde.metadata_json`: table metadata files (``loads_metadata`` /
  ``dumps_metadata``) and their names.
- :mod:`icefloe.serde.schema_json`: types, schemas, partition specs, sort orders (and, re-exported
  from :mod:`icefloe.serde.snapshot_json`, snapshots, refs, statistics files, encryption keys).
- :mod:`icefloe.serde.name_mapping_json`: the ``schema.name-mapping.default`` property.
- :mod:`icefloe.serde.updates_json`: REST ``TableUpdate`` / ``TableRequirement`` objects.

Malformed input raises :class:`~icefloe.errors.InvalidMetadataError` naming the file and the
field path.
"""

from __future__ import annotations

from icefloe.serde.metadata_json import (
    dumps_metadata,
    loads_metadata,
    metadata_file_name,
    metadata_from_dict,
    metadata_to_dict,
    parse_metadata_version,
)
from icefloe.serde.name_mapping_json import (
    dumps_name_mapping,
    loads_name_mapping,
    name_mapping_from_json,
    name_mapping_to_json,
)
from icefloe.serde.schema_json import (
    partition_fields_from_json,
    partition_fields_to_json,
    schema_from_json,
    schema_to_json,
    sort_order_from_json,
    sort_order_to_json,
    spec_from_json,
    spec_to_json,
    type_from_json,
    type_to_json,
)
from icefloe.serde.snapshot_json import (
    encryption_key_from_json,
    encryption_key_to_json,
    partition_statistics_file_from_json,
    partition_statistics_file_to_json,
    ref_from_json,
    ref_to_json,
    refs_from_json,
    refs_to_json,
    snapshot_from_json,
    snapshot_to_json,
    statistics_file_from_json,
    statistics_file_to_json,
)
from icefloe.serde.updates_json import (
    requirement_from_json,
    requirement_to_json,
    update_from_json,
    update_to_json,
)

__all__ = [
    "dumps_metadata",
    "dumps_name_mapping",
    "encryption_key_from_json",
    "encryption_key_to_json",
    "loads_metadata",
    "loads_name_mapping",
    "metadata_file_name",
    "metadata_from_dict",
    "metadata_to_dict",
    "name_mapping_from_json",
    "name_mapping_to_json",
    "parse_metadata_version",
    "partition_fields_from_json",
    "partition_fields_to_json",
    "partition_statistics_file_from_json",
    "partition_statistics_file_to_json",
    "ref_from_json",
    "ref_to_json",
    "refs_from_json",
    "refs_to_json",
    "requirement_from_json",
    "requirement_to_json",
    "schema_from_json",
    "schema_to_json",
    "snapshot_from_json",
    "snapshot_to_json",
    "sort_order_from_json",
    "sort_order_to_json",
    "spec_from_json",
    "spec_to_json",
    "statistics_file_from_json",
    "statistics_file_to_json",
    "type_from_json",
    "type_to_json",
    "update_from_json",
    "update_to_json",
]
