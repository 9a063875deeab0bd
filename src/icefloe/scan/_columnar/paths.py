"""``PathColumn``: a manifest's file paths, stored compactly.

The paths of one manifest's entries share a long prefix (the table's data directory, often a
partition directory too): a 134-character path differs from its neighbours in the last 30 or
so. The process-wide manifest cache keeps every decoded manifest, and a Python ``str`` per
path costs its characters plus about 57 bytes, so a 200,000-file table held 36 MB of paths.
Stored as the common prefix once and the rest of each path in one UTF-8 blob with offsets, it
holds about a fifth of that. Paths are rebuilt as ``str`` only for the files a plan hands out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["PathColumn"]

# File paths are text; "surrogatepass" round-trips any str Python could have decoded them to.
_ERRORS = "surrogatepass"


class PathColumn(Sequence[str]):
    """The file path of each entry (a read-only sequence of ``str``; equal to a list of the same
    paths)."""

    __slots__ = ("blob", "offsets", "prefix")

    def __init__(self, prefix: str, blob: bytes, offsets: np.ndarray):
        self.prefix = prefix
        self.blob = blob
        self.offsets = offsets  # int64, n + 1: path i is prefix + blob[offsets[i]:offsets[i + 1]]

    @classmethod
    def of(cls, paths: Iterable[str]) -> PathColumn:
        values = paths if isinstance(paths, list) else list(paths)
        if not values:
            return cls("", b"", np.zeros(1, dtype=np.int64))
        # The common prefix of all is that of the smallest and the largest.
        prefix = os.path.commonprefix([min(values), max(values)])  # noqa: RUF071 (characters, not path parts)
        cut = len(prefix)
        rests = [p[cut:].encode("utf-8", _ERRORS) for p in values]
        offsets = np.zeros(len(rests) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, rests), dtype=np.int64, count=len(rests)), out=offsets[1:])
        return cls(prefix, b"".join(rests), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("path index out of range")
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.prefix + self.blob[start:end].decode("utf-8", _ERRORS)

    def take(self, indices: Sequence[int]) -> list[str]:
        """The paths of ``indices``, in order (new ``str`` objects)."""
        offsets = self.offsets.tolist()
        blob, prefix = self.blob, self.prefix
        return [prefix + blob[offsets[i] : offsets[i + 1]].decode("utf-8", _ERRORS) for i in indices]

    def __iter__(self) -> Iterator[str]:
        return iter(self.take(range(len(self))))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PathColumn):
            return (
                self.prefix == other.prefix
                and self.blob == other.blob
                and np.array_equal(self.offsets, other.offsets)
            ) or list(self) == list(other)
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list stand-in: unhashable like list

    def __repr__(self) -> str:
        return f"PathColumn({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PathColumn, (self.prefix, self.blob, self.offsets))

    def nbytes(self) -> int:
        return 160 + len(self.prefix) + len(self.blob) + self.offsets.nbytes
