"""The reference-engine fixtures (``java_engine``, ``pyiceberg_engine``, ``duckdb_engine``) live
in ``tests/conftest.py``, shared with the tests outside this folder that need an engine."""
