"""The verdict as a lead reads it: the decision, one line per reason, then why.

A verdict is decided by the agreement rule and by any bias gate. One paragraph
that nests the agreement inside a gate's sentence hides which figure decided it,
so each gate records its explanation apart (:func:`with_failure`,
:func:`with_warning`) and every renderer prints the decision, then one line per
reason with its figure and threshold (:func:`reason_lines`: the agreement rule,
failing slices, each tripped gate, each warning), then the full sentences
(:func:`explanation_texts`). ``VerdictResult.reason`` is those sentences joined,
for the JSON report, the API and the gate's one line on stderr.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from judgekit.report._format import label_of, labels_needed_text, num
from judgekit.report.model import Explanation, GateCheck, Stat, VerdictResult

#: What each bias gate reads, in words (a gate without an entry shows its name).
GATE_NAMES = {
    "position_conflict": "position conflict rate",
    "self_preference": "self-preference",
    "variance_ratio": "scale-use variance ratio",
    "expected_calibration_error": "expected calibration error",
    "injection_flip": "injection flip rate",
    "identical_decisive": "decisive verdicts on identical pairs",
    "identical_slot_imbalance": "slot imbalance on identical pairs",
}


@dataclass(frozen=True)
class ReasonLine:
    """One reason of the verdict: its outcome, what was read, and the figure against the rule."""

    outcome: str  # PASS, FAIL, INSUFFICIENT DATA, or WARNING
    label: str
    detail: str

    def text(self) -> str:
        return f"{self.label}: {self.outcome}, {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "label": self.label, "detail": self.detail}


def gate_name(check: GateCheck) -> str:
    """The gate's name in words (the position gate says what its probe varied)."""
    if check.label:
        return check.label
    return GATE_NAMES.get(check.name, check.name.replace("_", " "))


def _joined(verdict: VerdictResult) -> str:
    texts = [verdict.agreement_text]
    texts += [e.text if e.kind == "fail" else f"Warning: {e.text}" for e in verdict.explanations]
    return " ".join(t for t in texts if t)


def _keep_agreement(verdict: VerdictResult) -> VerdictResult:
    if verdict.agreement_decision is not None:
        return verdict
    return replace(verdict, agreement_decision=verdict.decision, agreement_reason=verdict.reason)


def with_failure(verdict: VerdictResult, gate: str, text: str) -> VerdictResult:
    """The verdict FAILed by the gate named ``gate`` (its ``GateCheck.name``), with why."""
    out = _keep_agreement(verdict)
    out = replace(out, decision="FAIL", labels_needed=None,
                  explanations=(*out.explanations, Explanation(gate, "fail", text)))
    return replace(out, reason=_joined(out))


def with_warning(verdict: VerdictResult, key: str, stat: Stat, adjusted_p: float, q: float,
                 text: str) -> VerdictResult:
    """The verdict with a warning (a probe test that survived Benjamini-Hochberg at ``q``).

    ``text`` is the full sentence (without a leading "Warning:"); the reason line
    gives the figure and its adjusted p-value against ``q``.
    """
    out = _keep_agreement(verdict)
    line = f"{_figure(stat)}; adjusted p {adjusted_p:.3g} <= q {q:g}"
    out = replace(out, explanations=(*out.explanations,
                                     Explanation(key, "warning", text, line)))
    return replace(out, reason=_joined(out))


def _figure(stat: Stat) -> str:
    if not stat.defined:
        return f"n/a ({stat.reason or 'undefined'}), n={stat.n}"
    bounds = " [n/a]"  # no interval: the sentences below say why
    if math.isfinite(stat.ci_low) and math.isfinite(stat.ci_high):
        bounds = f" [{num(stat.ci_low)}, {num(stat.ci_high)}]"
    return f"{num(stat.statistic)}{bounds}, n={stat.n}"


def _agreement_line(verdict: VerdictResult, confidence_level: float, ge: str) -> ReasonLine:
    stat, threshold = verdict.statistic, verdict.threshold
    label = label_of(verdict.primary) + (" (population estimate)" if verdict.weighted else "")
    rule = f"--min-agreement {threshold:g}"
    if not stat.defined or not math.isfinite(stat.ci_low):
        detail = f"{_figure(stat)}; its lower {confidence_level:.0%} bound must be {ge} {rule}"
    else:
        sign = ge if stat.ci_low >= threshold else "<"
        detail = (f"{_figure(stat)}; lower {confidence_level:.0%} bound {num(stat.ci_low)} "
                  f"{sign} {rule}")
    return ReasonLine(verdict.agreement_outcome, label, detail)


def _gate_line(check: GateCheck, ge: str) -> ReasonLine:
    stat = check.statistic
    if stat is None:
        return ReasonLine("FAIL", gate_name(check), f"{check.option} {check.threshold:g}")
    value = stat.ci_low if check.bound == "lower" else stat.ci_high
    if check.bound == "lower":
        sign = ">" if check.tripped else "<="
    else:
        sign = "<" if check.tripped else ge
    return ReasonLine(
        "FAIL" if check.tripped else "ok",
        gate_name(check),
        f"{_figure(stat)}; {check.bound} bound {num(value)} {sign} "
        f"{check.option} {check.threshold:g}",
    )


def reason_lines(verdict: VerdictResult, confidence_level: float = 0.95,
                 ge: str = ">=") -> list[ReasonLine]:
    """One line per reason: the agreement rule, failing slices, tripped gates, warnings."""
    lines = [_agreement_line(verdict, confidence_level, ge)]
    if verdict.failing_slices and verdict.slice_threshold is not None:
        lines.append(ReasonLine(
            "FAIL", "slices",
            f"{', '.join(verdict.failing_slices)} entirely below --min-slice-agreement "
            f"{verdict.slice_threshold:g}",
        ))
    checks = {c.name: c for c in verdict.gates}
    for e in verdict.explanations:
        if e.kind == "fail":
            check = checks.get(e.name)
            lines.append(_gate_line(check, ge) if check is not None
                         else ReasonLine("FAIL", e.name.replace("_", " "), "see below"))
        else:
            lines.append(ReasonLine("WARNING", label_of(e.name), e.line))
    return lines


def explanation_texts(verdict: VerdictResult) -> list[str]:
    """The full sentences behind the reason lines, in the same order."""
    out = [verdict.agreement_text]
    out += [e.text if e.kind == "fail" else f"Warning: {e.text[:1].upper()}{e.text[1:]}"
            for e in verdict.explanations]
    return [t for t in out if t]


def needed_sentence(verdict: VerdictResult, pm: str = "+/-") -> str | None:
    """How many more labels would decide: None when the agreement sentence already says
    it, or when the dataset has fewer items left to label (the sentence says what would
    decide instead)."""
    text = labels_needed_text(verdict, pm)
    needed, available = verdict.labels_needed, verdict.labels_available
    if text is None or f"{needed} more label" in verdict.agreement_text:
        return None
    if needed is not None and available is not None and needed > available:
        if "no number of labels on this dataset" in verdict.agreement_text:
            return None  # the reason already says what would decide
        if not available:
            return ("Every item of the dataset is labeled: more items, or a lower "
                    "--min-agreement, would decide.")
        return (f"Label the {available} item(s) left in the dataset, then read the interval "
                f"again: at this estimate about {needed} would be needed, so more items may "
                "be too.")
    return text


def gate_checks(verdict: VerdictResult, ge: str = ">=") -> list[ReasonLine]:
    """Every gate checked: failed first, then passed, then those not checked.

    The outcome is ``FAIL``, ``ok`` or ``not checked`` (the probe was not run or could
    not give the figure: the detail says why).
    """
    failed: list[ReasonLine] = []
    passed: list[ReasonLine] = []
    skipped: list[ReasonLine] = []
    for check in verdict.gates:
        stat = check.statistic
        if stat is None or not stat.defined or check.reason:
            why = check.reason or "not computed"
            skipped.append(ReasonLine("not checked", gate_name(check),
                                      f"{why} [{check.option} {check.threshold:g}]"))
            continue
        line = _gate_line(check, ge)
        (failed if check.tripped else passed).append(line)
    return failed + passed + skipped


def gate_check_lines(verdict: VerdictResult, ge: str = ">=") -> list[tuple[str, str]]:
    """:func:`gate_checks` as (outcome, one line of text)."""
    return [(c.outcome, c.text()) for c in gate_checks(verdict, ge)]


__all__ = [
    "GATE_NAMES",
    "ReasonLine",
    "explanation_texts",
    "gate_check_lines",
    "gate_checks",
    "gate_name",
    "needed_sentence",
    "reason_lines",
    "with_failure",
    "with_warning",
]
