"""Reading icefloe tables in Spark: icefloe plans on the driver, Spark's Parquet reader reads.

- ``frames.py``: :func:`read` and ``read_tasks`` (planned tasks as a DataFrame: Spark's Parquet
  reader by field id, per-file constants, promotions, the residual filter, deletes);
- ``filters.py``: bound icefloe expressions as Spark columns (Iceberg's NaN and null rules);
- ``deletes.py``: position deletes, deletion vectors and equality deletes as anti-joins;
- ``name_mapped.py``: files without field ids (``add_files`` imports), read by name;
- ``in_tasks.py``: icefloe's Arrow reader in Spark tasks (object stores without a Hadoop
  connector, encrypted tables); ``choice.py`` and ``hadoop_probe.py``: which reader reads.
"""
