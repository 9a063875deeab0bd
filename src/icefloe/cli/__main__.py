"""``python -m icefloe.cli``: the ``icefloe`` command."""

from icefloe.cli import main

main()
