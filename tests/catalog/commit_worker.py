"""A separate process committing to one table: ``python commit_worker.py '<json>'``.

Arguments (JSON): ``name`` and ``catalog`` (for ``load_catalog_backend``), ``table``, ``worker``
(a name), ``commits``, ``go`` (a file to wait for, so that workers start together). Each
commit sets the property ``<worker>-<i>``, retrying on ``CommitFailedException`` on fresh
metadata. Prints ``{"retries": n}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from icefloe.backends import load_catalog_backend
from icefloe.errors import CommitFailedException
from icefloe.spec.updates import AssertTableUUID, SetProperties


def main(argv: list[str]) -> int:
    args = json.loads(argv[1])
    backend = load_catalog_backend(args["name"], **args["catalog"])
    deadline = time.monotonic() + 60
    while not os.path.exists(args["go"]):
        if time.monotonic() > deadline:
            raise TimeoutError("never told to start")
        time.sleep(0.005)
    retries = 0
    for i in range(args["commits"]):
        while True:
            loaded = backend.load_table(args["table"])
            try:
                backend.commit_table(
                    args["table"],
                    loaded,
                    [AssertTableUUID(loaded.metadata.table_uuid)],
                    [SetProperties({f"{args['worker']}-{i}": str(i)})],
                )
                break
            except CommitFailedException:
                retries += 1
    backend.close()
    print(json.dumps({"retries": retries}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
