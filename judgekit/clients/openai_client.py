"""The adapter between judgekit and any OpenAI-compatible chat completions endpoint.

One judge call goes in as chat messages and comes out as a :class:`CallResult`:
a parsed :class:`~judgekit.types.Verdict` with the raw text, token usage, the
model the server says it used, the finish reason and the latency, or a failure
category. The official ``openai`` client does the HTTP; its own retries are
disabled so that :mod:`judgekit.clients.retry` is the only retry loop.

Secrets: the API key is handed to the ``openai`` client and nowhere else.
:func:`public_base_url` strips credentials from URLs before they are stored, and
every error message passes through :func:`redact`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx2
import openai

from judgekit.clients.retry import Failure, RetryPolicy, with_retries
from judgekit.errors import InputError
from judgekit.parsing import parse_completion
from judgekit.types import SamplingParams, Scale, Verdict

#: Environment variable read for the API key unless ``--api-key-env`` names another.
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: Sent when no key is configured: local servers ignore it, hosted ones answer 401.
PLACEHOLDER_API_KEY = "no-key"

ResponseFormatMode = Literal["json_schema", "json_object", "none"]

_SECRET_QUERY_WORDS = ("key", "token", "secret", "sig", "password", "auth")


def public_base_url(url: str) -> str:
    """``url`` without user info or secret-looking query parameters, no trailing slash.

    This is the form stored in the database, shown in reports and used in cache keys.
    """
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not any(word in k.lower() for word in _SECRET_QUERY_WORDS)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), urlencode(query), ""))


def _has_url_credentials(url: str) -> bool:
    parts = urlsplit(url.strip())
    if parts.username or parts.password:
        return True
    return any(
        any(word in k.lower() for word in _SECRET_QUERY_WORDS)
        for k, _ in parse_qsl(parts.query, keep_blank_values=True)
    )


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (at least 4 characters long) replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class JudgeSpec:
    """Which judge to call and how: endpoint, model, sampling, limits.

    ``api_key`` is excluded from ``repr`` so it cannot leak through logs or
    tracebacks; it never leaves this object except into the ``openai`` client.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    sampling: SamplingParams = field(default_factory=SamplingParams)
    concurrency: int = 8
    rpm: float | None = None
    max_retries: int = 4
    timeout: float = 60.0

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.rpm is not None and self.rpm <= 0:
            raise ValueError(f"rpm must be > 0, got {self.rpm}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {self.timeout}")
        if _has_url_credentials(self.base_url):
            # HTTP libraries log request URLs; a key inside one would end up in logs.
            raise InputError(
                f"base URL {self.public_base_url} carries credentials (user info or a key "
                "parameter): pass the key with --api-key-env NAME or --api-key instead"
            )

    def __repr__(self) -> str:
        return (
            f"JudgeSpec(base_url={self.public_base_url!r}, model={self.model!r}, "
            f"sampling={self.sampling!r}, concurrency={self.concurrency}, rpm={self.rpm}, "
            f"max_retries={self.max_retries}, timeout={self.timeout})"
        )

    @property
    def public_base_url(self) -> str:
        return public_base_url(self.base_url)

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(max_retries=self.max_retries)


@dataclass(frozen=True)
class CallResult:
    """One judge call's outcome: a verdict (possibly a parse failure) or a transport failure."""

    verdict: Verdict | None
    failure: Failure | None = None
    raw_text: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model_returned: str | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None
    attempts: int = 1

    @property
    def status(self) -> str:
        if self.verdict is not None:
            return self.verdict.status
        assert self.failure is not None
        return self.failure.status


def response_format_for(mode: ResponseFormatMode, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` request field for a structured-output mode.

    ``json_object`` carries the schema the way llama.cpp's server accepts it.
    """
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": schema, "strict": True},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class JudgeClient:
    """An ``AsyncOpenAI`` client configured for judging; use ``async with``.

    ``http_client`` is the test seam (an ``httpx2.AsyncClient`` with a
    ``MockTransport``); by default a pooled client sized to the concurrency is used.
    """

    def __init__(self, spec: JudgeSpec, *, http_client: httpx2.AsyncClient | None = None) -> None:
        self.spec = spec
        if http_client is None:
            limits = httpx2.Limits(
                max_connections=spec.concurrency + 4,
                max_keepalive_connections=spec.concurrency + 4,
            )
            http_client = openai.DefaultAsyncHttpxClient(limits=limits)
        self._client = openai.AsyncOpenAI(
            base_url=spec.base_url,
            api_key=spec.api_key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=spec.timeout,
            http_client=http_client,
        )
        self._secrets = (spec.api_key,)

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._client.close()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    async def create(self, messages: Sequence[dict[str, str]], **params: Any) -> dict[str, Any]:
        """One chat completion attempt (no retries); returns the response JSON as a dict.

        Goes through the ``openai`` client's generic ``post`` (same HTTP stack,
        errors and exceptions as ``chat.completions.create``) but skips its typed
        request transform and response models, which cost more CPU per call than
        everything else judgekit does for a judgment.
        """
        body = {"model": self.spec.model, "messages": list(messages), **params}
        data = await self._client.post("/chat/completions", cast_to=object, body=body)
        if not isinstance(data, dict):
            raise openai.APIResponseValidationError(
                response=_NO_RESPONSE, body=data, message="response is not a JSON object"
            )
        return data

    def request_params(self, response_format: dict[str, Any] | None) -> dict[str, Any]:
        """Sampling parameters, always explicit (servers' defaults differ), plus the format."""
        sampling = self.spec.sampling
        params: dict[str, Any] = {
            "temperature": sampling.temperature,
            "max_tokens": sampling.max_tokens,
            "top_p": sampling.top_p,
        }
        if sampling.seed is not None:
            params["seed"] = sampling.seed
        if response_format is not None:
            params["response_format"] = response_format
        return params

    async def judge(
        self,
        messages: Sequence[dict[str, str]],
        scale: Scale,
        *,
        response_format: dict[str, Any] | None = None,
        before_attempt: Callable[[], Awaitable[None]] | None = None,
    ) -> CallResult:
        """Call the judge with retries and parse its answer against ``scale``."""
        params = self.request_params(response_format)
        started = [0.0]

        async def attempt() -> dict[str, Any]:
            started[0] = time.perf_counter()
            return await self.create(messages, **params)

        outcome = await with_retries(
            attempt, self.spec.retry_policy, before_attempt=before_attempt
        )
        latency_ms = (time.perf_counter() - started[0]) * 1000.0
        if outcome.failure is not None:
            failure = outcome.failure
            safe = Failure(
                failure.status,
                self.redact(failure.message),
                failure.retryable,
                failure.fatal,
                failure.http_status,
                failure.retry_after,
            )
            return CallResult(None, safe, latency_ms=latency_ms, attempts=outcome.attempts)
        completion = outcome.value if outcome.value is not None else {}
        return self._result(completion, scale, response_format, latency_ms, outcome.attempts)

    def _result(
        self,
        completion: dict[str, Any],
        scale: Scale,
        response_format: dict[str, Any] | None,
        latency_ms: float,
        attempts: int,
    ) -> CallResult:
        choices = completion.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            failure = Failure("api_error", "response has no choices", retryable=False)
            return CallResult(None, failure, latency_ms=latency_ms, attempts=attempts)
        choice = choices[0]
        message = choice.get("message") or {}
        text = _str_or_none(message.get("content"))
        refusal = _str_or_none(message.get("refusal"))
        finish = _str_or_none(choice.get("finish_reason"))
        verdict = parse_completion(
            text,
            scale,
            finish_reason=finish,
            refusal=refusal,
            structured=response_format is not None,
        )
        usage = completion.get("usage") or {}
        return CallResult(
            verdict,
            raw_text=text if text is not None else refusal,
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            model_returned=_str_or_none(completion.get("model")),
            finish_reason=finish,
            latency_ms=latency_ms,
            attempts=attempts,
        )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_NO_RESPONSE = httpx2.Response(200, request=httpx2.Request("POST", "http://invalid/"))
