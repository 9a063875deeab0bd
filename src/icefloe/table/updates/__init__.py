"""Operations that change table metadata without a new snapshot: ``update_schema``
(``_schema_*.py`` hold its rules), ``update_spec`` (``_spec_changes.py``), ``replace_sort_order``,
``update_properties``, ``update_location``, ``update_statistics`` /
``update_partition_statistics``, and ``manage_snapshots`` (branches, tags, rollback, cherry-pick)."""
