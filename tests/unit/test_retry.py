"""Retry policy, Retry-After parsing, failure classification and the retry loop."""

from __future__ import annotations

import email.utils
import random

import httpx2
import openai
import pytest

from judgekit.clients.retry import (
    RetryPolicy,
    classify,
    parse_retry_after,
    with_retries,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


def status_error(code: int, *, headers: dict[str, str] | None = None,
                 error_code: str | None = None) -> openai.APIStatusError:
    body = {"error": {"message": f"boom {code}", "code": error_code}}
    response = httpx2.Response(code, headers=headers or {}, json=body, request=REQUEST)
    cls = {400: openai.BadRequestError, 401: openai.AuthenticationError,
           403: openai.PermissionDeniedError, 404: openai.NotFoundError,
           409: openai.ConflictError, 422: openai.UnprocessableEntityError,
           429: openai.RateLimitError}.get(code, openai.InternalServerError)
    return cls(f"Error code: {code}", response=response, body=body["error"])


def test_backoff_grows_caps_and_jitters() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0, jitter=0.25)
    rng = random.Random(1)
    delays = [policy.backoff(n, rng) for n in range(8)]
    for n, delay in enumerate(delays):
        nominal = min(8.0, 0.5 * 2**n)
        assert 0.75 * nominal <= delay <= nominal
    assert max(delays) <= 8.0
    no_jitter = RetryPolicy(jitter=0.0)
    assert [no_jitter.backoff(n) for n in range(3)] == [0.5, 1.0, 2.0]


def test_policy_validates() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="jitter"):
        RetryPolicy(jitter=2)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"Retry-After": when}, now=1_000_000) == pytest.approx(30)
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


@pytest.mark.parametrize("code,status,retryable,fatal", [
    (400, "api_error", False, False),
    (401, "api_error", False, True),
    (403, "api_error", False, True),
    (404, "api_error", False, True),
    (422, "api_error", False, False),
    (408, "timeout", True, False),
    (409, "api_error", True, False),
    (429, "rate_limited", True, False),
    (500, "api_error", True, False),
    (503, "api_error", True, False),
])
def test_classify_status_codes(code: int, status: str, retryable: bool, fatal: bool) -> None:
    failure = classify(status_error(code))
    assert (failure.status, failure.retryable, failure.fatal) == (status, retryable, fatal)
    assert failure.http_status == code and failure.message == f"HTTP {code}: boom {code}"


def test_classify_quota_retry_after_and_transport() -> None:
    quota = classify(status_error(429, error_code="insufficient_quota"))
    assert quota.status == "rate_limited" and not quota.retryable and quota.fatal
    limited = classify(status_error(429, headers={"Retry-After": "7"}))
    assert limited.retry_after == 7.0
    assert classify(openai.APITimeoutError(request=REQUEST)).status == "timeout"
    conn = classify(openai.APIConnectionError(request=REQUEST))
    assert conn.status == "api_error" and conn.retryable
    import json
    assert classify(json.JSONDecodeError("x", "{", 0)).retryable


async def test_with_retries_retries_then_succeeds() -> None:
    errors = [status_error(500), status_error(429, headers={"Retry-After": "2"})]
    slept: list[float] = []
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if errors:
            raise errors.pop(0)
        return "done"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    result = await with_retries(attempt, RetryPolicy(jitter=0.0), sleep=sleep)
    assert result.value == "done" and result.failure is None and result.attempts == 3
    assert slept == [0.5, 2.0]  # backoff, then the server's Retry-After


async def test_with_retries_stops_on_non_retryable_and_when_exhausted() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def bad_request() -> None:
        raise status_error(400)

    result = await with_retries(bad_request, RetryPolicy(), sleep=sleep)
    assert result.attempts == 1 and result.failure is not None and not slept

    async def always_500() -> None:
        raise status_error(500)

    result = await with_retries(always_500, RetryPolicy(max_retries=3, jitter=0), sleep=sleep)
    assert result.attempts == 4 and result.failure is not None
    assert slept == [0.5, 1.0, 2.0]

    async def too_long() -> None:
        raise status_error(429, headers={"Retry-After": "3600"})

    result = await with_retries(too_long, RetryPolicy(max_retry_after=60), sleep=sleep)
    assert result.attempts == 1 and result.failure.status == "rate_limited"  # type: ignore[union-attr]


async def test_before_attempt_runs_for_every_attempt() -> None:
    seen = 0

    async def before() -> None:
        nonlocal seen
        seen += 1

    async def flaky() -> int:
        if seen < 3:
            raise status_error(503)
        return 1

    async def no_sleep(_: float) -> None:
        return None

    result = await with_retries(flaky, RetryPolicy(), before_attempt=before, sleep=no_sleep)
    assert result.value == 1 and seen == 3
