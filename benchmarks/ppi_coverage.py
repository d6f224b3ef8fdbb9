"""Coverage of the estimate's intervals: PPI++, labels only, judge only (and Rogan-Gladen).

For each configuration a population of N = 10,000 judged items is drawn once
(human outcome Y, judge verdict f), then labeled samples of n items are drawn
again and again; each replication runs the same batched numerics the CLI uses
(:mod:`judgekit.stats._ppi_core`) and checks whether the interval holds the
population's true mean of Y. A 95% interval should hold it 93-97% of the time
(the Monte Carlo standard error at 1,000 replications is 0.7 points).

Grid: judge quality (useless = a coin, poor, good, excellent), n in {50, 100,
200, 500}, binary (pass rate) and ordinal (mean score on 1-5), three labeling
designs:

- ``srs``: a simple random sample of items;
- ``clusters``: prompts of 5 items that share a prompt effect; whole prompts are
  labeled (n/5 of them), the estimate uses the cluster-robust variance; the
  column ``ppi_naive`` is PPI++ with the independent-items variance, to show why;
- ``queue``: a non-uniform queue that oversamples the judge's low verdicts 3:1
  (stratified, fixed size), weighted by 1/inclusion probability.

The width ratio PPI++ / labels only shows what the judge buys: about 1 for a
useless judge (never narrower beyond noise), well below 1 for a good one.

Usage: ``python benchmarks/ppi_coverage.py [--quick] [--reps R] [--seed S]``.
``--quick`` runs a reduced grid (200 replications) in seconds, for the smoke test.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judgekit.stats import _ppi_core as core
from judgekit.stats._resample import z_critical

N = 10_000
CLUSTER = 5
QUALITIES = {"useless": 0.0, "poor": 0.4, "good": 0.75, "excellent": 0.95}
LEVEL = 0.95


@dataclass(frozen=True)
class Population:
    y: np.ndarray
    f: np.ndarray
    clusters: np.ndarray
    bounds: tuple[float, float]
    binary: bool

    @property
    def truth(self) -> float:
        return float(self.y.mean())


def population(kind: str, quality: float, rng: np.random.Generator) -> Population:
    """Y with a prompt effect shared by each cluster of 5 items; f copies Y with prob ``quality``.

    Otherwise f is noise: a fair coin (binary) or a uniform level (ordinal), so
    quality 0 is a judge that knows nothing.
    """
    prompt = np.repeat(rng.normal(size=N // CLUSTER), CLUSTER)
    clusters = np.repeat(np.arange(N // CLUSTER), CLUSTER)
    if kind == "binary":
        y = (rng.random(N) < 1 / (1 + np.exp(-(0.6 + 1.2 * prompt)))).astype(float)
        noise = (rng.random(N) < 0.5).astype(float)
        bounds = (0.0, 1.0)
    else:
        latent = 3.2 + 1.0 * prompt + rng.normal(scale=0.8, size=N)
        y = np.clip(np.rint(latent), 1, 5)
        noise = rng.integers(1, 6, size=N).astype(float)
        bounds = (1.0, 5.0)
    f = np.where(rng.random(N) < quality, y, noise)
    return Population(y, f, clusters, bounds, kind == "binary")


def draw(pop: Population, design: str, n: int, reps: int, rng: np.random.Generator):
    """Sampled item indices (reps, n) and their weights (None when uniform)."""
    if design == "srs":
        idx = np.argsort(rng.random((reps, N)), axis=1)[:, :n]
        return idx, None
    if design == "clusters":
        n_clusters = N // CLUSTER
        picked = np.argsort(rng.random((reps, n_clusters)), axis=1)[:, : n // CLUSTER]
        idx = (picked[:, :, None] * CLUSTER + np.arange(CLUSTER)).reshape(reps, -1)
        return idx, None
    low = pop.f <= (0.0 if pop.binary else 2.0)
    strata = [np.flatnonzero(low), np.flatnonzero(~low)]
    sizes = np.array([3.0 * len(strata[0]), 1.0 * len(strata[1])])
    alloc = np.maximum(1, np.round(n * sizes / sizes.sum()).astype(int))
    alloc[1] = n - alloc[0]
    parts, weights = [], []
    for members, k in zip(strata, alloc, strict=True):
        pick = np.argsort(rng.random((reps, len(members))), axis=1)[:, :k]
        parts.append(members[pick])
        weights.append(np.full((reps, k), len(members) / k))
    return np.concatenate(parts, axis=1), np.concatenate(weights, axis=1)


def covered(stat, var, truth, bounds, crit, wilson_n=None):
    """Whether each interval holds ``truth``, and its width (Wald, or Wilson at ``wilson_n``)."""
    if wilson_n is not None:
        low, high = core.wilson_bounds_array(stat, wilson_n, crit)
    else:
        half = crit * np.sqrt(var)
        low, high = np.maximum(stat - half, bounds[0]), np.minimum(stat + half, bounds[1])
    return (low <= truth) & (truth <= high), high - low


def run_config(pop: Population, design: str, n: int, reps: int, rng: np.random.Generator) -> dict:
    """One grid cell, estimated as ``judgkit estimate`` does (t with clusters, Wilson for rates)."""
    z = z_critical(LEVEL)
    idx, w = draw(pop, design, n, reps, rng)
    y, f = pop.y[idx], pop.f[idx]
    truth = pop.truth
    clustered = design == "clusters"
    plain = core.Design(weights=w)
    crit: float | np.ndarray = z
    robust = plain
    if clustered:
        robust = core.Design(w, pop.clusters[idx], pop.clusters, N // CLUSTER)
        crit = student_t.ppf(0.5 + LEVEL / 2, core.labeled_clusters(robust, reps) - 1)
    out = core.ppi_arrays(y, f, pop.f, robust)
    ppi_ok, ppi_w = covered(out.statistic, out.variance, truth, pop.bounds, crit)
    wilson_n = None
    if pop.binary:  # labels only on a rate: Wilson at the effective sample size
        p = out.classical
        with np.errstate(divide="ignore", invalid="ignore"):
            wilson_n = np.where(out.classical_variance > 0, p * (1 - p) / out.classical_variance, n)
    lab_ok, lab_w = covered(
        out.classical, out.classical_variance, truth, pop.bounds, crit, wilson_n
    )
    fu = pop.f[None]
    judge_mean, judge_var = core.mean_arrays(fu, core.Design())
    judge_ok, _ = covered(judge_mean, judge_var, truth, pop.bounds, z)
    row = {
        "ppi": float(ppi_ok.mean()),
        "labels": float(lab_ok.mean()),
        "judge": float(judge_ok[0]),
        "width_ratio": float(np.mean(ppi_w) / np.mean(lab_w)),
        "lam": float(np.mean(out.lam)),
    }
    if clustered:
        naive = core.ppi_arrays(y, f, pop.f, plain)
        ok, _ = covered(naive.statistic, naive.variance, truth, pop.bounds, z)
        row["ppi_naive"] = float(ok.mean())
    if pop.binary:
        rg = core.rogan_gladen_arrays(y, f, pop.f, robust)
        ok, _ = covered(rg.statistic, rg.variance, truth, (0.0, 1.0), crit)
        defined = np.isfinite(rg.statistic) & np.isfinite(rg.variance)
        row["rogan_gladen"] = float(ok[defined].mean()) if defined.any() else None
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small grid, 200 replications")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20231103)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    reps = 200 if args.quick else args.reps
    sizes = (50, 200) if args.quick else (50, 100, 200, 500)
    qualities = ("useless", "excellent") if args.quick else tuple(QUALITIES)
    start = time.perf_counter()
    header = (
        f"{'kind':<8}{'design':<10}{'judge':<10}{'n':>5}  {'PPI++':>6} {'labels':>6} "
        f"{'judge':>6} {'RG':>6} {'naive':>6}  {'width':>6} {'lambda':>6}"
    )
    print(f"Coverage of {LEVEL:.0%} intervals over {reps} replications, N = {N}")
    print("(width = mean PPI++ width / mean labels-only width; naive = PPI++ ignoring clusters)")
    print(header)
    print("-" * len(header))
    worst = {"ppi": 1.0, "labels": 1.0}
    for kind in ("binary", "ordinal"):
        for design in ("srs", "clusters", "queue"):
            for quality in qualities:
                pop = population(kind, QUALITIES[quality], rng)
                for n in sizes:
                    row = run_config(pop, design, n, reps, rng)
                    worst = {k: min(worst[k], row[k]) for k in worst}

                    def pct(key: str, row: dict = row) -> str:
                        value = row.get(key)
                        return f"{100 * value:6.1f}" if value is not None else f"{'-':>6}"

                    print(
                        f"{kind:<8}{design:<10}{quality:<10}{n:>5}  {pct('ppi')} {pct('labels')} "
                        f"{pct('judge')} {pct('rogan_gladen')} {pct('ppi_naive')}  "
                        f"{row['width_ratio']:6.2f} {row['lam']:6.2f}"
                    )
    elapsed = time.perf_counter() - start
    print(
        f"\nlowest coverage: PPI++ {100 * worst['ppi']:.1f}%, labels only "
        f"{100 * worst['labels']:.1f}%; {elapsed:.1f} s"
    )


if __name__ == "__main__":
    main()
