"""The ``DataFile`` / ``DeleteFile`` objects planning hands out, built cheaply.

A plan of 200,000 files builds 200,000 file objects; what each costs decides the plan's time
and memory. Two things make them cheap:

- Their six metrics maps are decoded from the manifest's columns on first use (most planned
  files' metrics are never looked at): a planned file is a ``PlannedDataFile`` (a
  ``DataFile``) whose six metrics slots hold one shared ``_FileStats`` (the columns and the
  entry) until read; its ``column_sizes`` ... ``upper_bounds`` attributes then decode the
  entry's map, as a read-only mapping, and keep it in the slot. One small object per file
  instead of six.
- They are built by setting the slots directly (``new_file``): the frozen dataclass
  ``__init__`` goes through ``object.__setattr__`` once per field, which costs twice as much.

A planned file is a ``DataFile`` in every way the API shows (its class is named ``DataFile``;
``dataclasses.replace`` and ``copy()`` work; it compares and hashes by path); it pickles as the
plain ``DataFile`` it stands for, with dicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from icefloe.scan._columnar.metrics import BoundsColumn, CountsColumn
from icefloe.scan.tasks import FileScanTask
from icefloe.spec.manifest import ContentFile, DataFile, DeleteFile

__all__ = [
    "KeptFiles",
    "MetricsMap",
    "PlannedDataFile",
    "PlannedDeleteFile",
    "PlannedFileScanTask",
    "file_stats",
    "new_file",
    "new_planned_task",
    "planned_class",
]

_FIELDS = tuple(f.name for f in dataclasses.fields(ContentFile))


class MetricsMap(Mapping[int, Any]):
    """One planned file's metrics map (field id -> count or bound): read-only, since nothing a
    caller does to one plan's files may reach another's; compares, and pickles, as the plain
    dict it holds."""

    __slots__ = ("_dict",)

    def __init__(self, values: dict[int, Any]):
        self._dict = values

    def __getitem__(self, key: int) -> Any:
        return self._dict[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def get(self, key: int, default: Any = None) -> Any:
        return self._dict.get(key, default)

    def copy(self) -> dict[int, Any]:
        return dict(self._dict)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MetricsMap):
            other = other._dict
        return self._dict == other

    __hash__ = None  # type: ignore[assignment]  # a dict stand-in: unhashable like dict

    def __repr__(self) -> str:
        return repr(self._dict)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._dict,))


class _FileStats:
    """What one planned file's metrics slots hold until read: the manifest's six metrics
    columns and the entry."""

    __slots__ = ("columns", "index")

    def __init__(self, columns: tuple[CountsColumn | BoundsColumn, ...], index: int):
        self.columns = columns
        self.index = index

    def map(self, k: int) -> MetricsMap | None:
        entry = self.columns[k].entry(self.index)
        return None if entry is None else MetricsMap(entry)


def _lazy_metrics(k: int, name: str) -> property:
    slot = ContentFile.__dict__[name]  # the slot's member descriptor

    def get(self: ContentFile) -> Any:
        value = slot.__get__(self)
        if value.__class__ is _FileStats:
            value = value.map(k)
            slot.__set__(self, value)  # decoded once (a race decodes it twice, harmlessly)
        return value

    def set_(self: ContentFile, value: Any) -> None:  # the dataclass __init__ (``replace``)
        slot.__set__(self, value)

    return property(get, set_, doc=f"The file's {name}, decoded on first use.")


def _reduce(self: ContentFile) -> tuple[Any, ...]:
    plain = DeleteFile if isinstance(self, DeleteFile) else DataFile
    values = (getattr(self, name) for name in _FIELDS)
    return (plain, tuple(dict(v) if isinstance(v, MetricsMap) else v for v in values))


class PlannedDataFile(DataFile):
    """A planned ``DataFile`` whose metrics maps are decoded on first use."""

    __slots__ = ()
    column_sizes = _lazy_metrics(0, "column_sizes")
    value_counts = _lazy_metrics(1, "value_counts")
    null_value_counts = _lazy_metrics(2, "null_value_counts")
    nan_value_counts = _lazy_metrics(3, "nan_value_counts")
    lower_bounds = _lazy_metrics(4, "lower_bounds")
    upper_bounds = _lazy_metrics(5, "upper_bounds")
    __reduce__ = _reduce


class PlannedDeleteFile(DeleteFile):
    """A planned ``DeleteFile`` whose metrics maps are decoded on first use."""

    __slots__ = ()
    column_sizes = _lazy_metrics(0, "column_sizes")
    value_counts = _lazy_metrics(1, "value_counts")
    null_value_counts = _lazy_metrics(2, "null_value_counts")
    nan_value_counts = _lazy_metrics(3, "nan_value_counts")
    lower_bounds = _lazy_metrics(4, "lower_bounds")
    upper_bounds = _lazy_metrics(5, "upper_bounds")
    __reduce__ = _reduce


# They show as what they are (repr, ``type(f).__name__``): a DataFile, a DeleteFile.
PlannedDataFile.__name__ = PlannedDataFile.__qualname__ = "DataFile"
PlannedDeleteFile.__name__ = PlannedDeleteFile.__qualname__ = "DeleteFile"


def planned_class(plain: type[ContentFile]) -> type[ContentFile]:
    return PlannedDeleteFile if issubclass(plain, DeleteFile) else PlannedDataFile


# The slots' setters, in field order (``file_path`` ... ``content_size_in_bytes``).
(
    _path,
    _format,
    _records,
    _size,
    _partition,
    _content,
    _spec_id,
    _column_sizes,
    _value_counts,
    _null_counts,
    _nan_counts,
    _lower,
    _upper,
    _key_metadata,
    _split_offsets,
    _equality_ids,
    _sort_order_id,
    _first_row_id,
    _referenced,
    _content_offset,
    _content_size,
) = (ContentFile.__dict__[name].__set__ for name in _FIELDS)
_new = object.__new__
_NO_EXTRAS = (None,) * (len(_FIELDS) - 13)


def new_file(
    cls: type[ContentFile],
    path: str,
    file_format: Any,
    record_count: int,
    size: int,
    partition: tuple[Any, ...],
    content: Any,
    spec_id: int,
    stats: Any,
    extras: tuple[Any, ...] = _NO_EXTRAS,
) -> Any:
    """A file of class ``cls`` with these fields; ``stats``: a ``_FileStats`` (for a planned
    class) or None (no metrics); ``extras``: the fields after ``upper_bounds``, in order."""
    f = _new(cls)
    _path(f, path)
    _format(f, file_format)
    _records(f, record_count)
    _size(f, size)
    _partition(f, partition)
    _content(f, content)
    _spec_id(f, spec_id)
    _column_sizes(f, stats)
    _value_counts(f, stats)
    _null_counts(f, stats)
    _nan_counts(f, stats)
    _lower(f, stats)
    _upper(f, stats)
    key_metadata, split_offsets, equality_ids, sort_order_id, first_row_id, referenced, offset, length = (
        extras
    )
    _key_metadata(f, key_metadata)
    _split_offsets(f, split_offsets)
    _equality_ids(f, equality_ids)
    _sort_order_id(f, sort_order_id)
    _first_row_id(f, first_row_id)
    _referenced(f, referenced)
    _content_offset(f, offset)
    _content_size(f, length)
    return f


def file_stats(columns: tuple[CountsColumn | BoundsColumn, ...], index: int) -> _FileStats:
    return _FileStats(columns, index)


# ---- tasks whose file is built on first use ------------------------------------------------------


class KeptFiles:
    """The files a plan keeps from one manifest (``files``: a callable building them, in
    order), built together the first time a task asks for its own: a plan of 200,000 files
    builds no file object until a reader looks at one, and then each manifest's at once (in
    a few C-level ``map`` calls, as planning used to)."""

    __slots__ = ("_build", "_files")

    def __init__(self, build: Callable[[], list[ContentFile]]):
        self._build: Callable[[], list[ContentFile]] | None = build
        self._files: list[ContentFile] | None = None

    def get(self) -> list[ContentFile]:
        files = self._files
        if files is None:
            build = self._build
            if build is None:  # another thread built them just now (it sets _files first)
                files = self._files
                assert files is not None
                return files
            files = self._files = build()  # a race builds them twice, harmlessly
            self._build = None  # drop the manifest's columns the files no longer need
        return files


_task_file = FileScanTask.__dict__["file"]  # the slot's member descriptor


def _get_task_file(self: PlannedFileScanTask) -> Any:
    value = _task_file.__get__(self)
    if value.__class__ is KeptFiles:
        value = value.get()[self._position]
        _task_file.__set__(self, value)
    return value


def _set_task_file(self: PlannedFileScanTask, value: Any) -> None:  # the dataclass __init__
    _task_file.__set__(self, value)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(FileScanTask))


class PlannedFileScanTask(FileScanTask):
    """A planned ``FileScanTask`` whose ``file`` is built on first use (see ``KeptFiles``):
    its ``file`` slot holds the manifest's ``KeptFiles`` and ``_position`` its place there
    until then. It is a ``FileScanTask`` in every way the API shows, and pickles as one."""

    __slots__ = ("_position",)
    _position: int
    file = property(_get_task_file, _set_task_file, doc="The data file, built on first use.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FileScanTask, tuple(getattr(self, name) for name in _TASK_FIELDS))


PlannedFileScanTask.__name__ = PlannedFileScanTask.__qualname__ = "FileScanTask"

(
    _task_file_set,
    _task_deletes,
    _task_residual,
    _task_spec,
    _task_start,
    _task_length,
    _task_sequence,
) = (FileScanTask.__dict__[name].__set__ for name in _TASK_FIELDS)
_task_position = PlannedFileScanTask.__dict__["_position"].__set__


def new_planned_task(
    kept: KeptFiles,
    position: int,
    residual: Any,
    spec: Any,
    length: int,
    data_sequence_number: int,
) -> PlannedFileScanTask:
    """A whole-file task without deletes for file ``position`` of ``kept``, built by setting
    its slots (planning builds one per planned file)."""
    task = _new(PlannedFileScanTask)
    _task_file_set(task, kept)
    _task_deletes(task, ())
    _task_residual(task, residual)
    _task_spec(task, spec)
    _task_start(task, 0)
    _task_length(task, length)
    _task_sequence(task, data_sequence_number)
    _task_position(task, position)
    return task
