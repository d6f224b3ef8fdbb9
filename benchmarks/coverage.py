"""Empirical coverage of every interval the report uses, over a grid of designs.

Run: ``python benchmarks/coverage.py [--quick] [--reps N] [--resamples B]``.
Prints, per interval and design cell, the share of replications whose 95%
interval contains the population value, the share refused (NaN with a reason,
which the report shows as "no interval"), and whether the cell lands in
93-97%. Not a timed test: ``--quick`` (few replications) is the smoke run a
test invokes.

Populations. Two raters on K categories with marginal shares m (the first
category has share ``prevalence``, the rest split it evenly) and the joint
distribution P = (1 - lam) diag(m) + lam m m^T: with probability 1 - lam both
copy one category, otherwise they answer independently. Cohen's kappa,
quadratic-weighted kappa and Krippendorff's alpha (any metric) all equal
1 - lam on this population, so ``agreement`` is their true value. AC1 and the
rank correlations are computed from P (the correlations from a 400,000-pair
sample). Alpha is run with 3 raters and 30% of the ratings missing. Clustered
designs draw each cluster's lam_c from a Beta with mean lam (concentration 2,
so clusters differ a lot) and cluster size 5; the population value is
1 - E[lam_c] = 1 - lam.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from judgekit import stats
from judgekit.stats import _tables

LEVEL = 0.95
LOW, HIGH = 0.93, 0.97


@dataclass(frozen=True)
class Cell:
    n: int
    agreement: float
    prevalence: float
    k: int
    clusters: int | None = None

    def label(self) -> str:
        base = f"n={self.n:<5} kappa={self.agreement} prev={self.prevalence} K={self.k}"
        return base if self.clusters is None else f"{base} G={self.clusters}"


def margins(prevalence: float, k: int) -> np.ndarray:
    return np.array([prevalence] + [(1 - prevalence) / (k - 1)] * (k - 1))


def joint(agreement: float, m: np.ndarray) -> np.ndarray:
    lam = 1.0 - agreement
    return (1 - lam) * np.diag(m) + lam * np.outer(m, m)


def draw_pairs(cell: Cell, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, cluster ids) for one replication."""
    m = margins(cell.prevalence, cell.k)
    if cell.clusters is None:
        p = joint(cell.agreement, m).ravel()
        cells = rng.choice(p.size, size=cell.n, p=p)
        return cells // cell.k, cells % cell.k, np.arange(cell.n)
    lam = 1.0 - cell.agreement
    size = cell.n // cell.clusters
    lam_c = rng.beta(2 * lam, 2 * (1 - lam), size=cell.clusters)
    ids = np.repeat(np.arange(cell.clusters), size)
    copy = rng.random(ids.size) >= lam_c[ids]
    a = rng.choice(cell.k, size=ids.size, p=m)
    b = np.where(copy, a, rng.choice(cell.k, size=ids.size, p=m))
    return a, b, ids


def true_ac1(cell: Cell) -> float:
    p = joint(cell.agreement, margins(cell.prevalence, cell.k))[None]
    return float(_tables.gwet_from_tables(p)[0][0])


_RANK_TRUTH: dict[tuple[float, float, int, str], float] = {}


def true_rank(cell: Cell, which: str) -> float:
    key = (cell.agreement, cell.prevalence, cell.k, which)
    if key not in _RANK_TRUTH:
        rng = np.random.default_rng(99)
        big = Cell(400_000, cell.agreement, cell.prevalence, cell.k)
        a, b, _ = draw_pairs(big, rng)
        fn = stats.spearman if which == "spearman" else stats.kendall_tau
        _RANK_TRUTH[key] = float(fn(a, b).statistic)
    return _RANK_TRUTH[key]


def draw_alpha(cell: Cell, rng: np.random.Generator) -> list[list[float]]:
    """3 raters x n units from the mixture model, 30% of ratings missing."""
    m = margins(cell.prevalence, cell.k)
    common = rng.choice(cell.k, size=cell.n, p=m)
    copy = rng.random(cell.n) < cell.agreement
    rows = []
    for _ in range(3):
        own = rng.choice(cell.k, size=cell.n, p=m)
        values = np.where(copy, common, own).astype(float)
        values[rng.random(cell.n) < 0.3] = np.nan
        rows.append(values.tolist())
    return rows


Interval = Callable[[Cell, np.random.Generator, int], tuple[tuple[float, float], float]]


def _kappa(weights: str | None) -> Interval:
    def run(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float]:
        a, r, ids = draw_pairs(cell, rng)
        res = stats.cohen_kappa(a, r, weights=weights, labels=list(range(cell.k)))
        clusters = None if cell.clusters is None else ids
        ci = res.confidence_interval(n_resamples=b, random_state=rng, clusters=clusters)
        return ci, cell.agreement

    return run


def _ac1(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float]:
    a, r, ids = draw_pairs(cell, rng)
    res = stats.gwet_ac1(a, r, labels=list(range(cell.k)))
    clusters = None if cell.clusters is None else ids
    return res.confidence_interval(n_resamples=b, random_state=rng, clusters=clusters), true_ac1(
        cell
    )


def _agreement(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float]:
    a, r, ids = draw_pairs(cell, rng)
    res = stats.percent_agreement(a, r)
    m = margins(cell.prevalence, cell.k)
    truth = float(np.trace(joint(cell.agreement, m)))
    if cell.clusters is None:
        return res.confidence_interval(), truth
    return res.confidence_interval(
        method="bootstrap", n_resamples=b, random_state=rng, clusters=ids
    ), truth


def _alpha(level: str) -> Interval:
    def run(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float]:
        res = stats.krippendorff_alpha(draw_alpha(cell, rng), level=level)  # type: ignore[arg-type]
        return res.confidence_interval(n_resamples=b, random_state=rng), cell.agreement

    return run


def _rank(which: str) -> Interval:
    def run(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float]:
        a, r, _ = draw_pairs(cell, rng)
        fn = stats.spearman if which == "spearman" else stats.kendall_tau
        res = fn(a, r)
        return res.confidence_interval(n_resamples=b, random_state=rng), true_rank(cell, which)

    return run


def grid(quick: bool) -> list[tuple[str, Interval, list[Cell]]]:
    ns = (50, 200) if quick else (50, 200, 1000)
    agreements, prevalences = (0.4, 0.8), (0.5, 0.85)
    binary = [Cell(n, a, p, 2) for n in ns for a in agreements for p in prevalences]
    five = [Cell(n, a, p, 5) for n in ns for a in agreements for p in prevalences]
    clustered = [
        Cell(5 * g, a, 0.5, 2, g)
        for g in ((10, 50) if quick else (10, 20, 50, 200))
        for a in agreements
    ]
    return [
        ("cohen_kappa (bootstrap)", _kappa(None), binary + five),
        ("weighted_kappa quadratic (bootstrap)", _kappa("quadratic"), five),
        ("gwet_ac1 (bootstrap)", _ac1, binary),
        ("percent_agreement (Wilson)", _agreement, binary),
        ("krippendorff_alpha nominal, 3 raters, 30% missing", _alpha("nominal"), binary),
        ("krippendorff_alpha ordinal, 3 raters, 30% missing", _alpha("ordinal"), five),
        ("spearman (bootstrap)", _rank("spearman"), five),
        ("kendall_tau (bootstrap)", _rank("kendall"), five),
        ("cohen_kappa (cluster bootstrap)", _kappa(None), clustered),
        ("percent_agreement (cluster bootstrap)", _agreement, clustered),
    ]


def coverage(
    run: Interval, cell: Cell, reps: int, resamples: int, seed: int
) -> tuple[float, float, float]:
    """(coverage among intervals given, share refused, mean width)."""
    rng = np.random.default_rng(seed)
    hits = refused = 0
    widths = []
    for _ in range(reps):
        (low, high), truth = run(cell, rng, resamples)
        if not (math.isfinite(low) and math.isfinite(high)):
            refused += 1
            continue
        hits += low <= truth <= high
        widths.append(high - low)
    given = reps - refused
    mean_width = float(np.mean(widths)) if widths else math.nan
    return (hits / given if given else math.nan), refused / reps, mean_width


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few replications: a smoke run")
    parser.add_argument("--reps", type=int, default=None, help="replications per cell (500)")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (1000)")
    args = parser.parse_args()
    reps = args.reps or (20 if args.quick else 500)
    resamples = args.resamples or (200 if args.quick else 1000)
    start = time.perf_counter()
    print(f"95% intervals, {reps} replications per cell, {resamples} bootstrap resamples")
    print(f"{'interval':<52}{'design':<44}{'coverage':>9}{'refused':>9}{'width':>8}  in 93-97%")
    outside = 0
    for name, run, cells in grid(args.quick):
        for i, cell in enumerate(cells):
            cov, ref, width = coverage(run, cell, reps, resamples, seed=1000 + i)
            ok = LOW <= cov <= HIGH
            outside += not ok
            flag = "yes" if ok else ("no (low)" if cov < LOW else "no (high)")
            print(f"{name:<52}{cell.label():<44}{cov:>9.3f}{ref:>9.3f}{width:>8.3f}  {flag}")
    print(f"cells outside 93-97%: {outside}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
