"""Commands that change: ``create namespace``, ``drop table|namespace``, ``rename``,
``properties set|remove``, ``rollback``, ``branch create|drop``, ``tag create|drop``."""

from typing import Annotated

import typer

from icefloe.cli.session import EXIT_FAILED, CliError, command, session_of
from icefloe.errors import ValidationError

__all__ = ["key_values", "register"]

TableArg = Annotated[str, typer.Argument(help="Table identifier, e.g. db.orders.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def key_values(pairs: list[str], what: str) -> dict[str, str]:
    """``["a=1", "b=x"]`` as a dict.

    Raises:
        CliError: a pair without ``=``.
    """
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"{what} must be KEY=VALUE, not '{pair}'", code=2)
        result[key.strip()] = value
    return result


def register(app: typer.Typer, groups: dict[str, typer.Typer]) -> None:
    """Add the commands to ``app`` and to the ``create``, ``drop``, ``properties``, ``branch``
    and ``tag`` groups."""
    create, drop, properties, branch, tag = (
        groups[n] for n in ("create", "drop", "properties", "branch", "tag")
    )

    @create.command("namespace")
    @command
    def create_namespace(
        ctx: typer.Context,
        namespace: Annotated[str, typer.Argument(help="Namespace to create, e.g. db.")],
        property: Annotated[list[str], typer.Option("--property", "-p", help="KEY=VALUE (repeatable).")] = [],  # noqa: B006
    ) -> None:
        """Create a namespace."""
        session = session_of(ctx)
        session.catalog.create_namespace(namespace, key_values(property, "--property"))
        session.output.done(f"created namespace {namespace}")

    @drop.command("table")
    @command
    def drop_table(
        ctx: typer.Context,
        table: TableArg,
        purge: Annotated[bool, typer.Option("--purge", help="Also delete the table's files.")] = False,
        yes: YesOpt = False,
    ) -> None:
        """Drop a table from the catalog (with --purge, delete its files too)."""
        session = session_of(ctx)
        session.table(table)  # exists (or close matches are suggested)
        what = f"drop table {table}" + (" and delete all its files" if purge else "")
        if not session.output.confirm(f"{what}?", yes=yes, interactive=session.interactive):
            raise CliError(f"not confirmed: {what} (pass --yes)", code=EXIT_FAILED)
        session.catalog.drop_table(table, purge=purge)
        session.output.done(f"dropped table {table}" + (" and its files" if purge else ""))

    @drop.command("namespace")
    @command
    def drop_namespace(
        ctx: typer.Context, namespace: Annotated[str, typer.Argument(help="An empty namespace.")]
    ) -> None:
        """Drop an empty namespace."""
        session = session_of(ctx)
        session.catalog.drop_namespace(namespace)
        session.output.done(f"dropped namespace {namespace}")

    @app.command()
    @command
    def rename(
        ctx: typer.Context,
        source: Annotated[str, typer.Argument(help="The table's identifier.")],
        destination: Annotated[str, typer.Argument(help="Its new identifier.")],
    ) -> None:
        """Rename a table."""
        session = session_of(ctx)
        session.table(source)
        session.catalog.rename_table(source, destination)
        session.output.done(f"renamed {source} to {destination}")

    @properties.command("set")
    @command
    def properties_set(
        ctx: typer.Context,
        table: TableArg,
        pairs: Annotated[list[str], typer.Argument(help="KEY=VALUE pairs.")],
    ) -> None:
        """Set table properties."""
        session = session_of(ctx)
        values = key_values(pairs, "a property")
        update = session.table(table).update_properties()
        for key, value in values.items():
            update.set(key, value)
        update.commit()
        session.output.done(f"set {', '.join(values)} on {table}")

    @properties.command("remove")
    @command
    def properties_remove(
        ctx: typer.Context,
        table: TableArg,
        keys: Annotated[list[str], typer.Argument(help="Property names.")],
    ) -> None:
        """Remove table properties."""
        session = session_of(ctx)
        update = session.table(table).update_properties()
        for key in keys:
            update.remove(key)
        update.commit()
        session.output.done(f"removed {', '.join(keys)} from {table}")

    @app.command()
    @command
    def rollback(
        ctx: typer.Context,
        table: TableArg,
        snapshot_id: Annotated[int, typer.Argument(help="An ancestor of the current snapshot.")],
    ) -> None:
        """Make an earlier snapshot (an ancestor of the current one) current again."""
        session = session_of(ctx)
        session.table(table).manage_snapshots().rollback_to(snapshot_id).commit()
        session.output.done(f"rolled {table} back to snapshot {snapshot_id}")

    def ref_commands(group: typer.Typer, kind: str) -> None:
        @group.command("create")
        @command
        def create_ref(
            ctx: typer.Context,
            table: TableArg,
            name: Annotated[str, typer.Argument(help=f"The {kind}'s name.")],
            snapshot_id: Annotated[
                int | None, typer.Option("--snapshot-id", help="Default: the current snapshot.")
            ] = None,
        ) -> None:
            session = session_of(ctx)
            t = session.table(table)
            target = snapshot_id
            if target is None:
                current = t.current_snapshot()
                if current is None:
                    raise ValidationError(f"table {table} has no snapshot to point a {kind} at")
                target = current.snapshot_id
            manage = t.manage_snapshots()
            (manage.create_branch if kind == "branch" else manage.create_tag)(name, target).commit()
            session.output.done(f"created {kind} {name} at snapshot {target}")

        @group.command("drop")
        @command
        def drop_ref(
            ctx: typer.Context,
            table: TableArg,
            name: Annotated[str, typer.Argument(help=f"The {kind}'s name.")],
        ) -> None:
            session = session_of(ctx)
            manage = session.table(table).manage_snapshots()
            (manage.remove_branch if kind == "branch" else manage.remove_tag)(name).commit()
            session.output.done(f"dropped {kind} {name}")

        create_ref.__doc__ = f"Create a {kind} (at the current snapshot unless --snapshot-id)."
        drop_ref.__doc__ = f"Drop a {kind}."

    ref_commands(branch, "branch")
    ref_commands(tag, "tag")
