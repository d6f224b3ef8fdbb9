"""The confidence-interval value every statistic returns, and the rules that refuse one.

An interval is a ``(low, high)`` pair, so existing code keeps unpacking it, with
two extra attributes: ``reason`` says why the bounds are NaN (the interval was
refused), and ``n_undefined`` counts the bootstrap resamples in which the
statistic was undefined (those are dropped, never silently).

Refusal rules (docs/statistics.md, "When an interval is refused"):

- more than :data:`MAX_UNDEFINED_SHARE` of the resamples have an undefined
  statistic: the percentile interval would describe only the resamples where it
  exists, so it is NaN with that reason;
- every resample gives the same value: the bootstrap cannot see the sampling
  spread (a zero-width interval would claim the whole population was observed),
  so it is NaN with that reason unless the caller has a boundary-aware interval.
"""

from __future__ import annotations

import math

#: Share of bootstrap resamples that may have an undefined statistic before the interval is
#: refused (NaN with a reason). Documented in docs/statistics.md.
MAX_UNDEFINED_SHARE = 0.05

#: An interval narrower than this (relative to 1) counts as a point.
ZERO_WIDTH = 1e-12

COLLAPSED_REASON = (
    "every bootstrap resample gives the same value, so the bootstrap cannot see the "
    "sampling spread; a zero-width interval would claim the whole population was observed"
)


class ConfidenceInterval(tuple[float, float]):
    """``(low, high)`` with ``reason`` (why NaN) and ``n_undefined`` (dropped resamples)."""

    reason: str | None
    n_undefined: int

    def __new__(
        cls, low: float, high: float, reason: str | None = None, n_undefined: int = 0
    ) -> ConfidenceInterval:
        self = super().__new__(cls, (float(low), float(high)))
        self.reason = reason
        self.n_undefined = int(n_undefined)
        return self

    @property
    def low(self) -> float:
        return self[0]

    @property
    def high(self) -> float:
        return self[1]

    @property
    def defined(self) -> bool:
        return math.isfinite(self[0]) and math.isfinite(self[1])


def refused(reason: str, n_undefined: int = 0) -> ConfidenceInterval:
    """A NaN interval that says why it was refused."""
    return ConfidenceInterval(math.nan, math.nan, reason, n_undefined)


def is_zero_width(low: float, high: float) -> bool:
    return math.isfinite(low) and math.isfinite(high) and high - low <= ZERO_WIDTH


def too_many_undefined(n_undefined: int, n_resamples: int) -> str | None:
    """The refusal reason when too many resamples were undefined, else None."""
    if n_resamples and n_undefined > MAX_UNDEFINED_SHARE * n_resamples:
        return (
            f"the statistic is undefined in {n_undefined} of {n_resamples} bootstrap resamples "
            f"(more than {MAX_UNDEFINED_SHARE:.0%}), so a percentile interval would describe "
            "only the resamples where it exists"
        )
    return None


__all__ = [
    "COLLAPSED_REASON",
    "MAX_UNDEFINED_SHARE",
    "ConfidenceInterval",
    "is_zero_width",
    "refused",
    "too_many_undefined",
]
