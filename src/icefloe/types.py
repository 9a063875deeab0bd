"""Iceberg types (``icefloe.types.LongType()``, ``DecimalType(10, 2)``, ``parse_type("list<string>")``).

A re-export of ``icefloe.spec.types`` under the short name users type.
"""

from icefloe.spec.types import *  # noqa: F403
from icefloe.spec.types import __all__  # noqa: F401
