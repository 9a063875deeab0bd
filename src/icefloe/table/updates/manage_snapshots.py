"""ManageSnapshots: branches, tags, rollback and cherry-pick (Java's ``ManageSnapshots`` /
``SnapshotManager``).

::

    (table.manage_snapshots()
        .create_tag("v1", snapshot_id)
        .create_branch("audit")
        .set_max_ref_age_ms("v1", 7 * 24 * 3600 * 1000)
        .commit())

Calls apply in order, each seeing the effect of the ones before (a branch created at "the
current snapshot" after a rollback starts at the rolled-back snapshot), and commit together.
Each call validates at once against the table as this operation sees it: argument errors
about refs (a missing or wrong-kind ref, a name taken, removing or renaming ``main``) raise
ValidationError naming the ref and the table; a snapshot id the table does not have raises
UnknownSnapshotError (a ValidationError, and the ValidationException Java raises); state
errors (a rollback to a snapshot that is not an ancestor of main, a fast-forward to a ref that
is not a descendant, an invalid cherry-pick) raise ValidationException, as Java.

Commits assert every ref they change (``assert-ref-snapshot-id``) and the table uuid. On a
conflict the operation is re-applied to the fresh metadata, re-running every validation;
but, as Java's ``UpdateSnapshotReferencesOperation`` (which commits against the metadata it
was created from), the branch and tag calls do not resolve conflicts: if a ref one of them
changes was moved, created or removed by someone else meanwhile, the commit fails with
CommitFailedException instead of overwriting that change. ``set_current_snapshot``,
``rollback_to``, ``rollback_to_time`` and ``cherrypick`` re-validate on the fresh main branch,
as Java's ``SetSnapshotOperation`` and ``CherryPickOperation`` do.

``apply()`` returns main's head snapshot after the changes (None for an empty table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from icefloe._util.times import format_epoch_ms
from icefloe.errors import (
    CommitFailedException,
    NoSuchSnapshotError,
    UnknownSnapshotError,
    ValidationError,
    ValidationException,
)
from icefloe.spec.snapshots import MAIN_BRANCH, Snapshot, SnapshotRef, SnapshotRefType
from icefloe.spec.table_metadata import TableMetadata
from icefloe.spec.updates import (
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotRef,
    SetSnapshotRef,
    TableRequirement,
    TableUpdate,
)
from icefloe.table.operation import Changes, PendingUpdate, TableOperations
from icefloe.table.snapshots.append import FastAppend
from icefloe.table.snapshots.cherrypick import CherryPick, is_current_ancestor
from icefloe.table.snapshots.snapshot_producer import SnapshotProducer

__all__ = ["ManageSnapshots"]

RefEdit = Callable[[dict[str, SnapshotRef], TableMetadata], None]


class _Step:
    """One call, re-playable on any base metadata."""

    #: The refs this step changes.
    modified: tuple[str, ...] = ()
    #: Whether the refs it changes must be where they were when the call was made (ref calls).
    pinned = False

    def run(self, metadata: TableMetadata) -> Changes:
        raise NotImplementedError


@dataclass
class _RefStep(_Step):
    """A branch or tag call: an edit of the refs dict, turned into ref updates."""

    edit: RefEdit
    table: str
    modified: tuple[str, ...]
    pinned = True

    def run(self, metadata: TableMetadata) -> Changes:
        refs = dict(metadata.refs)
        self.edit(refs, metadata)
        updates: list[TableUpdate] = [RemoveSnapshotRef(name) for name in metadata.refs if name not in refs]
        for name, ref in refs.items():
            if metadata.refs.get(name) != ref:
                if metadata.snapshot_by_id(ref.snapshot_id) is None:
                    raise _unknown_snapshot(
                        self.table, f"point {ref.type.value} '{name}' at", ref.snapshot_id
                    )
                updates.append(_set_ref(name, ref))
        return Changes(updates)


@dataclass
class _SetCurrentStep(_Step):
    snapshot_id: int
    rollback: bool
    table: str
    modified: tuple[str, ...] = (MAIN_BRANCH,)

    def run(self, metadata: TableMetadata) -> Changes:
        if metadata.snapshot_by_id(self.snapshot_id) is None:
            action = "roll back to" if self.rollback else "set the current snapshot to"
            raise _unknown_snapshot(self.table, action, self.snapshot_id)
        if self.rollback and not is_current_ancestor(metadata, self.snapshot_id):
            raise ValidationException(
                f"cannot roll back table {self.table} to snapshot {self.snapshot_id}: it is not an "
                f"ancestor of the current snapshot {metadata.current_snapshot_id} (set_current_snapshot "
                "moves to any snapshot)"
            )
        return Changes([_move_branch(metadata, MAIN_BRANCH, self.snapshot_id, self.table)])


@dataclass
class _ProducerStep(_Step):
    """A snapshot-producing step: the empty snapshot of a branch of an empty table."""

    producer: SnapshotProducer
    modified: tuple[str, ...]
    pinned = True

    def run(self, metadata: TableMetadata) -> Changes:
        return self.producer._produce(metadata)


@dataclass
class _CherryPickStep(_Step):
    producer: CherryPick
    modified: tuple[str, ...] = (MAIN_BRANCH,)

    def run(self, metadata: TableMetadata) -> Changes:
        picked = self.producer.picked
        fast_forward = self.producer.is_fast_forward(metadata)
        if self.producer.requires_fast_forward or fast_forward:
            if not fast_forward:
                raise ValidationException(
                    f"Cannot cherry-pick snapshot {picked.snapshot_id}: not append, dynamic overwrite, "
                    "or fast-forward"
                )
            return Changes(
                [_move_branch(metadata, MAIN_BRANCH, picked.snapshot_id, self.producer.table_name)]
            )
        return self.producer._produce(metadata)


class ManageSnapshots(PendingUpdate[Snapshot | None]):
    """``table.manage_snapshots()``; see the module docstring."""

    def __init__(self, transaction: TableOperations, *, autocommit: bool):
        super().__init__(transaction, autocommit=autocommit)
        self._table = transaction.table_name()
        self._steps: list[_Step] = []
        # The metadata the first call saw, and that metadata with every call applied.
        self._start: TableMetadata | None = None
        self._working: TableMetadata | None = None
        # ref name -> snapshot id (None: absent) in ``_start``, for refs that ref calls change.
        self._expected: dict[str, int | None] = {}

    # ---- refs ----------------------------------------------------------------------------------

    def create_branch(self, name: str, snapshot_id: int | None = None) -> ManageSnapshots:
        """Create branch ``name`` at ``snapshot_id`` (default: the current snapshot; in a table
        without snapshots, a new empty snapshot, as Java)."""
        _check_name(name)
        table = self._table
        working = self._current()
        if snapshot_id is None and working.current_snapshot_id is None:
            _check_free(working.refs, name, "create branch", table)
            producer = FastAppend(self._transaction, autocommit=False)
            producer.to_branch(name)
            return self._add(_ProducerStep(producer, (name,)))
        target = working.current_snapshot_id if snapshot_id is None else snapshot_id
        assert target is not None
        _check_snapshot(working, f"point branch '{name}' at", target, table)

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            _check_free(refs, name, "create branch", table)
            refs[name] = SnapshotRef(target, SnapshotRefType.BRANCH)

        return self._add(_RefStep(edit, table, (name,)))

    def create_tag(self, name: str, snapshot_id: int) -> ManageSnapshots:
        """Create tag ``name`` at ``snapshot_id``."""
        _check_name(name)
        table = self._table
        _check_snapshot(self._current(), f"point tag '{name}' at", snapshot_id, table)

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            _check_free(refs, name, "create tag", table)
            refs[name] = SnapshotRef(snapshot_id, SnapshotRefType.TAG)

        return self._add(_RefStep(edit, table, (name,)))

    def remove_branch(self, name: str) -> ManageSnapshots:
        """Remove branch ``name`` (never ``main``)."""
        _check_name(name)
        table = self._table
        if name == MAIN_BRANCH:
            raise ValidationError(f"cannot remove the main branch of table {table}")

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            _branch(refs, name, table)
            del refs[name]

        return self._add(_RefStep(edit, table, (name,)))

    def remove_tag(self, name: str) -> ManageSnapshots:
        """Remove tag ``name``."""
        _check_name(name)
        table = self._table

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            _tag(refs, name, table)
            del refs[name]

        return self._add(_RefStep(edit, table, (name,)))

    def rename_branch(self, name: str, new_name: str) -> ManageSnapshots:
        """Rename branch ``name`` to ``new_name`` (never ``main``), keeping its retention."""
        _check_name(name)
        _check_name(new_name)
        table = self._table
        if name == MAIN_BRANCH:
            raise ValidationError(f"cannot rename the main branch of table {table}")

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            ref = _branch(refs, name, table)
            _check_free(refs, new_name, f"rename branch '{name}' to", table)
            del refs[name]
            refs[new_name] = ref

        return self._add(_RefStep(edit, table, (name, new_name)))

    def replace_branch(self, name: str, snapshot_id_or_ref: int | str) -> ManageSnapshots:
        """Point branch ``name`` at a snapshot id, or at the snapshot another ref (branch or
        tag) points to now; its retention settings stay."""
        _check_name(name)
        table = self._table
        working = self._current()
        if isinstance(snapshot_id_or_ref, str):
            source = working.refs.get(snapshot_id_or_ref)
            if name not in working.refs:
                raise ValidationError(f"cannot replace branch '{name}': table {table} has no branch '{name}'")
            if source is None:
                raise NoSuchSnapshotError(
                    f"cannot point branch '{name}' at '{snapshot_id_or_ref}': table {table} has no branch "
                    f"or tag '{snapshot_id_or_ref}'"
                )
            target = source.snapshot_id
        else:
            target = snapshot_id_or_ref
            _check_snapshot(working, f"point branch '{name}' at", target, table)

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            ref = _branch(refs, name, table)
            refs[name] = _with_snapshot(ref, target)

        return self._add(_RefStep(edit, table, (name,)))

    def fast_forward_branch(self, name: str, to_branch: str) -> ManageSnapshots:
        """Move branch ``name`` to the head of ``to_branch``; ``name``'s head must be an
        ancestor of it (else ValidationException)."""
        _check_name(name)
        _check_name(to_branch)
        table = self._table
        working = self._current()
        if name not in working.refs:
            raise ValidationError(
                f"cannot fast-forward branch '{name}': table {table} has no branch '{name}'"
            )
        source = working.refs.get(to_branch)
        if source is None:
            raise NoSuchSnapshotError(
                f"cannot fast-forward branch '{name}' to '{to_branch}': table {table} has no branch or "
                f"tag '{to_branch}'"
            )
        target = source.snapshot_id

        def edit(refs: dict[str, SnapshotRef], metadata: TableMetadata) -> None:
            ref = _branch(refs, name, table)
            if ref.snapshot_id == target:
                return
            if not any(s.snapshot_id == ref.snapshot_id for s in metadata.ancestors_of(target)):
                raise ValidationException(
                    f"cannot fast-forward branch '{name}' of table {table} to '{to_branch}': its head "
                    f"(snapshot {ref.snapshot_id}) is not an ancestor of snapshot {target}"
                )
            refs[name] = _with_snapshot(ref, target)

        return self._add(_RefStep(edit, table, (name,)))

    def replace_tag(self, name: str, snapshot_id: int) -> ManageSnapshots:
        """Point tag ``name`` at ``snapshot_id``; its retention stays."""
        _check_name(name)
        table = self._table
        _check_snapshot(self._current(), f"point tag '{name}' at", snapshot_id, table)

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            refs[name] = _with_snapshot(_tag(refs, name, table), snapshot_id)

        return self._add(_RefStep(edit, table, (name,)))

    def set_min_snapshots_to_keep(self, branch: str, min_snapshots_to_keep: int) -> ManageSnapshots:
        """Keep at least this many snapshots of ``branch`` when expiring snapshots."""
        _check_name(branch)
        _check_positive("min-snapshots-to-keep", min_snapshots_to_keep)
        table = self._table

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            ref = _retention_branch(refs, branch, "min-snapshots-to-keep", table)
            refs[branch] = _replace(ref, min_snapshots_to_keep=min_snapshots_to_keep)

        return self._add(_RefStep(edit, table, (branch,)))

    def set_max_snapshot_age_ms(self, branch: str, max_snapshot_age_ms: int) -> ManageSnapshots:
        """Expire snapshots of ``branch`` older than this (beyond the minimum kept)."""
        _check_name(branch)
        _check_positive("max-snapshot-age-ms", max_snapshot_age_ms)
        table = self._table

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            ref = _retention_branch(refs, branch, "max-snapshot-age-ms", table)
            refs[branch] = _replace(ref, max_snapshot_age_ms=max_snapshot_age_ms)

        return self._add(_RefStep(edit, table, (branch,)))

    def set_max_ref_age_ms(self, ref: str, max_ref_age_ms: int) -> ManageSnapshots:
        """Remove the branch or tag ``ref`` when expiring snapshots once it is older than this
        (never ``main``)."""
        _check_name(ref)
        _check_positive("max-ref-age-ms", max_ref_age_ms)
        table = self._table

        def edit(refs: dict[str, SnapshotRef], _: TableMetadata) -> None:
            found = refs.get(ref)
            if found is None:
                raise ValidationError(
                    f"cannot set max-ref-age-ms: table {table} has no branch or tag '{ref}'"
                )
            refs[ref] = _replace(found, max_ref_age_ms=max_ref_age_ms)

        return self._add(_RefStep(edit, table, (ref,)))

    # ---- main's state ----------------------------------------------------------------------------

    def set_current_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Make ``snapshot_id`` main's head (any snapshot of the table)."""
        return self._add(_SetCurrentStep(_check_id(snapshot_id), rollback=False, table=self._table))

    def rollback_to(self, snapshot_id: int) -> ManageSnapshots:
        """Roll main back to ``snapshot_id``, which must be an ancestor of main's head."""
        return self._add(_SetCurrentStep(_check_id(snapshot_id), rollback=True, table=self._table))

    def rollback_to_time(self, timestamp_ms: int) -> ManageSnapshots:
        """Roll main back to its latest ancestor committed strictly before ``timestamp_ms``
        (epoch milliseconds).

        Raises:
            NoSuchSnapshotError: no ancestor of main's head is that old.
        """
        working = self._current()
        found: Snapshot | None = None
        for snapshot in working.ancestors_of(working.current_snapshot_id):
            if snapshot.timestamp_ms < timestamp_ms and (
                found is None or snapshot.timestamp_ms > found.timestamp_ms
            ):
                found = snapshot
        if found is None:
            raise NoSuchSnapshotError(
                f"cannot roll back table {self._table}: no snapshot in its history is older than "
                f"{format_epoch_ms(timestamp_ms)}"
            )
        return self._add(_SetCurrentStep(found.snapshot_id, rollback=True, table=self._table))

    def cherrypick(self, snapshot_id: int) -> ManageSnapshots:
        """Apply the changes of snapshot ``snapshot_id`` on top of main (see
        ``table/snapshots/cherrypick.py``): a new snapshot for an append or a dynamic partition
        overwrite, or a fast-forward when the snapshot's parent is main's head."""
        working = self._current()
        producer = CherryPick(self._transaction, working, _check_id(snapshot_id))
        return self._add(_CherryPickStep(producer))

    # ---- PendingUpdate ---------------------------------------------------------------------------

    def _current(self) -> TableMetadata:
        self._check_mutable()
        if self._working is None:
            self._start = self._working = self._base
        return self._working

    def _add(self, step: _Step) -> ManageSnapshots:
        working = self._current()
        assert self._start is not None
        # Validate now, against what the calls so far produce (raises without recording).
        changes = step.run(working)
        self._working = changes.apply_to(working)
        if step.pinned:
            for name in step.modified:
                if name not in self._expected:
                    ref = self._start.refs.get(name)
                    self._expected[name] = ref.snapshot_id if ref else None
        self._steps.append(step)
        return self

    def _produce(self, base: TableMetadata) -> Changes:
        for name, expected in self._expected.items():
            ref = base.refs.get(name)
            actual = ref.snapshot_id if ref else None
            if actual != expected:
                raise CommitFailedException(
                    f"ref '{name}' of table {self._table} changed concurrently (was at snapshot {expected}, now {actual}); "
                    "branch and tag changes are not re-applied over concurrent changes"
                )
        metadata = base
        updates: list[TableUpdate] = []
        written: list[str] = []
        modified: list[str] = []
        for step in self._steps:
            changes = step.run(metadata)
            metadata = changes.apply_to(metadata)
            updates.extend(changes.updates)
            written.extend(changes.written_files)
            modified.extend(n for n in step.modified if n not in modified)
        requirements: list[TableRequirement] = [AssertTableUUID(base.table_uuid)]
        for name in modified:
            ref = base.refs.get(name)
            requirements.append(AssertRefSnapshotId(name, ref.snapshot_id if ref else None))
        if not updates:
            return Changes()
        return Changes(updates, requirements, tuple(written))

    def _result(self, base: TableMetadata, changes: Changes) -> Snapshot | None:
        return changes.apply_to(base).current_snapshot()

    def _producers(self) -> Sequence[SnapshotProducer]:
        return [s.producer for s in self._steps if isinstance(s, (_ProducerStep, _CherryPickStep))]

    def _after_commit(self, committed: Changes) -> None:
        for producer in self._producers():
            producer._after_commit(committed)

    def _abort(self) -> None:
        for producer in self._producers():
            producer._abort()


# ---- helpers -------------------------------------------------------------------------------------


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"ref name must be a non-empty string, not {name!r}")


def _check_id(snapshot_id: int) -> int:
    if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
        raise ValidationError(f"snapshot id must be an int, not {snapshot_id!r}")
    return snapshot_id


def _check_positive(what: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValidationError(f"{what} must be a positive integer, not {value!r}")


def _unknown_snapshot(table: str, action: str, snapshot_id: int) -> UnknownSnapshotError:
    """``action`` is what could not be done, e.g. ``"roll back to"``, ``"point tag 'v1' at"``."""
    return UnknownSnapshotError(
        f"cannot {action} snapshot {snapshot_id}: table {table} has no snapshot with this id "
        "(unknown snapshot id)",
        snapshot_id=snapshot_id,
    )


def _check_snapshot(metadata: TableMetadata, action: str, snapshot_id: int, table: str) -> None:
    _check_id(snapshot_id)
    if metadata.snapshot_by_id(snapshot_id) is None:
        raise _unknown_snapshot(table, action, snapshot_id)


def _check_free(refs: Mapping[str, SnapshotRef], name: str, action: str, table: str) -> None:
    """``action`` is the call, e.g. ``"create tag"``, ``"rename branch 'a' to"``."""
    existing = refs.get(name)
    if existing is not None:
        raise ValidationError(
            f"cannot {action} '{name}': table {table} already has a {existing.type.value} named '{name}'"
        )


def _branch(refs: dict[str, SnapshotRef], name: str, table: str) -> SnapshotRef:
    ref = refs.get(name)
    if ref is None:
        raise ValidationError(f"table {table} has no branch '{name}'")
    if not ref.is_branch:
        raise ValidationError(f"'{name}' of table {table} is a tag, not a branch")
    return ref


def _tag(refs: dict[str, SnapshotRef], name: str, table: str) -> SnapshotRef:
    ref = refs.get(name)
    if ref is None:
        raise ValidationError(f"table {table} has no tag '{name}'")
    if not ref.is_tag:
        raise ValidationError(f"'{name}' of table {table} is a branch, not a tag")
    return ref


def _retention_branch(refs: dict[str, SnapshotRef], name: str, setting: str, table: str) -> SnapshotRef:
    ref = refs.get(name)
    if ref is None:
        raise ValidationError(f"cannot set {setting}: table {table} has no branch '{name}'")
    if not ref.is_branch:
        raise ValidationError(
            f"cannot set {setting} on '{name}' of table {table}: it is a tag (only branches have it)"
        )
    return ref


def _replace(
    ref: SnapshotRef,
    *,
    min_snapshots_to_keep: int | None = None,
    max_snapshot_age_ms: int | None = None,
    max_ref_age_ms: int | None = None,
) -> SnapshotRef:
    return SnapshotRef(
        ref.snapshot_id,
        ref.type,
        min_snapshots_to_keep if min_snapshots_to_keep is not None else ref.min_snapshots_to_keep,
        max_snapshot_age_ms if max_snapshot_age_ms is not None else ref.max_snapshot_age_ms,
        max_ref_age_ms if max_ref_age_ms is not None else ref.max_ref_age_ms,
    )


def _with_snapshot(ref: SnapshotRef, snapshot_id: int) -> SnapshotRef:
    return SnapshotRef(
        snapshot_id, ref.type, ref.min_snapshots_to_keep, ref.max_snapshot_age_ms, ref.max_ref_age_ms
    )


def _set_ref(name: str, ref: SnapshotRef) -> SetSnapshotRef:
    return SetSnapshotRef(
        name,
        ref.snapshot_id,
        ref.type,
        ref.min_snapshots_to_keep,
        ref.max_snapshot_age_ms,
        ref.max_ref_age_ms,
    )


def _move_branch(metadata: TableMetadata, name: str, snapshot_id: int, table: str) -> SetSnapshotRef:
    """Point branch ``name`` at ``snapshot_id``, keeping its retention (Java's setBranchSnapshot)."""
    ref = metadata.refs.get(name)
    if ref is not None and not ref.is_branch:
        raise ValidationException(f"'{name}' of table {table} is a tag, not a branch")
    return _set_ref(name, _with_snapshot(ref, snapshot_id) if ref else SnapshotRef(snapshot_id))
