"""Gates on the probes the report computes itself: self-preference, scale use, calibration.

Like the position-conflict gate (:mod:`judgekit.report.bias_gate`), each reads
one end of a figure's interval, so a judge is failed only when the data show the
problem beyond sampling noise; an unbiased judge trips a gate in at most 2.5%
of samples (one tail of a 95% interval), whatever the threshold:

- ``--max-self-preference`` (default 0.1): FAIL when the lower bound of
  self-preference (the judge's own-family win rate minus people's on the same
  items) exceeds it;
- ``--min-variance-ratio`` (default 0.5): FAIL when the upper bound of the
  scale-use variance ratio (judge / human score variance) is below it: the
  judge squeezes the scale to less than half the spread people use;
- ``--max-ece`` (default 0.15): FAIL when the lower bound of the debiased
  expected calibration error of the judge's stated confidence exceeds it, from
  50 verdicts with a confidence on (its interval is bias-corrected for the
  resampling, :func:`judgekit.report.scale_probes._debiased_ece`; the plain ECE's
  lower bound failed 22-27% of judges whose true ECE is exactly 0.15 at 50 items,
  the debiased one 4% at 50 items and 2% from 100 on, benchmarks/ece_gate.py).

Self-preference also needs its own randomization test (exact at small n,
:mod:`judgekit.stats._bias_self`) to be significant at 1 - the confidence level:
no FAIL from a figure whose test is not significant (five pairs, four favouring
the judge, give a bootstrap interval [0.40, 1] but an exact p of 0.125).

Two figures with a p-value warn (they never FAIL on their own) when their
Benjamini-Hochberg adjusted p-value, adjusted together with every other probe
test in the report, is at most ``fdr_q``: a self-preference above 0, and a
judge that uses the ends of the scale less than people.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from judgekit.report._format import num
from judgekit.report.bias_gate import adjusted_tests
from judgekit.report.model import Bias, GateCheck, ProbeEntry, Stat, VerdictResult
from judgekit.report.options import ReportOptions
from judgekit.report.verdict_lines import with_failure, with_warning

#: Default ``--max-self-preference``.
MAX_SELF_PREFERENCE: float = ReportOptions.max_self_preference
#: Default ``--min-variance-ratio``.
MIN_VARIANCE_RATIO: float = ReportOptions.min_variance_ratio
#: Default ``--max-ece``.
MAX_ECE: float = ReportOptions.max_ece
#: The ECE gate needs this many verdicts with a confidence: below it ECE's upward bias
#: (few items per bin) makes a calibrated judge's lower bound exceed 0.15 too often.
MIN_ECE_ITEMS = 50


@dataclass(frozen=True)
class _Gate:
    name: str
    option: str
    probe: str
    key: str
    bound: Literal["lower", "upper"]
    threshold: Callable[[ReportOptions], float]
    sentence: Callable[[Stat, float, ProbeEntry], str]
    min_n: int = 0  # below this many items the gate is not checked
    #: the figure carries its own test: no FAIL unless that test is significant too
    needs_p: bool = False


def _interval(stat: Stat) -> str:
    return f"{num(stat.statistic)} [{num(stat.ci_low)}, {num(stat.ci_high)}]"


def _self_sentence(stat: Stat, limit: float, entry: ProbeEntry) -> str:
    family = entry.details.get("judge_family", "?")
    units = "pairs" if entry.details.get("mode") == "pairwise" else "items"
    return (f"The judge favours responses from its own model family ({family}) more than "
            f"people do by {_interval(stat)} on {stat.n} {units}: the lower bound exceeds "
            f"--max-self-preference {limit:g}.")


def _spread_sentence(stat: Stat, limit: float, entry: ProbeEntry) -> str:
    never = entry.details.get("judge_never_uses") or []
    ends = f"; it never used {' or '.join(map(str, never))}" if never else ""
    return (f"The judge's scores vary far less than people's (variance ratio "
            f"{_interval(stat)}, n={stat.n}): the upper bound is below --min-variance-ratio "
            f"{limit:g}, so it cannot tell the best from the worst{ends}.")


def _ece_sentence(stat: Stat, limit: float, entry: ProbeEntry) -> str:
    conf, acc = entry.stats.get("mean_confidence"), entry.stats.get("accuracy")
    sides = ("" if conf is None or acc is None
             else f" (mean confidence {num(conf.statistic)}, agreement {num(acc.statistic)})")
    return (f"The judge's stated confidence is miscalibrated: expected calibration error "
            f"{_interval(stat)} on {stat.n} verdicts{sides}, the lower bound exceeding "
            f"--max-ece {limit:g}.")


GATES = (
    _Gate("self_preference", "--max-self-preference", "self_preference", "self_preference",
          "lower", lambda o: o.max_self_preference, _self_sentence, needs_p=True),
    _Gate("variance_ratio", "--min-variance-ratio", "scale_use", "variance_ratio", "upper",
          lambda o: o.min_variance_ratio, _spread_sentence),
    _Gate("expected_calibration_error", "--max-ece", "confidence_calibration",
          "expected_calibration_error", "lower", lambda o: o.max_ece, _ece_sentence,
          MIN_ECE_ITEMS),
)


def _entry(bias: Bias, probe: str) -> ProbeEntry | None:
    return next((e for e in bias.probes if e.probe == probe), None)


def _tripped(stat: Stat, bound: str, limit: float) -> bool:
    if bound == "lower":
        return math.isfinite(stat.ci_low) and stat.ci_low > limit
    return math.isfinite(stat.ci_high) and stat.ci_high < limit


def _not_significant(stat: Stat, alpha: float) -> str | None:
    """Why a figure whose bound crossed the threshold still cannot FAIL: its own test of
    "no effect" is not significant (or has no p-value), as at a handful of items where a
    bootstrap interval is narrower than the data can support."""
    if stat.pvalue is None or not math.isfinite(stat.pvalue):
        return ("the bound crosses the threshold but the figure's own test has no p-value"
                + (f" ({stat.note})" if stat.note else "") + ": no FAIL without one")
    if stat.pvalue >= alpha:
        return (f"the bound crosses the threshold but the figure's own test is not "
                f"significant (p = {stat.pvalue:.3g} >= {alpha:g}, n={stat.n}): no FAIL")
    return None


def gate(verdict: VerdictResult, bias: Bias, opts: ReportOptions) -> VerdictResult:
    """The verdict after these gates: FAIL with a sentence per tripped gate, and warnings."""
    checks: list[GateCheck] = []
    sentences: list[tuple[str, str]] = []
    for g in GATES:
        limit = g.threshold(opts)
        entry = _entry(bias, g.probe)
        stat = None if entry is None else entry.stats.get(g.key)
        if entry is None or stat is None:
            reason = bias.absent.get(g.probe, "not computed")
            checks.append(GateCheck(g.name, g.option, limit, g.bound, None, False, reason))
            continue
        if stat.n < g.min_n:
            reason = (f"{stat.n} items; the gate needs at least {g.min_n}, as the figure is "
                      "biased upward on fewer")
            checks.append(GateCheck(g.name, g.option, limit, g.bound, stat, False, reason))
            continue
        tripped = _tripped(stat, g.bound, limit)
        why = None if stat.defined else stat.reason
        unproven = _not_significant(stat, 1 - opts.confidence_level) if g.needs_p else None
        if tripped and unproven is not None:
            tripped, why = False, unproven
        checks.append(GateCheck(g.name, g.option, limit, g.bound, stat, tripped, why))
        if tripped:
            sentences.append((g.name, g.sentence(stat, limit, entry)))
    out = replace(verdict, gates=(*verdict.gates, *checks))
    for name, why in sentences:
        out = with_failure(out, name, why)
    return _warnings(out, bias, opts)


def _warnings(out: VerdictResult, bias: Bias, opts: ReportOptions) -> VerdictResult:
    tests = adjusted_tests(bias, opts.fdr_q)
    tripped = {c.name for c in out.gates if c.tripped}
    for key, s, p in tests:
        if p > opts.fdr_q:
            continue
        text = None
        if key == "self_preference" and s.statistic > 0 and "self_preference" not in tripped:
            own = _entry(bias, "self_preference")
            family = own.details.get("judge_family", "?") if own is not None else "?"
            text = (f"the judge favours its own model family ({family}) more than people do "
                    f"({_interval(s)}, n={s.n}")
        elif key == "extreme_share_difference" and s.statistic < 0:
            use = _entry(bias, "scale_use")
            never = (use.details.get("judge_never_uses") or []) if use is not None else []
            ends = f"; it never used {' or '.join(map(str, never))}" if never else ""
            text = (f"the judge uses the ends of the scale less than people "
                    f"(share difference {_interval(s)}, n={s.n}{ends}")
        if text is not None:
            out = with_warning(out, key, s, p, opts.fdr_q, (
                f"{text}; Benjamini-Hochberg adjusted p = {p:.3g} across the {len(tests)} "
                "probe tests)."))
    return out


__all__ = [
    "GATES",
    "MAX_ECE",
    "MAX_SELF_PREFERENCE",
    "MIN_ECE_ITEMS",
    "MIN_VARIANCE_RATIO",
    "gate",
]
