"""Which manifests ``rewrite_manifests`` rewrites, for both implementations (``icefloe.actions``
and ``icefloe.spark.actions``): the current snapshot's data manifests of one partition spec
(optionally filtered), at a target size; nothing when no manifest matches, or a single one is
not over the target (Java's ``RewriteManifestsSparkAction``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from icefloe.errors import ValidationError, ValidationException
from icefloe.io import FileIO
from icefloe.scan import manifest_list
from icefloe.spec.manifest import ManifestContent, ManifestFile
from icefloe.spec.properties import (
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    int_property,
)
from icefloe.spec.table_metadata import TableMetadata

__all__ = ["ManifestsPlan", "plan_manifest_rewrite"]


@dataclass(frozen=True)
class ManifestsPlan:
    spec_id: int
    manifests: list[ManifestFile]
    target: int  # bytes per new manifest

    @property
    def outputs(self) -> int:
        """About how many manifests the rewrite writes."""
        return max(1, math.ceil(sum(m.manifest_length for m in self.manifests) / self.target))


def plan_manifest_rewrite(
    io: FileIO,
    metadata: TableMetadata,
    *,
    spec_id: int | None,
    target_manifest_size_bytes: int | None,
    rewrite_if: Callable[[ManifestFile], bool] | None,
) -> ManifestsPlan | None:
    """The manifests to rewrite (None: nothing to do).

    Raises:
        ValidationError: an unknown spec id, a target size below 1.
        ValidationException: a manifest without file counts.
    """
    snapshot = metadata.current_snapshot()
    if snapshot is None:
        return None
    spec_id = metadata.default_spec_id if spec_id is None else spec_id
    if spec_id not in metadata.specs_by_id():
        raise ValidationError(f"rewrite_manifests: the table has no partition spec {spec_id}")
    target = (
        int_property(metadata.properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT)
        if target_manifest_size_bytes is None
        else target_manifest_size_bytes
    )
    if not isinstance(target, int) or target < 1:
        raise ValidationError(f"target_manifest_size_bytes must be a positive int, not {target!r}")
    matching = [
        m
        for m in manifest_list(io, snapshot)
        if m.content == ManifestContent.DATA
        and m.partition_spec_id == spec_id
        and (rewrite_if is None or rewrite_if(m))
    ]
    if not matching:
        return None
    for manifest in matching:
        if manifest.added_files_count is None or manifest.existing_files_count is None:
            raise ValidationException(f"No file counts in manifest: {manifest.manifest_path}")
    plan = ManifestsPlan(spec_id, matching, target)
    if plan.outputs == 1 and len(matching) == 1:
        return None
    return plan
