"""File access for icefloe (layer L3): FileIO implementations, where new files go, and the
table encryption (``icefloe.io.encryption``).

Start with ``load_file_io(properties, location)``; it returns a FileIO for local paths,
``file:`` URIs, S3 (pyarrow) and, through fsspec, any other scheme with an installed backend.
"""

from icefloe.io.arrowfs import ArrowFileIO
from icefloe.io.confined import ConfinedFileIO, is_within, is_within_any
from icefloe.io.encryption import EncryptingFileIO, EncryptionManager, PlaintextEncryptionManager
from icefloe.io.faults import FaultInjectingFileIO
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile, split_scheme
from icefloe.io.fsspecfs import FsspecFileIO
from icefloe.io.local import LocalFileIO, local_path
from icefloe.io.locations import (
    DefaultLocationProvider,
    LocationProvider,
    ObjectStoreLocationProvider,
    entropy_dirs,
    load_location_provider,
    metadata_location,
    strip_trailing_slash,
)
from icefloe.io.resolving import ResolvingFileIO, load_file_io
from icefloe.io.s3 import S3Config

__all__ = [
    "ArrowFileIO",
    "ConfinedFileIO",
    "DefaultLocationProvider",
    "EncryptingFileIO",
    "EncryptionManager",
    "FaultInjectingFileIO",
    "FileIO",
    "FileInfo",
    "FsspecFileIO",
    "InputFile",
    "LocalFileIO",
    "LocationProvider",
    "ObjectStoreLocationProvider",
    "OutputFile",
    "PlaintextEncryptionManager",
    "ResolvingFileIO",
    "S3Config",
    "entropy_dirs",
    "is_within",
    "is_within_any",
    "load_file_io",
    "load_location_provider",
    "local_path",
    "metadata_location",
    "split_scheme",
    "strip_trailing_slash",
]
