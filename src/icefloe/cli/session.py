"""What every command shares: the catalog (``--catalog``, ``-p``; the configuration of
``load_catalog``), the output (``--output``), loading tables with close-match suggestions,
and turning errors into a message on stderr and an exit code.

Exit codes: 0 success, 1 the operation failed (an icefloe error, a refused confirmation),
2 bad usage (Click's), 3 a table, namespace or snapshot that does not exist.

The command modules import what a command needs inside it (``# lazy:``): building the
application, ``--help`` and usage errors import neither the catalog nor pyarrow.
"""

from __future__ import annotations

import difflib
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from icefloe.cli.output import Output
from icefloe.errors import IcefloeError, NoSuchNamespaceError, NoSuchTableError, NotFoundError

if TYPE_CHECKING:
    from icefloe.catalog import Catalog
    from icefloe.table.table import Table

__all__ = ["EXIT_FAILED", "EXIT_NOT_FOUND", "CliError", "Session", "command", "session_of"]

EXIT_FAILED = 1
EXIT_NOT_FOUND = 3

F = TypeVar("F", bound=Callable[..., Any])


class CliError(Exception):
    """An error the command line reports as is (message, optional hint, exit code)."""

    def __init__(self, message: str, *, hint: str | None = None, code: int = EXIT_FAILED):
        super().__init__(message)
        self.hint = hint
        self.code = code


@dataclass
class Session:
    """The global options of one invocation, and the catalog once it is needed."""

    catalog_name: str | None = None
    catalog_properties: dict[str, str] = field(default_factory=dict)
    output: Output = field(default_factory=Output)
    _catalog: Catalog | None = None

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            from icefloe.catalog import load_catalog  # lazy: not for --help or a usage error

            self._catalog = load_catalog(self.catalog_name, **self.catalog_properties)
        return self._catalog

    @property
    def interactive(self) -> bool:
        """Whether there is a person to ask (stdin and stderr are terminals)."""
        return sys.stdin.isatty() and self.output.err.is_terminal

    def table(self, identifier: str) -> Table:
        """The table, or a CliError naming the close matches among the namespace's tables."""
        try:
            return self.catalog.load_table(identifier)
        except NoSuchTableError as exc:
            raise CliError(str(exc), hint=self._suggest(identifier), code=EXIT_NOT_FOUND) from None
        except NoSuchNamespaceError as exc:
            raise CliError(str(exc), hint=self._suggest(identifier), code=EXIT_NOT_FOUND) from None

    def _suggest(self, identifier: str) -> str | None:
        namespace, _, _ = identifier.rpartition(".")
        try:
            if namespace and namespace in {".".join(n) for n in self.catalog.list_namespaces()}:
                names = [".".join(t) for t in self.catalog.list_tables(namespace)]
            else:
                names = [
                    ".".join(t) for n in self.catalog.list_namespaces() for t in self.catalog.list_tables(n)
                ]
        except IcefloeError:
            return None
        close = difflib.get_close_matches(identifier, names, n=3, cutoff=0.6)
        return f"did you mean: {', '.join(close)}?" if close else None


def session_of(ctx: typer.Context) -> Session:
    found = ctx.find_object(Session)
    if found is None:  # a command invoked without the root callback (tests of one command)
        found = ctx.ensure_object(Session)
    return found


def command(fn: F) -> F:
    """Report errors of a command on stderr with an exit code instead of a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = next((a for a in args if isinstance(a, typer.Context)), kwargs.get("ctx"))
        output = session_of(ctx).output if isinstance(ctx, typer.Context) else Output()
        try:
            return fn(*args, **kwargs)
        except CliError as exc:
            output.error(str(exc), exc.hint)
            raise typer.Exit(exc.code) from None
        except NotFoundError as exc:
            output.error(str(exc))
            raise typer.Exit(EXIT_NOT_FOUND) from None
        except IcefloeError as exc:
            output.error(f"{type(exc).__name__}: {exc}")
            raise typer.Exit(EXIT_FAILED) from None

    return wrapper  # type: ignore[return-value]
