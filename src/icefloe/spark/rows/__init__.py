"""Row-level changes from Spark: ``delete``, ``update`` (``changes.py``), ``merge_into``
(``merge.py``), and the Spark SQL conditions they take (``conditions.py``)."""
