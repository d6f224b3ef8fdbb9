"""PASS / FAIL / INSUFFICIENT DATA from the primary statistic's interval.

The rule is deliberately conservative: a judge passes only when the *lower*
bound of the primary statistic's interval clears ``--min-agreement``. It fails
when the whole interval is below the threshold, or when the estimate itself is
below the threshold and the interval is already as narrow as requested (more
labels would not rescue it). An estimate at or above the threshold whose lower
bound falls short is never a FAIL: the data cannot decide yet, and the verdict
says how many more labels would lift the lower bound over the threshold if the
estimate held. Otherwise the verdict says how many more labels would give the
requested interval width.

Two situations are decided before the interval is read, because a bootstrap
interval misdescribes them (see :mod:`judgekit.report._degenerate`): a judge
that gave one verdict on every item fails, since it cannot discriminate; and an
interval that collapsed to a point is explained (constant human labels, perfect
agreement judged by a Wilson bound) instead of being taken at face value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from judgekit.report import _degenerate
from judgekit.report._format import label_of, num
from judgekit.report.model import Agreement, Decision, Slices, Stat, VerdictResult
from judgekit.report.stat_intervals import COLLAPSED_WIDTH

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


def labels_to_clear(stat: Stat, threshold: float, planned_total: int | None) -> int:
    """More labels for the lower bound to clear ``threshold`` if the estimate held.

    The interval must shrink until the estimate minus its lower side is
    ``estimate - threshold``: the planner's total for that half-width minus n, or
    n scaled by (observed lower distance / needed distance)^2 minus n, whichever is
    larger (bootstrap intervals can be wider, or lopsided, beyond what the formula
    assumes). At least 1.
    """
    margin = stat.statistic - threshold
    candidates = [] if planned_total is None else [planned_total - stat.n]
    below = stat.statistic - stat.ci_low
    if stat.n > 0 and margin > 0 and math.isfinite(below) and below > 0:
        candidates.append(math.ceil(stat.n * (below / margin) ** 2) - stat.n)
    return max([1, *candidates])


def _failing_slices(slices: Slices | None, slice_threshold: float | None) -> tuple[str, ...]:
    if slices is None or slice_threshold is None:
        return ()
    return tuple(
        r.name
        for r in slices.rows
        if math.isfinite(r.primary.ci_high) and r.primary.ci_high < slice_threshold
    )


@dataclass(frozen=True)
class VerdictInputs:
    """What the agreement rule reads: the figure, the thresholds, and what explains it.

    ``stat`` is the figure of statistic ``primary`` the rule reads; ``planner(d)`` gives
    the total n the sample-size formula asks for at half-width ``d`` (called only when
    needed). ``agreement`` (the judge-vs-human section, with its confusion matrix) lets
    the rule recognise a constant judge, constant human labels and perfect agreement.
    ``estimate`` says which figure ``stat`` is when it is not the plain primary statistic
    (``weighted``: the population estimate of a non-uniform labeling queue); it is
    appended to the reason. ``available`` is how many more items could still be labeled
    (the dataset's items not yet compared); None when unknown.
    """

    primary: str
    stat: Stat
    threshold: float
    target_half_width: float
    planner: Callable[[float], int | None]
    slices: Slices | None = None
    slice_threshold: float | None = None
    min_items: int = MIN_ITEMS
    agreement: Agreement | None = None
    confidence_level: float = 0.95
    estimate: str | None = None
    weighted: bool = False
    available: int | None = None


def decide(inputs: VerdictInputs) -> VerdictResult:
    """The verdict with its reason (:func:`_decide`), never asking for more than there is.

    An INSUFFICIENT DATA that would need more labeled items than ``inputs.available``
    says instead that no number of labels on this dataset can decide, and what would:
    more items, a lower ``--min-agreement`` or a wider ``--half-width``
    (``labels_needed`` keeps the count, ``labels_available`` says how many there are).
    """
    verdict = _decide(inputs)
    needed, available = verdict.labels_needed, inputs.available
    if available is None:
        return verdict
    verdict = replace(verdict, labels_available=max(0, available))
    if verdict.decision != "INSUFFICIENT DATA" or needed is None or needed <= available:
        return verdict
    reason = _beyond_dataset(verdict, needed, max(0, available))
    if reason is None:  # a reason of its own: the report adds what is left to label
        asks = f"; about {needed} more labels would settle it"
        return replace(verdict, reason=verdict.reason.replace(asks, ""))
    estimate = inputs.estimate
    return replace(verdict, reason=reason if estimate is None else f"{reason} {estimate}")


def _beyond_dataset(verdict: VerdictResult, needed: int, available: int) -> str | None:
    """Why no number of labels on this dataset decides at this interval, and what would.

    None for a reason of its own (too few items, perfect agreement, constant labels):
    its projection rests on too little to say no label could decide, so the report
    only says how many items are left to label (``needed_sentence``).
    """
    stat, threshold = verdict.statistic, verdict.threshold
    name = label_of(verdict.primary)
    left = ("every item is already labeled" if available == 0
            else f"only {available} more item(s) can be labeled")
    extra = needed - available
    more_items = f"about {extra} more item(s) than this dataset has"
    total = stat.n + available
    shrink = math.sqrt(stat.n / total) if stat.n > 0 and total > 0 else math.nan
    bounds = f"{num(stat.statistic)} [{num(stat.ci_low)}, {num(stat.ci_high)}], n={stat.n}"
    original = verdict.agreement_text
    if "would lift the lower bound" in original or "lift the lower bound over" in original:
        low = stat.statistic - (stat.statistic - stat.ci_low) * shrink
        text = (f"{name} is {bounds}: the estimate is at or above {threshold:g} but the lower "
                f"bound is below it, and if the estimate held no number of labels on this dataset "
                f"would lift it: {left}, and about {needed} would be needed. What would "
                f"decide: {more_items}, or a --min-agreement of {num(low)} or lower (about "
                f"where the lower bound would be with every item labeled).")
    elif "narrow it enough to decide" in original:
        width = stat.half_width * shrink
        text = (f"{name} is {bounds}: the interval straddles {threshold:g} and is wider "
                f"than +/-{verdict.target_half_width:g}, and at its width no number of labels on "
                f"this dataset would narrow it enough: {left}, and about {needed} would be "
                "needed. "
                f"What would decide: {more_items}, or a --half-width of {num(width, 2)} or "
                "more (about the interval's half-width with every item labeled).")
    else:
        return None
    return text


def _decide(inputs: VerdictInputs) -> VerdictResult:
    """The verdict with a one-sentence reason, by the agreement rule alone."""
    primary, stat, threshold = inputs.primary, inputs.stat, inputs.threshold
    target_half_width, planner = inputs.target_half_width, inputs.planner
    slice_threshold, agreement = inputs.slice_threshold, inputs.agreement
    confidence_level, estimate, min_items = (inputs.confidence_level, inputs.estimate,
                                             inputs.min_items)
    name = label_of(primary)

    def make(
        decision: Decision,
        reason: str,
        needed: int | None = None,
        failing: tuple[str, ...] = (),
    ) -> VerdictResult:
        return VerdictResult(
            decision,
            reason if estimate is None else f"{reason} {estimate}",
            primary,
            threshold,
            stat,
            target_half_width,
            needed,
            slice_threshold,
            failing,
            inputs.weighted,
        )

    def insufficient(reason: str, needed: int | None = None) -> VerdictResult:
        if needed is None:
            needed = more_labels_needed(stat, target_half_width, planner(target_half_width))
        return make("INSUFFICIENT DATA", reason, needed)

    if stat.n < min_items:
        return insufficient(
            f"Only {stat.n} item(s) have both an ok judgment and a human label; at least "
            f"{min_items} are needed before {name} can be judged against {threshold:g}."
        )
    failing = _failing_slices(inputs.slices, slice_threshold)
    constant = (
        None if agreement is None else _degenerate.constant_judge(agreement, confidence_level)
    )
    if constant is not None and constant.miss.ci_high < threshold:
        return make(
            "FAIL",
            f"The judge gave '{constant.label}' on all {constant.n} items; it cannot tell "
            f"the classes apart ({constant.evidence()}: even the upper bound is below "
            f"{threshold:g}).",
            failing=failing,
        )
    if not stat.defined:
        return insufficient(f"{name} is undefined on these items ({stat.reason or 'no value'}).")
    no_interval = not (math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high))
    perfect = agreement is not None and _degenerate.is_perfect(agreement.confusion)
    if no_interval or perfect or stat.ci_high - stat.ci_low <= COLLAPSED_WIDTH:
        collapsed = _collapsed(inputs, constant)
        if collapsed is not None:
            decision, reason, needed = collapsed
            if decision != "PASS":
                return insufficient(reason, needed)
            if not failing:  # a failing slice still fails below
                return make("PASS", reason)
        elif no_interval:
            return insufficient(
                f"{name} is {num(stat.statistic)} on {stat.n} items but has no interval "
                f"({stat.note or stat.reason or 'undefined'})."
            )

    bounds = f"{num(stat.statistic)} [{num(stat.ci_low)}, {num(stat.ci_high)}], n={stat.n}"
    if stat.ci_high < threshold:
        return make(
            "FAIL",
            f"{name} is {bounds}: the whole interval lies below {threshold:g}.",
            failing=failing,
        )
    if failing:
        return make(
            "FAIL",
            f"{name} is {bounds} overall, but slice(s) {', '.join(failing)} lie "
            f"entirely below the per-slice threshold {slice_threshold:g}.",
            failing=failing,
        )
    if stat.ci_low >= threshold:
        return make("PASS", f"{name} is {bounds}: the lower bound clears {threshold:g}.")
    if stat.statistic < threshold:
        if stat.half_width <= target_half_width:
            return make(
                "FAIL",
                f"{name} is {bounds}: the estimate is below {threshold:g} and the interval "
                f"is already within +/-{target_half_width:g}, so more labels would not lift it.",
            )
        needed = more_labels_needed(stat, target_half_width, planner(target_half_width))
        return make(
            "INSUFFICIENT DATA",
            f"{name} is {bounds}: the interval straddles {threshold:g} "
            f"and is wider than +/-{target_half_width:g}; about {needed} more labels "
            "would narrow it enough to decide.",
            needed,
        )
    # the estimate clears the threshold, the lower bound does not: more labels decide
    margin = stat.statistic - threshold
    if margin <= 0:
        return make(
            "INSUFFICIENT DATA",
            f"{name} is {bounds}: the estimate sits on {threshold:g}, so no number of "
            "labels would lift the lower bound above it unless the estimate rises.",
        )
    needed = labels_to_clear(stat, threshold, _planned(planner, margin))
    return make(
        "INSUFFICIENT DATA",
        f"{name} is {bounds}: the estimate is at or above {threshold:g} but the lower bound "
        f"is below it; if the estimate held, about {needed} more labels would narrow the "
        f"interval to +/-{num(margin)} and lift the lower bound over {threshold:g}.",
        needed,
    )


def _planned(planner: Callable[[float], int | None], half_width: float) -> int | None:
    """The planner's total at ``half_width``, or None when the formula cannot give one."""
    try:
        return planner(half_width)
    except ValueError:
        return None


def _collapsed(
    inputs: VerdictInputs, constant: _degenerate.ConstantJudge | None
) -> tuple[Decision, str, int | None] | None:
    """Decision and reason for an interval that collapsed to a point (``constant``: the
    judge gave one verdict on every item, too few other-class items to fail it).

    None lets the ordinary rules read the point interval (only when the planner says
    the sample is already as large as the target width asks for).
    """
    stat, agreement, primary = inputs.stat, inputs.agreement, inputs.primary
    name = label_of(primary)
    value = f"{name} is {num(stat.statistic)} on {stat.n} items"
    if agreement is not None:
        conf = agreement.confusion
        if constant is not None:  # constant judge, but too few other-class items to fail it
            return (
                "INSUFFICIENT DATA",
                f"The judge gave '{constant.label}' on all {constant.n} items, so {name} is "
                f"{num(stat.statistic)} in every resample; only {constant.miss.n} item(s) have "
                f"another human label ({constant.evidence()}), too few to show whether it can "
                "tell the classes apart.",
                None,
            )
        human = _degenerate.constant_human(conf)
        if human is not None:
            return (
                "INSUFFICIENT DATA",
                f"Every human label is '{human}', so {name} cannot measure agreement beyond "
                f"chance ({num(stat.statistic)} in every resample on {stat.n} items); label "
                "items of the other class(es) too.",
                None,
            )
        if _degenerate.is_perfect(conf):
            return _perfect(name, primary, stat, agreement, inputs.threshold,
                            inputs.confidence_level)
    planned = inputs.planner(inputs.target_half_width)
    if planned is None or planned > stat.n:
        return (
            "INSUFFICIENT DATA",
            f"{value} and every bootstrap resample gives the same value, so the interval "
            "carries no information yet.",
            None,
        )
    return None


def _perfect(
    name: str,
    primary: str,
    stat: Stat,
    agreement: Agreement,
    threshold: float,
    confidence_level: float,
) -> tuple[Decision, str, int | None]:
    """Perfect agreement: PASS only when a Wilson bound on agreement supports it.

    With clusters, each cluster counts once (near-duplicates are not independent
    evidence of agreement).
    """
    units = agreement.n_clusters or stat.n
    unit_name = "clusters" if agreement.n_clusters else "items"
    b = _degenerate.perfect_bound(primary, agreement.confusion, units, threshold, confidence_level)
    head = (
        f"{name} is {num(stat.statistic)}: judge and humans agree on all {stat.n} items, so "
        f"every bootstrap resample gives the same value; the Wilson {confidence_level:.0%} "
        f"lower bound on agreement over {units} {unit_name} is {num(b.agreement_low)}"
    )
    if math.isfinite(b.statistic_low) and b.statistic_low >= threshold:
        return (
            "PASS",
            f"{head}, so {name} is at least {num(b.statistic_low)}, which clears {threshold:g}.",
            None,
        )
    needed = None
    if b.units_needed is not None:
        per_unit = stat.n / units
        needed = max(1, math.ceil((b.units_needed - units) * per_unit))
    more = f"; about {needed} more labels would settle it" if needed is not None else ""
    return (
        "INSUFFICIENT DATA",
        f"{head}, which allows {name} as low as {num(b.statistic_low)}, below {threshold:g}{more}.",
        needed,
    )
