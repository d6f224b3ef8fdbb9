"""Every speed benchmark runs in ``--quick`` mode and prints its table and its ratio line.

A smoke run, not a measurement: the figures live in docs/benchmarks.md. By default a
representative subset runs (under two minutes on two busy cores: the store, the statistics,
the report, batch files, the views, the tool imports, the annotate app and the /lead page);
``JUDGEKIT_BENCH_SMOKE=all`` adds the scripts that start servers or many processes
(runner, pacing, serve, scale, stand_for): 95 s more on a quiet machine, four minutes on a
busy one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _common import paired, ratio_line, table  # noqa: E402

#: Scripts run by default: each is well under 30 s with --quick.
DEFAULT = (
    "bench_store.py",
    "bench_stats.py",
    "bench_report.py",
    "bench_batch.py",
    "bench_views.py",
    "bench_tool_imports.py",
    "bench_annotate.py",
    "bench_annotate_long.py",
    "bench_lead.py",
    "bench_annotate_criteria.py",
    "bench_queue_progress.py",
    "bench_agree_crowd.py",
)
#: The rest of the speed scripts: servers on 127.0.0.1 or a process per step.
HEAVY = (
    "bench_runner.py",
    "bench_pacing.py",
    "bench_serve.py",
    "bench_scale.py",
    "bench_stand_for.py",
)
#: Statistical simulations and durability counts, not speed: no ratio against a baseline.
NOT_SPEED = ("bench_align.py", "bench_interrupts.py")

RATIO = re.compile(
    r"^ratio .+: \d+(\.\d+)?(e-\d+)?x \(spread \d+(\.\d+)?(e-\d+)?-\d+(\.\d+)?(e-\d+)?x "
    r"over \d+ ", re.M)
#: A table's rule: dashes under every column (``_common.table``) or a Markdown header rule.
RULE = re.compile(r"^(-+(  -+)+|\|(-{3}|-{3}:|---:)(\|.*)?)\s*$", re.M)


def test_every_speed_script_is_listed() -> None:
    """A new bench_*.py must be placed in one of the lists (and so get a smoke run)."""
    found = {path.name for path in BENCHMARKS.glob("bench_*.py")}
    assert found == set(DEFAULT) | set(HEAVY) | set(NOT_SPEED)


def test_ratio_line_and_table_shape() -> None:
    pairs = paired(lambda: sum(range(2000)), lambda: sum(range(1000)), 3)
    line = ratio_line("sum of 2,000 / sum of 1,000 (time)", pairs.ratios)
    assert RATIO.search(line), line
    assert "over 3 pairs" in line
    assert RULE.search(table(("case", "s"), [("a", 1.0)]))


@pytest.mark.slow
@pytest.mark.parametrize("script", [
    *DEFAULT,
    *(pytest.param(name, marks=pytest.mark.skipif(
        os.environ.get("JUDGEKIT_BENCH_SMOKE") != "all",
        reason="JUDGEKIT_BENCH_SMOKE=all runs the heavy benchmarks")) for name in HEAVY),
])
def test_quick_run_prints_table_and_ratio(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
        env={**os.environ, "JUDGEKIT_PROGRESS": "0"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert RULE.search(done.stdout), done.stdout[-3000:]
    assert RATIO.search(done.stdout), done.stdout[-3000:]
    assert "machine: " in done.stdout
