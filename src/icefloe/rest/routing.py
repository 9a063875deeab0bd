"""Requests to routes: the raw path split into segments and decoded, matched against the
spec's path templates.

Routing works on the raw path (``scope["raw_path"]``): a decoded path would turn ``%2F`` inside a
name into a separator. Each segment is decoded with ``unquote_plus`` (Java's client writes a
space as ``+``, PyIceberg as ``%20``), and a namespace segment is split into levels at the unit
separator (``%1F``), the spec's default ``namespace-separator``. Names are not validated here:
a name no catalog object can have names a missing object (``wording.check_path_names``: 404).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from icefloe.rest.auth import ANONYMOUS, Principal
from icefloe.rest.errors import HttpProblem
from icefloe.serde._reader import parse_json_document

__all__ = ["Call", "Reply", "Route", "match_route"]

NAMESPACE_SEPARATOR = "\x1f"


@dataclass
class Call:
    """One request as a handler sees it."""

    method: str
    endpoint: str
    params: dict[str, Any]
    query: dict[str, str]
    headers: Mapping[str, str]
    body: bytes = b""
    form: dict[str, str] = field(default_factory=dict)
    principal: Principal = ANONYMOUS

    def json(self, what: str) -> Any:
        """The body as JSON (strict: no NaN, bounded nesting); InvalidMetadataError -> 400."""
        if not self.body:
            raise HttpProblem(400, "BadRequestException", f"{what}: the request has no body")
        return parse_json_document(self.body, "request body", what)

    @property
    def namespace(self) -> tuple[str, ...]:
        namespace: tuple[str, ...] = self.params["namespace"]
        return namespace

    def identifier(self, key: str = "table") -> tuple[str, ...]:
        return (*self.namespace, self.params[key])


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


Handler = Callable[[Call], Reply]


@dataclass(frozen=True)
class Route:
    """An endpoint of the spec served by ``handler``; ``mutation``: refused to read-only
    principals, and the kind of request an ``Idempotency-Key`` applies to."""

    endpoint: str
    handler: Handler
    mutation: bool = False

    @property
    def method(self) -> str:
        return self.endpoint.split(" ", 1)[0]

    @property
    def segments(self) -> tuple[str, ...]:
        path = self.endpoint.split(" ", 1)[1]
        return tuple(s for s in path.split("/")[2:] if s and s != "{prefix}")


def _decode_param(name: str, raw: str) -> Any:
    text = unquote_plus(raw, errors="strict")
    return tuple(text.split(NAMESPACE_SEPARATOR)) if name == "namespace" else text


def match_route(
    routes: list[Route], method: str, raw_path: bytes, raw_query: bytes, prefix: str | None
) -> tuple[Route, dict[str, Any], dict[str, str]]:
    """The route of a request, its decoded path parameters and its query parameters.

    Raises:
        HttpProblem: 404 (no such route), 405 (the route exists for another method), 400 (a
            segment that is not valid UTF-8).
    """
    try:
        path = raw_path.decode("ascii")
        query = dict(parse_qsl(raw_query.decode("ascii"), keep_blank_values=True, errors="strict"))
    except (UnicodeError, ValueError):
        raise HttpProblem(400, "BadRequestException", "the request path or query is not valid") from None
    segments = path.split("/")
    if len(segments) < 3 or segments[0] != "" or segments[1] != "v1":
        raise HttpProblem(404, "NotFoundException", f"no such route: {path[:200]}")
    rest = segments[2:]
    if prefix is not None and rest and rest[0] not in ("config", "oauth"):
        if unquote_plus(rest[0]) != prefix:
            raise HttpProblem(404, "NotFoundException", f"no such route: {path[:200]} (prefix is '{prefix}')")
        rest = rest[1:]
    allowed: list[str] = []
    for route in routes:
        template = route.segments
        if len(template) != len(rest):
            continue
        params: dict[str, str] = {}
        for pattern, raw in zip(template, rest):
            if pattern.startswith("{"):
                if raw == "":
                    break
                params[pattern[1:-1]] = raw
            elif pattern != raw:
                break
        else:
            if route.method != method:
                allowed.append(route.method)
                continue
            try:
                decoded = {name: _decode_param(name, raw) for name, raw in params.items()}
            except UnicodeError:
                raise HttpProblem(400, "BadRequestException", "a path segment is not valid UTF-8") from None
            return route, decoded, query
    if allowed:
        raise HttpProblem(
            405, "MethodNotAllowedException", f"method {method} not allowed; allowed: {sorted(allowed)}"
        )
    raise HttpProblem(404, "NotFoundException", f"no such route: {method} {path[:200]}")
