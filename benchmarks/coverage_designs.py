"""Populations and interval runners for ``benchmarks/coverage.py``.

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

The length slope: G prompts with 5 answers each, log2 length ~ N(prompt mean,
1), score = prompt effect + beta_g log2 length + N(0, 1) noise with a random
slope beta_g ~ N(0, 0.5^2) per prompt, so the population slope is 0 and the
slope's coverage is 1 minus its false-positive rate at 5%.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from judgekit import stats
from judgekit.report.interval_warnings import (
    alpha_warns,
    few_clusters_warns,
    kappa_warns,
    weighted_kappa_warns,
)
from judgekit.stats import _tables
from judgekit.stats.bias import length_slope


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


#: One replication: (cell, rng, resamples) -> ((low, high), population value, report warns).
Interval = Callable[[Cell, np.random.Generator, int], tuple[tuple[float, float], float, bool]]


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


def _clusters_warned(ids: np.ndarray, statistic: str, clustered: bool) -> bool:
    """Whether the report's few-clusters warning fires (``statistic`` names the caller)."""
    sizes = np.unique(ids, return_counts=True)[1]
    return clustered and few_clusters_warns(sizes.size, ids.size, sizes)


def kappa(weights: str | None, method: str | None = None) -> Interval:
    """Cohen's kappa with ``method`` (None: the default, BCa for weighted kappa)."""

    def run(
        cell: Cell, rng: np.random.Generator, b: int
    ) -> tuple[tuple[float, float], float, bool]:
        a, r, ids = draw_pairs(cell, rng)
        res = stats.cohen_kappa(a, r, weights=weights, labels=list(range(cell.k)))
        clusters = None if cell.clusters is None else ids
        ci = res.confidence_interval(
            method=method,  # type: ignore[arg-type]
            n_resamples=b,
            random_state=rng,
            clusters=clusters,
        )
        warned = _clusters_warned(ids, "kappa", clusters is not None)
        if weights is None:
            warned |= kappa_warns(res.confusion, res.statistic)
        else:
            warned |= weighted_kappa_warns(res.n, res.confusion)
        return ci, cell.agreement, warned

    return run


def ac1(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float, bool]:
    a, r, ids = draw_pairs(cell, rng)
    res = stats.gwet_ac1(a, r, labels=list(range(cell.k)))
    if cell.clusters is None:  # the default: Wilson with Gwet's SE
        return res.confidence_interval(), true_ac1(cell), False
    ci = res.confidence_interval(method="bootstrap", n_resamples=b, random_state=rng, clusters=ids)
    return ci, true_ac1(cell), _clusters_warned(ids, "ac1", True)


def agreement(
    cell: Cell, rng: np.random.Generator, b: int
) -> tuple[tuple[float, float], float, bool]:
    a, r, ids = draw_pairs(cell, rng)
    res = stats.percent_agreement(a, r)
    truth = float(np.trace(joint(cell.agreement, margins(cell.prevalence, cell.k))))
    if cell.clusters is None:
        return res.confidence_interval(), truth, False
    ci = res.confidence_interval(method="bootstrap", n_resamples=b, random_state=rng, clusters=ids)
    return ci, truth, _clusters_warned(ids, "agreement", True)


def alpha(level: str) -> Interval:
    def run(
        cell: Cell, rng: np.random.Generator, b: int
    ) -> tuple[tuple[float, float], float, bool]:
        res = stats.krippendorff_alpha(draw_alpha(cell, rng), level=level)  # type: ignore[arg-type]
        ci = res.confidence_interval(n_resamples=b, random_state=rng)
        return ci, cell.agreement, alpha_warns(res.n)

    return run


def rank(which: str, method: str | None = None) -> Interval:
    def run(
        cell: Cell, rng: np.random.Generator, b: int
    ) -> tuple[tuple[float, float], float, bool]:
        a, r, ids = draw_pairs(cell, rng)
        fn = stats.spearman if which == "spearman" else stats.kendall_tau
        res = fn(a, r)
        kwargs = {} if method is None else {"method": method}
        clusters = None if cell.clusters is None else ids
        ci = res.confidence_interval(
            n_resamples=b, random_state=rng, clusters=clusters, **kwargs  # type: ignore[arg-type]
        )
        truth = true_rank(Cell(cell.n, cell.agreement, cell.prevalence, cell.k), which)
        return ci, truth, _clusters_warned(ids, which, clusters is not None)

    return run


def slope(cell: Cell, rng: np.random.Generator, b: int) -> tuple[tuple[float, float], float, bool]:
    g = int(cell.clusters or cell.n)
    size = cell.n // g
    ids = np.repeat(np.arange(g), size)
    log_len = rng.normal(8.0, 1.0, size=g)[ids] + rng.normal(0.0, 1.0, size=ids.size)
    beta_g = rng.normal(0.0, 0.5, size=g)
    scores = rng.normal(0, 1, size=g)[ids] + beta_g[ids] * (log_len - 8.0)
    scores = scores + rng.normal(0.0, 1.0, size=ids.size)
    res = length_slope(scores, 2.0**log_len, groups=ids, n_resamples=b, random_state=rng)
    return res.confidence_interval(), 0.0, _clusters_warned(ids, "length_slope", True)


_PASS_LENGTH_TRUTH: dict[tuple[float, float], float] = {}


def _pass_by_length(n: int, noise: float, prevalence: float,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Response lengths (log-normal) and a 0/1 human verdict that passes the longer answers:
    pass when the standardised log length plus N(0, noise) clears the ``prevalence`` cut."""
    from scipy.stats import norm

    z = rng.normal(size=n)
    cut = norm.ppf(1 - prevalence) * math.sqrt(1 + noise**2)
    return np.exp(6.5 + 0.7 * z), (z + rng.normal(0, noise, n) > cut).astype(float)


def human_length(cell: Cell, rng: np.random.Generator,
                 b: int) -> tuple[tuple[float, float], float, bool]:
    """Spearman of length against a 0/1 human verdict (the length probe's human correlation);
    ``cell.agreement`` is the noise of the verdict around the length split."""
    from scipy.stats import spearmanr

    key = (cell.agreement, cell.prevalence)
    if key not in _PASS_LENGTH_TRUTH:
        big = _pass_by_length(400_000, cell.agreement, cell.prevalence, np.random.default_rng(1))
        _PASS_LENGTH_TRUTH[key] = float(spearmanr(*big).statistic)
    lengths, verdicts = _pass_by_length(cell.n, cell.agreement, cell.prevalence, rng)
    res = stats.spearman(lengths, verdicts)
    return res.confidence_interval(n_resamples=b, random_state=rng), _PASS_LENGTH_TRUTH[key], False


def unequal_sizes(cell: Cell) -> np.ndarray:
    """``cell.clusters`` clusters of ``cell.n`` items: three hold 60% of them, the rest share
    the other 40% equally (about 8 equal clusters' worth at 60 clusters)."""
    big = int(0.2 * cell.n)
    rest = cell.clusters - 3 if cell.clusters else 0
    small = (cell.n - 3 * big) // max(rest, 1)
    return np.array([big] * 3 + [small] * rest)


def unequal_clusters(which: str) -> Interval:
    """Percent agreement or Cohen's kappa (cluster bootstrap) on very unequal clusters."""

    def run(cell: Cell, rng: np.random.Generator,
            b: int) -> tuple[tuple[float, float], float, bool]:
        sizes = unequal_sizes(cell)
        m = margins(cell.prevalence, cell.k)
        lam = 1.0 - cell.agreement
        ids = np.repeat(np.arange(sizes.size), sizes)
        lam_c = rng.beta(2 * lam, 2 * (1 - lam), size=sizes.size)
        copy = rng.random(ids.size) >= lam_c[ids]
        a = rng.choice(cell.k, size=ids.size, p=m)
        r = np.where(copy, a, rng.choice(cell.k, size=ids.size, p=m))
        if which == "agreement":
            res = stats.percent_agreement(a, r)
            truth = float(np.trace(joint(cell.agreement, m)))
            ci = res.confidence_interval(method="bootstrap", n_resamples=b, random_state=rng,
                                         clusters=ids)
        else:
            res = stats.cohen_kappa(a, r, labels=list(range(cell.k)))
            truth = cell.agreement
            ci = res.confidence_interval(n_resamples=b, random_state=rng, clusters=ids)
        return ci, truth, _clusters_warned(ids, which, True)

    return run
