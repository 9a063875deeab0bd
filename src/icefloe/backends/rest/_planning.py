"""The client side of server-side scan planning: ``POST .../plan``, polling a ``submitted``
plan, then fetching every plan task, gathered into one completed plan."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from icefloe.backends.rest._http import HttpSession
from icefloe.errors import RESTError

__all__ = ["plan_on_server"]

#: How long a submitted plan may take before the client gives up (seconds).
MAX_WAIT_SECONDS = 600


def plan_on_server(
    http: HttpSession, table_url: str, request: Mapping[str, Any], what: str
) -> dict[str, Any]:
    """One completed plan: the ``file-scan-tasks`` and ``delete-files`` of every batch (each
    batch's delete references renumbered into the merged list).

    Raises:
        RESTError: planning failed, was cancelled, or did not finish in time.
    """
    body = http.call("POST", f"{table_url}/plan", kind="table", what=what, json_body=dict(request))
    waited = 0.0
    while body.get("status") == "submitted":
        if waited > MAX_WAIT_SECONDS:
            raise RESTError(f"{what}: the plan was not ready after {waited:.0f} s", status=0)
        delay = min(2.0, 0.05 * 2 ** min(int(waited), 6))
        time.sleep(delay)
        waited += delay
        plan_id = quote(str(body.get("plan-id")), safe="")
        body = http.call("GET", f"{table_url}/plan/{plan_id}", kind="table", what=what)
    if body.get("status") != "completed":
        error = body.get("error")
        message = error.get("message", "") if isinstance(error, dict) else ""
        raise RESTError(f"{what}: the plan {body.get('status')}: {message}", status=0)
    merged: dict[str, Any] = {"file-scan-tasks": [], "delete-files": []}
    pending = [body]
    while pending:
        batch = pending.pop()
        offset = len(merged["delete-files"])
        merged["delete-files"].extend(batch.get("delete-files") or [])
        for task in batch.get("file-scan-tasks") or []:
            references = task.get("delete-file-references")
            if references:
                task = {**task, "delete-file-references": [offset + i for i in references]}
            merged["file-scan-tasks"].append(task)
        for token in batch.get("plan-tasks") or []:
            pending.append(
                http.call(
                    "POST", f"{table_url}/tasks", kind="table", what=what, json_body={"plan-task": token}
                )
            )
    return merged
