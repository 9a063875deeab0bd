"""Identifier parsing, the rejection of parts that could escape the warehouse, and names with
``/`` (one escaped directory each)."""

from __future__ import annotations

import pytest

from icefloe.backends import (
    CatalogBackend,
    HadoopCatalogBackend,
    identifier_to_string,
    location_segment,
    parse_identifier,
    parse_namespace,
    split_identifier,
)
from icefloe.errors import InvalidIdentifierError, ValidationError


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("db.t", ("db", "t")),
        (("db", "t"), ("db", "t")),
        (["db", "t"], ("db", "t")),
        ("a.b.t", ("a", "b", "t")),
        (("a", "b", "t"), ("a", "b", "t")),
        (("ünï", "tâble-1 x"), ("ünï", "tâble-1 x")),
        (("_tmp", "t_1", "x%y"), ("_tmp", "t_1", "x%y")),
    ],
)
def test_parse_identifier_accepts_both_forms(given: object, expected: tuple[str, ...]) -> None:
    assert parse_identifier(given) == expected  # type: ignore[arg-type]
    assert split_identifier(given) == (expected[:-1], expected[-1])  # type: ignore[arg-type]
    assert identifier_to_string(expected) == ".".join(expected)


def test_parse_namespace_forms() -> None:
    assert parse_namespace("db") == ("db",)
    assert parse_namespace("a.b") == ("a", "b")
    assert parse_namespace(("a", "b")) == ("a", "b")
    assert parse_namespace((), allow_root=True) == ()
    assert parse_namespace("", allow_root=True) == ()
    with pytest.raises(InvalidIdentifierError):
        parse_namespace(())
    with pytest.raises(InvalidIdentifierError):
        parse_namespace("")


@pytest.mark.parametrize(
    ("given", "bad_part"),
    [
        ("t", None),  # no namespace
        (("t",), None),
        ("db..t", "empty part"),
        (("db", ""), "empty part"),
        (("db", ".."), "'..'"),
        (("..", "t"), "'..'"),
        (("db", "."), "'.'"),
        (("a.b", "t"), "'a.b'"),
        (("db", "x/.."), "'x/..'"),
        (("db", "/" * 90), "255 bytes"),  # 270 bytes as a directory name
        (("db", "x\x00y"), "U+0000"),
        (("db", "x\ny"), "U+000A"),
        (("db", "x\x7fy"), "U+007F"),
        (("db", "x\x85y"), "U+0085"),
        (("db", "t" * 256), "255 bytes"),
        (("db", 7), "not a string"),
    ],
)
def test_parse_identifier_rejects(given: object, bad_part: str | None) -> None:
    with pytest.raises(InvalidIdentifierError) as info:
        parse_identifier(given)  # type: ignore[arg-type]
    assert isinstance(info.value, ValidationError)
    if bad_part is not None:
        assert bad_part in str(info.value)


def test_parse_identifier_rejects_non_sequences() -> None:
    with pytest.raises(InvalidIdentifierError):
        parse_identifier(42)  # type: ignore[arg-type]


def test_backends_validate_identifiers(backend: CatalogBackend) -> None:
    backend.create_namespace("db")
    for bad in [("db", ".."), ("..", "db", "t"), ("db", "a/.."), "db.", ("db", "x\x00")]:
        with pytest.raises(InvalidIdentifierError):
            backend.load_table(bad)
        with pytest.raises(InvalidIdentifierError):
            backend.table_exists(bad)
        with pytest.raises(InvalidIdentifierError):
            backend.default_table_location(bad)
    with pytest.raises(InvalidIdentifierError):
        backend.create_namespace(("db", "../../escape"))
    with pytest.raises(InvalidIdentifierError):
        backend.list_tables("..")
    assert backend.list_namespaces() == [("db",)]


def test_location_segments_are_one_directory_and_distinct() -> None:
    names = ["plain", "new/db", "new~2Fdb", "a\\b", "a~5Cb", "~", "~7E", "//"]
    segments = [location_segment(n) for n in names]
    assert segments[:2] == ["plain", "new~2Fdb"]
    assert all("/" not in s and "\\" not in s for s in segments)
    assert len(set(segments)) == len(names)


def test_a_slash_is_a_character_of_a_name(backend: CatalogBackend) -> None:
    """Java's catalogs (and the REST Compatibility Kit) use names like ``new/db`` and ``tab/le``:
    each is one directory of the default layout; the Hadoop catalog, whose names are its
    directories, refuses them."""
    if isinstance(backend, HadoopCatalogBackend):
        with pytest.raises(InvalidIdentifierError, match="directories"):
            backend.create_namespace("new/db")
        with pytest.raises(InvalidIdentifierError, match="directories"):
            backend.table_exists(("db", "tab/le"))
        return
    backend.create_namespace(("new/db",))
    backend.create_namespace(("new",))
    backend.create_namespace(("new", "db"))
    assert backend.namespace_exists(("new/db",))
    assert set(backend.list_namespaces()) == {("new/db",), ("new",)}
    location = backend.default_table_location(("new/db", "tab/le"))
    assert location == f"{backend.warehouse}/new~2Fdb/tab~2Fle"
    assert backend.default_table_location(("new", "db", "tab/le")) != location
    assert not backend.table_exists(("new/db", "tab/le"))
