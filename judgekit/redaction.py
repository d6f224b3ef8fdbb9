"""Keeping secrets out of everything judgekit stores, exports, logs or prints.

Two kinds of secret reach judgekit: the API key (``--api-key-env`` / ``--api-key``)
and credentials written into an endpoint URL, which some gateways require:

- user info: ``https://user:KEY@host/v1``;
- a query parameter named like a credential: ``?api-key=KEY`` (``&`` or ``;``
  separated);
- a path parameter: ``/v1;k=KEY`` (every path-parameter value is masked);
- a path segment that is a key: ``/KEY/v1`` (a segment with a known key prefix
  such as ``sk-``, or a long token mixing upper case, lower case and digits, or
  32+ hex digits).

:func:`public_url` is the URL as stored, keyed and shown: user info and secret
query parameters dropped, path secrets replaced by ``***``. :func:`url_secrets`
lists the secret values themselves, so that :func:`redact` can remove them (and
their URL-encoded forms) from any text: an endpoint that echoes the key back in
its answer, its model name or an error message is stored with ``***`` instead.

Imports nothing from judgekit: the store (last line of defence) and the
clients (first line) share it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

#: What a removed secret is replaced with.
MASK = "***"
#: A query parameter whose name contains one of these holds a credential.
SECRET_NAME_WORDS = ("key", "token", "secret", "sig", "password", "auth")
#: Prefixes of API keys issued by common providers.
KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "gsk_", "xai-", "hf_", "AIza", "key-", "pplx-",
                "nvapi-", "ghp_", "glpat-", "r8_", "fw_")
#: Loggers of the HTTP stack that write request URLs (a path secret would be in them).
HTTP_LOGGERS = ("httpx2", "httpx", "httpcore", "openai", "openai._base_client")
#: Secrets shorter than this are not searched for (they would match ordinary text).
MIN_SECRET_LENGTH = 4

_RUN = re.compile(r"[A-Za-z0-9]{20,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")


def is_secret_name(name: str) -> bool:
    """Whether a query parameter name says it carries a credential (``api-key``, ``token``...)."""
    lowered = name.lower()
    return any(word in lowered for word in SECRET_NAME_WORDS)


def looks_like_key(segment: str) -> bool:
    """Whether a URL path segment looks like an API key rather than a path word or model name.

    Model and deployment names are words joined by ``-`` or ``.``
    (``Meta-Llama-3-8B-Instruct``, ``gpt-4o-mini``), so a segment is taken for a
    key when it holds a run of 20+ letters and digits mixing upper case, lower
    case and digits; a known key prefix or 32+ hex digits count on their own.
    """
    text = unquote(segment)
    if len(text) >= 8 and text.startswith(KEY_PREFIXES):
        return True
    if _HEX.fullmatch(text):
        return True
    return any(
        any(c.isupper() for c in run) and any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
        for run in _RUN.findall(text)
    )


def _query_pairs(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query.replace(";", "&"), keep_blank_values=True)


def _path_secrets(path: str) -> list[str]:
    found: list[str] = []
    for segment in path.split("/"):
        word, *params = segment.split(";")
        if looks_like_key(word):
            found.append(word)
        for param in params:
            value = param.partition("=")[2] if "=" in param else param
            if value:
                found.append(value)
    return found


def _public_path(path: str) -> str:
    segments = []
    for segment in path.split("/"):
        word, *params = segment.split(";")
        if looks_like_key(word):
            word = MASK
        masked = [f"{p.partition('=')[0]}={MASK}" if "=" in p else MASK for p in params if p]
        segments.append(";".join([word, *masked]))
    return "/".join(segments)


def url_secrets(url: str) -> tuple[str, ...]:
    """Every credential written into ``url`` (user info, secret query values, path secrets).

    Values are given both as written and percent-decoded; empty for a URL without any.
    """
    try:
        parts = urlsplit(url.strip())
        username, password = parts.username, parts.password
    except ValueError:
        return ()
    found = [username or "", password or ""]
    found += [value for name, value in _query_pairs(parts.query) if is_secret_name(name)]
    found += _path_secrets(parts.path)
    values = {text for value in found for text in (value, unquote(value)) if text}
    return tuple(sorted(values, key=lambda s: (-len(s), s)))


def has_url_credentials(url: str) -> bool:
    """Whether ``url`` carries user info or a credential-named query parameter.

    Such URLs are refused outright (HTTP libraries log request URLs); a secret
    in the path is accepted, since some gateways require it, and masked.
    """
    try:
        parts = urlsplit(url.strip())
        if parts.username or parts.password:
            return True
    except ValueError:
        return False
    return any(is_secret_name(name) for name, _ in _query_pairs(parts.query))


def public_url(url: str) -> str:
    """``url`` as stored, shown and keyed: no credentials, no fragment, no trailing slash.

    User info and credential-named query parameters are dropped, path secrets
    become ``***``. A URL without credentials comes back unchanged apart from
    its normal form (lower-case host, no trailing slash), so cache keys of
    ordinary endpoints do not change.
    """
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    query = [(k, v) for k, v in _query_pairs(parts.query) if not is_secret_name(k)]
    path = _public_path(parts.path).rstrip("/")
    return urlunsplit((parts.scheme, netloc, path, urlencode(query), ""))


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (at least 4 characters), as written or URL-encoded, as ``***``."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH},
                         key=lambda s: (-len(s), s)):
        for form in dict.fromkeys((secret, quote(secret, safe=""), quote_plus(secret))):
            text = text.replace(form, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets from every record it sees."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


@contextmanager
def redacted_logs(secrets: Iterable[str | None]) -> Iterator[None]:
    """While inside, the HTTP stack's log records carry ``***`` instead of ``secrets``.

    httpx logs every request URL at INFO level; with a key in the path, a user
    who turns logging on would otherwise find it in their logs.
    """
    found = RedactingFilter(secrets)
    if not found.secrets:
        yield
        return
    loggers = [logging.getLogger(name) for name in HTTP_LOGGERS]
    for logger in loggers:
        logger.addFilter(found)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(found)


__all__ = [
    "HTTP_LOGGERS", "KEY_PREFIXES", "MASK", "MIN_SECRET_LENGTH", "SECRET_NAME_WORDS",
    "RedactingFilter", "has_url_credentials", "is_secret_name", "looks_like_key", "public_url",
    "redact", "redacted_logs", "url_secrets",
]
