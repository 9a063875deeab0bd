"""How the command line prints: Rich tables on a terminal, tab-separated lines when piped,
JSON with ``--output json``; progress bars and confirmations on the terminal only; errors on
stderr.

Values are made printable once (``plain``): datetimes as ISO text in UTC, bytes as hex, maps
and structs as JSON text in the text forms (native JSON objects with ``--output json``).

Rich is imported when something is first printed through it (its consoles are made on first
use), and pyarrow never: a command that prints rows piped, as JSON or not at all starts
without them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import Console

__all__ = ["Output", "plain"]

TEXT, JSON = "text", "json"
_TAB = "\t"


def plain(value: Any) -> Any:
    """A JSON-able form of a value (datetimes in UTC, bytes as hex, Decimals as text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):  # an Arrow map
            return {str(k): plain(v) for k, v in value}
        return [plain(v) for v in value]
    return str(value)


def _cell(value: Any) -> str:
    """One value as table text (nested values as compact JSON)."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass
class Output:
    """Where and how a command prints (built once per invocation from the global options)."""

    mode: str = TEXT
    _consoles: dict[str, Console] = field(default_factory=dict, repr=False)

    @property
    def out(self) -> Console:
        """The console of results (stdout)."""
        return self._console("out")

    @property
    def err(self) -> Console:
        """The console of errors, notes, questions and progress (stderr)."""
        return self._console("err")

    def _console(self, which: str) -> Console:
        console = self._consoles.get(which)
        if console is None:
            from rich.console import Console

            console = self._consoles[which] = Console(stderr=which == "err", soft_wrap=True)
        return console

    @property
    def rich(self) -> bool:
        """Rich output: text mode on a terminal."""
        return self.mode == TEXT and self.out.is_terminal

    # ---- results ------------------------------------------------------------------------------

    def rows(self, rows: Sequence[Mapping[str, Any]] | pa.Table, *, title: str | None = None) -> None:
        """A list of records (or an Arrow table) as a table / TSV / a JSON array."""
        arrow = sys.modules.get("pyarrow")  # an Arrow table comes from an imported pyarrow
        if arrow is not None and isinstance(rows, arrow.Table):
            table = cast("pa.Table", rows)
            columns = list(table.column_names)
            records = table.to_pylist()
        else:
            records = [dict(r) for r in rows]
            columns = list(records[0]) if records else []
        if self.mode == JSON:
            self._json([{k: plain(r.get(k)) for k in columns} for r in records])
            return
        if self.rich:
            from rich.table import Table as RichTable

            shown = RichTable(title=title, show_lines=False, header_style="bold")
            for column in columns:
                shown.add_column(column, overflow="fold")
            for record in records:
                shown.add_row(*(_cell(record.get(c)) for c in columns))
            self.out.print(shown)
            return
        self._line(_TAB.join(columns))
        for record in records:
            self._line(_TAB.join(_cell(record.get(c)).replace("\t", " ").replace("\n", " ") for c in columns))

    def record(self, values: Mapping[str, Any], *, title: str | None = None) -> None:
        """One record (``describe``, a summary) as two columns / ``key<TAB>value`` / an object."""
        if self.mode == JSON:
            self._json({k: plain(v) for k, v in values.items()})
            return
        if self.rich:
            from rich.table import Table as RichTable

            table = RichTable(title=title, show_header=False, box=None, pad_edge=False)
            table.add_column(style="bold cyan", no_wrap=True)
            table.add_column(overflow="fold")
            for key, value in values.items():
                table.add_row(key, _cell(value))
            self.out.print(table)
            return
        for key, value in values.items():
            self._line(f"{key}{_TAB}{_cell(value)}")

    def value(self, value: Any) -> None:
        """A single value (``location``, ``uuid``)."""
        if self.mode == JSON:
            self._json(plain(value))
        else:
            self._line(_cell(value))

    def done(self, message: str) -> None:
        """What a change command did: a line on the terminal / stdout, ``{"ok": ...}`` in JSON."""
        if self.mode == JSON:
            self._json({"ok": True, "message": message})
        elif self.rich:
            self.out.print(f"[green]✓[/green] {message}")
        else:
            self._line(message)

    def _json(self, value: Any) -> None:
        sys.stdout.write(json.dumps(value, indent=2, sort_keys=False) + "\n")
        sys.stdout.flush()

    def _line(self, text: str) -> None:
        sys.stdout.write(text + "\n")

    # ---- around long work ---------------------------------------------------------------------

    def error(self, message: str, hint: str | None = None) -> None:
        """An error on stderr (JSON mode too: stdout stays parseable)."""
        self.err.print(f"[bold red]error:[/bold red] {message}", highlight=False, markup=True)
        if hint:
            self.err.print(hint, highlight=False)

    def note(self, message: str) -> None:
        """A side remark on stderr, on a terminal only."""
        if self.err.is_terminal:
            self.err.print(f"[dim]{message}[/dim]", highlight=False)

    @contextmanager
    def progress(self, description: str) -> Iterator[Callable[[str], None]]:
        """A progress callback for an action: a bar on a terminal (stderr) fed by the
        ``done`` / ``total`` of :class:`ProgressLine`s, the other lines shown above it; on
        anything else the lines are dropped (the summary says what happened)."""
        if not self.err.is_terminal:
            yield lambda line: None
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.err, transient=False) as bar:
            task = bar.add_task(description, total=None)

            def update(line: str) -> None:
                total = getattr(line, "total", 0)
                if total:
                    bar.update(task, total=total, completed=getattr(line, "done", 0))
                bar.console.print(f"[dim]{line}[/dim]", highlight=False)

            yield update
            if bar.tasks[0].total is None:
                bar.update(task, total=1, completed=1)

    def confirm(self, question: str, *, yes: bool, interactive: bool) -> bool:
        """True when the user agrees (``yes`` answers for them). Without a terminal to ask
        on, the answer is no."""
        if yes:
            return True
        if not interactive:
            return False
        return self.err.input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
