"""``benchmarks/coverage.py --quick`` runs end to end (a smoke run; coverage is measured there)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "coverage.py"


def test_coverage_benchmark_quick_run_prints_every_interval() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--reps", "2", "--resamples", "30"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    out = done.stdout
    for name in (
        "cohen_kappa (bootstrap)",
        "weighted_kappa quadratic (bootstrap)",
        "percent_agreement (Wilson)",
        "krippendorff_alpha ordinal, 3 raters, 30% missing",
        "kendall_tau (bootstrap)",
        "cohen_kappa (cluster bootstrap)",
    ):
        assert name in out
    assert "cells outside 93-97%:" in out
