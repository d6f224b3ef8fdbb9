"""One bootstrap design drawn once, kept as counts of item codes, for many statistics.

A report computes several bootstrap intervals on the same items with the same seed:
an F1 per label, a share of agreeing pairs. Each used to draw its own
``n_resamples x n`` index matrix (100 million integers at 100,000 items), gather
its arrays through it and reduce them. Every one of those statistics is a function
of *how many items of each kind* a resample holds: an F1 needs the counts of the
judge-label by human-label cells, a share of agreeing pairs the counts of each
(agreeing, total) pattern. So the resamples are drawn once, each item is given a
small integer code (its kind), and only the ``(n_resamples, n_codes)`` table of code
counts is kept; each statistic is then a function of that table.

The draws consume the generator exactly as :func:`judgekit.stats.bootstrap_ci` with
``vectorized=True`` does for the same items, clusters and strata (same chunks, same
calls), so a statistic of the counts has the very replicates ``bootstrap_ci`` gives
the same statistic written over the items' arrays: integer counts are the same
integers, and sums of integer-valued contributions are exact in float64. The tests
check that number for number (tests/stats/test_resample_plan.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from judgekit.stats import _resample
from judgekit.stats._interval import ConfidenceInterval, refused
from judgekit.stats._validate import (
    FloatArray,
    IntArray,
    RandomState,
    check_confidence_level,
    check_n_resamples,
    cluster_codes,
    rng_from,
)

#: Cells of one unclustered index chunk: the same budget as ``bootstrap_ci``'s
#: vectorised path, so both draw the generator in the same chunks.
_INDEX_CHUNK_CELLS = 2_000_000

#: A statistic of code counts: (rows, n_codes) counts -> (rows,) values.
CountStatistic = Callable[[IntArray], FloatArray]


def code_counts(
    codes: IntArray,
    n_codes: int,
    n_resamples: int,
    rng: np.random.Generator,
    units: IntArray | None = None,
    unit_strata: IntArray | None = None,
) -> IntArray:
    """How often each code is drawn in each bootstrap resample: shape (n_resamples, n_codes).

    Without ``units`` items are drawn with replacement (``rng.integers`` in the chunks
    of ``bootstrap_ci``); with ``units`` (dense cluster ids, or the stratified units of
    :func:`judgekit.stats._resample.stratified_units` with their ``unit_strata``) whole
    units are drawn as :func:`judgekit.stats._resample.cluster_resample_indices` draws
    them, and a resample's counts are the summed counts of the units it picked.
    """
    n = int(codes.size)
    out = np.empty((n_resamples, n_codes), dtype=np.int64)
    if units is None:
        small = codes.astype(np.min_scalar_type(max(n_codes - 1, 0)))  # a byte per item, mostly
        step = max(1, min(n_resamples, _INDEX_CHUNK_CELLS // max(n, 1)))
        for start in range(0, n_resamples, step):
            rows = min(step, n_resamples - start)
            idx = rng.integers(0, n, size=(rows, n))
            # one bincount per row of bytes: faster here than one over offset codes per
            # chunk, whose int64 offsets cost more than the per-row calls they save
            for r, drawn in enumerate(np.take(small, idx), start):
                out[r] = np.bincount(drawn, minlength=n_codes)
        return out
    n_units = int(units.max()) + 1
    per_unit = np.bincount(units * n_codes + codes, minlength=n_units * n_codes)
    per_unit_counts = per_unit.reshape(n_units, n_codes).astype(np.float64)
    step = _resample.chunk_rows(n_resamples, n)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picked = _resample.pick_units(n_units, rows, unit_strata, rng)
        # integer counts times integer counts: exact in float64 far beyond any real n
        summed = _resample.row_bincount(picked, n_units) @ per_unit_counts
        out[start : start + rows] = np.rint(summed).astype(np.int64)
    return out


class ResamplePlan:
    """The bootstrap resamples of one design (items, seed, clusters, strata), drawn once.

    ``codes`` gives each item a small integer kind (0 .. ``n_codes`` - 1); the plan
    keeps how often each kind is drawn in each resample (:attr:`counts`, drawn on
    first use) and makes a percentile interval for any statistic of those counts
    with :meth:`interval`. Two statistics evaluated on one plan see the same
    resamples, as two ``bootstrap_ci`` calls with the same seed would.
    """

    def __init__(
        self,
        codes: npt.ArrayLike,
        n_codes: int,
        *,
        n_resamples: int = 2000,
        random_state: RandomState = None,
        clusters: npt.ArrayLike | None = None,
        strata: npt.ArrayLike | None = None,
    ) -> None:
        self.codes = np.asarray(codes, dtype=np.int64).reshape(-1)
        if self.codes.size and (self.codes.min() < 0 or self.codes.max() >= n_codes):
            raise ValueError(f"codes must lie in 0..{n_codes - 1}")
        self.n_codes = int(n_codes)
        self.n_resamples = check_n_resamples(n_resamples)
        self.n = int(self.codes.size)
        units = None if clusters is None else cluster_codes(clusters, self.n)
        unit_strata = None
        if strata is not None:
            units, unit_strata = _resample.stratified_units(
                cluster_codes(strata, self.n, "strata"), units
            )
        self._units, self._unit_strata = units, unit_strata
        self._random_state = random_state
        self._counts: IntArray | None = None

    @property
    def observed(self) -> IntArray:
        """The code counts of the data itself: shape (1, n_codes)."""
        return np.bincount(self.codes, minlength=self.n_codes)[None, :].astype(np.int64)

    @property
    def counts(self) -> IntArray:
        """The code counts of every resample: shape (n_resamples, n_codes)."""
        if self._counts is None:
            self._counts = code_counts(
                self.codes, self.n_codes, self.n_resamples, rng_from(self._random_state),
                self._units, self._unit_strata,
            )
        return self._counts

    def interval(self, statistic: CountStatistic, confidence_level: float) -> ConfidenceInterval:
        """Percentile interval of ``statistic`` (counts (rows, n_codes) -> values (rows,)),
        refused as :func:`judgekit.stats.bootstrap_ci` refuses one."""
        level = check_confidence_level(confidence_level)
        if self.n == 0:
            return refused("no items")
        estimate = float(np.asarray(statistic(self.observed)).reshape(-1)[0])
        if not np.isfinite(estimate):
            return refused("the statistic is undefined on the data")
        replicates = np.asarray(statistic(self.counts), dtype=float)
        return _resample.percentile_interval(replicates, level)


__all__ = ["CountStatistic", "ResamplePlan", "code_counts"]
