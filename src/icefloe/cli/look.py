"""Commands that look: ``list``, ``describe``, ``schema``, ``spec``, ``history``,
``snapshots``, ``refs``, ``files``, ``partitions``, ``manifests``, ``location``, ``uuid``,
``properties get``."""

from typing import TYPE_CHECKING, Annotated, Any

import typer

from icefloe._util.redaction import redact
from icefloe.cli.session import EXIT_NOT_FOUND, CliError, Session, command, session_of

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.spec.types import NestedField
    from icefloe.table.table import Table

__all__ = ["register"]

TableArg = Annotated[str, typer.Argument(help="Table identifier, e.g. db.orders.")]
SnapshotOpt = Annotated[int | None, typer.Option("--snapshot-id", help="Read as of this snapshot.")]
RefOpt = Annotated[str | None, typer.Option("--ref", help="Read as of this branch or tag.")]
FilterOpt = Annotated[
    str | None, typer.Option("--filter", "-f", help="Keep matching rows (icefloe filter syntax).")
]
LimitOpt = Annotated[int | None, typer.Option("--limit", "-n", help="Show at most this many rows.")]

#: The columns the text forms show (JSON shows every column).
_SHOWN = {
    "files": [
        "content",
        "file_path",
        "file_format",
        "spec_id",
        "partition",
        "record_count",
        "file_size_in_bytes",
    ],
    "manifests": [
        "content",
        "path",
        "length",
        "partition_spec_id",
        "added_snapshot_id",
        "added_data_files_count",
        "existing_data_files_count",
        "deleted_data_files_count",
        "added_delete_files_count",
        "existing_delete_files_count",
        "deleted_delete_files_count",
    ],
}


def _limited(table: "pa.Table", limit: int | None) -> "pa.Table":
    return table if limit is None else table.slice(0, limit)


def register(app: typer.Typer, properties: typer.Typer) -> None:
    """Add the commands to ``app`` (and ``properties get`` to the ``properties`` group)."""

    @app.command("list")
    @command
    def list_(
        ctx: typer.Context,
        namespace: Annotated[
            str | None, typer.Argument(help="Namespace to list (default: the top level).")
        ] = None,
    ) -> None:
        """List namespaces, or the namespaces and tables in NAMESPACE."""
        session = session_of(ctx)
        catalog = session.catalog
        rows: list[dict[str, Any]] = []
        parent = () if namespace is None else tuple(namespace.split("."))
        rows += [{"name": ".".join(n), "type": "namespace"} for n in catalog.list_namespaces(parent)]
        if namespace is not None:
            rows += [{"name": ".".join(t), "type": "table"} for t in catalog.list_tables(namespace)]
        session.output.rows(rows)

    @app.command()
    @command
    def describe(ctx: typer.Context, table: TableArg) -> None:
        """Schema, partition spec, sort order, properties, current snapshot and sizes."""
        session = session_of(ctx)
        t = session.table(table)
        snapshot = t.current_snapshot()
        summary = dict(snapshot.summary) if snapshot is not None else {}
        schema = t.schema()
        names = schema.id_to_name()
        session.output.record(
            {
                "table": t.name(),
                "location": t.location(),
                "uuid": str(t.uuid()),
                "format-version": t.format_version(),
                "schema": str(schema).replace("\n", " "),
                "partition spec": _spec_text(t, names),
                "sort order": _order_text(t, names),
                "current snapshot": None if snapshot is None else snapshot.snapshot_id,
                "snapshots": len(t.metadata.snapshots),
                "refs": ", ".join(sorted(t.refs())),
                "records": summary.get("total-records"),
                "data files": summary.get("total-data-files"),
                "delete files": summary.get("total-delete-files"),
                "size (bytes)": summary.get("total-files-size"),
                "properties": redact(t.properties()),
            },
            title=t.name(),
        )

    @app.command()
    @command
    def schema(ctx: typer.Context, table: TableArg) -> None:
        """The columns: id, full name, type, required, doc."""
        session = session_of(ctx)
        t = session.table(table)
        current = t.schema()
        rows = []
        for field_id, name in sorted(current.id_to_name().items()):
            field: NestedField | None = current.find_field(field_id)
            assert field is not None
            rows.append(
                {
                    "id": field_id,
                    "name": name,
                    "type": str(field.field_type),
                    "required": field.required,
                    "doc": field.doc,
                }
            )
        session.output.rows(rows)

    @app.command()
    @command
    def spec(ctx: typer.Context, table: TableArg) -> None:
        """The partition spec: field id, name, transform and source column."""
        session = session_of(ctx)
        t = session.table(table)
        names = t.schema().id_to_name()
        rows = [
            {
                "field_id": f.field_id,
                "name": f.name,
                "transform": str(f.transform),
                "source": names.get(f.source_id, f"<dropped column {f.source_id}>"),
            }
            for f in t.spec().fields
        ]
        session.output.rows(rows, title=f"spec {t.spec().spec_id}")

    def metadata_table(name: str, help_text: str, *, per_snapshot: bool) -> None:
        if per_snapshot:

            @command
            def show(
                ctx: typer.Context,
                table: TableArg,
                snapshot_id: SnapshotOpt = None,
                ref: RefOpt = None,
                filter: FilterOpt = None,
                limit: LimitOpt = None,
            ) -> None:
                session = session_of(ctx)
                t = session.table(table)
                rows = t.inspect.table(name, snapshot_id=snapshot_id, ref=ref, filter=filter)
                _show(session, rows, name, limit)

        else:

            @command
            def show(  # type: ignore[misc]
                ctx: typer.Context, table: TableArg, filter: FilterOpt = None, limit: LimitOpt = None
            ) -> None:
                session = session_of(ctx)
                t = session.table(table)
                _show(session, t.inspect.table(name, filter=filter), name, limit)

        show.__doc__ = help_text
        app.command(name)(show)

    metadata_table("history", "The snapshot log (Java's history metadata table).", per_snapshot=False)
    metadata_table("snapshots", "Every snapshot, with its operation and summary.", per_snapshot=False)
    metadata_table("refs", "Branches and tags.", per_snapshot=False)
    metadata_table("files", "Live data and delete files (Java's files metadata table).", per_snapshot=True)
    metadata_table("partitions", "Per partition: records, files, sizes, deletes.", per_snapshot=True)
    metadata_table("manifests", "The manifests of a snapshot.", per_snapshot=True)

    @app.command()
    @command
    def location(ctx: typer.Context, table: TableArg) -> None:
        """The table's base location."""
        session = session_of(ctx)
        session.output.value(session.table(table).location())

    @app.command()
    @command
    def uuid(ctx: typer.Context, table: TableArg) -> None:
        """The table's UUID."""
        session = session_of(ctx)
        session.output.value(str(session.table(table).uuid()))

    @properties.command("get")
    @command
    def properties_get(
        ctx: typer.Context,
        table: TableArg,
        key: Annotated[str | None, typer.Argument(help="One property (default: all).")] = None,
    ) -> None:
        """Show the table's properties, or one of them."""
        session = session_of(ctx)
        values = redact(session.table(table).properties())  # secrets never reach a terminal or log
        if key is None:
            session.output.record(dict(sorted(values.items())))
        elif key in values:
            session.output.value(values[key])
        else:
            raise CliError(f"table {table} has no property '{key}'", code=EXIT_NOT_FOUND)


def _show(session: Session, rows: "pa.Table", name: str, limit: int | None) -> None:
    if session.output.mode == "text" and name in _SHOWN:
        rows = rows.select([c for c in _SHOWN[name] if c in rows.column_names])
    session.output.rows(_limited(rows, limit))


def _spec_text(table: "Table", names: dict[int, str]) -> str:
    fields = [
        f"{f.transform}({names.get(f.source_id, f.source_id)}) as {f.name}" for f in table.spec().fields
    ]
    return ", ".join(fields) or "unpartitioned"


def _order_text(table: "Table", names: dict[int, str]) -> str:
    order = table.sort_order()
    fields = [
        f"{f.transform}({names.get(f.source_id, f.source_id)}) {f.direction.name} {(f.null_order or '').replace('-', ' ').upper()}"
        for f in order.fields
    ]
    return ", ".join(fields) or "unsorted"
