"""Aggregating per-item correctness: micro/macro accuracy and pass@k / pass^k.

Micro accuracy weights every item equally (it follows the traffic mix);
macro accuracy weights every group equally (a small slice is not drowned out).
With 81/90 right in one slice and 1/10 in another, micro is 0.82 and macro
0.50: both are right answers to different questions, so reports show both
with each group's n. Failures are never silently scored: refusals and
unparseable outputs are counted separately and the policy says whether they
count as wrong or are left out.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit.stats._result_outcomes import GroupAccuracy, GroupedAccuracyResult
from judgekit.stats._validate import as_1d, as_binary, check_choice, check_same_length
from judgekit.types import ANSWERED_FAILURES, STATUSES, TRANSIENT_STATUSES

__all__ = ["grouped_accuracy", "pass_at_k", "pass_hat_k"]

Policy = Literal["exclude", "as_wrong"]


def _statuses(status: Iterable[Any] | npt.ArrayLike | None, n: int) -> list[str]:
    if status is None:
        return ["ok"] * n
    values = as_1d(status, "status").tolist()
    unknown = sorted({repr(s) for s in values if s not in STATUSES})
    if unknown:
        raise ValueError(
            f"status contains unknown values {', '.join(unknown[:5])}; "
            f"allowed: {', '.join(STATUSES)}"
        )
    return [str(s) for s in values]


def grouped_accuracy(
    correct: Iterable[Any] | npt.ArrayLike,
    groups: Iterable[Hashable] | npt.ArrayLike,
    *,
    status: Iterable[Any] | npt.ArrayLike | None = None,
    policy: Policy = "exclude",
    all_groups: Iterable[Hashable] | None = None,
) -> GroupedAccuracyResult:
    """Micro and macro accuracy with per-group n, Wilson intervals and status counts.

    ``correct`` holds 0/1 (or bools) per item, None/NaN allowed only where
    ``status`` is not ``"ok"``. ``policy`` decides what an answered failure
    (refusal, parse_error, truncated) does: ``"exclude"`` leaves it out of the
    denominators, ``"as_wrong"`` counts it as a wrong answer. Transient failures
    (rate_limited, timeout, api_error) never reached the model and are always
    excluded. A group with no item left to score is an error, never a silent 0;
    ``all_groups`` names groups that must be present.
    """
    check_choice(policy, "policy", ("exclude", "as_wrong"))
    outcome = as_binary(correct, "correct")
    labels = as_1d(groups, "groups")
    n_items = check_same_length(("correct", outcome), ("groups", labels))
    statuses = _statuses(status, n_items)
    if len(statuses) != n_items:
        raise ValueError(f"length mismatch: correct={n_items}, status={len(statuses)}")
    names = [str(g) for g in labels.tolist()]
    if any(g is None for g in labels.tolist()):
        raise ValueError("groups contains None; give every item a group name")
    tallies: dict[str, dict[str, Any]] = {}
    for i, (name, state, value) in enumerate(zip(names, statuses, outcome.tolist(), strict=True)):
        tally = tallies.setdefault(name, {"n": 0, "correct": 0, "status": {}})
        tally["status"][state] = tally["status"].get(state, 0) + 1
        if state == "ok":
            if math.isnan(value):
                raise ValueError(f"item {i} has status 'ok' but no correctness value")
            tally["n"] += 1
            tally["correct"] += int(value)
        elif state in ANSWERED_FAILURES and policy == "as_wrong":
            tally["n"] += 1
        elif state not in ANSWERED_FAILURES and state not in TRANSIENT_STATUSES:
            raise AssertionError(f"unhandled status {state!r}")  # pragma: no cover
    if all_groups is not None:
        missing = [str(g) for g in all_groups if str(g) not in tallies]
        if missing:
            raise ValueError(f"declared groups have no items: {', '.join(missing)}")
    results: dict[str, GroupAccuracy] = {}
    for name in sorted(tallies):
        tally = tallies[name]
        if tally["n"] == 0:
            counts = ", ".join(f"{k}={v}" for k, v in sorted(tally["status"].items()))
            raise ValueError(
                f"group {name!r} has no scorable item under policy={policy!r} ({counts}); "
                "its accuracy is undefined, not 0"
            )
        results[name] = GroupAccuracy(
            name, tally["correct"] / tally["n"], tally["n"], tally["correct"], dict(tally["status"])
        )
    totals: dict[str, int] = {}
    for state in statuses:
        totals[state] = totals.get(state, 0) + 1
    n = sum(g.n for g in results.values())
    micro = sum(g.correct for g in results.values()) / n
    macro = float(np.mean([g.accuracy for g in results.values()]))
    return GroupedAccuracyResult(
        statistic=micro,
        n=n,
        micro=micro,
        macro=macro,
        policy=policy,
        groups=results,
        status_counts=totals,
        abstentions=totals.get("refusal", 0),
        unparseable=totals.get("parse_error", 0),
    )


def _check_nck(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"n (samples per problem) must be at least 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c (correct samples) must be between 0 and n={n}, got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n}, got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): P(at least one of k samples is correct).

    1 - C(n - c, k) / C(n, k), computed as a stable product. The naive
    1 - (1 - c/n)**k is biased low. Example: n=10, c=3, k=5 gives 0.917.
    """
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (Yao et al. 2024, tau-bench): P(all k samples are correct).

    C(c, k) / C(n, k), the reliability counterpart of pass@k.
    """
    _check_nck(n, c, k)
    if c < k:
        return 0.0
    i = np.arange(k)
    return float(np.prod((c - i) / (n - i)))
