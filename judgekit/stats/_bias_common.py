"""Shared pieces of :mod:`judgekit.stats.bias`: the ``Estimate`` result and its helpers.

Bias figures are mostly proportions (Wilson intervals) and means of per-item
values (seeded bootstrap intervals); ``Estimate`` carries either with the
scipy-style ``statistic``/``n``/``confidence_interval``/``to_dict`` interface
the report reads, so a stored probe looks like every other statistic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from judgekit.stats._interval import refused
from judgekit.stats._validate import FloatArray, as_1d, missing_mask
from judgekit.stats.intervals import bootstrap_ci, paired_bootstrap, wilson_interval

PAIRWISE_VERDICTS: tuple[str, ...] = ("A", "B", "tie")
#: Bootstrap replicates for the intervals of means computed here.
N_RESAMPLES = 2000
NAN = float("nan")
#: The note of a NaN interval whose computation gave no reason of its own.
UNDEFINED_INTERVAL = "the interval is undefined on these data"


class Reportable(Protocol):
    """Anything with the report's ``to_dict`` (every judgekit.stats result)."""

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]: ...


def _number(value: float | None) -> float | None:
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


@dataclass(frozen=True)
class Estimate:
    """A number with its ``n``, an optional p-value, and its interval at any level.

    The interval is recomputed on demand (Wilson for proportions, a seeded
    percentile bootstrap for means), so a report can ask for 90% or 99%.
    """

    statistic: float
    n: int
    pvalue: float | None = None
    reason: str | None = None
    _interval: Callable[[float], tuple[float, float]] | None = field(
        default=None, compare=False, repr=False
    )

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        if self._interval is None or not math.isfinite(self.statistic):
            return NAN, NAN
        return self._interval(confidence_level)

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        """``{"statistic", "ci_low", "ci_high", "n"}`` (+ ``pvalue``, + ``reason``, + ``note``:
        why a defined statistic has no interval); NaN -> None."""
        return statistic_dict(
            self.statistic,
            self.confidence_interval(confidence_level),
            self.n,
            pvalue=self.pvalue,
            reason=self.reason,
        )


def statistic_dict(
    statistic: float,
    interval: tuple[float, float],
    n: int,
    *,
    pvalue: float | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """The stored/JSON shape of one figure: ``{"statistic", "ci_low", "ci_high", "n"}``,
    plus ``pvalue`` and ``reason`` when present; NaN becomes None (valid JSON).

    A defined statistic whose interval is NaN gets a ``note`` saying why in words (the
    interval's own refusal reason), so no report shows a bare "CI [n/a]".
    """
    low, high = interval
    if reason is None and _number(statistic) is not None and \
            (_number(low) is None or _number(high) is None):
        note = f"no interval: {getattr(interval, 'reason', None) or UNDEFINED_INTERVAL}"
    else:
        note = None
    out: dict[str, Any] = {
        "statistic": _number(statistic),
        "ci_low": _number(low),
        "ci_high": _number(high),
        "n": int(n),
    }
    if pvalue is not None:
        out["pvalue"] = _number(pvalue)
    if reason is not None:
        out["reason"] = reason
    if note is not None:
        out["note"] = note
    return out


def proportion(successes: int, n: int, *, pvalue: float | None = None, what: str = "") -> Estimate:
    """successes / n with its Wilson interval; NaN with a reason when n is 0."""
    if n == 0:
        return Estimate(NAN, 0, pvalue, f"no {what or 'items'} to count")
    return Estimate(
        successes / n, n, pvalue, None, lambda level: wilson_interval(successes, n, level)
    )


def obj_array(values: Any) -> np.ndarray:
    """An object array that keeps labels as Python values."""
    return np.asarray(values, dtype=object)


def _row_mean(values: FloatArray) -> FloatArray:
    return np.asarray(values.mean(axis=-1), dtype=np.float64)


def mean_estimate(values: npt.ArrayLike, *, what: str = "items", random_state: int = 0) -> Estimate:
    """Mean of per-item values with a seeded percentile bootstrap over items."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return Estimate(NAN, 0, None, f"no {what}")

    def interval(level: float) -> tuple[float, float]:
        return bootstrap_ci(
            _row_mean,
            arr,
            confidence_level=level,
            n_resamples=N_RESAMPLES,
            random_state=random_state,
            vectorized=True,
        )

    return Estimate(float(arr.mean()), int(arr.size), None, None, interval)


def labels_of(values: Iterable[Any], name: str) -> tuple[list[Any], np.ndarray]:
    arr = as_1d(values, name)
    missing = missing_mask(arr)
    return [None if m else v for v, m in zip(arr.tolist(), missing.tolist(), strict=True)], missing


def check_verdicts(values: list[Any], name: str, allowed: Sequence[Any]) -> None:
    bad = sorted({repr(v) for v in values if v is not None and v not in allowed})
    if bad:
        choices = ", ".join(map(repr, allowed))
        raise ValueError(f"{name} must contain {choices} or None; found {bad[:5]}")


def paired_shift(after: FloatArray, before: FloatArray) -> Estimate:
    """Mean of after - before with the project's paired bootstrap (seeded).

    When every item moved by the same amount (padding that lifts every score by one
    level, an injection every verdict follows) each resample gives that amount: the
    interval is refused (NaN) and says so in words, never a zero-width interval.
    """
    res = paired_bootstrap(after, before, random_state=0, n_resamples=N_RESAMPLES)
    pairs = ~(np.isnan(after) | np.isnan(before))
    moves = np.unique(after[pairs] - before[pairs])
    same = None
    if moves.size == 1:
        which = ("there is one item only" if res.n == 1 else "no item moved" if moves[0] == 0
                 else f"every item moved by the same amount ({float(moves[0]):+g})")
        same = (f"{which}, so no resample varies and the bootstrap cannot see the sampling "
                "spread; a zero-width interval would claim the whole population was observed")

    def interval(level: float) -> tuple[float, float]:
        # the replicates drawn above (seeded) give the interval at any level
        low, high = at = res.confidence_interval(level)
        collapsed = not (math.isfinite(low) and math.isfinite(high))
        return refused(same) if same is not None and collapsed else at

    return Estimate(float(res.statistic), int(res.n), float(res.pvalue), None, interval)
