"""The row-level conveniences shared by ``Table`` (which commits) and ``Transaction`` (which
stages): ``delete``, ``update``, ``overwrite``, ``replace_partitions`` and ``upsert``. The work is in
``table/rows/row_changes.py``; this mixin only gives both classes the same methods, and imports
that work (pyarrow) when a method is first called."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icefloe.spec.snapshots import Snapshot

if TYPE_CHECKING:
    from icefloe.expressions import Expression
    from icefloe.table.rows.row_changes import RowChangeTarget
    from icefloe.table.rows.update_rows import SetValue
    from icefloe.table.rows.upsert_rows import UpsertResult

__all__ = ["RowConveniences"]


class RowConveniences:
    """Mixed into Table and Transaction (both are a ``RowChangeTarget``)."""

    def delete(
        self: RowChangeTarget,
        where: Expression | str,
        *,
        case_sensitive: bool = True,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Delete the rows matching ``where``: merge-on-read (position deletes in v2, deletion
        vectors in v3) when ``write.delete.mode=merge-on-read``, else copy-on-write; isolation
        per ``write.delete.isolation-level``. ``branch``: change that branch instead of main.

        Commits what Java's ``DELETE FROM t WHERE <where>`` commits, also when no row matches:
        a ``delete`` snapshot when the metadata decides (every file the filter may match
        matches in every row, or no file may: Java's ``newDelete().deleteFromRowFilter``),
        else an ``overwrite`` without files. Returns the snapshot; None only when ``where``
        is always false (nothing is committed, as in Java)."""
        from icefloe.table.rows.row_changes import delete_rows  # lazy: pyarrow

        return delete_rows(
            self, where, case_sensitive=case_sensitive, snapshot_properties=snapshot_properties, branch=branch
        )

    def update(
        self: RowChangeTarget,
        set: Mapping[str, SetValue] | None = None,
        where: Expression | str | None = None,
        *,
        new_values: Mapping[str, Any] | None = None,
        case_sensitive: bool = True,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Set columns of the rows matching ``where`` (every row when None), per
        ``write.update.mode``. ``set`` maps column names to Spark SQL expressions of the row, as
        ``isp.update`` takes them (``{"amount": "amount * 2", "country": "'ZZ'"}``; also
        ``pyarrow.compute`` expressions, functions of the matched rows, or constants);
        ``new_values`` maps column names to literal values (``{"country": "ZZ"}``). Returns the
        snapshot, committed also when no row matched (an ``overwrite`` without files, as Java's
        UPDATE commits). See ``table/rows/update_rows.py``."""
        from icefloe.table.rows.update_rows import update_rows  # lazy: pyarrow

        return update_rows(
            self,
            set,
            where,
            new_values=new_values,
            case_sensitive=case_sensitive,
            snapshot_properties=snapshot_properties,
            branch=branch,
        )

    def overwrite(
        self: RowChangeTarget,
        data: Any,
        where: Expression | str | None = None,
        *,
        case_sensitive: bool = True,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Replace the rows matching ``where`` (all rows when None) by ``data``, in one
        ``overwrite`` snapshot (on ``branch``, default main)."""
        from icefloe.table.rows.row_changes import overwrite_rows  # lazy: pyarrow

        return overwrite_rows(
            self,
            data,
            where,
            case_sensitive=case_sensitive,
            snapshot_properties=snapshot_properties,
            branch=branch,
        )

    def replace_partitions(
        self: RowChangeTarget,
        data: Any,
        *,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Write ``data`` and replace every partition it touches (dynamic overwrite)."""
        from icefloe.table.rows.row_changes import replace_partitions_with  # lazy: pyarrow

        return replace_partitions_with(self, data, snapshot_properties=snapshot_properties, branch=branch)

    def upsert(
        self: RowChangeTarget,
        data: Any,
        on: Sequence[str],
        *,
        case_sensitive: bool = True,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> UpsertResult:
        """Update the rows whose ``on`` key matches a row of ``data`` and insert the others,
        in one snapshot per ``write.merge.mode`` (on ``branch``, default main), committed
        also when nothing changes (empty ``data``), as Java's MERGE commits one."""
        from icefloe.table.rows.upsert_rows import upsert_rows  # lazy: pyarrow

        return upsert_rows(
            self,
            data,
            on,
            case_sensitive=case_sensitive,
            snapshot_properties=snapshot_properties,
            branch=branch,
        )
