"""Failure classification and retries with exponential backoff and jitter.

judgekit owns retries (the ``openai`` client's own are disabled) so that every
attempt passes through the rate limiter, is counted, and ends in one of the
documented failure categories (when an attempt may start is
:mod:`judgekit.clients.pacing`'s job):

- retried: connection errors and timeouts, HTTP 408, 409, 429 (honouring
  ``Retry-After``) and 5xx, plus a response body that is not valid JSON;
- not retried: 400, 401, 403, 404, 422 and 429 ``insufficient_quota``, and an
  answer over the size limit (the server would send it again).

An attempt past its total deadline is a ``timeout`` (retried) whose message says so.

401, 403, 404 and ``insufficient_quota`` are *fatal*: every further call would
fail the same way, so the runner stops instead of recording thousands of
identical errors.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

import openai

from judgekit.clients.limits import AttemptDeadlineExceeded, ResponseTooLarge
from judgekit.redaction import redact
from judgekit.textsafe import storable
from judgekit.types import Status

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

RETRYABLE_STATUS_CODES = frozenset({408, 409, 429})
FATAL_STATUS_CODES = frozenset({401, 403, 404})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait between attempts of one call.

    The n-th retry waits ``min(max_delay, base_delay * 2**n)`` reduced by up to
    ``jitter`` (a fraction) at random, so concurrent callers spread out. A
    server's ``Retry-After`` wins when it is given, up to ``max_retry_after``
    seconds; a longer demand ends the call as ``rate_limited`` (it is retried on
    the next run).
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter must be within [0, 1], got {self.jitter}")

    def backoff(self, retry_number: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry ``retry_number`` (0-based) without a Retry-After."""
        draw = (rng or random).random()
        delay = min(self.max_delay, self.base_delay * (2.0 ** min(retry_number, 60)))
        return max(0.0, delay * (1.0 - self.jitter * draw))


@dataclass(frozen=True)
class Failure:
    """Why a call failed, in judgekit's categories."""

    status: Status  # rate_limited | timeout | api_error
    message: str
    retryable: bool
    fatal: bool = False
    http_status: int | None = None
    retry_after: float | None = None

    def redacted(self, secrets: Iterable[str | None]) -> Failure:
        """This failure with ``secrets`` masked in its message (a server may echo the key).

        Lone surrogates in an error body become visible escapes, so the message can be stored.
        """
        return replace(self, message=storable(redact(self.message, secrets)))


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date), else None."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        return max(0.0, seconds)
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        when = float(email.utils.mktime_tz(parsed))
    except (TypeError, ValueError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _error_code(exc: openai.APIStatusError) -> str | None:
    if exc.code:
        return str(exc.code)
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("code"):
            return str(inner["code"])
    return None


def classify(exc: BaseException) -> Failure:
    """Map an exception from one attempt to a :class:`Failure`.

    Messages are short and built from status codes and the server's error
    text; callers redact secrets before storing them.
    """
    too_large = _in_chain(exc, ResponseTooLarge)
    if too_large is not None:
        return Failure("api_error", str(too_large), retryable=False)
    if isinstance(exc, AttemptDeadlineExceeded):
        return Failure("timeout", str(exc), retryable=True)
    if isinstance(exc, openai.APITimeoutError | asyncio.TimeoutError | TimeoutError):
        return Failure("timeout", "request timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return Failure("api_error", f"connection error: {exc}", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        detail = _server_message(exc)
        text = f"HTTP {code}: {detail}" if detail else f"HTTP {code}"
        headers = dict(exc.response.headers) if exc.response is not None else None
        if code == 429:
            if _error_code(exc) == "insufficient_quota":
                return Failure("rate_limited", text, retryable=False, fatal=True, http_status=code)
            return Failure("rate_limited", text, retryable=True, http_status=code,
                           retry_after=parse_retry_after(headers))
        if code == 408:
            return Failure("timeout", text, retryable=True, http_status=code,
                           retry_after=parse_retry_after(headers))
        if code in RETRYABLE_STATUS_CODES or code >= 500:
            return Failure("api_error", text, retryable=True, http_status=code,
                           retry_after=parse_retry_after(headers))
        return Failure("api_error", text, retryable=False, fatal=code in FATAL_STATUS_CODES,
                       http_status=code)
    if isinstance(exc, json.JSONDecodeError):
        return Failure("api_error", "response body is not valid JSON", retryable=True)
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure("api_error", "response did not match the chat completion format",
                       retryable=True)
    return Failure("api_error", f"{type(exc).__name__}: {exc}", retryable=False)


def _in_chain(exc: BaseException, kind: type[E]) -> E | None:
    """``exc`` or the first exception it was raised from that is a ``kind`` (the
    ``openai`` client wraps transport errors in ``APIConnectionError``)."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return ""


@dataclass(frozen=True)
class Attempted(Generic[T]):
    """The outcome of :func:`with_retries`: a value or the last failure, and attempts made."""

    value: T | None
    failure: Failure | None
    attempts: int


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    before_attempt: Callable[[], Awaitable[None]] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
    retry_delay: Callable[[Failure, float], float] | None = None,
) -> Attempted[T]:
    """Run ``attempt`` until it succeeds, fails for good, or retries run out.

    ``before_attempt`` runs before every attempt (the stop check and pacing).
    ``retry_delay(failure, planned)`` may change the wait before a retry (the
    client retries at once on another replica); a Retry-After over the policy's
    maximum still ends the call unless it does.
    Exceptions are classified with :func:`classify`; cancellation propagates.
    """
    retries = 0
    while True:
        if before_attempt is not None:
            await before_attempt()
        try:
            value = await attempt()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failure = classify(exc)
        else:
            return Attempted(value, None, retries + 1)
        if not failure.retryable or retries >= policy.max_retries:
            return Attempted(None, failure, retries + 1)
        delay = failure.retry_after if failure.retry_after is not None \
            else policy.backoff(retries, rng)
        if retry_delay is not None:
            delay = retry_delay(failure, delay)
        if failure.retry_after is not None and delay > policy.max_retry_after:
            return Attempted(None, failure, retries + 1)
        await sleep(delay)
        retries += 1
