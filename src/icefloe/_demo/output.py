"""Terminal output of the demo: sections, aligned tables, one timed line per step."""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["DemoError", "Out", "Step", "n", "size", "utc"]


class DemoError(Exception):
    """An expected problem: reported as one line, exit status 1."""


class Out:
    """Prints to stdout, with ANSI styles only on a terminal (and never with NO_COLOR set)."""

    def __init__(self, *, color: bool):
        self.color = color

    @classmethod
    def for_stdout(cls) -> Out:
        tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        return cls(color=tty and "NO_COLOR" not in os.environ)

    def _style(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color and text else text

    def bold(self, text: str) -> str:
        return self._style("1", text)

    def dim(self, text: str) -> str:
        return self._style("2", text)

    def good(self, text: str) -> str:
        return self._style("32", text)

    def line(self, text: str = "") -> None:
        print(text, flush=True)

    def section(self, number: int, title: str, note: str = "") -> None:
        self.line()
        self.line(f"{self.bold(f'{number}. {title}')}{'  ' + self.dim(note) if note else ''}")

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> None:
        """An aligned table: the first ``left`` columns left-aligned, the others right-aligned."""
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

        def fmt(cells: Sequence[str]) -> str:
            parts = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
            return "  " + "  ".join(parts).rstrip()

        self.line(self.dim(fmt(header)))
        for row in rows:
            self.line(fmt(row))

    @contextmanager
    def step(self, verb: str, subject: str) -> Iterator[Step]:
        """Times the block and prints one line when it ends: ``verb subject what ... 1.2 s``.

        The block sets ``step.what`` (the outcome) and may add ``step.extra`` lines below it."""
        current = Step()
        started = time.perf_counter()
        yield current
        seconds = time.perf_counter() - started
        self.line(f"  {verb:10} {subject:10} {current.what:58} {self.dim(f'{seconds:6.1f} s')}".rstrip())
        for extra in current.extra:
            self.line(f"  {'':10} {'':10} {self.dim(extra)}")


class Step:
    """The outcome of one timed step (see :meth:`Out.step`)."""

    def __init__(self) -> None:
        self.what = ""
        self.extra: list[str] = []


def n(value: int) -> str:
    return f"{value:,}"


def size(num_bytes: int) -> str:
    value = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
