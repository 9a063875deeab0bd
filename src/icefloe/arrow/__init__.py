"""Everything Arrow (layer L3): Iceberg schemas as Arrow schemas, reading Parquet files projected
by field id, conforming data before writes, partitioning Arrow rows, Arrow row filters.

Modules:
    schema: ``schema_to_arrow``, ``arrow_to_schema``, ``arrow_to_schema_fresh``,
        ``to_requested_schema``, ``apply_name_mapping``.
    reader: ``read_parquet`` (one data file, streamed, projected, deletes applied) and
        ``read_position_deletes``.
    partition: ``partition_keys`` (rows grouped by partition tuple).
    convert: values between Arrow and icefloe's representation.
    row_filter: icefloe expressions as Arrow filters.

The package imports nothing eagerly: import the module you need.
"""
