"""A gate in front of an S3 server (moto) that admits only requests signed with access keys
it was told about, each until its expiry: moto checks no credentials, this does.

``KeyGate(upstream)`` is an ASGI application (serve it with ``support.rest.serve_in_thread``):
``allow(key, until_ms=None)`` admits a key; every other request gets S3's 403
``InvalidAccessKeyId`` (an expired key: ``ExpiredToken``). ``seen`` counts requests per key.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

import httpx

_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
_DROPPED = {b"content-length", b"transfer-encoding", b"connection"}


def _access_key(headers: dict[bytes, bytes], query: bytes) -> str | None:
    found = _CREDENTIAL.search(headers.get(b"authorization", b"").decode("latin-1"))
    if found:
        return found.group(1)
    presigned = re.search(r"X-Amz-Credential=([^%/&]+)", query.decode("latin-1"))
    return presigned.group(1) if presigned else None


class KeyGate:
    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self._allowed: dict[str, float] = {}
        self.seen: Counter[str | None] = Counter()
        self.refused: Counter[str | None] = Counter()

    def allow(self, key: str, until_ms: int | None = None) -> None:
        self._allowed[key] = float("inf") if until_ms is None else until_ms / 1000

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        headers = dict(scope["headers"])
        key = _access_key(headers, scope.get("query_string", b""))
        self.seen[key] += 1
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        until = self._allowed.get(key) if key else None
        if until is None or time.time() > until:
            self.refused[key] += 1
            code = "InvalidAccessKeyId" if until is None else "ExpiredToken"
            await _answer(send, 403, f"<Error><Code>{code}</Code></Error>".encode(), [])
            return
        path = scope.get("raw_path") or scope["path"].encode()
        url = self.upstream + path.decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        forwarded = [(k, v) for k, v in scope["headers"] if k not in _DROPPED]
        async with httpx.AsyncClient(timeout=60) as client:
            answer = await client.request(scope["method"], url, headers=forwarded, content=body)
        kept = [
            (k.encode(), v.encode())
            for k, v in answer.headers.items()
            if k.encode() not in _DROPPED and k != "content-encoding"  # httpx decoded the body
        ]
        content = b"" if scope["method"] == "HEAD" else answer.content
        if scope["method"] == "HEAD" and "content-length" in answer.headers:
            kept.append((b"content-length", answer.headers["content-length"].encode()))
        await _answer(send, answer.status_code, content, kept)


async def _answer(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
