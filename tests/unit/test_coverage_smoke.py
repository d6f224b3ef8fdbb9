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
        "weighted_kappa quadratic (BCa)",
        "gwet_ac1 (Wilson, Gwet SE)",
        "percent_agreement (Wilson)",
        "krippendorff_alpha ordinal, 3 raters, 30% missing",
        "kendall_tau (default)",
        "kendall_tau (bootstrap)",
        "cohen_kappa (cluster bootstrap)",
        "length_slope, true slope 0 (cluster bootstrap)",
    ):
        assert name in out
    assert "cells outside 93-97%:" in out


def test_coverage_benchmark_subset_writes_csv_that_merges(tmp_path: Path) -> None:
    out = tmp_path / "cells.csv"
    for shard in ("0/2", "1/2"):
        subprocess.run(
            [sys.executable, str(SCRIPT), "--quick", "--reps", "2", "--resamples", "20",
             "--only", "percent_agreement (Wilson)", "--shard", shard, "--out", str(out)],
            capture_output=True, text=True, timeout=300, check=True,
        )
    rows = out.read_text().splitlines()
    assert rows[0].startswith("interval,design,") and len(rows) == 1 + 8  # 8 binary cells
    merged = subprocess.run(
        [sys.executable, str(SCRIPT), "--merge", str(out)],
        capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    assert merged.count("percent_agreement (Wilson)") == 8
    assert "cells below 93% without a warning:" in merged
