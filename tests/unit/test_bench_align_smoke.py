"""``benchmarks/bench_align.py`` runs and shows the winner's curse (a smoke run; the full
table in docs/align.md comes from its default 2000 runs)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_align.py"


def test_dev_is_optimistic_test_is_not() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", "80", "--resamples", "200"],
                          capture_output=True, text=True, timeout=300, check=True)

    def mean(name: str) -> float:
        found = re.search(re.escape(name) + r"\s+(-?[0-9.]+)", done.stdout)
        assert found, done.stdout
        return float(found.group(1))

    assert mean("dev kappa of the chosen - its true kappa") > 0.05
    assert abs(mean("test kappa of the chosen - its true kappa")) < 0.04
    assert mean("test kappa interval covers the true kappa") > 0.85
