"""Which judge to call, and how its URL and key are kept out of storage (no HTTP here).

Kept apart from :mod:`judgekit.clients.openai_client` so that code which only
names a judge (cache keys, CLI option handling, a rerun whose calls are all
cached) does not import the ``openai`` client, the slowest import judgekit has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from judgekit.errors import InputError
from judgekit.redaction import has_url_credentials, public_url, redact, url_secrets
from judgekit.types import SamplingParams

if TYPE_CHECKING:
    from judgekit.clients.retry import RetryPolicy

#: Environment variable read for the API key unless ``--api-key-env`` names another.
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: Sent when no key is configured: local servers ignore it, hosted ones answer 401.
PLACEHOLDER_API_KEY = "no-key"

ResponseFormatMode = Literal["json_schema", "json_object", "none"]

#: Default bound on one answer's size (``--max-response-bytes``): a judge answer is a
#: few kilobytes, 4,096 tokens with top-5 logprobs about 2 MB.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


def public_base_url(url: str) -> str:
    """``url`` without credentials (user info, key parameters, path secrets), no trailing slash.

    This is the form stored in the database, shown in reports and used in cache keys
    (see :func:`judgekit.redaction.public_url`).
    """
    return public_url(url)


#: How a judge endpoint named with ``--endpoint-name`` is stored and keyed.
NAMED_ENDPOINT_PREFIX = "name:"


def named_endpoint(name: str) -> str:
    """The identity of an endpoint the user named: ``name:NAME`` (one judge, one cache).

    Used in place of the URL, so replicas of one model, or a server restarted on
    another port, stay the same judge.
    """
    name = name.strip()
    if not name:
        raise InputError("--endpoint-name must not be empty")
    if any(ch.isspace() or not ch.isprintable() for ch in name):
        raise InputError(f"--endpoint-name must be one printable word, got {name!r}")
    return f"{NAMED_ENDPOINT_PREFIX}{name}"


def check_replicas(urls: Sequence[str], *, named: bool) -> None:
    """Several URLs are replicas of one judge: they need one name, and each URL once.

    Without a name there is no one endpoint to key and store their judgments
    by (the first URL would make the cache depend on the order given).
    """
    if len(urls) < 2:
        return
    if not named:
        raise InputError(f"{len(urls)} --base-url given: replicas of one judge need "
                         "--endpoint-name NAME (the name keys and stores their judgments)")
    seen = [public_base_url(url) for url in urls]
    twice = next((url for url in seen if seen.count(url) > 1), None)
    if twice is not None:
        raise InputError(f"--base-url {twice} is given twice")


@dataclass(frozen=True)
class JudgeSpec:
    """Which judge to call and how: endpoint, model, sampling, limits.

    ``api_key`` is excluded from ``repr`` so it cannot leak through logs or
    tracebacks; it never leaves this object except into the ``openai`` client.

    ``identity`` names the endpoint in cache keys, stored rows and the
    capabilities table instead of its URL, for an endpoint whose URL changes
    between runs while the judge stays the same (the local judge listens on a
    free port each time); None means the URL without credentials. ``logprobs``
    asks for token logprobs (for the verdict confidence) when the endpoint
    supports them; off saves time where they are expensive (llama-cpp-python
    roughly doubles the time of a call).

    ``timeout`` is the total deadline of one attempt, from sending the request to
    the last byte of the answer (not a per-read timeout: a server dripping bytes
    cannot hold a call longer); ``max_response_bytes`` bounds one answer's body.

    ``replica_urls`` are more URLs serving the same judge (replicas): calls are
    spread over ``base_url`` and them (:mod:`judgekit.clients.replicas`), and
    they need an ``identity`` (the one endpoint every row and cache key names).
    ``rpm`` and ``tpm`` (requests and tokens per minute) bound each URL's
    starts (:mod:`judgekit.clients.pacing`); one key serves every URL.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    sampling: SamplingParams = field(default_factory=SamplingParams)
    concurrency: int = 8
    rpm: float | None = None
    max_retries: int = 4
    timeout: float = 60.0
    identity: str | None = None
    logprobs: bool = True
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    replica_urls: tuple[str, ...] = ()
    tpm: float | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {self.timeout}")
        if self.max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be >= 1, got {self.max_response_bytes}")
        for url in self.urls:
            if has_url_credentials(url):
                # HTTP libraries log request URLs; a key inside one would end up in logs.
                raise InputError(
                    f"base URL {public_base_url(url)} carries credentials (user info or a key "
                    "parameter): pass the key with --api-key-env NAME or --api-key instead"
                )
        check_replicas(self.urls, named=self.identity is not None)

    def __repr__(self) -> str:
        return (
            f"JudgeSpec(base_url={self.public_base_url!r}, model={self.model!r}, "
            f"sampling={self.sampling!r}, concurrency={self.concurrency}, rpm={self.rpm}, "
            f"tpm={self.tpm}, replicas={len(self.replica_urls)}, "
            f"max_retries={self.max_retries}, timeout={self.timeout})"
        )

    @property
    def urls(self) -> tuple[str, ...]:
        """Every URL serving this judge: ``base_url``, then the replicas."""
        return (self.base_url, *self.replica_urls)

    @cached_property
    def public_base_url(self) -> str:
        """The endpoint as stored and keyed: ``identity``, else the URL without credentials.

        Computed once per spec: the runner reads it for every cache key and judgment.
        """
        return self.identity or public_base_url(self.base_url)

    @cached_property
    def secrets(self) -> tuple[str, ...]:
        """Every value that must never be stored or shown: the key and the URL's credentials."""
        found = [self.api_key, *(secret for url in self.urls for secret in url_secrets(url))]
        return tuple(dict.fromkeys(s for s in found if s))

    @cached_property
    def retry_policy(self) -> RetryPolicy:
        from judgekit.clients.retry import RetryPolicy

        return RetryPolicy(max_retries=self.max_retries)


def endpoint_hint(spec: JudgeSpec, http_status: int | None) -> str:
    """What to check when an endpoint refuses every call (appended to the error message)."""
    if http_status in (401, 403) and not spec.api_key:
        return (" (no API key was given: set the variable --api-key-env names,"
                " OPENAI_API_KEY by default, or pass --api-key)")
    if http_status in (401, 403):
        return " (check the API key: --api-key-env NAME or --api-key)"
    if http_status == 404:
        return f" (is model {spec.model!r} served there, and does the URL end in /v1?)"
    return ""


__all__ = [
    "DEFAULT_API_KEY_ENV", "DEFAULT_MAX_RESPONSE_BYTES", "PLACEHOLDER_API_KEY", "JudgeSpec",
    "ResponseFormatMode", "check_replicas", "endpoint_hint", "public_base_url", "redact",
]
