"""The parts of ``python -m icefloe.demo`` (see :mod:`icefloe.demo`); private, no stable API."""
