"""The errors icefloe raises.

Each type tells the caller what they may do next; code branches on these types, never on
message text. Messages name what is wrong: the file, the field, the table.

Two names differ by one word and mean different things:

- :class:`ValidationError` (a ``ValueError``): the *caller* passed something invalid (a bad
  type string, an unknown column or snapshot id, a filter that does not parse). Fix the call.
- :class:`ValidationException` (Java's name, kept for Java's API): the *table's state* refuses
  the operation, most often a concurrent commit that conflicts with it. Refresh and decide.

Neither is a subclass of the other: ``except ValidationError`` does not catch a commit
conflict. Errors about a snapshot id the table does not have are :class:`NoSuchSnapshotError`,
which is a ValidationError; those an operation raises where Java raises ValidationException
(``rollback_to(42)``) are :class:`UnknownSnapshotError`, both at once.
"""

from __future__ import annotations

__all__ = [
    "CommitFailedException",
    "CommitStateUnknownException",
    "ExpressionEvaluationError",
    "FileIOError",
    "IcefloeError",
    "InvalidDataFileError",
    "InvalidExpressionError",
    "InvalidFilterError",
    "InvalidIdentifierError",
    "InvalidManifestError",
    "InvalidMetadataError",
    "InvalidSchemaError",
    "MissingDependencyError",
    "NamespaceAlreadyExistsError",
    "NamespaceNotEmptyError",
    "NoSuchNamespaceError",
    "NoSuchSnapshotError",
    "NoSuchTableError",
    "NotFoundError",
    "RequirementFailedError",
    "TableAlreadyExistsError",
    "UnknownSnapshotError",
    "UnsupportedFeatureError",
    "ValidationError",
    "ValidationException",
]


class IcefloeError(Exception):
    """Base of every error icefloe raises on purpose."""


class ValidationError(IcefloeError, ValueError):
    """A bad argument: the call or request is invalid (a bad type string, an unknown column,
    a snapshot id the table does not have). Retrying the same call fails the same way.

    Not :class:`ValidationException` (Java's name for a conflict with the table's state).
    """


class InvalidIdentifierError(ValidationError):
    """A namespace or table identifier is malformed or would escape the warehouse."""


class InvalidSchemaError(ValidationError):
    """A schema is malformed: duplicate ids or names, a bad type, a bad default."""


class InvalidFilterError(ValidationError):
    """A row filter cannot be parsed or bound to the schema."""


class InvalidExpressionError(ValidationError):
    """A SQL expression of a table's rows (``table.update(set=...)``) is wrong for the table: it
    does not parse, names a column the table does not have (a string literal without quotes),
    combines types Spark refuses, or gives a value its column cannot take."""


class ExpressionEvaluationError(ValidationError):
    """Evaluating a SQL expression on the rows failed where Spark (ANSI mode) fails: a division by
    zero, an overflow, a string that does not cast. The message names the column and the value."""


class UnsupportedFeatureError(IcefloeError, NotImplementedError):
    """The request is valid Iceberg, but icefloe does not support it (yet)."""


class MissingDependencyError(IcefloeError, ImportError):
    """An optional package is needed for this call; the message says which to install."""


class NotFoundError(IcefloeError, LookupError):
    """Something asked for by name or id does not exist."""


class NoSuchTableError(NotFoundError):
    pass


class NoSuchNamespaceError(NotFoundError):
    pass


class NoSuchSnapshotError(NotFoundError, ValidationError):
    """A snapshot id, ref name or point in time that the table does not have.

    The caller named it, so it is a bad argument too: ``except ValidationError`` catches it.
    """


class TableAlreadyExistsError(IcefloeError):
    pass


class NamespaceAlreadyExistsError(IcefloeError):
    pass


class NamespaceNotEmptyError(IcefloeError):
    pass


class InvalidMetadataError(IcefloeError):
    """A metadata file (JSON, Avro manifest or manifest list) is malformed.

    Attributes:
        location: the file that is malformed, when known.
        field: the field that is missing or wrong, when known.
    """

    def __init__(self, message: str, *, location: str | None = None, field: str | None = None):
        self.location = location
        self.field = field
        parts = [message]
        if field is not None and field not in message:
            parts.append(f"field '{field}'")
        if location is not None and location not in message:
            parts.append(f"in {location}")
        super().__init__(": ".join(parts[:1]) + "".join(f" ({p})" for p in parts[1:]))


class InvalidManifestError(InvalidMetadataError):
    """An Avro manifest or manifest list cannot be read."""


class InvalidDataFileError(IcefloeError):
    """A data or delete file is missing, truncated or cannot be decoded."""

    def __init__(self, message: str, *, location: str | None = None):
        self.location = location
        super().__init__(message if location is None or location in message else f"{message} ({location})")


class FileIOError(IcefloeError, OSError):
    """Reading, writing or deleting a file failed."""


class CommitFailedException(IcefloeError):
    """The commit definitely did not happen (a concurrent change won, a requirement failed).

    It is safe to delete the files this commit wrote, and to retry on a refreshed table.
    """


class RequirementFailedError(CommitFailedException):
    """A commit's requirement does not hold on the current metadata (``assert-ref-snapshot-id``,
    ``assert-table-uuid``, ...): the table changed in a way the commit depends on. Retry on a
    refreshed table; a catalog server answers it with 409 instead of retrying it itself."""


class CommitStateUnknownException(IcefloeError):
    """The commit may or may not have happened (a timeout, a lost connection).

    Nothing written for this commit may be deleted: a committed snapshot may reference it.
    """


class ValidationException(IcefloeError):
    """Java's ``ValidationException``: the table's state refuses the operation. Most often a
    change committed concurrently conflicts with it (a file it deletes was deleted, data was
    added where it overwrites); also a change that the current metadata does not allow (a
    rollback to a snapshot that is not an ancestor, a fast-forward of a diverged branch).
    Not retried: refresh the table and decide again.

    Not a :class:`ValidationError` (a bad argument, a ``ValueError``), and ``except
    ValidationError`` does not catch it; catch ``(ValidationError, ValidationException)`` for
    both. The name is Java's, kept so that code written against Java's API reads the same.
    """


class UnknownSnapshotError(NoSuchSnapshotError, ValidationException):
    """An operation was given a snapshot id the table does not have
    (``manage_snapshots().rollback_to(42)``, ``set_current_snapshot``, ``cherrypick``,
    ``create_tag``, ...).

    A bad argument, so a :class:`NoSuchSnapshotError` and a :class:`ValidationError`; Java
    raises ``ValidationException`` here, so it is one of those too.

    Attributes:
        snapshot_id: the id the table does not have.
    """

    def __init__(self, message: str, *, snapshot_id: int):
        self.snapshot_id = snapshot_id
        super().__init__(message)


class FileAlreadyExistsError(FileIOError, FileExistsError):
    """A file that must not exist already does: ``create(overwrite=False)`` or an exclusive
    write lost to another writer. Nothing was written over the existing file.

    Attributes:
        location: the file that already exists, when known.
    """

    def __init__(self, message: str, *, location: str | None = None):
        self.location = location
        super().__init__(message if location is None or location in message else f"{message} ({location})")


class NoSuchFileError(FileIOError, FileNotFoundError, NotFoundError):
    """A file that was read, opened or measured does not exist.

    Also a ``FileNotFoundError`` (so ``except FileNotFoundError`` works) and a ``NotFoundError``,
    like Java's ``NotFoundException`` for missing files.

    Attributes:
        location: the missing file, when known.
    """

    def __init__(self, message: str, *, location: str | None = None):
        self.location = location
        super().__init__(message if location is None or location in message else f"{message} ({location})")


__all__ += ["FileAlreadyExistsError", "NoSuchFileError"]


class DataWriteError(FileIOError):
    """Writing a data file failed (storage or encoding error). The files the failed write had
    created, complete or partial, were deleted.

    Attributes:
        location: the data file being written when the failure happened.
    """

    def __init__(self, message: str, *, location: str | None = None):
        self.location = location
        super().__init__(message if location is None or location in message else f"{message} ({location})")


__all__ += ["DataWriteError"]


class SnapshotNotAncestorError(ValidationError):
    """An incremental scan's start snapshot is not in the history of its end snapshot (it is on
    another branch, or history between them was rewritten or expired).

    Attributes:
        snapshot_id: the start snapshot.
        end_snapshot_id: the end snapshot whose ancestry does not reach it.
    """

    def __init__(self, message: str, *, snapshot_id: int, end_snapshot_id: int):
        self.snapshot_id = snapshot_id
        self.end_snapshot_id = end_snapshot_id
        super().__init__(message)


__all__ += ["SnapshotNotAncestorError"]


class EncryptionError(IcefloeError):
    """Base of the errors of table encryption. Nothing is ever read as plaintext instead.

    Attributes:
        location: the file concerned, when known.
    """

    def __init__(self, message: str, *, location: str | None = None):
        self.location = location
        super().__init__(message if location is None or location in message else f"{message} ({location})")


class DecryptionError(EncryptionError):
    """An encrypted file does not authenticate: a wrong key, tampered or swapped content (AES-GCM
    cannot tell these apart), or a file that is not the encrypted file its metadata names."""


class TruncatedFileError(DecryptionError):
    """An encrypted file's stored length is not the length its key metadata (or its manifest
    entry) records: it was truncated or extended."""


class KeyManagementError(EncryptionError):
    """A key could not be wrapped or unwrapped: no key management client is configured, the KMS
    failed, or a wrapped key does not open with its master key (wrong or changed master key)."""


class MissingKeyError(KeyManagementError, NotFoundError):
    """A key the table needs is not there: the master key is not in the KMS (or the local keys
    file), or the key id a snapshot names is not in the table's ``encryption-keys``."""


__all__ += [
    "DecryptionError",
    "EncryptionError",
    "KeyManagementError",
    "MissingKeyError",
    "TruncatedFileError",
]


class NoSuchViewError(NotFoundError):
    """The catalog has no view with this identifier."""


class ViewAlreadyExistsError(IcefloeError):
    """A view (or a table) already has this identifier."""


class NotAuthorizedError(IcefloeError):
    """The catalog refused the request's credentials (HTTP 401): none, expired or invalid."""


class ForbiddenError(IcefloeError):
    """The catalog refused the operation to this principal (HTTP 403): read-only, or a
    namespace it may not touch."""


class ServiceUnavailableError(IcefloeError):
    """The catalog service is temporarily unavailable (HTTP 503) and retries ran out."""


class RESTError(IcefloeError):
    """A REST catalog answered with an error icefloe has no more specific type for.

    Attributes:
        status: the HTTP status code.
        error_type: the ``type`` of the server's error response (Java's exception name).
    """

    def __init__(self, message: str, *, status: int, error_type: str = ""):
        self.status = status
        self.error_type = error_type
        super().__init__(message)


__all__ += [
    "ForbiddenError",
    "NoSuchViewError",
    "NotAuthorizedError",
    "RESTError",
    "ServiceUnavailableError",
    "ViewAlreadyExistsError",
]
