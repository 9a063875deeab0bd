"""File locations as Spark takes them and as Spark reports them (``_metadata.file_path``).

Spark (through Hadoop's ``Path``) takes a plain local path literally, except that ``*?[]{}\\``
are glob characters: they are escaped. It reports a file as ``Path.toUri().toString()`` with
the scheme made explicit: ``file:/dir/a%20b`` for the local file ``/dir/a b``, and a literal
``%`` as ``%25``. Joining Spark's rows with icefloe's files (position deletes, per-file
constants, row-level changes) goes through :func:`reported_path`, which builds that form from
an Iceberg location.

Object-store locations name the scheme of the FileIO that wrote them (Java's S3FileIO writes
``s3://``), while Hadoop opens S3 through its s3a connector, registered as ``s3a://``. The
Iceberg scheme is replaced by its Hadoop scheme (:data:`DEFAULT_HADOOP_SCHEMES`, or the mapping
``icefloe.spark.hadoop-schemes`` configures, see :func:`parse_hadoop_schemes`) in the path
Spark is given and so in the path it reports. icefloe's reader in Spark tasks reports the same
form, so both readers' rows join with the same keys.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping

from icefloe.errors import ValidationError
from icefloe.io.fileio import split_scheme
from icefloe.io.local import local_path
from icefloe.spec.properties import SPARK_HADOOP_SCHEMES as HADOOP_SCHEMES

__all__ = [
    "DEFAULT_HADOOP_SCHEMES",
    "hadoop_scheme",
    "parse_hadoop_schemes",
    "reported_path",
    "spark_input_path",
]

#: Iceberg's S3 schemes are Hadoop's s3a (Java's ``ResolvingFileIO`` equivalences).
DEFAULT_HADOOP_SCHEMES: Mapping[str, str] = {"s3": "s3a", "s3n": "s3a"}

_GLOB_CHARACTERS = "\\*?[]{}"
# What java.net.URI leaves unquoted in a path: unreserved, punctuation, '/' and '@'.
_URI_PATH_SAFE = "/_-!.~'()*,;:$&+=@"


def parse_hadoop_schemes(text: str) -> dict[str, str]:
    """The mapping ``s3=s3a,s3n=s3a`` spells (schemes lower-cased).

    Raises:
        ValidationError: an entry is not ``scheme=scheme``, naming the setting.
    """
    mapping: dict[str, str] = {}
    for entry in text.split(","):
        if not entry.strip():
            continue
        iceberg, sep, hadoop = entry.partition("=")
        iceberg, hadoop = iceberg.strip().lower(), hadoop.strip().lower()
        if not sep or not iceberg or not hadoop or not all(_is_scheme(s) for s in (iceberg, hadoop)):
            raise ValidationError(
                f"{HADOOP_SCHEMES}: {entry.strip()!r} is not iceberg-scheme=hadoop-scheme "
                "(for example s3=s3a,s3n=s3a)"
            )
        mapping[iceberg] = hadoop
    return mapping


def _is_scheme(text: str) -> bool:
    return text[0].isalpha() and all(c.isalnum() or c in "+-." for c in text)


def hadoop_scheme(scheme: str, schemes: Mapping[str, str] = DEFAULT_HADOOP_SCHEMES) -> str:
    """The scheme Hadoop opens an Iceberg location of ``scheme`` by."""
    return schemes.get(scheme.lower(), scheme.lower())


def _split(location: str, schemes: Mapping[str, str]) -> tuple[str, str]:
    """(scheme-and-authority prefix, path) of a location as Hadoop names it; local files
    become ``file:``."""
    scheme, _ = split_scheme(location)
    if scheme in (None, "file"):
        return "file:", os.path.abspath(local_path(location))
    parsed = urllib.parse.urlsplit(location)
    return f"{hadoop_scheme(parsed.scheme, schemes)}://{parsed.netloc}", parsed.path


def spark_input_path(location: str, schemes: Mapping[str, str] = DEFAULT_HADOOP_SCHEMES) -> str:
    """The path to hand ``spark.read.parquet`` for one Iceberg file location."""
    prefix, path = _split(location, schemes)
    escaped = "".join("\\" + c if c in _GLOB_CHARACTERS else c for c in path)
    return escaped if prefix == "file:" else prefix + escaped


def reported_path(location: str, schemes: Mapping[str, str] = DEFAULT_HADOOP_SCHEMES) -> str:
    """The ``_metadata.file_path`` Spark reports for the file at ``location``."""
    prefix, path = _split(location, schemes)
    return prefix + urllib.parse.quote(path, safe=_URI_PATH_SAFE)
