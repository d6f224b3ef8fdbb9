"""``benchmarks/levels_coverage.py --quick`` runs end to end and prints its table (the coverage
itself is measured by the full run, docs/statistics.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "levels_coverage.py"


def test_quick_run_prints_every_figure_of_every_cell() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    out = done.stdout
    assert "| scale | agreement | systems | documents | figure | target | coverage | MC SE" in out
    table = out.split("cells below 0.93")[0]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ordinal")]
    figures = ("kendall_tau", "spearman", "pearson", "pairwise_accuracy",
               "per-group spearman", "kendall (basic)", "kendall (marginal)")
    assert len(rows) == 8 * len(figures)  # 2 agreements x 2 system counts x 2 sizes
    for row in rows:
        cells = [c.strip() for c in row]
        assert cells[4] in figures
        coverage = float(cells[6].rstrip("*"))
        assert 0.0 <= coverage <= 1.0 and float(cells[7]) >= 0.0
    # the projection intervals cover the exact population values even in a smoke run
    for row in rows:
        cells = [c.strip() for c in row]
        if cells[4] in ("kendall_tau", "pairwise_accuracy"):
            assert float(cells[6].rstrip("*")) >= 0.9, cells
    assert "cells below 0.93 (new intervals):" in out
