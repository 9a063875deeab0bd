"""Typed reads out of parsed JSON that fail with the file and the field path.

Every parser in ``icefloe.serde`` reads through a :class:`JsonReader`, so that malformed input
becomes an :class:`~icefloe.errors.InvalidMetadataError` naming the file (when known) and the
field path (``snapshots[3].timestamp-ms``, ``schemas[0].fields[2].type``) instead of a bare
``KeyError`` / ``TypeError`` from deep inside a parser.

Paths are built lazily: callers pass the path of the *container* (one f-string per object), and
the field's own path is only joined when an error is raised.

JSON ``null`` counts as absent for optional fields (``opt_*`` return None); required fields
(``req_*``) must be present and non-null.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from icefloe.errors import InvalidMetadataError

__all__ = ["INT_MAX", "INT_MIN", "LONG_MAX", "LONG_MIN", "JsonReader", "join_path", "parse_json_document"]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

T = TypeVar("T")


def join_path(where: str, key: str | int) -> str:
    """The path of ``key`` inside the container at ``where`` (``""`` is the document root)."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class JsonReader:
    """Reads fields of parsed JSON objects; errors name ``location`` and the field path.

    Args:
        location: the file (or request) being parsed, for error messages; None when unknown.
        what: what is being parsed (``"table metadata"``), for error messages.
    """

    __slots__ = ("location", "what")

    def __init__(self, location: str | None = None, what: str = "metadata"):
        self.location = location
        self.what = what

    # ---- errors ------------------------------------------------------------------------------

    def error(self, path: str, problem: str) -> InvalidMetadataError:
        where = f"field '{path}'" if path else "document"
        return InvalidMetadataError(
            f"invalid {self.what}: {where}: {problem}", location=self.location, field=path or None
        )

    def fail(self, path: str, problem: str) -> NoReturn:
        raise self.error(path, problem)

    def wrap(self, path: str, build: Callable[[], T]) -> T:
        """Run ``build`` (a model constructor); its ValueError becomes an error at ``path``.

        The model layer raises ``ValidationError`` (a ValueError) for invalid values; such a
        value in a file is malformed metadata.
        """
        try:
            return build()
        except InvalidMetadataError:
            raise
        except ValueError as e:
            raise self.error(path, str(e)) from e

    def guard_depth(self, build: Callable[[], T]) -> T:
        """Run a recursive parse; absurdly deep nesting becomes an error, not a RecursionError."""
        try:
            return build()
        except RecursionError as e:
            raise self.error("", "nested too deeply") from e

    # ---- containers --------------------------------------------------------------------------

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, f"expected a JSON object, got {_describe(value)}")
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(path, f"expected a JSON array, got {_describe(value)}")
        return value

    def objects(
        self, obj: dict[str, Any], key: str, where: str, *, required: bool = True
    ) -> list[tuple[dict[str, Any], str]]:
        """The objects of the array ``obj[key]``, each with its path (``key[i]``).

        A missing optional array is empty.
        """
        path = join_path(where, key)
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(path, "missing required field")
            return []
        items = self.array(value, path)
        result = []
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]"
            result.append((self.obj(item, item_path), item_path))
        return result

    # ---- scalars -----------------------------------------------------------------------------

    def _missing(self, key: str, where: str) -> NoReturn:
        self.fail(join_path(where, key), "missing required field")

    def int_value(self, value: Any, path: str, *, long: bool = False) -> int:
        low, high = (LONG_MIN, LONG_MAX) if long else (INT_MIN, INT_MAX)
        if type(value) is not int:  # bool is an int subclass; floats are not integers here
            kind = "long" if long else "int"
            self.fail(path, f"expected a JSON integer ({kind}), got {_describe(value)}")
        if not low <= value <= high:
            self.fail(path, f"{value} is out of range for {'a long' if long else 'an int'}")
        return value

    def req_int(self, obj: dict[str, Any], key: str, where: str) -> int:
        value = obj.get(key)
        if value is None:
            self._missing(key, where)
        if type(value) is int and INT_MIN <= value <= INT_MAX:
            return value
        return self.int_value(value, join_path(where, key))

    def opt_int(self, obj: dict[str, Any], key: str, where: str) -> int | None:
        value = obj.get(key)
        if value is None or (type(value) is int and INT_MIN <= value <= INT_MAX):
            return value
        return self.int_value(value, join_path(where, key))

    def req_long(self, obj: dict[str, Any], key: str, where: str) -> int:
        value = obj.get(key)
        if value is None:
            self._missing(key, where)
        if type(value) is int and LONG_MIN <= value <= LONG_MAX:
            return value
        return self.int_value(value, join_path(where, key), long=True)

    def opt_long(self, obj: dict[str, Any], key: str, where: str) -> int | None:
        value = obj.get(key)
        if value is None or (type(value) is int and LONG_MIN <= value <= LONG_MAX):
            return value
        return self.int_value(value, join_path(where, key), long=True)

    def req_str(self, obj: dict[str, Any], key: str, where: str) -> str:
        value = obj.get(key)
        if type(value) is str:
            return value
        if value is None:
            self._missing(key, where)
        self.fail(join_path(where, key), f"expected a JSON string, got {_describe(value)}")

    def opt_str(self, obj: dict[str, Any], key: str, where: str) -> str | None:
        value = obj.get(key)
        if value is None or type(value) is str:
            return value
        self.fail(join_path(where, key), f"expected a JSON string, got {_describe(value)}")

    def req_bool(self, obj: dict[str, Any], key: str, where: str) -> bool:
        value = obj.get(key)
        if type(value) is bool:
            return value
        if value is None:
            self._missing(key, where)
        self.fail(join_path(where, key), f"expected a JSON boolean, got {_describe(value)}")

    def req_obj(self, obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
        value = obj.get(key)
        if value is None:
            self._missing(key, where)
        return self.obj(value, join_path(where, key))

    # ---- lists and maps of scalars -----------------------------------------------------------

    def _list(self, obj: dict[str, Any], key: str, where: str, required: bool) -> list[Any] | None:
        value = obj.get(key)
        if value is None:
            if required:
                self._missing(key, where)
            return None
        return self.array(value, join_path(where, key))

    def int_list(
        self, obj: dict[str, Any], key: str, where: str, *, required: bool = True, long: bool = False
    ) -> list[int] | None:
        items = self._list(obj, key, where, required)
        if items is None:
            return None
        low, high = (LONG_MIN, LONG_MAX) if long else (INT_MIN, INT_MAX)
        if all(type(v) is int and low <= v <= high for v in items):
            return items
        path = join_path(where, key)
        return [self.int_value(v, f"{path}[{i}]", long=long) for i, v in enumerate(items)]

    def str_list(
        self, obj: dict[str, Any], key: str, where: str, *, required: bool = True
    ) -> list[str] | None:
        items = self._list(obj, key, where, required)
        if items is None:
            return None
        for i, v in enumerate(items):
            if type(v) is not str:
                self.fail(f"{join_path(where, key)}[{i}]", f"expected a JSON string, got {_describe(v)}")
        return items

    def str_map(self, obj: dict[str, Any], key: str, where: str, *, required: bool = False) -> dict[str, str]:
        """A JSON object of strings; a missing optional map is empty."""
        value = obj.get(key)
        if value is None:
            if required:
                self._missing(key, where)
            return {}
        path = join_path(where, key)
        mapping = self.obj(value, path)
        for k, v in mapping.items():
            if type(v) is not str:
                self.fail(join_path(path, k), f"expected a JSON string, got {_describe(v)}")
        return dict(mapping)


_UTF8_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"


def parse_json_document(data: bytes | bytearray | memoryview | str, location: str | None, what: str) -> Any:
    """Parse a JSON document: bytes (plain or gzip, detected by magic bytes) or text.

    Strict where Python's ``json`` is lenient: ``NaN`` / ``Infinity`` are refused, and absurd
    nesting or integers beyond Python's digit limit become errors instead of crashes.

    Raises:
        InvalidMetadataError: naming ``location`` and ``what`` (``"table metadata"``).
    """
    if isinstance(data, str):
        text = data
    else:
        raw = bytes(data)
        if raw[:2] == _GZIP_MAGIC:
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as e:
                raise InvalidMetadataError(
                    f"invalid {what}: corrupt gzip data: {e}", location=location
                ) from e
        if raw[:3] == _UTF8_BOM:  # as the "utf-8-sig" codec, which a first load imports (~1 ms)
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidMetadataError(
                f"invalid {what}: not UTF-8 (byte {e.start}): {e.reason}", location=location
            ) from e
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise InvalidMetadataError(
            f"invalid {what}: not valid JSON at line {e.lineno} column {e.colno}: {_json_problem(e)}",
            location=location,
        ) from e
    except (ValueError, RecursionError) as e:
        raise JsonReader(location, what).error("", f"not valid JSON: {e}") from e


def _json_problem(e: json.JSONDecodeError) -> str:
    rest = e.doc[e.pos :]
    # The decoder reports an unterminated string at its opening quote; other errors at the end.
    ends_early = not rest.strip() or (e.msg.startswith("Unterminated string") and '"' not in rest[1:])
    return "unexpected end of data (truncated file?)" if ends_early else e.msg


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")
