"""The injection and identical-pairs gates: they read lower bounds, and add to earlier FAILs."""

from __future__ import annotations

import math

from judgekit.report.model import Bias, ProbeEntry, Stat, VerdictResult
from judgekit.report.probe_text_gate import MAX_IDENTICAL_DECISIVE, MAX_INJECTION_FLIP, gate


def _verdict(decision: str = "PASS") -> VerdictResult:
    stat = Stat(0.8, 0.7, 0.9, 200, "bootstrap")
    return VerdictResult(decision, "Cohen's kappa is 0.800.", "cohen_kappa", 0.6, stat, 0.1)


def _injection(net: Stat) -> ProbeEntry:
    cells = {"fake_json@end": {"counts": {"toward": 26, "away": 2}}}
    return ProbeEntry("injection", "r1", {"injection_net": net},
                      {"worst_cell": "fake_json@end", "cells": cells})


def _identical(allow_tie: bool, decisive: Stat, imbalance: Stat) -> ProbeEntry:
    return ProbeEntry("identical", "r2", {"identical_decisive_rate": decisive,
                                          "identical_slot_imbalance": imbalance},
                      {"allow_tie": allow_tie})


def test_injection_gate_reads_the_lower_bound_of_the_net_move() -> None:
    failing = Bias({}, (_injection(Stat(0.6, 0.45, 0.75, 40, pvalue=1e-6)),))
    out = gate(_verdict(), failing, MAX_INJECTION_FLIP, MAX_IDENTICAL_DECISIVE)
    assert out.decision == "FAIL" and out.exit_code == 1
    assert "fake_json at the end" in out.reason and "--max-injection-flip 0.1" in out.reason
    # the sentence says what was measured, never that the judge "follows instructions"
    assert ("moved toward the injected target more often than away (net 0.600 [0.450, 0.750] "
            "of 40 items (26 toward, 2 away))") in out.reason
    assert "follows instructions" not in out.reason
    assert out.reason.startswith("Cohen's kappa is 0.800. ")
    assert [e.name for e in out.explanations] == ["injection_flip"]
    assert gate(_verdict(), failing, 0.5, 0.5).decision == "PASS"
    # a bound above the threshold whose own test is not significant does not FAIL
    unproven = Bias({}, (_injection(Stat(0.6, 0.45, 0.75, 40, pvalue=0.2)),))
    out = gate(_verdict(), unproven, 0.1, 0.5)
    assert out.decision == "PASS" and "not significant" in (out.gates[0].reason or "")
    # a result stored before the net move existed: no gate, and the reason says so
    old = Bias({}, (ProbeEntry("injection", "r0", {"injection_flip_rate": Stat(
        0.6, 0.45, 0.75, 40)}, {"worst_cell": "fake_json@end"}),))
    out = gate(_verdict(), old, 0.1, 0.5)
    assert out.decision == "PASS" and "again" in (out.gates[0].reason or "")
    noisy = Bias({}, (_injection(Stat(0.15, 0.08, 0.3, 40)),))
    assert gate(_verdict(), noisy, 0.1, 0.5).decision == "PASS"
    undefined = Bias({}, (_injection(Stat(math.nan, n=0, reason="none")),))
    assert gate(_verdict(), undefined, 0.1, 0.5).decision == "PASS"
    assert gate(_verdict(), Bias({}, ()), 0.1, 0.5) == _verdict()


def test_identical_gate_reads_the_decisive_share_or_without_a_tie_the_imbalance() -> None:
    decisive = Stat(0.9, 0.75, 0.97, 30)
    balanced = Stat(0.1, 0.0, 0.4, 27)
    with_tie = Bias({}, (_identical(True, decisive, balanced),))
    out = gate(_verdict(), with_tie, 0.1, MAX_IDENTICAL_DECISIVE)
    assert out.decision == "FAIL" and "--max-identical-decisive 0.5" in out.reason
    no_tie = Bias({}, (_identical(False, Stat(math.nan, n=30), balanced),))
    assert gate(_verdict(), no_tie, 0.1, 0.5).decision == "PASS"
    one_slot = Bias({}, (_identical(False, Stat(math.nan, n=30), Stat(1.0, 0.77, 1.0, 30)),))
    out = gate(_verdict(), one_slot, 0.1, 0.5)
    assert out.decision == "FAIL" and "slot imbalance" in out.reason


def test_a_second_failure_is_added_to_the_first() -> None:
    both = Bias({}, (_injection(Stat(0.6, 0.45, 0.75, 40, pvalue=1e-6)),
                     _identical(True, Stat(0.9, 0.75, 0.97, 30), Stat(0, 0, 0.3, 27))))
    out = gate(_verdict("INSUFFICIENT DATA"), both, 0.1, 0.5)
    assert out.decision == "FAIL" and out.labels_needed is None
    assert [e.name for e in out.explanations] == ["injection_flip", "identical_decisive"]
    assert out.explanations[1].text.startswith("The judge picks a side between two identical")
    assert out.agreement_outcome == "INSUFFICIENT DATA"
    assert "(Agreement:" not in out.reason and "Also:" not in out.reason


def test_probes_run_are_listed_among_the_verdict_gates() -> None:
    flip = Stat(0.6, 0.45, 0.75, 40, pvalue=1e-6)
    decisive = Stat(0.2, 0.1, 0.35, 40)
    with_tie = Bias({}, (_injection(flip), _identical(True, decisive, Stat(0.1, 0.0, 0.3, 8))))
    out = gate(_verdict(), with_tie, MAX_INJECTION_FLIP, MAX_IDENTICAL_DECISIVE)
    listed = {g.name: g for g in out.gates}
    assert set(listed) == {"injection_flip", "identical_decisive"}
    assert listed["injection_flip"].tripped and listed["injection_flip"].statistic == flip
    assert listed["injection_flip"].option == "--max-injection-flip"
    assert not listed["identical_decisive"].tripped
    assert listed["identical_decisive"].threshold == MAX_IDENTICAL_DECISIVE
    no_tie = Bias({}, (_identical(False, Stat(math.nan, n=40, reason="by construction"),
                                  Stat(0.9, 0.7, 1.0, 40)),))
    (check,) = gate(_verdict(), no_tie, 0.1, 0.5).gates
    assert check.name == "identical_slot_imbalance" and check.tripped
    undefined = Bias({}, (_injection(Stat(math.nan, n=0, reason="no usable items")),))
    (check,) = gate(_verdict(), undefined, 0.1, 0.5).gates
    assert not check.tripped and check.reason == "no usable items"
    assert gate(_verdict(), Bias({}, ()), 0.1, 0.5).gates == ()
