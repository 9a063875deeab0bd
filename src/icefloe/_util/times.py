"""Points in time as people read them in messages.

Iceberg stores times as epoch milliseconds; an error that prints ``1710072000123`` makes the
reader convert it. Messages show UTC ISO timestamps instead (``2024-03-10T12:00:00.123Z``).
"""

from __future__ import annotations

import datetime as dt

__all__ = ["format_epoch_ms"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def format_epoch_ms(timestamp_ms: int) -> str:
    """``timestamp_ms`` (epoch milliseconds) as an ISO 8601 UTC timestamp ending in ``Z``.

    A value outside the range of ``datetime`` is shown as the number it is, labelled.
    """
    try:
        moment = _EPOCH + dt.timedelta(milliseconds=timestamp_ms)
    except OverflowError:
        return f"{timestamp_ms} ms after the epoch"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
