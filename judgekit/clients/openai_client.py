"""The adapter between judgekit and any OpenAI-compatible chat completions endpoint.

One judge call goes in as chat messages and comes out as a :class:`CallResult`:
a parsed :class:`~judgekit.types.Verdict` with the raw text, token usage, the
model the server says it used, the finish reason and the latency, or a failure
category. The official ``openai`` client does the HTTP; its own retries are
disabled so that :mod:`judgekit.clients.retry` is the only retry loop.

Every attempt is bounded (:mod:`judgekit.clients.limits`): a total deadline
(``JudgeSpec.timeout``) and a maximum body size (``JudgeSpec.max_response_bytes``).

Secrets: the API key is handed to the ``openai`` client and nowhere else.
:func:`public_base_url` strips credentials from URLs before they are stored, and
everything that leaves this module (answer text, model name, finish reason,
error messages) passes through :func:`redact` with the key and the URL's
credentials, so an endpoint that echoes the key back does not get it stored.
The reasoning kept beside the raw text is an excerpt of at most
:data:`REASONING_MAX_CHARS` characters: a long answer is stored once, in full,
as the raw text.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx2
import openai

from judgekit.clients.confidence import verdict_confidence
from judgekit.clients.limits import deadline, limit_response_size
from judgekit.clients.request import chat_request, response_format_for
from judgekit.clients.retry import Failure, with_retries
from judgekit.clients.spec import (
    DEFAULT_API_KEY_ENV,
    PLACEHOLDER_API_KEY,
    JudgeSpec,
    ResponseFormatMode,
    public_base_url,
    redact,
)
from judgekit.parsing import parse_completion
from judgekit.redaction import redacted_logs
from judgekit.types import Scale, Verdict

__all__ = [
    "DEFAULT_API_KEY_ENV", "REASONING_MAX_CHARS", "CallResult", "JudgeClient", "JudgeSpec",
    "ResponseFormatMode", "completion_result", "public_base_url", "redact", "response_format_for",
]

#: Longest reasoning stored beside the raw text (the full answer is the raw text).
REASONING_MAX_CHARS = 4000

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
    confidence: float | None = None

    @property
    def status(self) -> str:
        if self.verdict is not None:
            return self.verdict.status
        assert self.failure is not None
        return self.failure.status


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
        limit_response_size(http_client, spec.max_response_bytes)
        self._client = openai.AsyncOpenAI(
            base_url=spec.base_url,
            api_key=spec.api_key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=spec.timeout,
            http_client=http_client,
        )
        self._secrets = spec.secrets
        # httpx logs request URLs: a key in the path must not reach a user's logs
        self._logs = contextlib.ExitStack()
        self._logs.enter_context(redacted_logs(self._secrets))

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._logs.close()
        await self._client.close()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    async def create(self, messages: Sequence[dict[str, str]], **params: Any) -> dict[str, Any]:
        """One chat completion attempt (no retries) with explicit ``params``; the response JSON.

        For requests that are not judge calls (the capability probes).
        """
        return await self.post({"model": self.spec.model, "messages": list(messages), **params})

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST one request body to ``/chat/completions`` (no retries); the response JSON.

        Goes through the ``openai`` client's generic ``post`` (same HTTP stack,
        errors and exceptions as ``chat.completions.create``) but skips its typed
        request transform and response models, which cost more CPU per call than
        everything else judgekit does for a judgment.
        """
        data = await deadline(self.spec.timeout, lambda: self._client.post(
            "/chat/completions", cast_to=object, body=body))
        if not isinstance(data, dict):
            raise openai.APIResponseValidationError(
                response=_NO_RESPONSE, body=data, message="response is not a JSON object"
            )
        return data

    async def judge(
        self,
        messages: Sequence[dict[str, str]],
        scale: Scale,
        *,
        response_format: dict[str, Any] | None = None,
        before_attempt: Callable[[], Awaitable[None]] | None = None,
        logprobs: bool = False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> CallResult:
        """Call the judge with retries and parse its answer against ``scale``.

        With ``logprobs`` (only for endpoints known to support them) the result
        carries the verdict's confidence when it can be computed. ``before_attempt``
        and ``sleep`` (the wait between retries) let the runner stop a call between
        attempts by raising from them.
        """
        body = chat_request(self.spec, messages, response_format=response_format,
                            logprobs=logprobs)
        started = [0.0]

        async def attempt() -> dict[str, Any]:
            started[0] = time.perf_counter()
            return await self.post(body)

        outcome = await with_retries(
            attempt, self.spec.retry_policy, before_attempt=before_attempt, sleep=sleep
        )
        latency_ms = (time.perf_counter() - started[0]) * 1000.0
        if outcome.failure is not None:
            return CallResult(None, outcome.failure.redacted(self._secrets),
                              latency_ms=latency_ms, attempts=outcome.attempts)
        completion = outcome.value if outcome.value is not None else {}
        return completion_result(completion, scale, structured=response_format is not None,
                                 latency_ms=latency_ms, attempts=outcome.attempts,
                                 secrets=self._secrets)


def completion_result(
    completion: dict[str, Any],
    scale: Scale,
    *,
    structured: bool,
    latency_ms: float | None = None,
    attempts: int = 1,
    secrets: Iterable[str | None] = (),
) -> CallResult:
    """A chat completion's JSON parsed against ``scale``: verdict, raw text, tokens, confidence.

    The one reading of an answer: live calls and Batch API output lines both go
    through it, so a batch judgment gets exactly the status, label and reasoning
    a live one would. ``structured`` says the request asked for a JSON response
    format. Every string taken from the answer has ``secrets`` redacted (an
    endpoint may echo the key), and the reasoning is cut to
    :data:`REASONING_MAX_CHARS` (the raw text keeps the whole answer).
    """
    secrets = tuple(secrets)

    def clean(value: Any) -> str | None:
        return redact(value, secrets) if isinstance(value, str) else None

    choices = completion.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        failure = Failure("api_error", "response has no choices", retryable=False)
        return CallResult(None, failure, latency_ms=latency_ms, attempts=attempts)
    choice = choices[0]
    message = choice.get("message") or {}
    text = clean(message.get("content"))
    refusal = clean(message.get("refusal"))
    finish = clean(choice.get("finish_reason"))
    verdict = parse_completion(
        text,
        scale,
        finish_reason=finish,
        refusal=refusal,
        structured=structured,
    )
    if verdict.reasoning is not None and len(verdict.reasoning) > REASONING_MAX_CHARS:
        verdict = replace(verdict, reasoning=verdict.reasoning[:REASONING_MAX_CHARS] + " [...]")
    usage = completion.get("usage") or {}
    confidence = (
        verdict_confidence(text, choice.get("logprobs"), scale, verdict.label)
        if verdict.status == "ok" else None
    )
    return CallResult(
        verdict,
        raw_text=text if text is not None else refusal,
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        model_returned=clean(completion.get("model")),
        finish_reason=finish,
        latency_ms=latency_ms,
        attempts=attempts,
        confidence=confidence,
    )



def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_NO_RESPONSE = httpx2.Response(200, request=httpx2.Request("POST", "http://invalid/"))
