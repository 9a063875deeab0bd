"""Data in: ``append_data.py`` (``table.append``), ``add_files.py`` (existing Parquet files;
``parquet_import.py`` describes them), and the row-level conveniences ``delete``, ``overwrite``,
``replace_partitions`` and ``upsert`` (``row_changes.py``; ``conveniences.py`` gives ``Table`` and
``Transaction`` the same methods)."""
