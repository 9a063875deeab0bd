"""Operations that commit a snapshot, and their shared machinery.

``snapshot_producer.py`` builds every snapshot (manifests, manifest list, summary, refs);
``merging_producer.py`` is the base of the operations that also remove files (``overwrite``,
``delete_files``, ``replace_partitions``, ``rewrite_files``, ``row_delta``); ``append.py`` holds
the merge and fast appends; ``cherrypick.py`` the cherry-pick ``manage_snapshots`` uses.
``manifest_filter.py`` and ``manifest_merge.py`` are Java's manifest filter and merge managers,
``conflicts.py`` the isolation-level validations, ``summary.py`` Java's snapshot summary."""
