"""Prompt injection in the judged text, and identical pairs: two probes of a judge's obedience.

Part of :mod:`judgekit.stats.bias` (which re-exports it). Both work on plain
arrays the probes in :mod:`judgekit.judging.probe_injection` produce:

- injection: each verdict as a *closeness to the injected target* (a number that
  is largest at the target: the ordinal value, pass = 1, the preference for the
  injected side of a pair, or 1/0 for "is the target label"); a verdict moved
  *toward* the target when its closeness grew after the injection. The *net*
  move, (toward - away) / items, is what the gate reads: a judge whose verdict
  merely varies between calls moves away as often as toward (the plain and the
  injected call are exchangeable, so the net has mean 0), while the flip rate
  (toward / items not already at the target) counts every such change as a move
  and is shown only as a description.
- identical pairs: the verdicts on pairs whose two responses are the same text.
  Any decisive verdict is then about the slot, not the content.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit.stats._bias_common import (
    NAN,
    PAIRWISE_VERDICTS,
    Estimate,
    check_verdicts,
    labels_of,
    paired_shift,
)
from judgekit.stats._exact import clopper_pearson_interval, tango_interval
from judgekit.stats._validate import FloatArray, as_float_with_missing, check_same_length
from judgekit.stats.significance import binomial_test

__all__ = [
    "IdenticalPairsResult",
    "InjectionEffectResult",
    "PooledInjection",
    "identical_pairs",
    "injection_effect",
    "pooled_injection_effect",
    "worst_flip_rate",
    "worst_net_move",
]


def sign_test_dict(k: int, n: int, confidence_level: float, empty: str) -> dict[str, Any]:
    """The stored shape of an exact two-sided binomial test of ``k`` of ``n`` against 0.5."""
    if n == 0:
        return {"k": 0, "n": 0, "statistic": None, "ci_low": None, "ci_high": None,
                "pvalue": None, "reason": empty}
    return {"k": k, **binomial_test(k, n, 0.5).to_dict(confidence_level, method="exact")}


def exact_proportion(successes: int, n: int, *, pvalue: float | None = None,
                     what: str = "") -> Estimate:
    """successes / n with its Clopper-Pearson interval (a gate reads its lower bound)."""
    if n == 0:
        return Estimate(NAN, 0, pvalue, f"no {what or 'items'} to count")
    return Estimate(successes / n, n, pvalue, None,
                    lambda level: clopper_pearson_interval(successes, n, level))


def net_move(toward: int, away: int, n: int) -> Estimate:
    """(toward - away) / n with Tango's paired score interval; ``pvalue`` is the exact
    McNemar (sign) test of toward against away, valid for one cell."""
    if n == 0:
        return Estimate(NAN, 0, None, "no item has a verdict with and without the injection")
    changed = toward + away
    pvalue = float(binomial_test(toward, changed).pvalue) if changed else 1.0
    return Estimate((toward - away) / n, n, pvalue, None,
                    lambda level: tango_interval(toward, away, n, level))


@dataclass(frozen=True)
class InjectionEffectResult:
    """How far injected text moved the verdicts toward its target; ``statistic`` = flip rate.

    ``net`` = (toward - away) / items with both verdicts, the figure a gate reads.
    ``moves`` has one entry per input item: +1 toward the target, -1 away, 0 unchanged,
    NaN when either verdict failed.
    """

    flip_rate: Estimate
    net: Estimate
    shift: Estimate
    toward: int
    away: int
    unchanged: int
    at_target: int
    n: int
    n_failed: int
    moves: FloatArray

    @property
    def statistic(self) -> float:
        return self.flip_rate.statistic

    def toward_indices(self) -> list[int]:
        """Input positions whose verdict moved toward the injected target."""
        return [int(i) for i in np.flatnonzero(np.nan_to_num(self.moves) > 0)]

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        return {
            "flip_rate": self.flip_rate.to_dict(confidence_level),
            "net": self.net.to_dict(confidence_level),
            "shift": self.shift.to_dict(confidence_level),
            "sign_test": sign_test_dict(self.toward, self.toward + self.away, confidence_level,
                                        "no verdict changed"),
            "counts": {"toward": self.toward, "away": self.away, "unchanged": self.unchanged,
                       "at_target_before": self.at_target, "failed": self.n_failed},
        }


def _closeness(values: Iterable[Any], name: str, top: float) -> FloatArray:
    arr = as_float_with_missing(values, name)
    finite = arr[~np.isnan(arr)]
    if (finite > top).any():
        raise ValueError(f"{name} has a closeness above the target's ({top:g}): {finite.max():g}")
    return arr


def _check_top(top: float) -> float:
    if isinstance(top, bool) or not isinstance(top, int | float) or not math.isfinite(top):
        raise ValueError(f"top must be a finite number (the target's closeness), got {top!r}")
    return float(top)


def injection_effect(base: Iterable[Any], injected: Iterable[Any], *, top: float,
                     shift_reason: str | None = None) -> InjectionEffectResult:
    """One template at one position: flip rate toward the target and the mean shift.

    ``base[i]`` and ``injected[i]`` are item i's closeness to the target before and
    after the injection (None/NaN = failed judgment, excluded and counted); ``top`` is
    the target's own closeness. Flip rate = items that moved toward the target / items
    not already at it (Clopper-Pearson); net = (toward - away) / items with both verdicts
    (Tango's paired interval, exact McNemar ``pvalue``); shift = mean(injected - base)
    over items with both verdicts (paired bootstrap, ``pvalue`` of "no shift"), or NaN
    with ``shift_reason``
    when the scale has no order to shift along (categorical).
    """
    limit = _check_top(top)
    b = _closeness(base, "base", limit)
    a = _closeness(injected, "injected", limit)
    check_same_length(("base", b), ("injected", a))
    valid = ~(np.isnan(b) | np.isnan(a))
    moves = np.full(b.shape, NAN)
    moves[valid] = np.sign(a[valid] - b[valid])
    n = int(valid.sum())
    at_target = int((valid & (b == limit)).sum())
    toward = int((moves > 0).sum())
    away = int((moves < 0).sum())
    flip = exact_proportion(toward, n - at_target,
                            what="items below the target before injection")
    if shift_reason is not None:
        shift = Estimate(NAN, n, None, shift_reason)
    elif n == 0:
        shift = Estimate(NAN, 0, None, "no item has a verdict with and without the injection")
    else:
        shift = paired_shift(a, b)
    return InjectionEffectResult(flip, net_move(toward, away, n), shift, toward, away,
                                 n - toward - away, at_target, n, int((~valid).sum()), moves)


def worst_flip_rate(effects: Sequence[InjectionEffectResult]) -> Estimate:
    """The highest flip rate over several cells, with a simultaneous interval.

    Each cell's Clopper-Pearson interval is taken at level 1 - (1 - level) / m (Bonferroni over
    the m cells with a defined rate), so all m cover together with at least the
    nominal level; the interval for the largest true rate is then [max of the lower
    bounds, max of the upper bounds]. ``n`` is the worst cell's.
    """
    cells = [(e.toward, e.n - e.at_target) for e in effects if e.n - e.at_target > 0]
    if not cells:
        return Estimate(NAN, 0, None, "no item was below the target before injection")
    worst = max(range(len(cells)), key=lambda c: cells[c][0] / cells[c][1])
    k, n = cells[worst]

    def interval(level: float) -> tuple[float, float]:
        each = 1 - (1 - level) / len(cells)
        bounds = [clopper_pearson_interval(t, m, each) for t, m in cells]
        return max(b[0] for b in bounds), max(b[1] for b in bounds)

    return Estimate(k / n, n, None, None, interval)


def worst_net_move(effects: Sequence[InjectionEffectResult]) -> Estimate:
    """The highest net move toward the target over several cells, with a simultaneous interval.

    As :func:`worst_flip_rate`, with each cell's Tango interval at level 1 - (1 - level) / m
    (Bonferroni over the m cells with an item): the lower bound exceeds a threshold only
    when, with the nominal confidence, some cell moves more verdicts toward than away.
    ``pvalue`` is the worst cell's exact McNemar p times m (Bonferroni, at most 1).
    """
    defined = [e for e in effects if e.n > 0]
    if not defined:
        return Estimate(NAN, 0, None, "no item has a verdict with and without the injection")
    cells = [(e.toward, e.away, e.n) for e in defined]
    worst = max(range(len(cells)), key=lambda c: (cells[c][0] - cells[c][1]) / cells[c][2])
    toward, away, n = cells[worst]
    cell_p = defined[worst].net.pvalue
    pvalue = None if cell_p is None else min(1.0, cell_p * len(cells))

    def interval(level: float) -> tuple[float, float]:
        each = 1 - (1 - level) / len(cells)
        bounds = [tango_interval(t, a, m, each) for t, a, m in cells]
        return max(b[0] for b in bounds), max(b[1] for b in bounds)

    return Estimate((toward - away) / n, n, pvalue, None, interval)


@dataclass(frozen=True)
class PooledInjection:
    """The mean shift and the mean net move over every cell, each item counted once."""

    shift: Estimate
    net: Estimate

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        return {"shift": self.shift.to_dict(confidence_level),
                "net": self.net.to_dict(confidence_level)}


def _mean_net(per_item: FloatArray) -> Estimate:
    """Mean of the items' net moves with Student's t interval and test of "mean 0".

    Each item's net move (its cells' moves toward minus away, over its cells) has mean 0
    when every injected call is exchangeable with the plain one, whatever the judge's
    noise; the items are independent, so the t test holds its level where the old count
    of items moving "on balance" did not (items sharing one plain verdict move together,
    all toward when the plain call happened to land low).
    """
    from scipy import stats  # a second to import: only where it is used

    n = int(per_item.size)
    if n == 0:
        return Estimate(NAN, 0, None, "no item has a verdict with and without the injection")
    mean = float(per_item.mean())
    if n < 2:
        return Estimate(mean, n, None, "one item: no spread to test the mean against")
    sd = float(per_item.std(ddof=1))
    if sd == 0:
        same = ("no item moved" if mean == 0 else
                f"every item moved by the same net amount ({mean:+g})")
        return Estimate(mean, n, 1.0 if mean == 0 else None,
                        f"{same}: the t interval has no spread to work with")
    se = sd / math.sqrt(n)
    pvalue = float(2 * stats.t.sf(abs(mean) / se, n - 1))

    def interval(level: float) -> tuple[float, float]:
        half = float(stats.t.ppf(1 - (1 - level) / 2, n - 1)) * se
        return max(-1.0, mean - half), min(1.0, mean + half)

    return Estimate(mean, n, pvalue, None, interval)


def pooled_injection_effect(base: Iterable[Any], injected: Sequence[Iterable[Any]], *,
                            top: float, shift_reason: str | None = None) -> PooledInjection:
    """The overall shift and net move over ``injected`` (one array per template x position).

    The cells share their items, so they are not independent: each item contributes
    one number. Shift = mean over items of the mean change over its valid cells (a
    paired bootstrap of the item means against the base); net = mean over items of
    (cells moved toward - cells moved away) / valid cells, with a t interval and test.
    """
    limit = _check_top(top)
    b = _closeness(base, "base", limit)
    cells = [_closeness(c, f"injected[{k}]", limit) for k, c in enumerate(injected)]
    if not cells:
        raise ValueError("injected must hold at least one array")
    check_same_length(("base", b), *((f"injected[{k}]", c) for k, c in enumerate(cells)))
    grid = np.vstack(cells)  # cells x items
    valid = ~np.isnan(grid) & ~np.isnan(b)[None, :]
    diff = np.where(valid, grid - b[None, :], 0.0)
    has_any = valid.any(axis=0)
    counted = np.maximum(valid.sum(axis=0), 1)
    if shift_reason is not None:
        shift = Estimate(NAN, int(has_any.sum()), None, shift_reason)
    elif not has_any.any():
        shift = Estimate(NAN, 0, None, "no item has a verdict with and without the injection")
    else:
        mean_after = np.full(b.shape, NAN)
        mean_after[has_any] = (b + diff.sum(axis=0) / counted)[has_any]
        shift = paired_shift(mean_after, b)
    net = (np.sign(diff).sum(axis=0) / counted)[has_any]
    return PooledInjection(shift, _mean_net(np.asarray(net, dtype=np.float64)))


@dataclass(frozen=True)
class IdenticalPairsResult:
    """Verdicts on pairs of two identical responses; ``statistic`` = the decisive share."""

    n: int
    n_failed: int
    counts: dict[str, int]
    allow_tie: bool

    @property
    def decisive(self) -> int:
        return self.counts["A"] + self.counts["B"]

    @property
    def decisive_rate(self) -> Estimate:
        if not self.allow_tie:
            return Estimate(NAN, self.n, None, "the rubric allows no tie, so every verdict is "
                            "decisive by construction: only the slot split is informative")
        return exact_proportion(self.decisive, self.n, what="valid identical pairs")

    @property
    def statistic(self) -> float:
        return self.decisive_rate.statistic

    @property
    def pvalue(self) -> float:
        return float(binomial_test(self.counts["A"], self.decisive).pvalue) if self.decisive \
            else NAN

    @property
    def first_slot_share(self) -> Estimate:
        """Share of decisive verdicts for A (the slot shown first); 0.5 is slot-blind.

        ``pvalue``: exact two-sided binomial test of that share against 0.5.
        """
        return exact_proportion(self.counts["A"], self.decisive,
                                pvalue=self.pvalue if self.decisive else None,
                                what="decisive verdicts")

    @property
    def slot_imbalance(self) -> Estimate:
        """|2 P(A | decisive) - 1|: 0 slot-blind, 1 always the same slot.

        Its interval is the image of the Clopper-Pearson interval of P(A) under the map
        (the distance from 0.5, doubled), which covers at least as often as that interval.
        """
        k, m = self.counts["A"], self.decisive
        if m == 0:
            return Estimate(NAN, 0, None, "no decisive verdicts")

        def interval(level: float) -> tuple[float, float]:
            low, high = clopper_pearson_interval(k, m, level)
            lo = max(0.0, 2 * low - 1, 1 - 2 * high)
            return lo, max(abs(2 * low - 1), abs(2 * high - 1))

        return Estimate(abs(2 * k / m - 1), m, None, None, interval)

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        return {
            "identical_decisive_rate": self.decisive_rate.to_dict(confidence_level),
            "identical_first_slot_share": self.first_slot_share.to_dict(confidence_level),
            "identical_slot_imbalance": self.slot_imbalance.to_dict(confidence_level),
            "verdict_counts": dict(self.counts),
            "allow_tie": self.allow_tie,
            "n_failed": self.n_failed,
        }


def identical_pairs(verdicts: Iterable[Any], *, allow_tie: bool) -> IdenticalPairsResult:
    """Decisive share and slot split of verdicts on identical pairs ("A", "B", "tie", None).

    ``allow_tie`` says whether the rubric offers a tie; without one the decisive share
    is 1 by construction (NaN with that reason) and a tie verdict is a ValueError.
    """
    labels, _ = labels_of(verdicts, "verdicts")
    check_verdicts(labels, "verdicts", PAIRWISE_VERDICTS if allow_tie else ("A", "B"))
    counts = {v: sum(1 for x in labels if x == v) for v in PAIRWISE_VERDICTS}
    failed = sum(1 for x in labels if x is None)
    return IdenticalPairsResult(len(labels) - failed, failed, counts, allow_tie)
