"""Catalogs as users see them: ``Catalog`` hands out ``Table``s; ``load_catalog`` builds one.

A ``Catalog`` turns user input (pyarrow or icefloe schemas, ``partition_by`` / ``sort_by``
strings, identifier strings) into the spec model and keeps metadata pointers in a *backend*
(``icefloe.backends``: SQL, Hadoop, in-memory), which knows nothing about tables.

- ``catalog.py``: :class:`Catalog`;
- ``config.py``: :func:`load_catalog` (arguments, ``ICEFLOE_CATALOG__*`` variables,
  ``~/.icefloe.yaml``);
- ``transactions.py``: create / replace / create-or-replace table transactions;
- ``resolve.py``: :func:`resolve_table` (a ``Table`` or an identifier string).
"""

from icefloe.catalog.catalog import Catalog
from icefloe.catalog.config import DEFAULT_CATALOG_NAME, catalog_config, load_catalog
from icefloe.catalog.resolve import resolve_table

__all__ = ["DEFAULT_CATALOG_NAME", "Catalog", "catalog_config", "load_catalog", "resolve_table"]
