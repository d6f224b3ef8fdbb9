"""Bias moves the verdict: the position-conflict gate and the BH-adjusted first-slot warning."""

from __future__ import annotations

from judgekit.report.bias_gate import MAX_POSITION_CONFLICT, gate
from judgekit.report.model import Bias, ProbeEntry, Stat, VerdictResult
from judgekit.stats import benjamini_hochberg


def _verdict() -> VerdictResult:
    stat = Stat(0.8, 0.7, 0.9, 200, "bootstrap")
    return VerdictResult(
        "PASS", "Cohen's kappa is 0.800 [0.700, 0.900], n=200.", "cohen_kappa", 0.6, stat, 0.1
    )


def _bias(conflict: Stat, first: Stat, other_p: float = 0.5) -> Bias:
    position = ProbeEntry("position", "r1", {"conflict_rate": conflict, "first_slot_test": first})
    length = ProbeEntry("length", "r2", {"length_slope": Stat(0.1, 0, 0.2, 50, pvalue=other_p)})
    return Bias({}, (position, length))


def test_conflict_lower_bound_above_the_threshold_fails() -> None:
    bias = _bias(Stat(0.42, 0.35, 0.5, 80), Stat(0.5, 0.3, 0.7, 30, pvalue=0.9))
    out = gate(_verdict(), bias, MAX_POSITION_CONFLICT, 0.05)
    assert out.decision == "FAIL" and out.exit_code == 1
    assert "--max-position-conflict 0.3" in out.reason and "0.350" in out.reason
    # the same conflict under a looser gate passes; the gate reads the lower bound
    assert gate(_verdict(), bias, 0.4, 0.05).decision == "PASS"
    assert (
        gate(
            _verdict(),
            _bias(Stat(0.42, 0.29, 0.5, 80), Stat(0.5, 0.3, 0.7, 30, pvalue=0.9)),
            0.3,
            0.05,
        ).decision
        == "PASS"
    )


def test_first_slot_preference_is_a_warning_after_bh() -> None:
    first = Stat(0.9, 0.75, 0.97, 30, pvalue=0.01)
    out = gate(_verdict(), _bias(Stat(0.1, 0.05, 0.2, 80), first, other_p=0.5), 0.3, 0.05)
    assert (
        out.decision == "PASS"
        and "Warning: the judge prefers the response shown first" in out.reason
    )
    adjusted = benjamini_hochberg([0.01, 0.5])[1][0]
    assert f"adjusted p = {adjusted:.3g}" in out.reason
    # p = 0.04 alone would pass 0.05, but not after adjusting across these 3 probe tests
    weak = _bias(Stat(0.1, 0.05, 0.2, 80), Stat(0.7, 0.5, 0.8, 30, pvalue=0.04), other_p=0.9)
    padding = ProbeEntry("padding", "r3", {"shift": Stat(0, -1, 1, 9, pvalue=0.95)})
    weak = Bias({}, (*weak.probes, padding))
    assert benjamini_hochberg([0.04, 0.9, 0.95])[1][0] > 0.05
    assert "Warning" not in gate(_verdict(), weak, 0.3, 0.05).reason
