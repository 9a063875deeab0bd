"""The server's answer to an exception: the spec's error model with the status clients act on.

``{"error": {"message", "type", "code"}}`` with Java's exception names as ``type``, because Java's
client branches on them: a 404 of type ``NoSuchTableException`` on a table load lets Spark fall
back to a metadata table, ``NoSuchNamespaceException`` would not. Every exception icefloe raises
on purpose has a 4xx here (or 503); anything else is a bug and answers 500.
"""

from __future__ import annotations

from dataclasses import dataclass

from icefloe.errors import (
    CommitFailedException,
    CommitStateUnknownException,
    FileIOError,
    ForbiddenError,
    InvalidMetadataError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchSnapshotError,
    NoSuchTableError,
    NoSuchViewError,
    NotAuthorizedError,
    NotFoundError,
    ServiceUnavailableError,
    TableAlreadyExistsError,
    UnsupportedFeatureError,
    ValidationError,
    ValidationException,
    ViewAlreadyExistsError,
)
from icefloe.serde.rest_json import ErrorResponse

__all__ = ["HttpProblem", "error_response"]


@dataclass
class HttpProblem(Exception):
    """An answer decided by the server itself (bad route, body too large, 422, ...)."""

    status: int
    type: str
    message: str

    def __str__(self) -> str:
        return self.message


# Most specific first: NoSuchFileError is a FileIOError and a NotFoundError.
_MAPPING: list[tuple[type[BaseException], int, str]] = [
    (NoSuchTableError, 404, "NoSuchTableException"),
    (NoSuchViewError, 404, "NoSuchViewException"),
    (NoSuchNamespaceError, 404, "NoSuchNamespaceException"),
    (NoSuchSnapshotError, 400, "IllegalArgumentException"),  # a bad argument of the request
    (NotFoundError, 404, "NotFoundException"),
    (TableAlreadyExistsError, 409, "AlreadyExistsException"),
    (ViewAlreadyExistsError, 409, "AlreadyExistsException"),
    (NamespaceAlreadyExistsError, 409, "AlreadyExistsException"),
    (NamespaceNotEmptyError, 409, "NamespaceNotEmptyException"),
    (CommitFailedException, 409, "CommitFailedException"),
    (NotAuthorizedError, 401, "NotAuthorizedException"),
    (ForbiddenError, 403, "ForbiddenException"),
    (UnsupportedFeatureError, 406, "UnsupportedOperationException"),
    (ValidationException, 400, "ValidationException"),
    (InvalidMetadataError, 400, "BadRequestException"),
    (ValidationError, 400, "IllegalArgumentException"),
    (ServiceUnavailableError, 503, "ServiceUnavailableException"),
    (CommitStateUnknownException, 500, "CommitStateUnknownException"),
    (FileIOError, 503, "ServiceUnavailableException"),  # storage trouble: try again later
]


def error_response(exc: BaseException) -> ErrorResponse | None:
    """The error answer for ``exc``; None when it is not one icefloe raises on purpose (a bug:
    the caller answers 500 and logs it)."""
    if isinstance(exc, HttpProblem):
        return ErrorResponse(exc.message, exc.type, exc.status)
    for kind, status, name in _MAPPING:
        if isinstance(exc, kind):
            return ErrorResponse(str(exc) or name, name, status)
    return None
