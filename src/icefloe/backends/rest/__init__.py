"""The Iceberg REST catalog client (``type="rest"``; ``pip install 'icefloe[rest]'``).

- ``catalog.py``: :class:`RestCatalogBackend`, every catalog operation over HTTP;
- ``_http.py``: the connection pool, retries, errors; ``auth.py``: tokens;
- ``endpoints.py``: the protocol's routes (shared with the server, ``icefloe.rest``).
"""

from icefloe.backends.rest.catalog import RestCatalogBackend
from icefloe.backends.rest.endpoints import DEFAULT_ENDPOINTS, VIEW_ENDPOINTS, Endpoint

__all__ = ["DEFAULT_ENDPOINTS", "VIEW_ENDPOINTS", "Endpoint", "RestCatalogBackend"]
