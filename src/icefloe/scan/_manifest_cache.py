"""The process-wide cache of decoded manifests and manifest lists used by scan planning.

Manifests and manifest lists are immutable: a commit writes new files under new names (each
with a UUID or a snapshot id in it) and never rewrites one. A decoded manifest is therefore
cached under its storage, its location and its length as its manifest list row records it;
a manifest list under its storage, its location and the id of the snapshot it belongs to.
A different file at a location the cache knows has a different length (a truncated or
rewritten file), or belongs to another snapshot, and is read afresh.

The settings are Java's catalog properties for its manifest content cache, read from the
FileIO's properties (catalog properties), with icefloe's defaults:

=========================================== ======================= ====================
property                                    meaning                 default
=========================================== ======================= ====================
``io.manifest.cache-enabled``               use the cache           ``true`` (Java: false)
``io.manifest.cache.max-total-bytes``       memory budget           256 MiB (Java: 100 MiB)
``io.manifest.cache.max-content-length``    larger files not cached 8 MiB
``io.manifest.cache.expiration-interval-ms`` drop after no use for  60000 (0: never)
=========================================== ======================= ====================

icefloe enables the cache by default because decoding manifests costs far more in Python
than in Java. Java caches the raw bytes of a file; icefloe caches the decoded columnar form
(``_columnar.DecodedManifest``), so ``max-total-bytes`` bounds the memory that form holds
(about twice the size of the Avro files), while ``max-content-length`` still compares against
the file's length, as in Java.

As in Java there is one cache per FileIO, except that FileIOs of icefloe's own classes with
equal properties share one (every table a catalog loads gets a new FileIO; they read the same
storage). At most ``MAX_FILEIO_CACHES`` caches exist; the least recently used one is dropped.

Eviction is least-recently-used by weight, with one guard against a plan larger than the
budget thrashing the cache: entries a plan has touched are not evicted to make room for that
same plan's misses (the miss is then simply not cached). Thread-safe.
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from icefloe.errors import ValidationError
from icefloe.io import FileIO
from icefloe.io.encryption import EncryptingFileIO

__all__ = [
    "CACHE_ENABLED",
    "CACHE_EXPIRATION_MS",
    "CACHE_MAX_CONTENT_LENGTH",
    "CACHE_MAX_TOTAL_BYTES",
    "MAX_FILEIO_CACHES",
    "CacheSettings",
    "CacheStats",
    "ManifestCache",
    "cache_for",
    "drop_caches",
    "new_plan_token",
]

CACHE_ENABLED = "io.manifest.cache-enabled"
CACHE_MAX_TOTAL_BYTES = "io.manifest.cache.max-total-bytes"
CACHE_MAX_CONTENT_LENGTH = "io.manifest.cache.max-content-length"
CACHE_EXPIRATION_MS = "io.manifest.cache.expiration-interval-ms"
MAX_FILEIO_CACHES = 8  # Java's iceberg.io.manifest.cache.fileio-max default

_DEFAULT_ENABLED = True
_DEFAULT_TOTAL_BYTES = 256 * 1024 * 1024
_DEFAULT_CONTENT_LENGTH = 8 * 1024 * 1024
_DEFAULT_EXPIRATION_MS = 60_000


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """The cache properties of one FileIO (see the module docstring)."""

    enabled: bool = _DEFAULT_ENABLED
    max_total_bytes: int = _DEFAULT_TOTAL_BYTES
    max_content_length: int = _DEFAULT_CONTENT_LENGTH
    expiration_ms: int = _DEFAULT_EXPIRATION_MS

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> CacheSettings:
        """Raises ValidationError naming a property whose value is not a boolean / number."""
        enabled = properties.get(CACHE_ENABLED)
        if enabled is None:
            is_enabled = _DEFAULT_ENABLED
        elif enabled.strip().lower() in ("true", "false"):
            is_enabled = enabled.strip().lower() == "true"
        else:
            raise ValidationError(f"{CACHE_ENABLED} must be true or false, not {enabled!r}")
        return cls(
            is_enabled,
            _long(properties, CACHE_MAX_TOTAL_BYTES, _DEFAULT_TOTAL_BYTES),
            _long(properties, CACHE_MAX_CONTENT_LENGTH, _DEFAULT_CONTENT_LENGTH),
            _long(properties, CACHE_EXPIRATION_MS, _DEFAULT_EXPIRATION_MS),
        )


def _long(properties: Mapping[str, str], key: str, default: int) -> int:
    text = properties.get(key)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ValidationError(f"{key} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ValidationError(f"{key} must not be negative, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Counters of one cache since it was created."""

    hits: int
    misses: int
    evictions: int
    rejections: int  # misses not cached: too large, or no room without evicting the plan's own
    entries: int
    total_bytes: int


class _Entry:
    __slots__ = ("last_access", "token", "value", "weight")

    def __init__(self, value: Any, weight: int, token: int, now: float):
        self.value = value
        self.weight = weight
        self.token = token
        self.last_access = now


class ManifestCache:
    """A weight-bounded LRU map with expire-after-access; every method is thread-safe.

    Args:
        settings: the budget (``max_total_bytes``), the largest file admitted
            (``max_content_length``) and the idle time after which an entry expires
            (``expiration_ms``, 0: never).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, settings: CacheSettings, clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._total = 0
        self._hits = self._misses = self._evictions = self._rejections = 0

    def get(self, key: Hashable, token: int = 0) -> Any:
        """The cached value, or None. ``token``: the plan asking (see ``put``)."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            entry = self._entries.get(key)
            if entry is None:
                self._misses += 1
                return None
            self._entries.move_to_end(key)
            entry.last_access = now
            entry.token = token
            self._hits += 1
            return entry.value

    def put(self, key: Hashable, value: Any, weight: int, *, content_length: int = 0, token: int = 0) -> bool:
        """Cache ``value`` (holding about ``weight`` bytes) for a file of ``content_length``
        bytes; returns whether it was cached.

        Not cached: a file longer than ``max_content_length``, a value larger than the budget,
        or when making room would evict an entry the same plan (``token``, when not 0) has
        used: a plan larger than the budget keeps what it cached first instead of cycling
        through it.
        """
        settings = self.settings
        with self._lock:
            if content_length > settings.max_content_length or weight > settings.max_total_bytes:
                self._rejections += 1
                return False
            now = self._clock()
            self._expire(now)
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= old.weight
            while self._total + weight > settings.max_total_bytes:
                oldest_key, oldest = next(iter(self._entries.items()))
                if token and oldest.token == token:
                    self._rejections += 1
                    return False
                del self._entries[oldest_key]
                self._total -= oldest.weight
                self._evictions += 1
            self._entries[key] = _Entry(value, weight, token, now)
            self._total += weight
            return True

    def _expire(self, now: float) -> None:
        limit = self.settings.expiration_ms / 1000.0
        if not limit:
            return
        entries = self._entries
        while entries:
            key, entry = next(iter(entries.items()))
            if now - entry.last_access <= limit:
                break
            del entries[key]
            self._total -= entry.weight
            self._evictions += 1

    def invalidate(self, key: Hashable) -> None:
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._total -= entry.weight

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                self._hits, self._misses, self._evictions, self._rejections, len(self._entries), self._total
            )

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


# ---- one cache per storage ----------------------------------------------------------------

_CACHES: OrderedDict[tuple[Hashable, ...], ManifestCache] = OrderedDict()
_CACHES_LOCK = threading.Lock()
_TOKENS = itertools.count(1)
# FileIO classes whose properties say everything about the storage they read (so two
# instances with equal properties read the same files). Anything else (a wrapper, a test
# double, a user's class with state) gets a cache of its own per instance, as in Java.
_PROPERTY_KEYED = frozenset(
    {
        "icefloe.io.local.LocalFileIO",
        "icefloe.io.resolving.ResolvingFileIO",
        "icefloe.io.arrowfs.ArrowFileIO",
        "icefloe.io.fsspecfs.FsspecFileIO",
    }
)


def _storage_key(io: FileIO) -> tuple[Hashable, ...]:
    if isinstance(io, EncryptingFileIO):
        # Encrypted tables' FileIOs over one storage share a cache (locations are unique, files
        # immutable): a table loaded again finds its decrypted manifests. Plain FileIOs of the
        # same storage do not share it.
        inner = _storage_key(io.io)
        if inner[0] != "instance":
            return ("encrypted", *inner)
    cls = type(io)
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name in _PROPERTY_KEYED:
        return (name, frozenset(io.properties.items()))
    return ("instance", id(io))


def _forget_instance(key: tuple[Hashable, ...]) -> None:
    with _CACHES_LOCK:
        _CACHES.pop(key, None)


def cache_for(io: FileIO) -> ManifestCache | None:
    """The cache serving ``io`` (None when its properties disable caching).

    Raises:
        ValidationError: a cache property has an invalid value.
    """
    settings = CacheSettings.from_properties(io.properties)
    if not settings.enabled or settings.max_total_bytes == 0:
        return None
    key = _storage_key(io)
    with _CACHES_LOCK:
        cache = _CACHES.get(key)
        if cache is not None:
            _CACHES.move_to_end(key)
            if cache.settings != settings:
                cache.settings = settings  # equal properties, so only for instance-keyed caches
            return cache
        cache = _CACHES[key] = ManifestCache(settings)
        if key[0] == "instance":
            # The id may be reused once the FileIO is gone: drop its cache with it.
            weakref.finalize(io, _forget_instance, key)
        while len(_CACHES) > MAX_FILEIO_CACHES:
            _CACHES.popitem(last=False)
        return cache


def drop_caches() -> None:
    """Forget every cached manifest and manifest list of this process."""
    with _CACHES_LOCK:
        _CACHES.clear()


def new_plan_token() -> int:
    """A token identifying one plan to the caches (see ``ManifestCache.put``)."""
    return next(_TOKENS)
