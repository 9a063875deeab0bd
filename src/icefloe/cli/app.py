"""The ``icefloe`` command: global options, command groups, and the commands of ``look.py``,
``change.py``, ``maintain.py`` and ``serve.py``.

A command module exposes ``register(...)``; adding one is a module with its commands and a
line in :func:`build`.
"""

from typing import Annotated

import typer

from icefloe.cli import change, look, maintain, serve
from icefloe.cli.change import key_values
from icefloe.cli.output import JSON, TEXT, Output
from icefloe.cli.session import Session, command

__all__ = ["app", "build"]


def build() -> typer.Typer:
    """The command-line application."""
    app = typer.Typer(
        name="icefloe",
        help="Look at, change and maintain Apache Iceberg tables (no JVM, no Spark).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
    )

    @app.callback()
    @command
    def main(
        ctx: typer.Context,
        catalog: Annotated[
            str | None,
            typer.Option(
                "--catalog",
                "-c",
                help="Catalog name, configured as for load_catalog().",
                envvar="ICEFLOE_CLI_CATALOG",
            ),
        ] = None,
        catalog_property: Annotated[
            list[str],
            typer.Option(
                "--catalog-property", "-p", help="Catalog property KEY=VALUE (repeatable), e.g. type=hadoop."
            ),
        ] = [],  # noqa: B006
        output: Annotated[
            str, typer.Option("--output", "-o", help="text (a table on a terminal, TSV when piped) or json.")
        ] = TEXT,
    ) -> None:
        if output not in (TEXT, JSON):
            raise typer.BadParameter(f"--output must be {TEXT} or {JSON}, not {output!r}")
        ctx.obj = Session(catalog, key_values(catalog_property, "--catalog-property"), Output(output))

    groups = {
        name: typer.Typer(help=text, no_args_is_help=True)
        for name, text in (
            ("create", "Create a namespace."),
            ("drop", "Drop a table or a namespace."),
            ("properties", "Table properties: get, set, remove."),
            ("branch", "Create or drop a branch."),
            ("tag", "Create or drop a tag."),
        )
    }
    look.register(app, groups["properties"])
    change.register(app, groups)
    maintain.register(app)
    serve.register(app)
    for name, group in groups.items():
        app.add_typer(group, name=name)
    return app


app = build()
