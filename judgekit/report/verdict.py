"""PASS / FAIL / INSUFFICIENT DATA from the primary statistic's interval.

The rule is deliberately conservative: a judge passes only when the *lower*
bound of the primary statistic's interval clears ``--min-agreement``. It fails
when the whole interval is below the threshold, or when the interval is already
as narrow as requested and its lower bound still falls short (more labels would
not rescue it). Otherwise the data cannot decide, and the verdict says how many
more labels would give the requested interval width.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from judgekit.report._format import label_of
from judgekit.report.model import Decision, Slices, Stat, VerdictResult

#: Below this many compared items no interval is trusted, whatever its width.
MIN_ITEMS = 10


def more_labels_needed(stat: Stat, target_half_width: float, planned_total: int | None) -> int:
    """Labels still needed: the planner's total for the target width, or width scaling.

    Bootstrap intervals are often wider than the analytic formula assumes, so the
    larger of "planner total minus n" and "n scaled by (width / target)^2 minus n"
    is returned (at least 1).
    """
    candidates = []
    if planned_total is not None:
        candidates.append(planned_total - stat.n)
    if stat.n > 0 and math.isfinite(stat.half_width) and stat.half_width > 0:
        scaled = stat.n * (stat.half_width / target_half_width) ** 2
        candidates.append(math.ceil(scaled) - stat.n)
    return max([1, *candidates])


def decide(
    primary: str,
    stat: Stat,
    *,
    threshold: float,
    target_half_width: float,
    planner: Callable[[], int | None],
    slices: Slices | None = None,
    slice_threshold: float | None = None,
    min_items: int = MIN_ITEMS,
) -> VerdictResult:
    """The verdict with a one-sentence reason. ``planner`` gives the total n the
    sample-size formula asks for at ``target_half_width`` (called only when needed)."""
    name = label_of(primary)

    def insufficient(reason: str) -> VerdictResult:
        needed = more_labels_needed(stat, target_half_width, planner())
        return VerdictResult(
            "INSUFFICIENT DATA",
            reason,
            primary,
            threshold,
            stat,
            target_half_width,
            needed,
            slice_threshold,
        )

    if stat.n < min_items:
        return insufficient(
            f"Only {stat.n} item(s) have both an ok judgment and a human label; at least "
            f"{min_items} are needed before {name} can be judged against {threshold:g}."
        )
    if not stat.defined or not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high)):
        return insufficient(f"{name} is undefined on these items ({stat.reason or 'no interval'}).")

    if stat.ci_high - stat.ci_low <= 1e-12:
        planned = planner()
        if planned is None or planned > stat.n:
            return insufficient(
                f"{name} is {stat.statistic:.3f} on {stat.n} items and every bootstrap resample "
                "gives the same value, so the interval carries no information yet.")

    failing: tuple[str, ...] = ()
    if slices is not None and slice_threshold is not None:
        failing = tuple(
            r.name
            for r in slices.rows
            if math.isfinite(r.primary.ci_high) and r.primary.ci_high < slice_threshold
        )

    def result(decision: Decision, reason: str, needed: int | None = None) -> VerdictResult:
        return VerdictResult(
            decision,
            reason,
            primary,
            threshold,
            stat,
            target_half_width,
            needed,
            slice_threshold,
            failing,
        )

    bounds = f"{stat.statistic:.3f} [{stat.ci_low:.3f}, {stat.ci_high:.3f}], n={stat.n}"
    if stat.ci_high < threshold:
        return result("FAIL", f"{name} is {bounds}: the whole interval lies below {threshold:g}.")
    if failing:
        return result(
            "FAIL",
            f"{name} is {bounds} overall, but slice(s) {', '.join(failing)} lie "
            f"entirely below the per-slice threshold {slice_threshold:g}.",
        )
    if stat.ci_low >= threshold:
        return result("PASS", f"{name} is {bounds}: the lower bound clears {threshold:g}.")
    if stat.half_width <= target_half_width:
        return result(
            "FAIL",
            f"{name} is {bounds}: the interval is already within "
            f"+/-{target_half_width:g} and its lower bound is below {threshold:g}.",
        )
    needed = more_labels_needed(stat, target_half_width, planner())
    return result(
        "INSUFFICIENT DATA",
        f"{name} is {bounds}: the interval straddles {threshold:g} "
        f"and is wider than +/-{target_half_width:g}; about {needed} more labels "
        "would narrow it enough to decide.",
        needed,
    )
