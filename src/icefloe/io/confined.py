"""Keeping writes and deletes inside some roots (a REST server's warehouse and the locations
its operator allows).

:func:`is_within` tells whether a location lies under a root after normalisation: the same
scheme and authority, no ``..`` climbing out, and for local paths the real path (symbolic
links resolved) inside the root's real path. :class:`ConfinedFileIO` wraps a FileIO so that
every write and delete outside its roots fails with ``ValidationError`` (and nothing reaches
the storage); reads go through unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from icefloe.errors import ValidationError
from icefloe.io.fileio import FileInfo, FileIO, InputFile, OutputFile, split_scheme
from icefloe.io.local import local_path

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["ConfinedFileIO", "is_within", "is_within_any"]

_LOCAL = (None, "file")


def _normalized(location: str) -> tuple[str | None, str, str] | None:
    """``(scheme, authority, path)`` with ``.``/``..`` resolved, or None when unusable."""
    scheme, _ = split_scheme(location)
    if "\x00" in location:
        return None
    if scheme in _LOCAL:
        try:
            path = local_path(location)
        except ValidationError:
            return None
        if not os.path.isabs(path):
            return None
        return None, "", os.path.realpath(path)
    rest = location.split("://", 1)[1] if "://" in location else None
    if rest is None:
        return None
    authority, _, path = rest.partition("/")
    segments = [s for s in path.split("/") if s not in ("", ".")]
    if ".." in segments:
        return None
    return scheme, authority, "/" + "/".join(segments)


def is_within(location: str, root: str) -> bool:
    """Whether ``location`` is ``root`` or lies below it (see the module docstring)."""
    target, base = _normalized(location), _normalized(root)
    if target is None or base is None or target[:2] != base[:2]:
        return False
    root_path = base[2].rstrip("/") or "/"
    return target[2] == root_path or target[2].startswith(root_path.rstrip("/") + "/")


def is_within_any(location: str, roots: Iterable[str]) -> bool:
    """Whether ``location`` lies under one of ``roots`` (``is_within``)."""
    return any(is_within(location, root) for root in roots)


class ConfinedFileIO(FileIO):
    """A FileIO whose writes and deletes must stay under ``roots`` (one root or several).

    Raises:
        ValidationError: from ``new_output``, ``write_exclusive``, ``delete`` (and so
            ``write_bytes`` / ``delete_many``) for a location outside every root.
    """

    def __init__(self, inner: FileIO, roots: str | Sequence[str]):
        super().__init__(inner.properties)
        self.inner = inner
        self.roots: tuple[str, ...] = (roots,) if isinstance(roots, str) else tuple(roots)

    def _check(self, location: str, action: str) -> None:
        if not is_within_any(location, self.roots):
            raise ValidationError(
                f"refusing to {action} {location}: it is outside {' and '.join(self.roots)}"
            )

    def new_input(self, location: str, *, length: int | None = None) -> InputFile:
        return self.inner.new_input(location, length=length)

    def new_output(self, location: str) -> OutputFile:
        self._check(location, "write")
        return self.inner.new_output(location)

    def delete(self, location: str) -> None:
        self._check(location, "delete")
        self.inner.delete(location)

    def delete_many(self, locations: Iterable[str]) -> None:
        wanted = list(locations)
        for location in wanted:
            self._check(location, "delete")
        self.inner.delete_many(wanted)

    def list_prefix(self, prefix: str) -> Iterator[FileInfo]:
        return self.inner.list_prefix(prefix)

    def write_exclusive(self, location: str, data: bytes) -> None:
        self._check(location, "write")
        self.inner.write_exclusive(location, data)

    def arrow_filesystem(self, location: str) -> tuple[pyarrow.fs.FileSystem, str]:
        return self.inner.arrow_filesystem(location)

    def close(self) -> None:
        self.inner.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ConfinedFileIO, (self.inner, self.roots))
