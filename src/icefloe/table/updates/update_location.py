"""UpdateLocation: set the table's base location (Java's ``SetLocation``).

The location is where new data and metadata files go (unless ``write.data.path`` /
``write.metadata.path`` say otherwise); existing files stay where they are and keep being
read from their absolute paths. The commit carries no requirement: as Java, a conflict is
resolved by setting the same location on the fresh metadata.
"""

from __future__ import annotations

from icefloe.errors import ValidationError
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import SetLocation
from icefloe.table.operation import Changes, PendingUpdate, TableOperations

__all__ = ["UpdateLocation"]


class UpdateLocation(PendingUpdate[str]):
    """``table.update_location().set_location("s3://bucket/new/path").commit()``.

    ``apply()`` returns the location the table would have (its current one when
    ``set_location`` was not called).
    """

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._location: str | None = None

    def set_location(self, location: str) -> UpdateLocation:
        """Set the new base location (a trailing ``/`` is dropped, as the metadata stores it).

        Raises:
            ValidationError: ``location`` is not a non-empty string.
        """
        self._check_mutable()
        if not isinstance(location, str) or not location.strip():
            raise ValidationError(f"table location must be a non-empty string, not {location!r}")
        self._location = location
        return self

    def _produce(self, base: TableMetadata) -> Changes:
        if self._location is None:
            return Changes()
        return Changes([SetLocation(self._location)])

    def _result(self, base: TableMetadata, changes: Changes) -> str:
        return changes.apply_to(base).location
