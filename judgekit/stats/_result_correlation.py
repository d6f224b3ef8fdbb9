"""The rank-correlation result and its bootstrap, the costliest interval in judgekit.

Same conventions as :mod:`judgekit.stats._result` (frozen, ``statistic``, ``n``,
``confidence_interval``, ``to_dict``). Apart from the other outcome results
because its bootstrap has two paths: resampling the pairs themselves, or (when
few distinct pairs exist, as with verdicts on a short scale) resampling counts
of distinct pairs, which gives the same replicates far faster.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from judgekit.stats import _kendall_ase, _rank_interval, _resample
from judgekit.stats._interval import ConfidenceInterval
from judgekit.stats._result import (
    BOOTSTRAP_METHODS,
    NAN_INTERVAL,
    Interval,
    ResultMixin,
    _check_bootstrap_args,
    used_clusters,
)
from judgekit.stats._tdist import t_quantile
from judgekit.stats._validate import BoolArray, FloatArray, IntArray, RandomState, rng_from

#: Largest jackknife (leave-one-out rows times distinct pairs; a row per distinct pair, or
#: per cluster) the default interval computes: about the cost of a 2,000 x 2,000 bootstrap.
#: Beyond it (many distinct values) the jackknife and the ASE or bootstrap agree to O(1/n).
JACKKNIFE_MAX_CELLS = 4_000_000

__all__ = [
    "JACKKNIFE_MAX_CELLS",
    "BatchStatistic",
    "CorrelationResult",
    "WeightedFactory",
    "WeightedStatistic",
]

#: A statistic of B resampled pair sets, shapes (B, n) and (B, n) -> (B,).
BatchStatistic = Callable[[FloatArray, FloatArray], FloatArray]
#: The statistic of B weighted resamples from their pattern counts, shape (B, T) -> (B,).
WeightedStatistic = Callable[[FloatArray], FloatArray]
#: Builds a :data:`WeightedStatistic` for the distinct pairs (x (T,), y (T,)), or None
#: when there are too many of them for the weighted form to pay off.
WeightedFactory = Callable[[FloatArray, FloatArray], WeightedStatistic | None]


@dataclass(frozen=True)
class CorrelationResult(ResultMixin):
    """A rank correlation with its p-value; ``method`` is ``"spearman"`` or ``"kendall_tau_b"``."""

    statistic: float
    n: int
    pvalue: float
    method: str
    reason: str | None
    _x: FloatArray = field(compare=False, repr=False)
    _y: FloatArray = field(compare=False, repr=False)
    _used: BoolArray = field(compare=False, repr=False)
    _batch: BatchStatistic = field(compare=False, repr=False)
    _weighted: WeightedFactory = field(compare=False, repr=False)
    _fisher_variance: Callable[[int], float] = field(compare=False, repr=False)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: Literal["default", "jackknife", "bootstrap", "bca", "fisher", "ase"] = "default",
        n_resamples: int = 2000,
        random_state: RandomState = 0,
        clusters: Any = None,
    ) -> Interval:
        """The default interval (the jackknife on Fisher's z), a percentile or BCa bootstrap,
        Fisher z, or (tau-b) the ASE.

        ``"default"`` is ``"jackknife"``: the delete-one jackknife SE (delete one cluster
        with ``clusters``, then t on G - 1 degrees of freedom) carried to Fisher's z
        scale, right with ties (:mod:`judgekit.stats._rank_interval`). Beyond
        ``JACKKNIFE_MAX_CELLS`` (and for tau-b with more than 400 distinct pairs) it
        falls back to the ASE for tau-b and the bootstrap for rho. ``"ase"`` is the
        Brown-Benedetti asymptotic SE of tau-b (cluster-robust with ``clusters``). The
        bootstrap resamples pairs (clusters when given; widened for few clusters).
        Fisher z uses variance 1.06/(n-3) for Spearman and 0.437/(n-4) for Kendall
        (Fieller, Hartley & Pearson 1957); it assumes few ties. A sample in perfect
        order gets the boundary-aware interval whatever the method.
        """
        level = _check_bootstrap_args(
            confidence_level,
            method,
            n_resamples,
            ("default", "jackknife", *BOOTSTRAP_METHODS, "fisher", "ase"),
        )
        kendall = self.method == "kendall_tau_b"
        if method == "default":
            method = "jackknife"
        if method == "ase" and not kendall:
            raise ValueError("method='ase' is implemented for Kendall's tau-b only")
        if not math.isfinite(self.statistic):
            return NAN_INTERVAL
        codes = None if clusters is None else used_clusters(clusters, self._used)
        sign = _rank_interval.perfect_order(self._x, self._y)
        if sign:
            units = self.n if codes is None else int(codes.max()) + 1
            table_statistic = (
                _kendall_ase.tau_b_of_table if kendall else _rank_interval.spearman_of_table
            )
            return _rank_interval.perfect_sample_interval(
                self._x, sign, units, level, table_statistic
            )
        distinct, unit_pattern = self._patterns()
        weighted = self._weighted(distinct[:, 0], distinct[:, 1])
        if method == "jackknife":
            if self._jackknife_fits(weighted, distinct.shape[0], codes):
                assert weighted is not None
                leave_one_out = _weighted_jackknife(weighted, unit_pattern, codes)
                return _rank_interval.jackknife_interval(
                    self.statistic, leave_one_out, codes is not None, level
                )
            method = "ase" if kendall else "bootstrap"
        if method == "ase":
            interval = self._ase_interval(level, codes)
            if interval is not None:
                return interval
            method = "bootstrap"  # table too large, or SE 0: the bootstrap decides
        if method == "fisher":
            variance = self._fisher_variance(self.n)
            if not math.isfinite(variance) or variance <= 0 or abs(self.statistic) >= 1:
                return NAN_INTERVAL
            half = _resample.z_critical(level) * math.sqrt(variance)
            center = math.atanh(self.statistic)
            return math.tanh(center - half), math.tanh(center + half)
        rng = rng_from(random_state)
        if weighted is None:
            replicates = self._replicates(n_resamples, rng, codes)
        else:
            replicates = self._weighted_replicates(weighted, unit_pattern, n_resamples, rng, codes)
        if method == "bca":
            if weighted is None:
                sets = _resample.jackknife_index_sets(codes, self.n)
                jackknife = np.array(
                    [self._batch(self._x[s][None, :], self._y[s][None, :])[0] for s in sets]
                )
            else:
                jackknife = _weighted_jackknife(weighted, unit_pattern, codes)
            interval = _resample.bca_interval(replicates, self.statistic, jackknife, None, level)
        else:
            interval = _resample.percentile_interval(replicates, level)
        n_clusters = None if codes is None else int(codes.max()) + 1
        return _resample.widen_for_few_clusters(interval, self.statistic, n_clusters, level)

    def cluster_pvalue(self, clusters: Any) -> float:
        """Two-sided p of "no correlation" that counts clusters, as the intervals do.

        ``pvalue`` treats the pairs as independent; with items sharing a prompt it is too
        small (benchmarks/coverage.py). Here the delete-one-cluster jackknife SE on Fisher's
        z scale gives t = atanh(r) (1 - r^2) / SE on G - 1 degrees of freedom, the test the
        default clustered interval inverts. NaN when that interval has nothing to work
        with (fewer than two clusters, a sample in perfect order, a table too large).
        """
        from scipy import stats  # a second to import: only where it is used

        if not math.isfinite(self.statistic) or abs(self.statistic) >= 1:
            return math.nan
        codes = used_clusters(clusters, self._used)
        distinct, unit_pattern = self._patterns()
        weighted = self._weighted(distinct[:, 0], distinct[:, 1])
        if codes is None or weighted is None or not self._jackknife_fits(
                weighted, distinct.shape[0], codes):
            return math.nan
        leave = _weighted_jackknife(weighted, unit_pattern, codes)
        if leave.size < 2 or not np.all(np.isfinite(leave)):
            return math.nan
        se = _rank_interval.jackknife_se(leave)
        if not se > 1e-12:
            return math.nan
        t = math.atanh(self.statistic) * (1.0 - self.statistic**2) / se
        return float(2.0 * stats.t.sf(abs(t), leave.size - 1))

    def cluster_pvalue_reason(self, clusters: Any) -> str | None:
        """Why :meth:`cluster_pvalue` is NaN on these clusters (None when it is defined)."""
        if not math.isfinite(self.statistic):
            return "the correlation is undefined"
        if abs(self.statistic) >= 1:
            return "the sample is in perfect order"
        codes = used_clusters(clusters, self._used)
        if int(codes.max()) + 1 < 2:
            return "fewer than two clusters"
        if self._two_valued_spearman():
            return ("one side takes (nearly) two values, where the jackknife by cluster is "
                    "unreliable; the interval is a cluster bootstrap")
        distinct, _ = self._patterns()
        weighted = self._weighted(distinct[:, 0], distinct[:, 1])
        if not self._jackknife_fits(weighted, distinct.shape[0], codes):
            return "too many distinct pairs for the jackknife by cluster"
        if math.isnan(self.cluster_pvalue(clusters)):
            return "no cluster left out moves the correlation"
        return None

    def default_method(self, clusters: Any = None) -> str:
        """The interval ``method="default"`` gives on these data: ``"jackknife"``, or where
        the jackknife would be too large its fallback ``"ase"`` (tau-b) or ``"bootstrap"``
        (rho, or tau-b with a table too large for the ASE; rho against a variable with two
        values); ``"boundary"`` for a sample in perfect order. A report names the interval
        from this."""
        if _rank_interval.perfect_order(self._x, self._y):
            return "boundary"
        codes = None if clusters is None else used_clusters(clusters, self._used)
        distinct, _ = self._patterns()
        weighted = self._weighted(distinct[:, 0], distinct[:, 1])
        if self._jackknife_fits(weighted, distinct.shape[0], codes):
            return "jackknife"
        if self.method == "kendall_tau_b" and _kendall_ase.table_fits(self._x, self._y):
            return "ase"
        return "bootstrap"

    def _jackknife_fits(
        self, weighted: WeightedStatistic | None, n_patterns: int, codes: IntArray | None
    ) -> bool:
        rows = n_patterns if codes is None else int(codes.max()) + 1
        return (weighted is not None and rows * n_patterns <= JACKKNIFE_MAX_CELLS
                and not self._two_valued_spearman())

    def _two_valued_spearman(self) -> bool:
        """Spearman's rho against a (nearly) two-valued variable (a pass rate against length,
        or a mean of two annotators' pass/fail that is 0 or 1 on all but a few items): near
        the highest rho the split allows (about 0.87 for half passing), with passes and
        fails almost separated, no leave-one-out sample changes rho much and the jackknife
        SE collapses (0.868 [0.851, 0.884] on 31 items; 89% coverage at n = 31 in
        benchmarks/coverage.py), while the bootstrap covers 96-98%: it is used instead.
        Nearly: under ``NEAR_BINARY_SHARE`` of the items outside its two most common
        values."""
        if self.method == "kendall_tau_b":
            return False
        return _near_binary(self._x) or _near_binary(self._y)

    def _patterns(self) -> tuple[FloatArray, IntArray]:
        """The distinct (x, y) pairs and, per pair used, the index of its distinct pair."""
        distinct, unit_pattern = np.unique(
            np.column_stack([self._x, self._y]), axis=0, return_inverse=True
        )
        return distinct, unit_pattern.reshape(-1)

    def _ase_interval(self, level: float, codes: IntArray | None) -> Interval | None:
        """tanh(atanh(tau_b) +/- crit * ASE / (1 - tau_b^2)): the ASE carried to Fisher's z
        scale by the delta method, so the interval stays inside (-1, 1) and is skewed
        towards 0 near the ends (plain tau_b +/- z ASE covers 0.90 at n = 50 and tau 0.8
        on a 5-point scale; this 0.94). None when the bootstrap must decide."""
        found = _kendall_ase.influence(self._x, self._y)
        if found is None:
            return None
        _, psi, w = found
        se, units = _kendall_ase.standard_error(psi, w, codes)
        if not math.isfinite(se) or se <= 1e-12 or abs(self.statistic) >= 1.0:
            return None
        if codes is None:
            crit = _resample.z_critical(level)
        else:
            crit = t_quantile(1.0 - (1.0 - level) / 2.0, units - 1)
        centre = math.atanh(self.statistic)
        half = crit * se / (1.0 - self.statistic**2)
        return ConfidenceInterval(math.tanh(centre - half), math.tanh(centre + half))

    def _weighted_replicates(
        self,
        weighted: WeightedStatistic,
        unit_pattern: IntArray,
        n_resamples: int,
        rng: np.random.Generator,
        codes: IntArray | None,
    ) -> FloatArray:
        """Replicates from pattern counts; the same resamples as :meth:`_replicates`."""
        n_patterns = int(unit_pattern.max()) + 1
        out = np.empty(n_resamples)
        step = max(1, min(n_resamples, 2_000_000 // max(self.n, 1)))
        n_clusters = 0 if codes is None else int(codes.max()) + 1
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            if codes is None:
                idx = rng.integers(0, self.n, size=(rows, self.n))
                counts = _resample.row_bincount(unit_pattern[idx], n_patterns)
            else:
                # each item appears as often as its cluster was picked
                per_cluster = _resample.cluster_pick_counts(n_clusters, rows, rng)
                counts = _resample.row_bincount(
                    np.broadcast_to(unit_pattern, (rows, self.n)),
                    n_patterns,
                    weights=per_cluster[:, codes].astype(np.float64),
                )
            out[start : start + rows] = weighted(counts)
        return out

    def _replicates(
        self, n_resamples: int, rng: np.random.Generator, codes: IntArray | None
    ) -> FloatArray:
        """Replicates from the resampled arrays themselves (many distinct pairs)."""
        if codes is None:
            out = np.empty(n_resamples)
            step = max(1, min(n_resamples, 2_000_000 // max(self.n, 1)))
            for start in range(0, n_resamples, step):
                rows = min(step, n_resamples - start)
                idx = rng.integers(0, self.n, size=(rows, self.n))
                out[start : start + rows] = self._batch(self._x[idx], self._y[idx])
            return out
        values = []
        for flat, lengths in _resample.cluster_resample_indices(codes, n_resamples, rng):
            for idx in np.split(flat, np.cumsum(lengths)[:-1]):
                values.append(self._batch(self._x[idx][None, :], self._y[idx][None, :])[0])
        return np.asarray(values, dtype=np.float64)


#: A variable with fewer than this share of its items outside its two most common values
#: counts as two-valued for the choice of Spearman's default interval.
NEAR_BINARY_SHARE = 0.05


def _near_binary(values: FloatArray) -> bool:
    counts = np.sort(np.unique(values, return_counts=True)[1])[::-1]
    return bool(counts[2:].sum() < NEAR_BINARY_SHARE * values.size)


def _weighted_jackknife(
    weighted: WeightedStatistic, unit_pattern: IntArray, codes: IntArray | None
) -> FloatArray:
    """Leave-one-unit-out estimates (items, or whole clusters) from pattern counts.

    Without clusters, leaving out any item of one pattern gives the same
    estimate, so there is one row per pattern, spread back to the items.
    """
    n_patterns = int(unit_pattern.max()) + 1
    frequencies = np.bincount(unit_pattern, minlength=n_patterns).astype(np.float64)
    n_units = n_patterns if codes is None else int(codes.max()) + 1
    values = np.empty(n_units)
    step = _resample.chunk_rows(n_units, n_patterns)
    for first in range(0, n_units, step):
        rows = min(step, n_units - first)
        removed = np.zeros((rows, n_patterns))
        if codes is None:
            removed[np.arange(rows), np.arange(first, first + rows)] = 1.0
        else:
            mine = (codes >= first) & (codes < first + rows)
            np.add.at(removed, (codes[mine] - first, unit_pattern[mine]), 1.0)
        values[first : first + rows] = weighted(frequencies[None, :] - removed)
    jackknife: FloatArray = values[unit_pattern] if codes is None else values
    return jackknife
