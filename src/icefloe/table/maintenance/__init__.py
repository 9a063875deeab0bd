"""Keeping a table small: ``expire_snapshots`` (and deleting what only expired snapshots
reached), ``rewrite_manifests``, and ``reachable_files.py`` (every file a table's metadata
reaches, for expiry, purge and orphan removal)."""
