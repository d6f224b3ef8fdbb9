"""Bias moves the verdict: a position-conflict gate and a first-slot warning.

Agreement with humans on one presentation order says nothing about what the
judge does when the order changes. So the stored probes of the reported judge
can change the verdict: when the lower bound of the position probe's conflict
rate (the share of pairs whose verdict changes when the responses swap places;
for a pointwise rubric, of items whose verdict changes when the scale's levels
are listed in reverse order) exceeds ``max_position_conflict``, the verdict is
FAIL whatever the agreement.
A first-slot preference whose p-value survives Benjamini-Hochberg across every
probe test in the report is added to the reason as a warning; it does not
change the decision on its own.
"""

from __future__ import annotations

import math
from dataclasses import replace

from judgekit import stats
from judgekit.report._format import num
from judgekit.report.model import Bias, GateCheck, Stat, VerdictResult
from judgekit.report.verdict_lines import with_failure, with_warning

#: Default ``--max-position-conflict``: a judge that flips on more than 30% of swapped pairs
#: (the lower bound of the conflict rate's interval above 0.3) fails.
MAX_POSITION_CONFLICT = 0.3


def _find(bias: Bias, key: str) -> Stat | None:
    for entry in bias.probes:
        if key in entry.stats:
            return entry.stats[key]
    return None


def adjusted_tests(bias: Bias, q: float) -> list[tuple[str, Stat, float]]:
    """Every probe test in the report with its Benjamini-Hochberg adjusted p-value.

    One family for all of them, so a warning from any probe has survived the
    adjustment across every test the report shows.
    """
    tests = [  # a p-value by cluster where items share one (Stat.shown_pvalue)
        (key, s, float(p))
        for entry in bias.probes
        for key, s in entry.stats.items()
        if (p := s.shown_pvalue) is not None and math.isfinite(p)
    ]
    if not tests:
        return []
    _, adjusted = stats.benjamini_hochberg([p for _, _, p in tests], q=q)
    return [(key, s, float(p)) for (key, s, _), p in zip(tests, adjusted, strict=True)]


def _pointwise(bias: Bias) -> bool:
    """Whether the position probe reversed a pointwise rubric's levels (no pairs to swap)."""
    return any(e.probe == "position" and e.details.get("mode") == "pointwise"
               for e in bias.probes)


def gate(verdict: VerdictResult, bias: Bias, max_conflict: float, q: float) -> VerdictResult:
    """The verdict after the bias probes: FAIL on too much position conflict, and warnings."""
    out = verdict
    conflict = _find(bias, "conflict_rate")
    tripped = (conflict is not None and math.isfinite(conflict.ci_low)
               and conflict.ci_low > max_conflict)
    pointwise = _pointwise(bias)
    if conflict is not None and tripped:
        varied = ("the scale's levels are listed in reverse order" if pointwise
                  else "the two responses swap places")
        units = "items" if pointwise else "pairs"
        out = with_failure(out, "position_conflict", (
            f"The judge changes its verdict when {varied} on "
            f"{num(conflict.statistic)} [{num(conflict.ci_low)}, {num(conflict.ci_high)}] of "
            f"{conflict.n} {units}: the lower bound exceeds --max-position-conflict "
            f"{max_conflict:g}, so its verdicts depend on the order it is shown."
        ))
    check = GateCheck("position_conflict", "--max-position-conflict", max_conflict, "lower",
                      conflict, tripped,
                      None if conflict is not None
                      else bias.absent.get("position", "no position probe stored"),
                      "level-order conflict rate" if pointwise else "position conflict rate")
    out = replace(out, gates=(*out.gates, check))
    tests = adjusted_tests(bias, q)
    for key, s, p in tests:
        if key == "first_slot_test" and p <= q:
            toward = ("the level listed first" if pointwise else "the response shown first")
            among = "changed verdicts" if pointwise else "inconsistent pairs"
            out = with_warning(out, key, s, p, q, (
                f"the judge prefers {toward} ({num(s.statistic)} of {s.n} {among}; "
                f"Benjamini-Hochberg adjusted p = {p:.3g} across the {len(tests)} probe tests)."
            ))
    return out


__all__ = ["MAX_POSITION_CONFLICT", "adjusted_tests", "gate"]
