"""The gates on the report-computed probes: which bound each reads, how reasons combine with
the position gate, the ECE gate's minimum n, and warnings adjusted with every probe test."""

from __future__ import annotations

from judgekit.report import bias_gate, probe_gates
from judgekit.report.model import Bias, ProbeEntry, Stat, VerdictResult
from judgekit.report.options import ReportOptions
from judgekit.report.verdict_lines import reason_lines
from judgekit.stats import benjamini_hochberg


def _verdict() -> VerdictResult:
    stat = Stat(0.8, 0.7, 0.9, 200, "bootstrap")
    return VerdictResult("PASS", "Cohen's kappa is 0.800.", "cohen_kappa", 0.6, stat, 0.1)


def _bias(self_pref: Stat, ratio: Stat | None = None, ece: Stat | None = None,
          conflict: Stat | None = None) -> Bias:
    probes = [ProbeEntry("self_preference", "", {"self_preference": self_pref},
                         {"judge_family": "gpt", "mode": "pairwise"})]
    if ratio is not None:
        probes.append(ProbeEntry("scale_use", "", {"variance_ratio": ratio},
                                 {"judge_never_uses": ["1", "5"]}))
    if ece is not None:
        probes.append(ProbeEntry("confidence_calibration", "",
                                 {"expected_calibration_error": ece}))
    if conflict is not None:
        probes.append(ProbeEntry("position", "r1", {"conflict_rate": conflict}))
    return Bias({}, tuple(probes), {} if ece is not None else {"confidence_calibration": "why"})


def _gated(bias: Bias, **opts: float) -> VerdictResult:
    options = ReportOptions(**opts)  # type: ignore[arg-type]
    out = bias_gate.gate(_verdict(), bias, options.max_position_conflict, options.fdr_q)
    return probe_gates.gate(out, bias, options)


def test_each_gate_reads_its_bound() -> None:
    ok = _gated(_bias(Stat(0.12, 0.09, 0.2, 100, pvalue=0.5), Stat(0.6, 0.45, 0.8, 100),
                      Stat(0.2, 0.14, 0.3, 80)))
    assert ok.decision == "PASS"
    assert [g.name for g in ok.gates] == ["position_conflict", "self_preference",
                                          "variance_ratio", "expected_calibration_error"]
    assert not any(g.tripped for g in ok.gates)
    bad = _gated(_bias(Stat(0.2, 0.11, 0.3, 100, pvalue=0.001), Stat(0.3, 0.2, 0.49, 100),
                       Stat(0.3, 0.16, 0.4, 80)))
    assert bad.decision == "FAIL" and bad.labels_needed is None
    assert [g.name for g in bad.gates if g.tripped] == [
        "self_preference", "variance_ratio", "expected_calibration_error"]
    for option in ("--max-self-preference 0.1", "--min-variance-ratio 0.5", "--max-ece 0.15"):
        assert option in bad.reason
    assert bad.reason.startswith("Cohen's kappa is 0.800. The judge favours")
    assert bad.agreement_outcome == "PASS" and bad.agreement_text == "Cohen's kappa is 0.800."
    assert [e.name for e in bad.explanations] == [
        "self_preference", "variance_ratio", "expected_calibration_error"]
    assert "it never used 1 or 5" in bad.reason
    # thresholds move the gates; 1 and 0 turn them off
    off = _gated(_bias(Stat(0.2, 0.11, 0.3, 100, pvalue=0.5), Stat(0.3, 0.2, 0.49, 100),
                       Stat(0.3, 0.16, 0.4, 80)),
                 max_self_preference=1.0, min_variance_ratio=0.0, max_ece=1.0)
    assert off.decision == "PASS"


def test_no_fail_from_a_self_preference_whose_own_test_is_not_significant() -> None:
    """Five pairs, four favouring the judge's family: the bootstrap interval [0.40, 1] clears
    the threshold, the exact sign-flip test gives p = 0.125; the gate does not FAIL."""
    tiny = _gated(_bias(Stat(0.8, 0.4, 1.0, 5, pvalue=0.125)))
    check = next(g for g in tiny.gates if g.name == "self_preference")
    assert tiny.decision == "PASS" and not check.tripped
    assert check.reason is not None and "p = 0.125" in check.reason
    no_p = _gated(_bias(Stat(0.8, 0.4, 1.0, 5, note="3 clusters mix own and other")))
    check = next(g for g in no_p.gates if g.name == "self_preference")
    assert no_p.decision == "PASS" and "no p-value (3 clusters" in (check.reason or "")


def test_reasons_follow_the_position_gate_without_nesting() -> None:
    out = _gated(_bias(Stat(0.2, 0.11, 0.3, 100, pvalue=0.001),
                       conflict=Stat(0.5, 0.4, 0.6, 50)))
    assert out.decision == "FAIL"
    first, second = out.explanations
    assert first.text.startswith("The judge changes its verdict when the two responses swap")
    assert second.text.startswith("The judge favours responses from its own model family (gpt)")
    assert "(Agreement:" not in out.reason and "Also:" not in out.reason
    lines = [line.text() for line in reason_lines(out)]
    assert lines[0] == ("Cohen's kappa: PASS, 0.800 [0.700, 0.900], n=200; "
                        "lower 95% bound 0.700 >= --min-agreement 0.6")
    assert lines[1] == ("position conflict rate: FAIL, 0.500 [0.400, 0.600], n=50; "
                        "lower bound 0.400 > --max-position-conflict 0.3")
    assert lines[2].startswith("self-preference: FAIL, 0.200 [0.110, 0.300], n=100")


def test_the_ece_gate_waits_for_enough_verdicts_and_absent_probes_say_why() -> None:
    out = _gated(_bias(Stat(0.0, -0.1, 0.1, 100), ece=Stat(0.4, 0.3, 0.5, 30)))
    ece = next(g for g in out.gates if g.name == "expected_calibration_error")
    assert not ece.tripped and "needs at least 50" in (ece.reason or "")
    absent = _gated(_bias(Stat(0.0, -0.1, 0.1, 100)))
    ece = next(g for g in absent.gates if g.name == "expected_calibration_error")
    assert ece.statistic is None and ece.reason == "why"


def test_self_preference_warning_is_adjusted_with_every_probe_test() -> None:
    weak = Stat(0.06, 0.01, 0.11, 300, pvalue=0.004)
    out = _gated(_bias(weak))
    assert out.decision == "PASS"
    assert "Warning: the judge favours its own model family (gpt)" in out.reason
    # with more probe tests the same p-value no longer survives the adjustment
    noise = ProbeEntry("length", "r2", {f"t{i}": Stat(0.1, 0, 0.2, 9, pvalue=0.9)
                                        for i in range(20)})
    bias = _bias(weak)
    crowded = Bias({}, (*bias.probes, noise), bias.absent)
    assert benjamini_hochberg([0.004] + [0.9] * 20)[1][0] > 0.05
    assert "Warning" not in _gated(crowded).reason
