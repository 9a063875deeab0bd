"""Location providers against Java's LocationProviders layouts."""

from __future__ import annotations

import pickle

import pytest

from icefloe.errors import ValidationError
from icefloe.io import (
    DefaultLocationProvider,
    LocationProvider,
    ObjectStoreLocationProvider,
    entropy_dirs,
    load_location_provider,
    metadata_location,
    strip_trailing_slash,
)

TABLE = "s3://bucket/warehouse/db/tbl"
OBJECT_STORE = {"write.object-storage.enabled": "true"}


def test_strip_trailing_slash() -> None:
    assert strip_trailing_slash("s3://b/t///") == "s3://b/t"
    assert strip_trailing_slash("s3://") == "s3://"
    assert strip_trailing_slash("file:/tmp/t/") == "file:/tmp/t"
    with pytest.raises(ValidationError):
        strip_trailing_slash("")


# ---- default layout ----


def test_default_layout() -> None:
    provider = load_location_provider(TABLE + "//", {})
    assert provider == DefaultLocationProvider(f"{TABLE}/data")
    assert provider.new_data_location("f.parquet") == f"{TABLE}/data/f.parquet"
    assert provider.new_data_location("f.parquet", "") == f"{TABLE}/data/f.parquet"
    assert (
        provider.new_data_location("f.parquet", "country=US/day=2024-01-01")
        == f"{TABLE}/data/country=US/day=2024-01-01/f.parquet"
    )


def test_default_layout_data_path() -> None:
    provider = load_location_provider(TABLE, {"write.data.path": "s3://other/place/"})
    assert provider.new_data_location("f.parquet", "a=1") == "s3://other/place/a=1/f.parquet"
    # Java's own test: a relative data path is used as given.
    assert load_location_provider(TABLE, {"write.data.path": "new_location"}).new_data_location(
        "my_file"
    ) == ("new_location/my_file")


def test_default_layout_deprecated_folder_storage_path() -> None:
    properties = {"write.folder-storage.path": "s3://legacy/"}
    assert load_location_provider(TABLE, properties).new_data_location("f") == "s3://legacy/f"
    properties["write.data.path"] = "s3://new"
    assert load_location_provider(TABLE, properties).new_data_location("f") == "s3://new/f"


def test_object_storage_flag_parses_like_java() -> None:
    # Boolean.parseBoolean: only "true", in any case, is true.
    assert isinstance(
        load_location_provider(TABLE, {"write.object-storage.enabled": "TRUE"}), ObjectStoreLocationProvider
    )
    assert isinstance(
        load_location_provider(TABLE, {"write.object-storage.enabled": "yes"}), DefaultLocationProvider
    )


# ---- object storage layout ----

# Hash directories derived by hand from Java's algorithm: Murmur3 x86 32 of the UTF-8 name
# (Guava murmur3_32_fixed, seed 0), keep the low 20 bits as binary digits, split 4/4/4/8.
#   "a"            -> 0x3C2569B2 = 0011 1100 0010 | 0101 0110 1001 1011 0010 -> 0101/0110/1001/10110010
#   "hello"        -> 0x248BFA47 = 0010 0100 1000 | 1011 1111 1010 0100 0111 -> 1011/1111/1010/01000111
#   "foo"          -> 0xF6A5C420 (negative as an int; the sign bit is above the 20 kept bits)
#                                = 1111 0110 1010 | 0101 1100 0100 0010 0000 -> 0101/1100/0100/00100000
#   "test.parquet" -> 0xB076A3E8 = 1011 0000 0111 | 0110 1010 0011 1110 1000 -> 0110/1010/0011/11101000
# "a" to "d" and "test.parquet" are also the expectations of Java's TestLocationProvider.
HAND_DERIVED = {
    "a": "0101/0110/1001/10110010",
    "hello": "1011/1111/1010/01000111",
    "foo": "0101/1100/0100/00100000",
    "test.parquet": "0110/1010/0011/11101000",
}
JAVA_TEST_VECTORS = {
    "a": "0101/0110/1001/10110010",
    "b": "1110/0111/1110/00000011",
    "c": "0010/1101/0110/01011111",
    "d": "1001/0001/0100/01110011",
}


@pytest.mark.parametrize(("name", "dirs"), sorted({**HAND_DERIVED, **JAVA_TEST_VECTORS}.items()))
def test_entropy_dirs(name: str, dirs: str) -> None:
    assert entropy_dirs(name) == dirs


@pytest.mark.parametrize(("name", "dirs"), sorted(JAVA_TEST_VECTORS.items()))
def test_object_storage_hash_injection(name: str, dirs: str) -> None:
    provider = load_location_provider(TABLE, OBJECT_STORE)
    assert provider.new_data_location(name) == f"{TABLE}/data/{dirs}/{name}"


def test_object_storage_within_table_location_has_seven_parts() -> None:
    location = load_location_provider(TABLE, OBJECT_STORE).new_data_location("test.parquet")
    parts = location[len(TABLE) :].split("/")
    assert parts[0] == ""
    assert parts[1] == "data"
    assert parts[2:6] == ["0110", "1010", "0011", "11101000"]
    assert parts[6] == "test.parquet"


def test_object_storage_hashes_the_partition_path_too() -> None:
    provider = load_location_provider(TABLE, OBJECT_STORE)
    relative = "data%231=val%231/test.parquet"
    location = provider.new_data_location("test.parquet", "data%231=val%231")
    assert location == f"{TABLE}/data/{entropy_dirs(relative)}/{relative}"
    assert entropy_dirs(relative) != entropy_dirs("test.parquet")
    assert location.split("/")[-2] == "data%231=val%231"


def test_object_storage_without_partition_paths() -> None:
    # Java's testExcludePartitionInPath: no partition directory, last hash part joins the name.
    provider = load_location_provider(
        TABLE, {**OBJECT_STORE, "write.object-storage.partitioned-paths": "false"}
    )
    assert provider.new_data_location("test.parquet", "data=val") == (
        f"{TABLE}/data/0110/1010/0011/11101000-test.parquet"
    )
    assert provider.new_data_location("test.parquet") == f"{TABLE}/data/0110/1010/0011/11101000-test.parquet"


def test_object_storage_outside_the_table_adds_namespace_and_table() -> None:
    properties = {**OBJECT_STORE, "write.data.path": "s3://hot-bucket/objects/"}
    provider = load_location_provider(TABLE, properties)
    assert provider == ObjectStoreLocationProvider("s3://hot-bucket/objects", "db/tbl", True)
    assert provider.new_data_location("a") == "s3://hot-bucket/objects/0101/0110/1001/10110010/db/tbl/a"
    relative = "day=2024-01-01/a"
    assert provider.new_data_location("a", "day=2024-01-01") == (
        f"s3://hot-bucket/objects/{entropy_dirs(relative)}/db/tbl/{relative}"
    )
    # Without partition paths the context keeps the hash a directory.
    flat = load_location_provider(TABLE, {**properties, "write.object-storage.partitioned-paths": "false"})
    assert flat.new_data_location("a", "day=2024-01-01") == (
        "s3://hot-bucket/objects/0101/0110/1001/10110010/db/tbl/a"
    )


def test_object_storage_deprecated_paths() -> None:
    legacy = {**OBJECT_STORE, "write.object-storage.path": "s3://legacy-objects"}
    assert load_location_provider(TABLE, legacy).new_data_location("b") == (
        "s3://legacy-objects/1110/0111/1110/00000011/db/tbl/b"
    )
    folder = {**OBJECT_STORE, "write.folder-storage.path": "s3://legacy-folder"}
    assert load_location_provider(TABLE, folder).new_data_location("b").startswith("s3://legacy-folder/1110/")
    # write.data.path wins over both, and write.object-storage.path over write.folder-storage.path.
    both = {**legacy, **folder}
    assert load_location_provider(TABLE, both).new_data_location("b").startswith("s3://legacy-objects/")
    assert load_location_provider(TABLE, {**both, "write.data.path": f"{TABLE}/d"}).new_data_location(
        "b"
    ) == (f"{TABLE}/d/1110/0111/1110/00000011/b")


@pytest.mark.parametrize(
    ("table", "context"),
    [
        ("s3://bucket/warehouse/db/tbl", "db/tbl"),
        ("s3://bucket/tbl", "/tbl"),  # Hadoop's root has an empty name, hence Java's leading slash
        ("file:/tmp/wh/db/tbl/", "db/tbl"),
        ("/tmp/wh/db/tbl", "db/tbl"),
    ],
)
def test_path_context_like_hadoop(table: str, context: str) -> None:
    provider = load_location_provider(table, {**OBJECT_STORE, "write.data.path": "s3://elsewhere"})
    assert isinstance(provider, ObjectStoreLocationProvider)
    assert provider.context == context


# ---- custom providers, metadata, pickling ----


class CustomProvider(LocationProvider):
    def __init__(self, table_location: str, properties: dict[str, str]):
        self.table_location = table_location

    def new_data_location(self, filename: str, partition_path: str | None = None) -> str:
        return f"{self.table_location}/custom/{filename}"


def test_py_location_provider_impl() -> None:
    properties = {"write.py-location-provider.impl": f"{__name__}.CustomProvider"}
    provider = load_location_provider(TABLE + "/", properties)
    assert provider.new_data_location("f") == f"{TABLE}/custom/f"
    with pytest.raises(ValidationError, match="NoSuchProvider"):
        load_location_provider(TABLE, {"write.py-location-provider.impl": f"{__name__}.NoSuchProvider"})
    with pytest.raises(ValidationError, match="not a LocationProvider"):
        load_location_provider(TABLE, {"write.py-location-provider.impl": "icefloe.io.S3Config"})


def test_java_location_provider_impl_is_ignored() -> None:
    properties = {"write.location-provider.impl": "com.example.JavaProvider"}
    assert isinstance(load_location_provider(TABLE, properties), DefaultLocationProvider)


def test_metadata_location() -> None:
    assert metadata_location(TABLE + "/", {}, "v1.metadata.json") == f"{TABLE}/metadata/v1.metadata.json"
    custom = {"write.metadata.path": "s3://meta/tbl/"}
    assert metadata_location(TABLE, custom, "v1.metadata.json") == "s3://meta/tbl/v1.metadata.json"


@pytest.mark.parametrize(
    "properties",
    [{}, OBJECT_STORE, {**OBJECT_STORE, "write.data.path": "s3://x/y"}],
)
def test_providers_pickle(properties: dict[str, str]) -> None:
    provider = load_location_provider(TABLE, properties)
    copy = pickle.loads(pickle.dumps(provider))
    assert copy == provider
    assert copy.new_data_location("f", "a=1") == provider.new_data_location("f", "a=1")
