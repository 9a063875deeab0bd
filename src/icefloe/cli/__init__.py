"""The ``icefloe`` command line (Typer and Rich): ``icefloe [--catalog NAME] [--output text|json]
COMMAND ...``.

- ``app.py``: the application, global options and command groups;
- ``look.py``: list, describe, schema, spec, history, snapshots, refs, files, partitions,
  manifests, location, uuid, properties get;
- ``change.py``: create namespace, drop table|namespace, rename, properties set|remove,
  rollback, branch create|drop, tag create|drop;
- ``maintain.py``: expire-snapshots, remove-orphan-files, rewrite-manifests, compact,
  rewrite-position-deletes (``icefloe.actions``);
- ``output.py``: Rich tables on a terminal, TSV when piped, JSON; progress bars, confirmation;
- ``session.py``: the catalog, tables with close-match suggestions, errors and exit codes.
"""

from icefloe.cli.app import app, build

__all__ = ["app", "build", "main"]


def main() -> None:
    """The console script's entry point."""
    app()
