"""The routes of the REST catalog protocol, as the spec names them in ``/v1/config``'s
``endpoints``: ``"<VERB> /v1/{prefix}/<path template>"`` (``{prefix}`` kept literally, even when
a server has no prefix). The client checks an operation's endpoint before sending it; the
server routes by them and advertises those it serves.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_ENDPOINTS",
    "VIEW_ENDPOINTS",
    "Endpoint",
]


class Endpoint:
    """Endpoint strings, one constant per operation of the spec."""

    CONFIG = "GET /v1/config"
    TOKENS = "POST /v1/oauth/tokens"
    LIST_NAMESPACES = "GET /v1/{prefix}/namespaces"
    CREATE_NAMESPACE = "POST /v1/{prefix}/namespaces"
    LOAD_NAMESPACE = "GET /v1/{prefix}/namespaces/{namespace}"
    NAMESPACE_EXISTS = "HEAD /v1/{prefix}/namespaces/{namespace}"
    DROP_NAMESPACE = "DELETE /v1/{prefix}/namespaces/{namespace}"
    UPDATE_NAMESPACE = "POST /v1/{prefix}/namespaces/{namespace}/properties"
    LIST_TABLES = "GET /v1/{prefix}/namespaces/{namespace}/tables"
    CREATE_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/tables"
    LOAD_TABLE = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"
    TABLE_EXISTS = "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}"
    UPDATE_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"
    DROP_TABLE = "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}"
    REGISTER_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/register"
    LOAD_CREDENTIALS = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"
    REPORT_METRICS = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"
    PLAN_TABLE_SCAN = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
    FETCH_PLANNING_RESULT = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
    CANCEL_PLANNING = "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
    FETCH_SCAN_TASKS = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"
    RENAME_TABLE = "POST /v1/{prefix}/tables/rename"
    COMMIT_TRANSACTION = "POST /v1/{prefix}/transactions/commit"
    LIST_VIEWS = "GET /v1/{prefix}/namespaces/{namespace}/views"
    CREATE_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/views"
    LOAD_VIEW = "GET /v1/{prefix}/namespaces/{namespace}/views/{view}"
    VIEW_EXISTS = "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}"
    REPLACE_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/views/{view}"
    DROP_VIEW = "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}"
    RENAME_VIEW = "POST /v1/{prefix}/views/rename"
    REGISTER_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/register-view"


#: What a client assumes when the server lists no endpoints (Java's ``DEFAULT_ENDPOINTS``).
DEFAULT_ENDPOINTS = frozenset(
    {
        Endpoint.LIST_NAMESPACES,
        Endpoint.LOAD_NAMESPACE,
        Endpoint.CREATE_NAMESPACE,
        Endpoint.UPDATE_NAMESPACE,
        Endpoint.DROP_NAMESPACE,
        Endpoint.LIST_TABLES,
        Endpoint.LOAD_TABLE,
        Endpoint.CREATE_TABLE,
        Endpoint.UPDATE_TABLE,
        Endpoint.DROP_TABLE,
        Endpoint.RENAME_TABLE,
        Endpoint.REGISTER_TABLE,
        Endpoint.REPORT_METRICS,
        Endpoint.COMMIT_TRANSACTION,
    }
)

#: Added to the default set when the server says ``view-endpoints-supported=true``.
VIEW_ENDPOINTS = frozenset(
    {
        Endpoint.LIST_VIEWS,
        Endpoint.LOAD_VIEW,
        Endpoint.CREATE_VIEW,
        Endpoint.REPLACE_VIEW,
        Endpoint.DROP_VIEW,
        Endpoint.RENAME_VIEW,
    }
)
