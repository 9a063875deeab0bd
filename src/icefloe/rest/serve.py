"""Serving from the command line: ``icefloe serve`` or ``python -m icefloe.rest [--catalog NAME]
[--host 127.0.0.1] [--port 8181] [--workers N] [--auth FILE] [--prefix P] [--state-dir DIR]
[--allowed-location PREFIX ...] [--storage-credentials FILE]``.

The catalog is ``load_catalog(NAME, **properties)`` (the embedded default when no name is given). ``--auth``
names a JSON file of principals (``{client_id: {"secret": ..., "read_only": ..., "namespaces":
[...]}}``); without it the server refuses to listen on anything but a loopback address.
Several workers share a state folder (idempotency keys, the token signing key): ``--state-dir``,
by default ``<warehouse>/.icefloe-rest`` for a local warehouse. ``--allowed-location``
(repeatable) names the locations tables and views may have; by default the warehouse alone.
``--storage-credentials`` names a JSON file ``{location prefix: {FileIO properties}}``: the
credentials the server vends for tables under each prefix (``rest.credentials``). Only the
files' paths reach the worker processes' environment, never their secrets.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from icefloe._util.optional import import_optional
from icefloe.catalog import load_catalog
from icefloe.errors import ValidationError
from icefloe.io import local_path, split_scheme
from icefloe.rest.app import app

__all__ = ["app_from_environment", "main", "serve"]

# How the parent process hands its options to uvicorn's worker processes.
_ENV = "ICEFLOE_REST_SERVE"
# uvicorn's HTTP protocol with TCP_NODELAY (see _nodelay.py), loaded by uvicorn in each worker.
_PROTOCOL = "icefloe.rest._nodelay:NoDelayProtocol"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_json_file(path: str, what: str) -> Any:
    """The JSON document in ``path``; ValidationError naming ``what`` file it was."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValidationError(f"cannot read the {what} file {path}: {exc}") from exc


def _read_auth(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    auth = _read_json_file(path, "auth")
    if not isinstance(auth, dict):
        raise ValidationError(f"the auth file {path} must hold a JSON object of principals")
    return auth


def _read_storage_credentials(path: str | None) -> dict[str, dict[str, str]] | None:
    if path is None:
        return None
    document = _read_json_file(path, "storage credentials")
    if not isinstance(document, dict) or not all(
        isinstance(p, str) and isinstance(c, dict) and all(isinstance(v, str) for v in c.values())
        for p, c in document.items()
    ):
        raise ValidationError(
            f"the storage credentials file {path} must hold a JSON object "
            '{"s3://bucket/prefix": {"s3.access-key-id": "...", ...}}'
        )
    return document


def _build(options: dict[str, Any]) -> Any:
    catalog = load_catalog(options.get("catalog"), **options.get("catalog_properties", {}))
    return app(
        catalog,
        _read_auth(options.get("auth")),
        prefix=options.get("prefix"),
        state_dir=options.get("state_dir"),
        allowed_locations=options.get("allowed_locations"),
        storage_credentials=_read_storage_credentials(options.get("storage_credentials")),
    )


def app_from_environment() -> Any:
    """The application of one worker process (uvicorn's factory), from the parent's options."""
    return _build(json.loads(os.environ[_ENV]))


def serve(
    *,
    catalog: str | None = None,
    catalog_properties: dict[str, str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8181,
    workers: int = 1,
    auth: str | None = None,
    prefix: str | None = None,
    state_dir: str | None = None,
    allowed_locations: Sequence[str] | None = None,
    storage_credentials: str | None = None,
) -> None:
    """Run the REST catalog server until interrupted.

    Raises:
        ValidationError: auth is missing on a non-loopback host, the auth file is bad, or
            several workers have no state folder.
    """
    uvicorn = import_optional("uvicorn", extra="rest-server")
    if auth is None and not _is_loopback(host):
        raise ValidationError(
            f"refusing to serve on {host} without --auth: only loopback hosts may go without it"
        )
    _read_auth(auth)  # fail before starting
    _read_storage_credentials(storage_credentials)
    options: dict[str, Any] = {
        "catalog": catalog,
        "catalog_properties": dict(catalog_properties or {}),
        "auth": auth,
        "prefix": prefix,
        "state_dir": state_dir,
        "allowed_locations": list(allowed_locations) if allowed_locations else None,
        "storage_credentials": storage_credentials,
    }
    if workers > 1 and state_dir is None:
        warehouse = load_catalog(catalog, **options["catalog_properties"]).backend.warehouse
        if split_scheme(warehouse)[0] not in (None, "file"):
            raise ValidationError("several workers need --state-dir (a local folder they share)")
        options["state_dir"] = os.path.join(local_path(warehouse), ".icefloe-rest")
    if workers > 1:
        os.environ[_ENV] = json.dumps(options)
        uvicorn.run(
            "icefloe.rest.serve:app_from_environment",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
            http=_PROTOCOL,
        )
    else:
        uvicorn.run(_build(options), host=host, port=port, log_level="warning", http=_PROTOCOL)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m icefloe.rest", description="Serve an icefloe catalog over the Iceberg REST protocol"
    )
    parser.add_argument("--catalog", help="the catalog's name (load_catalog); default: the embedded catalog")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--auth", metavar="FILE", help="JSON principals: {client_id: {secret, read_only, namespaces}}"
    )
    parser.add_argument("--prefix", help="serve under /v1/<prefix>/")
    parser.add_argument("--state-dir", help="a folder the workers share (default <warehouse>/.icefloe-rest)")
    parser.add_argument(
        "--allowed-location",
        action="append",
        metavar="PREFIX",
        help="a location tables and views may have (repeatable; default: the warehouse alone)",
    )
    parser.add_argument(
        "--storage-credentials",
        metavar="FILE",
        help="JSON {location prefix: {FileIO properties}}: credentials the server vends",
    )
    args = parser.parse_args(argv)
    try:
        serve(
            catalog=args.catalog,
            host=args.host,
            port=args.port,
            workers=args.workers,
            auth=args.auth,
            prefix=args.prefix,
            state_dir=args.state_dir,
            allowed_locations=args.allowed_location,
            storage_credentials=args.storage_credentials,
        )
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
