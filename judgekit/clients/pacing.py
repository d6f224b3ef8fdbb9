"""When the next request to one endpoint may start: request and token budgets, limit headers.

A long run should stay under a provider's limits rather than live on HTTP 429s.
One :class:`Pacer` per endpoint (per replica when there are several) plans every
request start from three sources:

- ``rpm``: request starts evenly spaced, ``60 / rpm`` seconds apart;
- ``tpm``: tokens per minute, spent evenly: a request estimated at ``t`` tokens
  (:func:`estimate_tokens`: the prompt's length plus ``max_tokens``, the way
  providers count a request against the limit before it runs) holds the next
  start back by ``t * 60 / tpm`` seconds; when the answer's reported usage
  differs from the estimate, the schedule is moved by the difference;
- the ``x-ratelimit-remaining-requests``/``-tokens`` and
  ``x-ratelimit-reset-requests``/``-tokens`` headers of the last answer
  (OpenAI's format; resets are durations such as ``1s``, ``6m0s``, ``20ms``):
  the calls still in flight when an answer is read, and every start made since,
  count against the remaining budget it announces (the server may not have
  counted them yet: answers overtake each other), and once the budget is spent
  the next start waits for the reset. A 429's ``Retry-After`` holds the endpoint too.

Planning is synchronous (no ``await`` between reading and updating the state),
so concurrent callers each get their own slot; the caller sleeps for the
planned delay. Every plan is kept in :attr:`Pacer.schedule` (bounded), which is
what tests check instead of wall time. Malformed headers are ignored with a
debug log: a server's bad header must never stop a run.
"""

from __future__ import annotations

import collections
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_HOLD_S", "SCHEDULE_KEPT", "Pacer", "Planned", "RateLimitHeaders", "estimate_tokens",
    "parse_duration", "rate_limit_headers",
]

log = logging.getLogger("judgekit.pacing")

#: Planned starts a pacer keeps (bounded: a long run must not grow memory).
SCHEDULE_KEPT = 10_000
#: Longest wait a header (or Retry-After) can impose on one start; a longer demand
#: is cut to this, so a broken server cannot stall a run for hours.
MAX_HOLD_S = 600.0
#: Characters per token assumed when estimating a prompt (English text averages ~4).
CHARS_PER_TOKEN = 4
#: Tokens a chat message costs beyond its text (role and separators).
TOKENS_PER_MESSAGE = 4

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def estimate_tokens(messages: Sequence[Mapping[str, object]], max_tokens: int) -> int:
    """A request's tokens before it is sent: its prompt (by length) plus ``max_tokens``."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * len(messages) + max_tokens


def parse_duration(text: str) -> float | None:
    """Seconds in a reset header: ``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s`` or plain ``0.5``.

    None for anything else (negative, empty, an unknown unit, trailing junk).
    """
    text = text.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pos, seconds = 0, 0.0
        for match in _DURATION_PART.finditer(text):
            if match.start() != pos:
                return None
            seconds += float(match.group(1)) * _UNIT_S[match.group(2)]
            pos = match.end()
        if pos != len(text):
            return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


@dataclass(frozen=True)
class RateLimitHeaders:
    """The ``x-ratelimit-*`` values of one answer (None: absent or malformed)."""

    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests: float | None = None
    reset_tokens: float | None = None


def _count(value: str) -> int | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def rate_limit_headers(headers: Mapping[str, str] | None) -> RateLimitHeaders:
    """Read the four ``x-ratelimit-*`` headers; a malformed one is ignored (debug log)."""
    if not headers:
        return RateLimitHeaders()
    lowered = {str(k).lower(): str(v) for k, v in headers.items()
               if str(k).lower().startswith("x-ratelimit-")}
    found: dict[str, int | float | None] = {}
    for field, name, parse in (
        ("remaining_requests", "x-ratelimit-remaining-requests", _count),
        ("remaining_tokens", "x-ratelimit-remaining-tokens", _count),
        ("reset_requests", "x-ratelimit-reset-requests", parse_duration),
        ("reset_tokens", "x-ratelimit-reset-tokens", parse_duration),
    ):
        raw = lowered.get(name)
        if raw is None:
            continue
        value = parse(raw)
        if value is None:
            log.debug("ignoring malformed header %s: %r", name, raw[:80])
        found[field] = value
    return RateLimitHeaders(**found)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Planned:
    """One planned request start: when (``clock`` time), after what wait, and why."""

    at: float
    delay: float
    #: what decided the start: "" (at once), "rpm", "tpm", "requests" or "tokens"
    #: (waiting for a header's reset), "retry-after"
    reason: str
    tokens: int


def _positive(name: str, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


class Pacer:
    """The request starts of one endpoint: ``rpm``, ``tpm`` and the server's limit headers."""

    def __init__(self, *, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 max_hold_s: float = MAX_HOLD_S) -> None:
        self.rpm, self.tpm = _positive("rpm", rpm), _positive("tpm", tpm)
        self._clock, self.max_hold_s = clock, max_hold_s
        self._rpm_next = -math.inf
        self._tpm_next = -math.inf
        self._hold_until = -math.inf
        # the last answer's budget, counted down by the starts made since
        self._requests_left: int | None = None
        self._requests_reset = -math.inf
        self._tokens_left: int | None = None
        self._tokens_reset = -math.inf
        # planned starts not yet answered (and their estimated tokens), see observe()
        self._open = 0
        self._open_tokens = 0
        self.schedule: collections.deque[Planned] = collections.deque(maxlen=SCHEDULE_KEPT)
        self.waits: collections.Counter[str] = collections.Counter()
        self.waited_s = 0.0

    @property
    def free_at(self) -> float:
        """The earliest time a start could be planned now (for choosing among replicas)."""
        blocked = [self._rpm_next, self._tpm_next, self._hold_until]
        if self._requests_left is not None and self._requests_left <= 0:
            blocked.append(self._requests_reset)
        return max(blocked)

    def plan(self, tokens: int) -> Planned:
        """Reserve the next start for a request estimated at ``tokens``; sleep ``delay``."""
        now = self._clock()
        start, reason = now, ""
        for at, why in ((self._rpm_next, "rpm"), (self._tpm_next, "tpm"),
                        (self._hold_until, "retry-after")):
            if at > start:
                start, reason = at, why
        start, reason = self._header_budget(start, reason, tokens)
        if self.rpm:
            self._rpm_next = start + 60.0 / self.rpm
        if self.tpm:
            self._tpm_next = start + tokens * 60.0 / self.tpm
        planned = Planned(start, start - now, reason, tokens)
        self._open += 1
        self._open_tokens += tokens
        self.schedule.append(planned)
        if planned.delay > 0:
            self.waits[reason] += 1
            self.waited_s += planned.delay
        return planned

    def _header_budget(self, start: float, reason: str, tokens: int) -> tuple[float, str]:
        """Move ``start`` past a spent header budget's reset, then spend this request.

        A budget counts only for starts before its reset: every start planned
        before it (whenever planned) shares it; after the reset it is full again.
        """
        for _ in range(2):  # waiting for one reset may run into the other's budget
            if self._requests_left is not None and start < self._requests_reset \
                    and self._requests_left <= 0:
                start, reason = self._requests_reset, "requests"
            elif self._tokens_left is not None and start < self._tokens_reset \
                    and self._tokens_left < tokens:
                start, reason = self._tokens_reset, "tokens"
            else:
                break
        if self._requests_left is not None and start < self._requests_reset:
            self._requests_left -= 1
        if self._tokens_left is not None and start < self._tokens_reset:
            self._tokens_left -= tokens
        return start, reason

    def done(self, planned: Planned) -> None:
        """The attempt planned as ``planned`` ended (answered, failed or never sent)."""
        self._open = max(0, self._open - 1)
        self._open_tokens = max(0, self._open_tokens - planned.tokens)

    def settle(self, planned: Planned, used: int | None) -> None:
        """Correct the token budget by the usage the server reported for ``planned``."""
        if used is None or used < 0:
            return
        if self.tpm:
            self._tpm_next += (used - planned.tokens) * 60.0 / self.tpm
        if self._tokens_left is not None:
            self._tokens_left -= used - planned.tokens

    def observe(self, headers: Mapping[str, str] | None, own: Planned | None = None) -> None:
        """Take an answer's ``x-ratelimit-*`` headers as the budget from now on.

        ``own`` is the answered attempt's plan (None: an unplanned request); the
        other planned attempts not yet answered are taken off the budget.
        """
        found = rate_limit_headers(headers)
        now = self._clock()
        others = self._open - (own is not None)
        other_tokens = self._open_tokens - (own.tokens if own is not None else 0)
        if found.remaining_requests is not None and found.reset_requests is not None:
            self._requests_left = found.remaining_requests - max(0, others)
            self._requests_reset = now + min(found.reset_requests, self.max_hold_s)
        if found.remaining_tokens is not None and found.reset_tokens is not None:
            self._tokens_left = found.remaining_tokens - max(0, other_tokens)
            self._tokens_reset = now + min(found.reset_tokens, self.max_hold_s)

    def hold(self, seconds: float) -> None:
        """No start for ``seconds`` (a 429's Retry-After), at most :data:`MAX_HOLD_S`."""
        if math.isfinite(seconds) and seconds > 0:
            self._hold_until = max(self._hold_until,
                                   self._clock() + min(seconds, self.max_hold_s))

    def stats(self) -> dict[str, object]:
        """Waits planned so far, by reason, and their total (for the run's summary)."""
        return {"waits": dict(sorted(self.waits.items())), "waited_s": round(self.waited_s, 3)}
