"""What the benchmark scripts share: the checkout on the path, paired timing, table, ratio line.

A speed figure on a shared machine drifts from one minute to the next, so every speed script
measures its baseline in the same run and alternates it with the candidate, pair by pair
(:func:`paired`): the ratio of each pair is taken while both ran under the same load, and the
spread of those ratios says how noisy the machine was. :func:`ratio_line` prints that ratio in
the one form every script uses (``tests/benchmarks`` reads it)::

    ratio store / bare sqlite3 (time): 1.84x (spread 1.71-2.02x over 5 pairs)

The simulations (``coverage.py``, ``compare_kappa.py``, ...) share the argument parser and the
Monte Carlo standard error (:func:`simulation_parser`, :func:`mc_se`).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def on_path() -> Path:
    """Put the checkout (``judgekit``, ``tests.support``) and ``benchmarks/`` first on the path.

    The scripts run as ``python benchmarks/NAME.py`` from any folder, and must import the
    checkout they sit in rather than another installed copy.
    """
    for folder in (BENCHMARKS, ROOT):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    return ROOT


@dataclass
class Paired:
    """Seconds of a candidate and its baseline, run in turn; one ratio per pair."""

    candidate: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)

    def add(self, candidate: float, baseline: float) -> None:
        self.candidate.append(candidate)
        self.baseline.append(baseline)

    @property
    def ratios(self) -> list[float]:
        """Candidate over baseline, pair by pair (above 1: the candidate took longer)."""
        pairs = zip(self.candidate, self.baseline, strict=True)
        return [c / b if b > 0 else math.nan for c, b in pairs]

    @property
    def candidate_median(self) -> float:
        return statistics.median(self.candidate)

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline)


def clock(fn: Callable[[], Any]) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def paired(candidate: Callable[[], Any], baseline: Callable[[], Any], repeats: int,
           warmup: bool = True) -> Paired:
    """Run ``baseline`` and ``candidate`` in turn ``repeats`` times each, order alternating.

    The order flips every pair (B A, A B, ...) so neither side always runs on a warmer cache
    or a quieter second. One untimed call of each first when ``warmup`` (imports, first-use
    caches).
    """
    if warmup:
        baseline()
        candidate()
    out = Paired()
    for k in range(max(1, repeats)):
        if k % 2 == 0:
            base = clock(baseline)
            cand = clock(candidate)
        else:
            cand = clock(candidate)
            base = clock(baseline)
        out.add(cand, base)
    return out


def alternate(candidate: Callable[[], float], baseline: Callable[[], float],
              repeats: int) -> Paired:
    """Like :func:`paired`, for measurements that report their own figure (seconds, a rate).

    Each call returns the figure it measured (a run that times only part of itself, a rate of
    requests); the two run in turn, the order flipping every pair, and each pair's ratio is
    candidate over baseline.
    """
    out = Paired()
    for k in range(max(1, repeats)):
        if k % 2 == 0:
            base = baseline()
            cand = candidate()
        else:
            cand = candidate()
            base = baseline()
        out.add(cand, base)
    return out


def spread(ratios: Sequence[float]) -> tuple[float, float, float]:
    """Median, minimum and maximum of the finite ratios (NaN when there are none)."""
    finite = [r for r in ratios if math.isfinite(r)]
    if not finite:
        return math.nan, math.nan, math.nan
    return statistics.median(finite), min(finite), max(finite)


def _x(value: float) -> str:
    """A ratio with two decimals, or three significant digits below 0.1."""
    return f"{value:.2f}" if not math.isfinite(value) or abs(value) >= 0.1 else f"{value:.3g}"


def ratio_text(ratios: Sequence[float]) -> str:
    """``1.84x (1.71-2.02)``: the median ratio and its range, for a table cell."""
    mid, low, high = spread(ratios)
    return f"{_x(mid)}x ({_x(low)}-{_x(high)})"


def ratio_line(name: str, ratios: Sequence[float], unit: str = "pairs") -> str:
    """The one ratio line every speed script prints: median, and its spread over the pairs."""
    mid, low, high = spread(ratios)
    count = sum(1 for r in ratios if math.isfinite(r))
    if count == 1 and unit == "pairs":
        unit = "pair"
    return f"ratio {name}: {_x(mid)}x (spread {_x(low)}-{_x(high)}x over {count} {unit})"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def machine() -> str:
    """One line on where the figures were taken (they compare runs on this machine only)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    return (f"machine: {cores} cores (load {load:.1f}), Python {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}")


def header(title: str) -> None:
    """The first lines of a speed script's output: what it measures and where."""
    print(title)
    print(machine())
    print()


def simulation_parser(doc: str | None, quick_help: str, reps_help: str,
                      seed: int = 20261204) -> argparse.ArgumentParser:
    """``--quick``, ``--reps`` and ``--seed``: the options every seeded simulation takes."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--reps", type=int, default=None, help=reps_help)
    parser.add_argument("--seed", type=int, default=seed)
    return parser


def mc_se(p: float, reps: int) -> float:
    """Monte Carlo standard error of a rate ``p`` over ``reps`` runs (never 0: at least 1/reps)."""
    return math.sqrt(max(p * (1 - p), 1 / reps) / reps)


def rate_cells(rates: Sequence[float], reps: int) -> str:
    """``0.052 (0.007)`` per rate: each with its Monte Carlo standard error."""
    return " ".join(f"{x:.3f} ({mc_se(x, reps):.3f})" for x in rates)


__all__ = [
    "BENCHMARKS", "ROOT", "Paired", "alternate", "clock", "header", "machine", "mc_se", "on_path",
    "paired", "rate_cells", "ratio_line", "ratio_text", "simulation_parser", "spread", "table",
]
