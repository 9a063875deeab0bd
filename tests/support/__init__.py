"""Helpers the test packages share (test modules cannot import a conftest): ``catalogs``
(real catalogs in a temporary warehouse, the tables and rows most tests use) and ``spark``
(Spark rows compared as sorted tuples). Shared fixtures live in ``tests/conftest.py``."""
