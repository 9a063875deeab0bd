"""Which property keys hold secrets, and how to show properties without them.

Catalog and FileIO properties carry credentials under Java's and PyIceberg's names
(``s3.secret-access-key``, ``s3.session-token``, ``gcs.oauth2.token``,
``adls.sas-token.<account>``, ``adls.connection-string.<account>``, ``adls.account-key``,
``adls.auth.shared-key.account.key``, ``credential``, ``token``, ``jdbc.password``,
``header.Authorization``, ...). Every repr, log line, error message and listing that shows
properties shows them through ``redact``; values nobody could guess from a key's name (an
error text from a library) go through ``redact_text``.

The rule is by the words of a key (split at ``.``, ``-``, ``_``), so a new store's secret under
the usual names is covered without a list to keep up: a key is secret when a word is one of
``SECRET_WORDS`` or its last word is ``key``; never when its last word says it is a time, an
address, a switch or an id (``s3.session-token-expires-at-ms``, ``s3.access-key-id``,
``oauth2-server-uri``, ``client.refresh-credentials-endpoint``, ``encryption.key-id``).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping

__all__ = ["MASK", "hide_in_library_logs", "is_secret", "redact", "redact_text", "secret_values"]

#: What a secret value is shown as.
MASK = "****"

SECRET_WORDS = frozenset(
    {
        "secret",
        "password",
        "passwd",
        "token",
        "credential",
        "credentials",
        "sas",
        "connection",  # adls.connection-string.<account>
        "authorization",  # header.Authorization
        "signature",
    }
)
# A last word like these names something about a secret, not the secret itself.
_NOT_A_VALUE = frozenset({"ms", "at", "uri", "url", "endpoint", "enabled", "id", "type", "name", "path"})
_WORDS = re.compile(r"[.\-_]")


def is_secret(key: str) -> bool:
    """Whether the property ``key`` holds a secret (see the module documentation)."""
    words = [w for w in _WORDS.split(key.lower()) if w]
    if not words or words[-1] in _NOT_A_VALUE or "expires" in words:  # adls.sas-token-expires-at-ms.<account>
        return False
    return words[-1] == "key" or any(w in SECRET_WORDS for w in words)


def redact(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with every secret value (see ``is_secret``) replaced by ``MASK``."""
    return {k: (MASK if v and is_secret(k) else v) for k, v in properties.items()}


def secret_values(properties: Mapping[str, str]) -> list[str]:
    """The secret values of ``properties`` long enough to be recognised in a text."""
    return [v for k, v in properties.items() if v and len(v) >= 4 and is_secret(k)]


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (longest first, so a secret containing another is
    masked whole) replaced by ``MASK``; for messages built from text icefloe did not write."""
    for value in sorted(set(secrets), key=len, reverse=True):
        if value:
            text = text.replace(value, MASK)
    return text


# ---- secrets in other libraries' log lines ------------------------------------------------------

_logged_secrets: set[str] = set()
_lock = threading.Lock()


class _MaskLoggedSecrets(logging.Filter):
    """Masks the secrets icefloe handed a library in the records that library logs (botocore
    logs its signed requests at DEBUG: the session token and signatures in clear)."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _logged_secrets
        if not secrets:
            return True
        text = record.getMessage()
        if any(value in text for value in secrets):
            record.msg, record.args = redact_text(text, secrets), None
        return True


_MASK_FILTER = _MaskLoggedSecrets()


def hide_in_library_logs(logger_prefix: str, secrets: Iterable[str]) -> None:
    """Mask ``secrets`` in every record of the loggers named ``logger_prefix`` and below.

    A logger's filters see only the records logged on that logger (not its children's), so the
    filter goes on each logger that exists now: call this after the library's modules are
    imported (after creating its client). The filter costs nothing unless a record is logged,
    which a library does at DEBUG only when the user enabled it.
    """
    values = [v for v in secrets if v and len(v) >= 4]
    if not values:
        return
    with _lock:
        _logged_secrets.update(values)
        names = [
            n
            for n in list(logging.root.manager.loggerDict)
            if n == logger_prefix or n.startswith(logger_prefix + ".")
        ]
        for name in names:
            logger = logging.getLogger(name)
            if _MASK_FILTER not in logger.filters:
                logger.addFilter(_MASK_FILTER)
