"""The verdict's bias-gate lines say "not checked" with the reason whenever a gate was
skipped, even when its figure is defined (e.g. too few items for the ECE gate)."""

from __future__ import annotations

from judgekit.report._format import gate_lines
from judgekit.report.model import GateCheck, Stat, VerdictResult

ECE = Stat(0.31, 0.246, 0.40, 30, "bootstrap")
NAME = "expected_calibration_error"


def verdict(*gates: GateCheck) -> VerdictResult:
    return VerdictResult("PASS", "agreement is high", "cohen_kappa", 0.6, Stat(0.8, 0.7, 0.9, 30),
                         0.1, gates=gates)


def test_a_gate_skipped_with_a_defined_figure_says_so_and_why() -> None:
    why = "30 items; the gate needs at least 50, as the figure is biased upward on fewer"
    line, = gate_lines(verdict(GateCheck(NAME, "--max-ece", 0.15, "lower", ECE, False, why)))
    assert line == f"expected calibration error: not checked, {why} [--max-ece 0.15]"
    assert "ok" not in line and "<=" not in line  # no inequality the figures contradict


def test_a_checked_gate_reads_its_bound_against_the_option() -> None:
    passed, failed = gate_lines(verdict(
        GateCheck(NAME, "--max-ece", 0.5, "lower", ECE, False),
        GateCheck(NAME, "--max-ece", 0.15, "lower", ECE, True),
    ))
    assert passed == "expected calibration error: ok, lower bound 0.246 <= --max-ece 0.5"
    assert failed == "expected calibration error: FAIL, lower bound 0.246 > --max-ece 0.15"


def test_a_gate_without_its_probe_says_why() -> None:
    line, = gate_lines(verdict(GateCheck(NAME, "--max-ece", 0.15, "lower", None, False,
                                         "no judgment carries a confidence")))
    assert line.endswith("not checked, no judgment carries a confidence [--max-ece 0.15]")
