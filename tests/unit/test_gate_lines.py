"""The verdict's bias-gate lines say "not checked" with the reason whenever a gate was
skipped, even when its figure is defined (e.g. too few items for the ECE gate); the
gates that failed come first, then those that passed, then those not checked."""

from __future__ import annotations

from judgekit.report.model import GateCheck, Stat, VerdictResult
from judgekit.report.verdict_lines import gate_check_lines

ECE = Stat(0.31, 0.246, 0.40, 30, "bootstrap")
NAME = "expected_calibration_error"


def verdict(*gates: GateCheck) -> VerdictResult:
    return VerdictResult("PASS", "agreement is high", "cohen_kappa", 0.6, Stat(0.8, 0.7, 0.9, 30),
                         0.1, gates=gates)


def lines(v: VerdictResult) -> list[str]:
    return [line for _, line in gate_check_lines(v)]


def test_a_gate_skipped_with_a_defined_figure_says_so_and_why() -> None:
    why = "30 items; the gate needs at least 50, as the figure is biased upward on fewer"
    line, = lines(verdict(GateCheck(NAME, "--max-ece", 0.15, "lower", ECE, False, why)))
    assert line == f"expected calibration error: not checked, {why} [--max-ece 0.15]"
    assert "ok" not in line and "<=" not in line  # no inequality the figures contradict


def test_a_checked_gate_reads_its_bound_against_the_option_failed_first() -> None:
    failed, passed = gate_check_lines(verdict(
        GateCheck(NAME, "--max-ece", 0.5, "lower", ECE, False),
        GateCheck(NAME, "--max-ece", 0.15, "lower", ECE, True),
    ))
    assert passed == ("ok", "expected calibration error: ok, 0.310 [0.246, 0.400], n=30; "
                            "lower bound 0.246 <= --max-ece 0.5")
    assert failed == ("FAIL", "expected calibration error: FAIL, 0.310 [0.246, 0.400], n=30; "
                              "lower bound 0.246 > --max-ece 0.15")


def test_a_gate_without_its_probe_says_why_after_the_checked_ones() -> None:
    skipped, = (GateCheck(NAME, "--max-ece", 0.15, "lower", None, False,
                          "no judgment carries a confidence"),)
    checked = GateCheck("variance_ratio", "--min-variance-ratio", 0.5, "upper", ECE, False)
    first, last = lines(verdict(skipped, checked))
    assert first.startswith("scale-use variance ratio: ok")
    assert last.endswith("not checked, no judgment carries a confidence [--max-ece 0.15]")
