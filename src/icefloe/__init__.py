"""Apache Iceberg tables in Python."""
