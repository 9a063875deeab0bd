"""Single values of Iceberg types: binary, JSON, human-readable and Python-native forms.

Values use icefloe's internal representation (see :mod:`icefloe.spec.types`). Nested values,
which only the JSON and Python forms support, are: list -> ``list``, map -> ``dict``, struct ->
``dict`` keyed by field name (a positional sequence is accepted as input too).

- :func:`to_bytes` / :func:`from_bytes`: spec Appendix D binary form (manifest bounds).
- :func:`to_json` / :func:`from_json`: spec "JSON single-value serialization" (defaults, REST),
  producing and taking already-parsed JSON objects, written the way Java's SingleValueParser
  writes them.
- :func:`to_human_string`: Java's ``Transform.toHumanString`` (partition paths).
- :func:`to_python` / :func:`from_python`: datetime / Decimal / UUID values for users.
- :func:`sortable_bytes` / :func:`sortable_tuple`: bytes that sort as the values do.
"""

from icefloe.spec.conversions._common import (
    MICROS_PER_DAY,
    NANOS_PER_DAY,
    civil_from_days,
    days_from_civil,
    decimal_from_unscaled,
    unscaled_decimal,
)
from icefloe.spec.conversions.binary import from_bytes, to_bytes
from icefloe.spec.conversions.json import from_json, to_json
from icefloe.spec.conversions.python import from_python, to_python
from icefloe.spec.conversions.sortable import sortable_bytes, sortable_tuple
from icefloe.spec.conversions.strings import to_human_string

__all__ = [
    "MICROS_PER_DAY",
    "NANOS_PER_DAY",
    "civil_from_days",
    "days_from_civil",
    "decimal_from_unscaled",
    "from_bytes",
    "from_json",
    "from_python",
    "sortable_bytes",
    "sortable_tuple",
    "to_bytes",
    "to_human_string",
    "to_json",
    "to_python",
    "unscaled_decimal",
]
