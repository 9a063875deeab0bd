"""The Iceberg REST catalog server (``pip install 'icefloe[rest-server]'``).

``icefloe.rest.app(catalog, auth=None)`` is an ASGI application (Starlette) serving any icefloe
catalog over the REST protocol; ``python -m icefloe.rest`` runs one with uvicorn. The client side
is a catalog backend: ``icefloe.load_catalog(name, type="rest", uri=...)``.

- ``app.py``: the application, routing, auth, idempotency, error answers;
- ``routing.py``: raw paths to routes; ``errors.py``: exceptions to the spec's error model;
- ``namespaces.py``, ``tables.py``, ``views.py``, ``planning.py``: the handlers; ``service.py``:
  what they share;
- ``auth.py``: principals and tokens; ``idempotency.py``: replayed answers;
- ``serve.py``: the command line (uvicorn, several workers).
"""

from icefloe.rest.app import RestServer, app

__all__ = ["RestServer", "app"]
