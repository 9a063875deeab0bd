"""``icefloe serve``: the catalog over the Iceberg REST protocol (``icefloe.rest``; needs the
``rest-server`` extra). The catalog is the global ``--catalog`` / ``-p`` one, or ``serve
--catalog NAME``; without either, the embedded default.
"""

from typing import Annotated

import typer

from icefloe.cli.session import command, session_of

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("serve")
    @command
    def serve_catalog(
        ctx: typer.Context,
        catalog: Annotated[
            str | None, typer.Option("--catalog", help="Catalog name (overrides the global --catalog).")
        ] = None,
        host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8181,
        workers: Annotated[int, typer.Option("--workers", min=1, help="Server processes.")] = 1,
        auth: Annotated[
            str | None,
            typer.Option(
                "--auth",
                metavar="FILE",
                help='JSON principals {client_id: {"secret", "read_only", "namespaces"}}; '
                "required unless the host is loopback.",
            ),
        ] = None,
        prefix: Annotated[str | None, typer.Option("--prefix", help="Serve under /v1/<prefix>/.")] = None,
        state_dir: Annotated[
            str | None,
            typer.Option(
                "--state-dir", help="A folder the workers share (default <warehouse>/.icefloe-rest)."
            ),
        ] = None,
        allowed_location: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-location",
                metavar="PREFIX",
                help="A location tables and views may have (repeatable; default: the warehouse "
                "alone). Name the warehouse too to keep creating tables there.",
            ),
        ] = None,
        storage_credentials: Annotated[
            str | None,
            typer.Option(
                "--storage-credentials",
                metavar="FILE",
                help='JSON {"s3://bucket/prefix": {FileIO properties}}: the credentials the server '
                "vends to clients for tables under each prefix.",
            ),
        ] = None,
    ) -> None:
        """Serve the catalog over the Iceberg REST protocol until interrupted."""
        from icefloe.rest.serve import serve  # lazy: the server (Starlette, uvicorn)

        session = session_of(ctx)
        session.output.err.print(f"icefloe REST catalog on http://{host}:{port}/v1 (Ctrl-C stops it)")
        serve(
            catalog=catalog if catalog is not None else session.catalog_name,
            catalog_properties=session.catalog_properties,
            host=host,
            port=port,
            workers=workers,
            auth=auth,
            prefix=prefix,
            state_dir=state_dir,
            allowed_locations=allowed_location,
            storage_credentials=storage_credentials,
        )
