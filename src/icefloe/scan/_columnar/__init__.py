"""Manifests decoded into a compact columnar form: what planning filters, caches and turns
into ``DataFile`` / ``DeleteFile`` objects.

A ``DecodedManifest`` holds every entry of one manifest, with the manifest list's inheritance
applied exactly as ``read_manifest`` applies it (snapshot id, sequence numbers, v3 first row
ids), in arrays:

- scalars (status, record count, size, sequence numbers, ...) as numpy arrays;
- partition tuples dictionary-encoded: a code per entry into the distinct tuples (a manifest
  usually holds a handful of partitions, so partition predicates run once per distinct tuple);
- each metrics map as a layout code per entry (the tuple of field ids it has; usually one for
  the whole manifest), the offset of its values, and the values: counts in an int64 array,
  bounds concatenated in one ``bytes`` with offsets.

That is a fraction of the memory of the equivalent ``DataFile`` objects (each holds six
dicts), lets metrics filters read one column's bounds as a numpy array, and is cheap to build:
the columns are pulled out of fastavro's records with C-level iteration (``map``,
``itemgetter``, ``chain``), not a Python statement per value. Files are materialized only for
the entries a plan keeps.
"""

from icefloe.scan._columnar._shared import HotValues
from icefloe.scan._columnar.decoder import CHUNK, ManifestBuilder, decode_manifest, decode_manifests
from icefloe.scan._columnar.manifest import DecodedManifest
from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.scan._columnar.planned import (
    KeptFiles,
    PlannedDataFile,
    PlannedDeleteFile,
    PlannedFileScanTask,
    new_planned_task,
)

__all__ = [
    "CHUNK",
    "BoundsColumn",
    "CountsColumn",
    "DecodedManifest",
    "HotValues",
    "KeptFiles",
    "ManifestBuilder",
    "PlannedDataFile",
    "PlannedDeleteFile",
    "PlannedFileScanTask",
    "decode_manifest",
    "decode_manifests",
    "new_planned_task",
]
