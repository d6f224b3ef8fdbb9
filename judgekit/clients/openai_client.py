"""The adapter between judgekit and any OpenAI-compatible chat completions endpoint.

One judge call goes in as chat messages and comes out as a :class:`CallResult`:
a parsed :class:`~judgekit.types.Verdict` with the raw text, token usage, the
model the server says it used, the finish reason and the latency, or a failure
category. The official ``openai`` client does the HTTP; its own retries are
disabled so that :mod:`judgekit.clients.retry` is the only retry loop.

Every attempt is bounded (:mod:`judgekit.clients.limits`): a total deadline
(``JudgeSpec.timeout``) and a maximum body size (``JudgeSpec.max_response_bytes``).
Every judge attempt goes to one of the judge's URLs (:mod:`judgekit.clients.replicas`;
usually there is one) and starts when that URL's :class:`~judgekit.clients.pacing.Pacer`
says (``rpm``, ``tpm``, the ``x-ratelimit-*`` headers of its answers, which are
read off the raw response). A retry after a replica's failure goes at once to
another replica when one is free.

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

from judgekit.clients.confidence import expected_score, verdict_confidence
from judgekit.clients.limits import deadline, limit_response_size
from judgekit.clients.pacing import Pacer, Planned, estimate_tokens
from judgekit.clients.replicas import Replica, ReplicaPool
from judgekit.clients.request import ParamSupport, chat_request, response_format_for
from judgekit.clients.retry import Failure, classify, with_retries
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
from judgekit.textsafe import storable, storable_or_none
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
    #: the logprob-weighted expected score (ordinal scales; see ``confidence.expected_score``)
    expected_score: float | None = None

    @property
    def status(self) -> str:
        if self.verdict is not None:
            return self.verdict.status
        assert self.failure is not None
        return self.failure.status


class JudgeClient:
    """``AsyncOpenAI`` clients configured for judging, one per URL of the judge; use ``async with``.

    ``http_client`` is the test seam (an ``httpx2.AsyncClient`` with a
    ``MockTransport``); by default a pooled client sized to the concurrency is
    used, shared by every URL. ``clock`` times the pacers and the replicas'
    cool-downs (tests inject one).
    """

    def __init__(self, spec: JudgeSpec, *, http_client: httpx2.AsyncClient | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.spec = spec
        if http_client is None:
            limits = httpx2.Limits(
                max_connections=spec.concurrency + 4,
                max_keepalive_connections=spec.concurrency + 4,
            )
            http_client = openai.DefaultAsyncHttpxClient(limits=limits)
        limit_response_size(http_client, spec.max_response_bytes)
        self.pool = ReplicaPool([
            Replica(public_base_url(url), openai.AsyncOpenAI(
                base_url=url, api_key=spec.api_key or PLACEHOLDER_API_KEY, max_retries=0,
                timeout=spec.timeout, http_client=http_client,
            ), Pacer(rpm=spec.rpm, tpm=spec.tpm, clock=clock))
            for url in spec.urls
        ], clock=clock)
        self._secrets = spec.secrets
        #: which sampling parameters the endpoint takes (set by the capability probe);
        #: None sends them all, as given
        self.support: ParamSupport | None = None
        #: the replica that answered the last :meth:`create` (capability probes stay on it)
        self._answered: Replica | None = None
        # httpx logs request URLs: a key in the path must not reach a user's logs
        self._logs = contextlib.ExitStack()
        self._logs.enter_context(redacted_logs(self._secrets))

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._logs.close()
        for replica in self.pool.replicas:  # one shared HTTP client: closing it twice is a no-op
            await replica.client.close()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    async def create(self, messages: Sequence[dict[str, str]], **params: Any) -> dict[str, Any]:
        """One chat completion attempt (no retries) with explicit ``params``; the response JSON.

        For requests that are not judge calls (the capability probes): not paced,
        and sent to the replica that answered the last one, so every probe of one
        endpoint asks the same server (a replica failing with 5xx must not make a
        feature look unsupported).
        """
        body = {"model": self.spec.model, "messages": list(messages), **params}
        chosen = self.pool.take(self._answered) if self._answered else self.pool.choose()
        try:
            data = await self.post(body, chosen)
        except openai.APIStatusError:
            raise  # an error status (a refused feature) keeps the probes where they were
        except Exception:
            self._answered = None  # unreachable or broken: the retry may go elsewhere
            raise
        self._answered = chosen
        return data

    async def post(self, body: dict[str, Any], replica: Replica | None = None,
                   planned: Planned | None = None) -> dict[str, Any]:
        """POST one request body to ``/chat/completions`` (no retries); the response JSON.

        Goes through the ``openai`` client's generic ``post`` (same HTTP stack,
        errors and exceptions as ``chat.completions.create``) but skips its typed
        request transform and response models, which cost more CPU per call than
        everything else judgekit does for a judgment. The raw response is asked
        for (as ``with_raw_response`` does) so its rate-limit headers reach the
        replica's pacer. ``replica``: one already chosen (and counted busy) by
        the caller; None chooses one. Either way it is released here.
        ``planned``: the attempt's plan, when its pacer planned it.
        """
        chosen = replica if replica is not None else self.pool.choose()
        fault = False
        try:
            raw = await deadline(self.spec.timeout, lambda: chosen.client.post(
                "/chat/completions", cast_to=object, body=body, options=_RAW_RESPONSE))
            chosen.pacer.observe(raw.headers, planned)
            data = raw.parse()
            if not isinstance(data, dict):
                raise openai.APIResponseValidationError(
                    response=_NO_RESPONSE, body=data, message="response is not a JSON object"
                )
        except Exception as exc:
            failure = classify(exc)
            if isinstance(exc, openai.APIStatusError):
                chosen.pacer.observe(exc.response.headers, planned)
                wait = failure.retry_after
                if failure.status == "rate_limited" and wait is not None \
                        and wait <= self.spec.retry_policy.max_retry_after:
                    chosen.pacer.hold(wait)  # a longer demand ends the call instead
            fault = _replica_fault(failure)
            raise
        finally:
            self.pool.release(chosen, sent=True, fault=fault)
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
        read: Callable[..., CallResult] | None = None,
    ) -> CallResult:
        """Call the judge with retries and parse its answer against ``scale``.

        ``read`` replaces :func:`completion_result` (same arguments) for an answer of
        another shape (one verdict per criterion, ``judgekit.judging.joint_answer``).

        With ``logprobs`` (only for endpoints known to support them) the result
        carries the verdict's confidence when it can be computed. ``before_attempt``
        runs before every attempt and again after a pacing wait, and ``sleep`` does
        every wait (pacing and backoff): the runner stops a call between attempts
        by raising from them.
        """
        body = chat_request(self.spec, messages, response_format=response_format,
                            logprobs=logprobs, support=self.support)
        sampling = self.spec.sampling
        estimate = estimate_tokens(messages, sampling.max_completion_tokens or sampling.max_tokens)
        tried: list[Replica] = []
        current: list[tuple[Replica, Planned]] = []
        started = [0.0]

        async def before() -> None:
            if before_attempt is not None:
                await before_attempt()
            replica = self.pool.choose(avoid=tried)
            planned = replica.pacer.plan(estimate)
            try:
                if planned.delay > 0:
                    await sleep(planned.delay)
                    if before_attempt is not None:
                        await before_attempt()
            except BaseException:
                replica.pacer.done(planned)
                self.pool.release(replica, sent=False)
                raise
            current[:] = [(replica, planned)]

        async def attempt() -> dict[str, Any]:
            replica, planned = current[0]
            tried.append(replica)
            started[0] = time.perf_counter()
            try:
                return await self.post(body, replica, planned)
            finally:
                replica.pacer.done(planned)

        def retry_delay(failure: Failure, delay: float) -> float:
            """No wait before a retry that another replica can take at once."""
            moves = _replica_fault(failure) or failure.status == "rate_limited"
            return 0.0 if moves and self.pool.can_fail_over(tried) else delay

        outcome = await with_retries(attempt, self.spec.retry_policy, before_attempt=before,
                                     sleep=sleep, retry_delay=retry_delay)
        latency_ms = (time.perf_counter() - started[0]) * 1000.0
        if outcome.failure is not None:
            return CallResult(None, outcome.failure.redacted(self._secrets),
                              latency_ms=latency_ms, attempts=outcome.attempts)
        completion = outcome.value if outcome.value is not None else {}
        result = (read or completion_result)(
            completion, scale, structured=response_format is not None, latency_ms=latency_ms,
            attempts=outcome.attempts, secrets=self._secrets)
        if result.prompt_tokens is not None and result.completion_tokens is not None:
            replica, planned = current[0]
            replica.pacer.settle(planned, result.prompt_tokens + result.completion_tokens)
        return result

    def replica_stats(self) -> list[dict[str, Any]]:
        """Per URL (no credentials): attempts sent and failed, cool-downs, pacing waits."""
        return self.pool.stats()


def _replica_fault(failure: Failure) -> bool:
    """Whether a failure says the replica is unwell (so another should take the retry).

    Connection errors, timeouts, 5xx and bodies that are not JSON are; a rate
    limit is the provider's pacing, not a fault; non-retryable answers (400,
    401, 404, an oversized body) would fail anywhere.
    """
    return failure.retryable and failure.status in ("timeout", "api_error")


#: What ``with_raw_response`` sets: the ``openai`` client then returns the raw response
#: (headers and a ``parse()``), not just the parsed body.
_RAW_RESPONSE: Any = {"headers": {"X-Stainless-Raw-Response": "true"}}


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
    endpoint may echo the key) and lone surrogates made visible escapes (valid
    JSON, but text no store or encoder takes: one such answer must not stop a
    run), and the reasoning is cut to :data:`REASONING_MAX_CHARS` (the raw text
    keeps the whole answer).
    """
    secrets = tuple(secrets)

    def clean(value: Any) -> str | None:
        return storable(redact(value, secrets)) if isinstance(value, str) else None

    choices = completion.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        failure = Failure("api_error", "response has no choices", retryable=False)
        return CallResult(None, failure, latency_ms=latency_ms, attempts=attempts)
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):  # a server's odd shape is a failure, never a traceback
        failure = Failure("api_error", "response message is not an object", retryable=False)
        return CallResult(None, failure, latency_ms=latency_ms, attempts=attempts)
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
    if verdict.status == "truncated" and not (text or "").strip():
        verdict = replace(verdict, detail=_spent_budget(completion.get("usage")))
    if verdict.reasoning is not None and len(verdict.reasoning) > REASONING_MAX_CHARS:
        verdict = replace(verdict, reasoning=verdict.reasoning[:REASONING_MAX_CHARS] + " [...]")
    # the answer's own JSON may escape a surrogate again ("\\ud800" in the text)
    reasoning, detail = storable_or_none(verdict.reasoning), storable_or_none(verdict.detail)
    if reasoning is not verdict.reasoning or detail is not verdict.detail:
        verdict = replace(verdict, reasoning=reasoning, detail=detail)
    usage = completion.get("usage")
    if not isinstance(usage, dict):
        usage = {}
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
        expected_score=expected_score(text, choice.get("logprobs"), scale, verdict.label)
        if confidence is not None else None,
    )



def _spent_budget(usage: Any) -> str:
    """Why an answer stopped at its length limit before any visible text (a reasoning model).

    Its budget went on reasoning tokens (counted in ``completion_tokens_details``).
    """
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    spent = _int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    used = f" ({spent} reasoning tokens)" if spent is not None else ""
    return ("finish_reason=length with no visible text: the token budget was spent on "
            f"reasoning{used}; raise --max-completion-tokens (or --max-tokens), or lower "
            "--reasoning-effort")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_NO_RESPONSE = httpx2.Response(200, request=httpx2.Request("POST", "http://invalid/"))
