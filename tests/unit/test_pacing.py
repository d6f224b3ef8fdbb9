"""Pacing and replica choice on an injected clock: the planned schedule, never wall time."""

from __future__ import annotations

import logging
import math

import pytest

from judgekit.clients.pacing import (
    MAX_HOLD_S,
    Pacer,
    estimate_tokens,
    parse_duration,
    rate_limit_headers,
)
from judgekit.clients.replicas import COOL_DOWN_S, TRIP_AFTER, Replica, ReplicaPool
from judgekit.clients.spec import JudgeSpec
from judgekit.errors import InputError


class FakeClock:
    """A clock that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5),
    ("2m", 120.0), ("150us", 150e-6), ("0s", 0.0), (" 3s ", 3.0), ("7.66s", 7.66),
])
def test_reset_durations_in_openai_format(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "-1s", "1x", "1s junk", "nan", "inf", "-0.5",
                                  "1 s", "ms", "1e999", "soon", "1s-2s"])
def test_malformed_durations_are_none(text: str) -> None:
    assert parse_duration(text) is None


def test_rate_limit_headers_read_and_malformed_ones_ignored(
    caplog: pytest.LogCaptureFixture
) -> None:
    found = rate_limit_headers({"X-RateLimit-Remaining-Requests": "59",
                                "x-ratelimit-remaining-tokens": "149984",
                                "x-ratelimit-reset-requests": "1s",
                                "x-ratelimit-reset-tokens": "6m0s", "other": "x"})
    assert (found.remaining_requests, found.remaining_tokens) == (59, 149984)
    assert (found.reset_requests, found.reset_tokens) == (1.0, 360.0)
    with caplog.at_level(logging.DEBUG, logger="judgekit.pacing"):
        bad = rate_limit_headers({"x-ratelimit-remaining-requests": "lots",
                                  "x-ratelimit-remaining-tokens": "-3",
                                  "x-ratelimit-reset-requests": "soon",
                                  "x-ratelimit-reset-tokens": "1e999s"})
    assert bad == rate_limit_headers(None) == rate_limit_headers({})
    assert sum("ignoring malformed header" in r.getMessage() for r in caplog.records) == 4


def test_rate_limiter_spaces_starts() -> None:
    """``rpm``: starts evenly spaced by 60/rpm; idle time is not banked into a burst."""
    clock = FakeClock()
    pacer = Pacer(rpm=1200, clock=clock)  # one start every 50 ms
    planned = [pacer.plan(10) for _ in range(5)]
    assert [p.at for p in planned] == pytest.approx([100.0, 100.05, 100.1, 100.15, 100.2])
    assert [p.delay for p in planned] == pytest.approx([0.0, 0.05, 0.1, 0.15, 0.2])
    assert [p.reason for p in planned] == ["", "rpm", "rpm", "rpm", "rpm"]
    clock.now = 200.0
    assert [pacer.plan(10).at for _ in range(2)] == pytest.approx([200.0, 200.05])
    assert pacer.stats() == {"waits": {"rpm": 5}, "waited_s": pytest.approx(0.55)}
    assert list(pacer.schedule)[-1].at == pytest.approx(200.05)


def test_tpm_spends_tokens_evenly_and_usage_corrects_the_schedule() -> None:
    clock = FakeClock()
    pacer = Pacer(tpm=600, clock=clock)  # 10 tokens a second
    first, second = pacer.plan(100), pacer.plan(100)
    assert (first.at, second.at, second.reason) == (100.0, 110.0, "tpm")
    # the first call used 50 tokens, not 100: the schedule moves 5 s earlier
    pacer.settle(first, 50)
    assert pacer.plan(100).at == pytest.approx(115.0)
    pacer.settle(second, None)  # no usage reported: the estimate stands
    assert pacer.plan(30).at == pytest.approx(125.0)
    # over the whole schedule, planned tokens per minute stay at the budget
    starts = [pacer.plan(100).at for _ in range(60)]
    assert starts[-1] - starts[0] == pytest.approx(59 * 100 / 10)


def test_requests_header_spent_waits_for_its_reset() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    pacer.observe({"x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": "1s"})
    plans = [pacer.plan(10) for _ in range(4)]
    # two starts left in the budget: every later start waits for the reset (1 s after the answer)
    assert [p.at for p in plans] == [100.0, 100.0, 101.0, 101.0]
    assert [p.reason for p in plans] == ["", "", "requests", "requests"]
    pacer.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20ms"})
    assert pacer.plan(10).at == pytest.approx(100.02)


def test_calls_in_flight_count_against_an_announced_budget() -> None:
    """An answer's remaining budget may not count calls sent since: they are taken off it."""
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    first, second, third = (pacer.plan(100) for _ in range(3))  # nothing known yet: at once
    assert {p.at for p in (first, second, third)} == {100.0}
    # the first answer says 2 requests are left; the two others are still in flight
    pacer.observe({"x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": "1s"},
                  first)
    pacer.done(first)
    fourth = pacer.plan(100)
    assert (fourth.at, fourth.reason) == (101.0, "requests")
    # tokens alike: 250 left, another call of 100 in flight, so a third of 100 waits
    tokens = Pacer(clock=clock)
    one, two = tokens.plan(100), tokens.plan(100)
    tokens.observe({"x-ratelimit-remaining-tokens": "250", "x-ratelimit-reset-tokens": "2s"}, one)
    tokens.done(one)
    assert tokens.plan(100).delay == 0.0  # 250 - 100 in flight covers one more
    assert (tokens.plan(100).at, tokens.schedule[-1].reason) == (102.0, "tokens")
    tokens.done(two)


def test_tokens_header_waits_for_its_reset_and_long_holds_are_capped() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    pacer.observe({"x-ratelimit-remaining-tokens": "150", "x-ratelimit-reset-tokens": "6m0s"})
    first, second = pacer.plan(100), pacer.plan(100)
    assert (first.at, second.at, second.reason) == (100.0, 460.0, "tokens")
    pacer.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1000h"})
    assert pacer.plan(1).at == pytest.approx(100.0 + MAX_HOLD_S)
    held = Pacer(clock=clock)
    held.hold(2.5)
    assert (held.plan(1).at, held.plan(1).at) == (102.5, 102.5)
    held.hold(float("nan"))
    held.hold(-1)
    assert held.plan(1).at == 102.5


def test_malformed_or_partial_headers_change_nothing() -> None:
    clock = FakeClock()
    pacer = Pacer(clock=clock)
    for headers in ({"x-ratelimit-remaining-requests": "0"},  # no reset: when would it end?
                    {"x-ratelimit-remaining-requests": "zero", "x-ratelimit-reset-requests": "1s"},
                    {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "?"},
                    {"x-ratelimit-remaining-tokens": "NaN", "x-ratelimit-reset-tokens": "1s"}):
        pacer.observe(headers)
        assert pacer.plan(10).delay == 0.0
    assert pacer.stats() == {"waits": {}, "waited_s": 0.0}


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf])
def test_budgets_must_be_finite_and_positive(bad: float) -> None:
    for name in ("rpm", "tpm"):
        with pytest.raises(ValueError, match=name):
            Pacer(**{name: bad})
        with pytest.raises(ValueError, match=name):
            JudgeSpec(base_url="http://127.0.0.1:1/v1", model="m", **{name: bad})


def test_token_estimate_is_prompt_length_plus_max_tokens() -> None:
    messages = [{"role": "system", "content": "x" * 40}, {"role": "user", "content": "y" * 9}]
    assert estimate_tokens(messages, 512) == 10 + 3 + 2 * 4 + 512


def pool_of(n: int, clock: FakeClock) -> ReplicaPool:
    return ReplicaPool([Replica(f"http://r{i}/v1", None, Pacer(clock=clock)) for i in range(n)],
                       clock=clock)


def test_replicas_taken_in_turn_and_least_busy_first() -> None:
    clock = FakeClock()
    pool = pool_of(3, clock)
    chosen = []
    for _ in range(6):
        replica = pool.choose()
        chosen.append(replica.public_url[-5:-3])
        pool.release(replica, sent=True)
    assert chosen == ["r0", "r1", "r2", "r0", "r1", "r2"]
    busy = [pool.choose() for _ in range(3)]  # one attempt in hand each
    pool.release(busy[1], sent=True)
    assert pool.choose() is busy[1]  # the only one with nothing in hand


def test_a_replica_failing_in_a_row_cools_down_then_comes_back() -> None:
    clock = FakeClock()
    pool = pool_of(2, clock)
    bad, good = pool.replicas
    for _ in range(TRIP_AFTER):
        pool.release(pool.choose(avoid=[good]), sent=True, fault=True)
    assert bad.cool_downs == 1
    assert all(pool.choose() is good for _ in range(5))
    assert pool.choose(avoid=[good]) is good  # cooling loses even to an avoided replica
    assert not pool.can_fail_over([good])
    clock.now += COOL_DOWN_S
    assert pool.can_fail_over([good])
    assert pool.choose(avoid=[good]) is bad
    assert bad.stats() == {"url": "http://r0/v1", "requests": TRIP_AFTER, "failed": TRIP_AFTER,
                           "cool_downs": 1, "waits": {}, "waited_s": 0.0}


def test_a_single_replica_never_cools_down() -> None:
    clock = FakeClock()
    pool = pool_of(1, clock)
    for _ in range(TRIP_AFTER * 3):
        pool.release(pool.choose(), sent=True, fault=True)
    assert pool.replicas[0].cool_downs == 0 and pool.replicas[0].failed == TRIP_AFTER * 3


def test_replicas_need_one_name_and_distinct_urls() -> None:
    with pytest.raises(InputError, match="--endpoint-name"):
        JudgeSpec(base_url="http://a/v1", model="m", replica_urls=("http://b/v1",))
    with pytest.raises(InputError, match="given twice"):
        JudgeSpec(base_url="http://a/v1", model="m", replica_urls=("http://a/v1/",),
                  identity="name:x")
    with pytest.raises(InputError, match="credentials"):
        JudgeSpec(base_url="http://a/v1", model="m", replica_urls=("http://u:p@b/v1",),
                  identity="name:x")
    spec = JudgeSpec(base_url="http://a/v1", model="m", replica_urls=("http://b/sk-" "abcdefghij"
                                                                      "KLMNOPQRST123456/v1",),
                     identity="name:x", api_key="k-secret-1")
    assert spec.public_base_url == "name:x"
    assert set(spec.secrets) == {"k-secret-1", "sk-" + "abcdefghijKLMNOPQRST123456"}
