"""The ``icefloe`` format for ``spark.read`` / ``df.write`` / streaming, on PySpark's Python
data source API (``source.py``: ``register``; ``reader.py``, ``writer.py``, ``streaming.py``;
``common.py``: what they share)."""
