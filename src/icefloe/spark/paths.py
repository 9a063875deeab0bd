"""File locations as Spark takes them and as Spark reports them (``_metadata.file_path``).

Spark (through Hadoop's ``Path``) takes a plain local path literally, except that ``*?[]{}\\``
are glob characters: they are escaped. It reports a file as ``Path.toUri().toString()`` with
the scheme made explicit: ``file:/dir/a%20b`` for the local file ``/dir/a b``, and a literal
``%`` as ``%25``. Joining Spark's rows with icefloe's files (position deletes, per-file
constants) goes through :func:`reported_path`, which builds that form from an Iceberg location.
"""

from __future__ import annotations

import os
import urllib.parse

from icefloe.errors import UnsupportedFeatureError
from icefloe.io.fileio import split_scheme
from icefloe.io.local import local_path

__all__ = ["reported_path", "spark_input_path"]

_GLOB_CHARACTERS = "\\*?[]{}"
# What java.net.URI leaves unquoted in a path: unreserved, punctuation, '/' and '@'.
_URI_PATH_SAFE = "/_-!.~'()*,;:$&+=@"


def _split(location: str) -> tuple[str, str]:
    """(scheme-and-authority prefix, path) of a location; local files become ``file:``."""
    scheme, _ = split_scheme(location)
    if scheme in (None, "file"):
        return "file:", os.path.abspath(local_path(location))
    parsed = urllib.parse.urlsplit(location)
    if scheme in ("s3", "s3n"):
        raise UnsupportedFeatureError(
            f"{location}: Spark reads object-store files through Hadoop's s3a connector, which "
            "is not on PySpark's class path; isp.read supports local (file:) tables, and "
            "spark.read.format('icefloe') (isp.register) reads object stores through icefloe's FileIO"
        )
    return f"{parsed.scheme}://{parsed.netloc}", parsed.path


def spark_input_path(location: str) -> str:
    """The path to hand ``spark.read.parquet`` for one Iceberg file location."""
    prefix, path = _split(location)
    escaped = "".join("\\" + c if c in _GLOB_CHARACTERS else c for c in path)
    return escaped if prefix == "file:" else prefix + escaped


def reported_path(location: str) -> str:
    """The ``_metadata.file_path`` Spark reports for the file at ``location``."""
    prefix, path = _split(location)
    return prefix + urllib.parse.quote(path, safe=_URI_PATH_SAFE)
