"""Maintenance commands: ``expire-snapshots``, ``remove-orphan-files``, ``rewrite-manifests``,
``compact`` (rewrite data files) and ``rewrite-position-deletes``, running ``icefloe.actions``
(no Spark). Each has ``--dry-run`` (plans and reports, changes nothing), asks before it deletes
files unless ``--yes``, shows a progress bar on a terminal and prints a summary. Each command
imports the actions when it runs."""

import dataclasses
import datetime as dt
import time
from typing import Annotated, Any

import typer

from icefloe.cli.change import key_values
from icefloe.cli.session import EXIT_FAILED, CliError, Session, command, session_of

__all__ = ["register"]

TableArg = Annotated[str, typer.Argument(help="Table identifier, e.g. db.orders.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Only report what would be done.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before deleting files.")]
WhereOpt = Annotated[str | None, typer.Option("--where", help="Only files that may hold matching rows.")]
OptionOpt = Annotated[
    list[str], typer.Option("--option", "-o", help="An action option by Java's name, KEY=VALUE (repeatable).")
]


def _time(text: str | None, name: str) -> dt.datetime | None:
    """An ISO date or datetime (naive = UTC), or ``3d`` / ``12h`` / ``30m`` ago."""
    if text is None:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes"}
    if text[-1:] in units and text[:-1].isdigit():
        return dt.datetime.now(dt.UTC) - dt.timedelta(**{units[text[-1]]: int(text[:-1])})
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"{name} must be an ISO time (2024-03-10T12:00) or an age (3d, 12h, 30m), not '{text}'", code=2
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _summary(session: Session, result: Any, started: float, *, title: str) -> None:
    values = dataclasses.asdict(result)
    shown = {
        k: (len(v) if isinstance(v, list) and session.output.mode == "text" else v) for k, v in values.items()
    }
    shown["seconds"] = round(time.perf_counter() - started, 2)
    session.output.record(shown, title=title)


def _confirm(session: Session, question: str, yes: bool) -> None:
    if not session.output.confirm(question, yes=yes, interactive=session.interactive):
        raise CliError(f"not confirmed: {question.rstrip('?')} (pass --yes)", code=EXIT_FAILED)


def register(app: typer.Typer) -> None:
    @app.command("expire-snapshots")
    @command
    def expire_snapshots(
        ctx: typer.Context,
        table: TableArg,
        older_than: Annotated[
            str | None, typer.Option("--older-than", help="ISO time or age (5d); default the table's 5 days.")
        ] = None,
        retain_last: Annotated[
            int | None, typer.Option("--retain-last", help="Ancestors kept per branch.")
        ] = None,
        snapshot_id: Annotated[list[int], typer.Option("--snapshot-id", help="Also expire this one.")] = [],  # noqa: B006
        dry_run: DryRunOpt = False,
        yes: YesOpt = False,
    ) -> None:
        """Expire old snapshots and delete the files only they reached."""
        from icefloe import actions  # lazy: the actions (pyarrow, manifests)

        session = session_of(ctx)
        t = session.table(table)
        cutoff = _time(older_than, "--older-than")
        op = t.expire_snapshots()
        if cutoff is not None:
            op = op.expire_older_than(int(cutoff.timestamp() * 1000))
        if retain_last is not None:
            op = op.retain_last(retain_last)
        for sid in snapshot_id:
            op = op.expire_snapshot_id(sid)
        doomed = op.apply()
        if dry_run or not doomed:
            session.output.rows(
                [
                    {
                        "snapshot_id": s.snapshot_id,
                        "committed_at": dt.datetime.fromtimestamp(s.timestamp_ms / 1000, dt.UTC),
                        "operation": s.operation,
                    }
                    for s in doomed
                ],
                title="snapshots that would expire" if dry_run else "nothing to expire",
            )
            return
        _confirm(
            session, f"expire {len(doomed)} snapshots of {table} and delete the files only they reach?", yes
        )
        started = time.perf_counter()
        with session.output.progress("expiring") as progress:
            result = actions.expire_snapshots(
                t,
                older_than=cutoff,
                retain_last=retain_last,
                snapshot_ids=snapshot_id,
                progress=progress,
            )
        _summary(session, result, started, title="expire-snapshots")

    @app.command("remove-orphan-files")
    @command
    def remove_orphan_files(
        ctx: typer.Context,
        table: TableArg,
        older_than: Annotated[
            str | None, typer.Option("--older-than", help="ISO time or age; default 3d.")
        ] = None,
        location: Annotated[
            str | None, typer.Option("--location", help="Where to look (default the table's).")
        ] = None,
        prefix_mismatch_mode: Annotated[
            str, typer.Option("--prefix-mismatch-mode", help="error, ignore or delete.")
        ] = "error",
        dry_run: DryRunOpt = False,
        yes: YesOpt = False,
    ) -> None:
        """Delete files under the table's location that no metadata reaches."""
        from icefloe import actions  # lazy: the actions (pyarrow, manifests)
        from icefloe.table.maintenance.orphans import OrphanRules  # lazy: with the actions

        session = session_of(ctx)
        t = session.table(table)
        cutoff = _time(older_than, "--older-than")
        if not dry_run:  # refuse an unsafe cutoff before looking, not after asking
            OrphanRules.parse(
                older_than=cutoff,
                equal_schemes=None,
                equal_authorities=None,
                prefix_mismatch_mode=prefix_mismatch_mode,
                dry_run=False,
                table_name=table,
            )
        found = actions.remove_orphan_files(
            t, older_than=cutoff, location=location, dry_run=True, prefix_mismatch_mode=prefix_mismatch_mode
        )
        orphans = found.orphan_file_locations
        if dry_run or not orphans:
            session.output.rows(
                [{"orphan": p} for p in orphans], title="orphan files" + (" (not deleted)" if dry_run else "")
            )
            return
        _confirm(session, f"delete {len(orphans)} orphan files under {location or t.location()}?", yes)
        started = time.perf_counter()
        with session.output.progress("deleting") as progress:
            result = actions.remove_orphan_files(
                t,
                older_than=cutoff,
                location=location,
                prefix_mismatch_mode=prefix_mismatch_mode,
                progress=progress,
            )
        _summary(session, result, started, title="remove-orphan-files")

    @app.command("rewrite-manifests")
    @command
    def rewrite_manifests(
        ctx: typer.Context,
        table: TableArg,
        spec_id: Annotated[int | None, typer.Option("--spec-id", help="Default: the current spec.")] = None,
        dry_run: DryRunOpt = False,
    ) -> None:
        """Compact the data manifests, clustered by partition."""
        from icefloe import actions  # lazy: the actions (pyarrow, manifests)

        session = session_of(ctx)
        t = session.table(table)
        if dry_run:
            snapshot = t.current_snapshot()
            spec = t.spec().spec_id if spec_id is None else spec_id
            manifests = (
                t.inspect.manifests(filter=f"content = 0 AND partition_spec_id = {spec}")
                if snapshot
                else None
            )
            count = 0 if manifests is None else manifests.num_rows
            session.output.record({"data manifests of spec": count, "spec_id": spec}, title="would rewrite")
            return
        started = time.perf_counter()
        with session.output.progress("rewriting manifests") as progress:
            result = actions.rewrite_manifests(t, spec_id=spec_id, progress=progress)
        _summary(session, result, started, title="rewrite-manifests")

    @app.command()
    @command
    def compact(
        ctx: typer.Context,
        table: TableArg,
        strategy: Annotated[str, typer.Option("--strategy", help="binpack or sort.")] = "binpack",
        sort_by: Annotated[
            list[str], typer.Option("--sort-by", help='A sort term ("ts DESC"); repeatable.')
        ] = [],  # noqa: B006
        where: WhereOpt = None,
        option: OptionOpt = [],  # noqa: B006
        dry_run: DryRunOpt = False,
    ) -> None:
        """Rewrite small files and files with deletes into files of the target size."""
        from icefloe import actions  # lazy: the actions (pyarrow, manifests)
        from icefloe.table.maintenance.compaction import plan_compaction  # lazy: with the actions
        from icefloe.table.maintenance.options import RewriteDataFilesOptions  # lazy: with the actions

        session = session_of(ctx)
        t = session.table(table)
        options = key_values(option, "--option")
        if dry_run:
            parsed = RewriteDataFilesOptions.parse(options, t.properties(), strategy=strategy)
            plan = plan_compaction(t.io(), t.metadata, parsed, where)
            groups = [] if plan is None else plan.groups
            session.output.rows(
                [
                    {
                        "spec_id": g.spec_id,
                        "partition": list(g.partition),
                        "files": len(g.tasks),
                        "bytes": g.size,
                    }
                    for g in groups
                ],
                title="file groups that would be rewritten",
            )
            return
        started = time.perf_counter()
        with session.output.progress("compacting") as progress:
            result = actions.rewrite_data_files(
                t, strategy=strategy, sort_by=sort_by or None, where=where, options=options, progress=progress
            )
        _summary(session, result, started, title="compact")

    @app.command("rewrite-position-deletes")
    @command
    def rewrite_position_deletes(
        ctx: typer.Context,
        table: TableArg,
        where: WhereOpt = None,
        option: OptionOpt = [],  # noqa: B006
        dry_run: DryRunOpt = False,
    ) -> None:
        """Compact position delete files and drop dangling deletes (v3: into deletion vectors)."""
        from icefloe import actions  # lazy: the actions (pyarrow, manifests)
        from icefloe.table.maintenance.delete_compaction import plan_delete_groups  # lazy: with the actions
        from icefloe.table.maintenance.options import RewritePositionDeletesOptions  # lazy: with the actions

        session = session_of(ctx)
        t = session.table(table)
        options = key_values(option, "--option")
        if dry_run:
            parsed = RewritePositionDeletesOptions.parse(options, t.properties())
            plan = plan_delete_groups(t.io(), t.metadata, parsed, where)
            groups = [] if plan is None else plan.groups
            session.output.rows(
                [
                    {"spec_id": g.spec_id, "partition": list(g.partition), "delete_files": len(g.files)}
                    for g in groups
                ],
                title="delete file groups that would be rewritten",
            )
            return
        started = time.perf_counter()
        with session.output.progress("rewriting deletes") as progress:
            result = actions.rewrite_position_deletes(t, where=where, options=options, progress=progress)
        _summary(session, result, started, title="rewrite-position-deletes")
