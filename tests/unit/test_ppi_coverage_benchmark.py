"""The coverage benchmark's quick mode runs and shows what it is for (the full run is manual)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ppi_coverage.py"


def test_quick_mode_prints_the_coverage_table() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    rows = [line.split() for line in out.splitlines() if line.startswith(("binary", "ordinal"))]
    assert len(rows) == 2 * 3 * 2 * 2  # kinds x designs x judges x n
    # columns: kind design judge n PPI++ wald labels judge RG naive width lambda
    for kind, design, judge, n, ppi, _wald, labels, judge_only, *_ in rows:
        assert 80.0 <= float(ppi) <= 100.0, (kind, design, judge, n)
        assert 75.0 <= float(labels) <= 100.0, (kind, design, judge, n)
        if judge == "useless":
            assert float(judge_only) == 0.0  # the judge's own rate misses the humans'
    assert "lowest coverage" in out
