"""The PyIceberg side of ``bench/upsert.py``; runs in the PyIceberg engine environment.

It imports only pyarrow and pyiceberg (never icefloe), so that icefloe's own venv needs no
pyiceberg. It registers the starting table that ``upsert.py`` built (its metadata file) in a
fresh SQL catalog on SQLite, reads the change set from a Parquet file (not timed), then times
``table.upsert(source, join_cols=["id"])`` (PyIceberg 0.12's upsert: copy-on-write). After the
clock stops it reads back ``id`` and ``amount`` and prints one JSON object on stdout::

    {"engine": "pyiceberg", "version": "0.12.0", "upsert_s": 41.2, "rows_updated": 50000,
     "rows_inserted": 50000, "rows_after": 1050000, "id_sum": ..., "amount_sum": ...,
     "peak_rss_mb": 812.0}

``upsert.py`` runs it with a timeout (PyIceberg takes minutes for large change sets).

Usage (normally called by upsert.py)::

    ~/.cache/icefloe/engines/py/bin/python bench/_pyiceberg_upsert.py \
        --metadata /tmp/wh/bench/t/metadata/00010-....metadata.json --source source.parquet \
        --catalog-dir /tmp/pyi
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyiceberg
from pyiceberg.catalog.sql import SqlCatalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rss import peak_rss_mb


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", required=True, help="the starting table's metadata file")
    parser.add_argument("--source", required=True, help="the change set, a Parquet file")
    parser.add_argument("--catalog-dir", required=True, help="a fresh directory for the catalog")
    args = parser.parse_args(argv)

    directory = Path(args.catalog_dir).absolute()
    directory.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{directory / 'catalog.db'}", warehouse=directory.as_uri())
    catalog.create_namespace("bench")
    table = catalog.register_table(("bench", "upsert"), args.metadata)
    source = pq.read_table(args.source)

    gc.collect()
    t0 = time.perf_counter()
    result = table.upsert(source, join_cols=["id"])
    upsert_s = time.perf_counter() - t0
    peak = peak_rss_mb()

    after = catalog.load_table(("bench", "upsert")).scan(selected_fields=("id", "amount")).to_arrow()
    print(
        json.dumps(
            {
                "engine": "pyiceberg",
                "version": pyiceberg.__version__,
                "upsert_s": upsert_s,
                "rows_updated": result.rows_updated,
                "rows_inserted": result.rows_inserted,
                "rows_after": after.num_rows,
                "id_sum": pc.sum(after.column("id")).as_py(),
                "amount_sum": pc.sum(after.column("amount")).as_py(),
                "peak_rss_mb": peak,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
