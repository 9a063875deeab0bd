"""Writing icefloe tables from Spark: Spark tasks write data files, the driver commits.

- ``frames.py``: :func:`write`, ``write_data_frame`` (either writer, after the distribution),
  ``commit_files`` and overwrite scopes;
- ``spark_writer.py``: Spark's own Parquet writer for the tables it can write as Iceberg files;
- ``spark_exprs.py``: partition transforms and sort orders as Spark expressions;
- ``distribution.py``: ``write.distribution-mode`` (how rows are clustered over tasks);
- ``conform.py``: DataFrame columns conformed to the table's types.
"""
