"""Vectorised bootstrap machinery: resampling counts, not items.

Most agreement statistics are functions of a few *sums over units* (a confusion
table, a coincidence matrix, category counts). Resampling n units with
replacement is the same as drawing how many times each unit is picked, and
units with identical contributions can be merged into one *pattern* with a
frequency. A bootstrap replicate of the sums is then ``counts @ patterns``
where ``counts`` is a multinomial draw over patterns: a 100,000-pair Cohen's
kappa has at most K**2 patterns, so 2,000 resamples cost microseconds instead
of 2,000 Python-level passes over the data. Cluster resampling is the same
machinery with each cluster's summed contribution as the unit.

Interval construction from replicates (percentile, BCa) lives here too, so
every statistic builds its confidence interval the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
from scipy import special

from judgekit.stats._interval import (
    COLLAPSED_REASON,
    ConfidenceInterval,
    is_zero_width,
    refused,
    too_many_undefined,
)
from judgekit.stats._tdist import normal_cdf, t_quantile
from judgekit.stats._validate import FloatArray, IntArray

#: Upper bound on the number of cells one resampling chunk may allocate.
_MAX_CHUNK_CELLS = 4_000_000


def z_critical(confidence_level: float) -> float:
    """Two-sided standard-normal critical value, e.g. 1.96 for 0.95."""
    return float(special.ndtri(1.0 - (1.0 - confidence_level) / 2.0))


def wilson_bounds(successes: float, n: float, confidence_level: float) -> tuple[float, float]:
    """Wilson score interval (no continuity correction), clipped to [0, 1]."""
    z = z_critical(confidence_level)
    p = successes / n
    denominator = 1.0 + z * z / n
    center = p + z * z / (2.0 * n)
    radius = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    low = (center - radius) / denominator
    high = (center + radius) / denominator
    # exact boundaries: 0 successes has lower bound 0, n successes upper bound 1
    if successes == 0:
        low = 0.0
    if successes == n:
        high = 1.0
    return max(0.0, float(low)), min(1.0, float(high))


def _checked_replicates(replicates: FloatArray) -> tuple[FloatArray, ConfidenceInterval | None]:
    """The finite replicates, or the refusal when too many resamples were undefined."""
    finite = replicates[np.isfinite(replicates)]
    n_undefined = int(replicates.size - finite.size)
    if finite.size == 0:
        everywhere = "the statistic is undefined in every bootstrap resample"
        return finite, refused(everywhere, n_undefined)
    reason = too_many_undefined(n_undefined, int(replicates.size))
    return finite, None if reason is None else refused(reason, n_undefined)


def percentile_interval(replicates: FloatArray, confidence_level: float) -> ConfidenceInterval:
    """Percentile interval over the finite replicates, or NaN with a reason.

    Refused when more than ``MAX_UNDEFINED_SHARE`` of the resamples are undefined
    or when the interval has zero width (see :mod:`judgekit.stats._interval`).
    """
    finite, refusal = _checked_replicates(replicates)
    if refusal is not None:
        return refusal
    n_undefined = int(replicates.size - finite.size)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    if is_zero_width(float(low), float(high)):
        return refused(COLLAPSED_REASON, n_undefined)
    return ConfidenceInterval(float(low), float(high), None, n_undefined)


def few_clusters_factor(n_clusters: int, confidence_level: float) -> float:
    """How much a cluster bootstrap interval is widened for ``n_clusters`` clusters.

    The bootstrap spread of a statistic over G resampled clusters estimates the
    plug-in (CR0) variance, which is too small by (G - 1)/G, and the normal
    reference ignores that the variance itself rests on G units. The usual
    small-cluster correction of cluster-robust inference (CR1 with t on G - 1
    degrees of freedom: Cameron & Miller 2015, *J. Human Resources* 50:317-372,
    sec. VI; Bell & McCaffrey 2002) scales the half-widths by
    sqrt(G / (G - 1)) * t_{G-1} / z: 1.22 at G = 10, 1.10 at 20, 1.04 at 50.
    """
    if n_clusters < 2:
        return float("nan")
    tail = 1.0 - (1.0 - confidence_level) / 2.0
    t = t_quantile(tail, n_clusters - 1)
    return math.sqrt(n_clusters / (n_clusters - 1)) * t / z_critical(confidence_level)


def widen_for_few_clusters(
    interval: ConfidenceInterval,
    estimate: float,
    n_clusters: int | None,
    confidence_level: float,
    value_range: tuple[float, float] = (-1.0, 1.0),
) -> ConfidenceInterval:
    """A cluster-bootstrap interval with each side's distance from the estimate scaled by
    :func:`few_clusters_factor` (no change without clusters or for a refused interval).

    The widened bounds are clipped to ``value_range`` (never inside the original bounds).
    """
    if n_clusters is None or not interval.defined or not math.isfinite(estimate):
        return interval
    factor = few_clusters_factor(n_clusters, confidence_level)
    if not math.isfinite(factor):
        return interval
    low = estimate - factor * (estimate - interval.low)
    high = estimate + factor * (interval.high - estimate)
    low = max(low, min(interval.low, value_range[0]))
    high = min(high, max(interval.high, value_range[1]))
    return ConfidenceInterval(low, high, interval.reason, interval.n_undefined)


#: Fewest resampled units (items, or clusters) for a bootstrap p-value: below, a handful of
#: distinct resamples make it far too small (2 prompts gave p = 0.001; 5 pairs, four one
#: way, 0.002 where the exact test gives 0.125), so it is refused.
MIN_BOOTSTRAP_P_UNITS = 10
#: The words a refused p-value is reported with.
FEW_UNITS_FOR_P = (f"fewer than {MIN_BOOTSTRAP_P_UNITS} resampled units: a bootstrap p-value "
                   "would be far too small, so none is given")


def bootstrap_pvalue(replicates: FloatArray, n_units: int | None = None) -> float:
    """Two-sided bootstrap p-value of "the statistic is 0", never exactly 0.

    2 * min((1 + #{r <= 0}) / (B + 1), (1 + #{r >= 0}) / (B + 1)) over the B finite
    replicates (Davison & Hinkley 1997, eq. 4.11): with B resamples no p-value below
    2 / (B + 1) can be claimed. NaN when no replicate is finite, when every
    replicate is the same non-zero value (one unit, or units all alike: the
    bootstrap has no spread to test against), or when ``n_units`` (the items or
    clusters resampled) is below ``MIN_BOOTSTRAP_P_UNITS``.
    """
    if n_units is not None and n_units < MIN_BOOTSTRAP_P_UNITS:
        return float("nan")
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0 or (np.ptp(finite) == 0 and finite[0] != 0):
        return float("nan")
    below = (1 + np.count_nonzero(finite <= 0)) / (finite.size + 1)
    above = (1 + np.count_nonzero(finite >= 0)) / (finite.size + 1)
    return float(min(1.0, 2.0 * min(below, above)))


def bca_interval(
    replicates: FloatArray,
    estimate: float,
    jackknife: FloatArray,
    jackknife_weights: FloatArray | None,
    confidence_level: float,
) -> ConfidenceInterval:
    """Bias-corrected and accelerated interval (Efron 1987; Efron & Tibshirani 1993, ch. 14).

    ``jackknife`` holds leave-one-unit-out estimates; ``jackknife_weights`` says how
    many units each entry stands for (patterns merge identical units).
    """
    finite, refusal = _checked_replicates(replicates)
    if refusal is not None:
        return refusal
    if not np.isfinite(estimate):
        return refused("the estimate is undefined")
    n_undefined = int(replicates.size - finite.size)
    weights = np.ones_like(jackknife) if jackknife_weights is None else jackknife_weights
    ok = np.isfinite(jackknife)
    jk, w = jackknife[ok], weights[ok]
    proportion_below = (
        np.count_nonzero(finite < estimate) + 0.5 * np.count_nonzero(finite == estimate)
    ) / finite.size
    if proportion_below <= 0.0 or proportion_below >= 1.0:
        # every replicate on one side: the bias correction is infinite, BCa is undefined
        return refused(
            "every bootstrap resample lies on one side of the estimate, so the BCa bias "
            "correction is infinite",
            n_undefined,
        )
    z0 = special.ndtri(proportion_below)
    if jk.size == 0 or w.sum() == 0:
        acceleration = 0.0
    else:
        mean = np.sum(w * jk) / np.sum(w)
        diff = mean - jk
        denominator = 6.0 * np.sum(w * diff**2) ** 1.5
        acceleration = float(np.sum(w * diff**3) / denominator) if denominator > 0 else 0.0
    tail = (1.0 - confidence_level) / 2.0
    bounds = []
    for q in (tail, 1.0 - tail):
        zq = special.ndtri(q)
        adjusted = normal_cdf(z0 + (z0 + zq) / (1.0 - acceleration * (z0 + zq)))
        bounds.append(float(np.quantile(finite, float(np.clip(adjusted, 0.0, 1.0)))))
    if is_zero_width(bounds[0], bounds[1]):
        return refused(COLLAPSED_REASON, n_undefined)
    return ConfidenceInterval(bounds[0], bounds[1], None, n_undefined)


def chunk_rows(n_resamples: int, width: int) -> int:
    """Rows per chunk so that a (rows, width) array stays under the cell budget."""
    return max(1, min(n_resamples, _MAX_CHUNK_CELLS // max(width, 1)))


def resample_pattern_counts(
    frequencies: IntArray, n_resamples: int, rng: np.random.Generator
) -> IntArray:
    """How often each pattern is drawn in each resample: shape (n_resamples, T).

    Drawing N = frequencies.sum() units with replacement is a multinomial with
    probabilities frequencies / N; when there are almost as many patterns as
    units, drawing unit indices and counting them is cheaper.
    """
    frequencies = np.asarray(frequencies, dtype=np.int64)
    total = int(frequencies.sum())
    n_patterns = frequencies.size
    if n_patterns * 4 <= total:
        return rng.multinomial(total, frequencies / total, size=n_resamples).astype(np.int64)
    unit_to_pattern = np.repeat(np.arange(n_patterns), frequencies)
    out = np.empty((n_resamples, n_patterns), dtype=np.int64)
    step = chunk_rows(n_resamples, total)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picked = unit_to_pattern[rng.integers(0, total, size=(rows, total))]
        flat = picked + (np.arange(rows) * n_patterns)[:, None]
        out[start : start + rows] = np.bincount(flat.ravel(), minlength=rows * n_patterns).reshape(
            rows, n_patterns
        )
    return out


def row_bincount(codes: IntArray, size: int, weights: FloatArray | None = None) -> FloatArray:
    """``np.bincount`` of each row of a (rows, k) code array: shape (rows, size), as floats."""
    rows = codes.shape[0]
    flat = (codes + (np.arange(rows) * size)[:, None]).ravel()
    counted = np.bincount(
        flat, weights=None if weights is None else weights.ravel(), minlength=rows * size
    )
    return counted.reshape(rows, size).astype(np.float64, copy=False)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, IntArray]:
    """``np.unique(rows, axis=0, return_counts=True)``, by a lexicographic sort of the columns.

    ``np.unique`` with an axis sorts the rows as structured records, five times slower
    than ``np.lexsort`` at 100,000 rows. Equal rows are then identical bit for bit, so
    the result is the same, except where equal values can differ in their bits (NaN,
    -0.0 beside 0.0): those inputs go to ``np.unique`` itself.
    """
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.dtype.kind not in "biuf" or (
        rows.dtype.kind == "f"
        and not (np.isfinite(rows).all() and not ((rows == 0) & np.signbit(rows)).any())
    ):
        found, counts = np.unique(rows, axis=0, return_counts=True)
        return found, counts
    ordered = rows[np.lexsort(rows.T[::-1])]
    first = np.ones(ordered.shape[0], dtype=bool)
    first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(first)
    return ordered[starts], np.diff(np.append(starts, ordered.shape[0]))


def patterns_of(
    contributions: FloatArray, clusters: IntArray | None
) -> tuple[FloatArray, IntArray]:
    """Merge units (or clusters) with identical contribution rows into patterns."""
    contributions = np.asarray(contributions, dtype=np.float64)
    if contributions.ndim == 1:
        contributions = contributions[:, None]
    if clusters is not None:
        n_clusters = int(clusters.max()) + 1
        summed = np.empty((n_clusters, contributions.shape[1]))
        for column in range(contributions.shape[1]):
            summed[:, column] = np.bincount(
                clusters, weights=contributions[:, column], minlength=n_clusters
            )
        contributions = summed
    patterns, frequencies = unique_rows(contributions)
    return patterns, frequencies.astype(np.int64)


def resampled_sums(
    patterns: FloatArray, frequencies: IntArray, n_resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Bootstrap replicates of the column sums: shape (n_resamples, D)."""
    counts = resample_pattern_counts(frequencies, n_resamples, rng)
    return counts.astype(np.float64) @ patterns


def jackknife_sums(patterns: FloatArray, frequencies: IntArray) -> FloatArray:
    """Column sums with one unit of each pattern left out: shape (T, D)."""
    total = frequencies.astype(np.float64) @ patterns
    return total[None, :] - patterns


def interval_from_sums(
    statistic_of_sums: Callable[[FloatArray], FloatArray],
    contributions: FloatArray,
    *,
    estimate: float,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
    clusters: IntArray | None,
    method: str,
    value_range: tuple[float, float] = (-1.0, 1.0),
) -> ConfidenceInterval:
    """Percentile or BCa interval of a statistic that is a function of unit sums.

    With ``clusters`` the interval is widened for the number of clusters
    (:func:`widen_for_few_clusters`).
    """
    patterns, frequencies = patterns_of(contributions, clusters)
    return interval_from_patterns(
        statistic_of_sums,
        patterns,
        frequencies,
        estimate=estimate,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=rng,
        method=method,
        n_clusters=None if clusters is None else int(clusters.max()) + 1,
        value_range=value_range,
    )


def interval_from_patterns(
    statistic_of_sums: Callable[[FloatArray], FloatArray],
    patterns: FloatArray,
    frequencies: IntArray,
    *,
    estimate: float,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
    method: str,
    n_clusters: int | None = None,
    value_range: tuple[float, float] = (-1.0, 1.0),
) -> ConfidenceInterval:
    """Like :func:`interval_from_sums` for units already merged into patterns
    (``n_clusters``: the patterns are clusters, and the interval is widened for them)."""
    keep = frequencies > 0
    patterns, frequencies = patterns[keep], frequencies[keep]
    replicates = statistic_of_sums(resampled_sums(patterns, frequencies, n_resamples, rng))
    if method == "bca":
        jackknife = statistic_of_sums(jackknife_sums(patterns, frequencies))
        interval = bca_interval(
            replicates, estimate, jackknife, frequencies.astype(np.float64), confidence_level
        )
    else:
        interval = percentile_interval(replicates, confidence_level)
    return widen_for_few_clusters(interval, estimate, n_clusters, confidence_level, value_range)


def cluster_index_sampler(
    clusters: IntArray | None, n: int, rng: np.random.Generator
) -> Callable[[], IntArray]:
    """A function returning one bootstrap resample of item indices.

    Without clusters: n indices uniformly with replacement. With clusters: as
    many clusters as there are, with replacement, each bringing all its items
    (so the resample length varies).
    """
    if clusters is None:
        return lambda: rng.integers(0, n, size=n)
    order = np.argsort(clusters, kind="stable")
    sizes = np.bincount(clusters)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    n_clusters = sizes.size

    def draw() -> IntArray:
        picked = rng.integers(0, n_clusters, size=n_clusters)
        lengths = sizes[picked]
        offsets = np.repeat(
            starts[picked] - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths
        )
        return order[np.arange(int(lengths.sum())) + offsets]

    return draw


def cluster_pick_counts(n_clusters: int, n_resamples: int, rng: np.random.Generator) -> IntArray:
    """How often each cluster is drawn in each cluster-bootstrap resample: (n_resamples, G).

    Consumes the generator exactly like ``n_resamples`` calls of the sampler from
    :func:`cluster_index_sampler` (one draw of G cluster ids per resample), so both
    paths see the same resamples for the same seed.
    """
    picked = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    return row_bincount(picked, n_clusters).astype(np.int64)


def stratified_units(strata: IntArray, clusters: IntArray | None) -> tuple[IntArray, IntArray]:
    """Resampling units for a stratified design: ``(unit id per item, stratum per unit)``.

    A unit is an item, or a cluster, within one stratum; a cluster that spans
    strata is split into one unit per stratum (clusters are nested in strata).
    """
    inner = np.arange(strata.size) if clusters is None else clusters
    pairs = np.column_stack([strata, inner])
    unique, units = np.unique(pairs, axis=0, return_inverse=True)
    return units.reshape(-1).astype(np.int64), unique[:, 0].astype(np.int64)


def pick_units(
    n_units: int, rows: int, unit_strata: IntArray | None, rng: np.random.Generator
) -> IntArray:
    """Units drawn with replacement, shape (rows, n_units): overall, or within each stratum."""
    if unit_strata is None:
        return rng.integers(0, n_units, size=(rows, n_units))
    blocks = []
    for stratum in np.unique(unit_strata):
        members = np.flatnonzero(unit_strata == stratum)
        blocks.append(members[rng.integers(0, members.size, size=(rows, members.size))])
    return np.concatenate(blocks, axis=1)


def cluster_resample_indices(
    clusters: IntArray,
    n_resamples: int,
    rng: np.random.Generator,
    unit_strata: IntArray | None = None,
) -> Iterator[tuple[IntArray, IntArray]]:
    """All cluster-bootstrap resamples of item indices, built with numpy in chunks.

    Yields ``(flat, lengths)``: the item indices of consecutive resamples
    concatenated, and each resample's length (resamples differ in length when
    clusters differ in size). Resample ``r`` equals the ``r``-th call of the
    sampler from :func:`cluster_index_sampler` with the same generator state.
    With ``unit_strata`` (the stratum of each cluster) every stratum keeps its
    number of clusters: they are drawn with replacement within the stratum
    (the stratified bootstrap, Davison & Hinkley 1997, sec. 3.7).
    """
    order = np.argsort(clusters, kind="stable")
    sizes = np.bincount(clusters)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    n_clusters = sizes.size
    step = chunk_rows(n_resamples, clusters.size)
    for first in range(0, n_resamples, step):
        rows = min(step, n_resamples - first)
        picked = pick_units(n_clusters, rows, unit_strata, rng).ravel()
        lengths = sizes[picked]
        offsets = np.repeat(starts[picked] - (np.cumsum(lengths) - lengths), lengths)
        flat = order[np.arange(int(lengths.sum())) + offsets]
        yield flat, lengths.reshape(rows, n_clusters).sum(axis=1)


def jackknife_index_sets(clusters: IntArray | None, n: int) -> list[IntArray]:
    """Index sets leaving out one unit (item, or whole cluster) at a time."""
    everything = np.arange(n)
    if clusters is None:
        return [np.delete(everything, i) for i in range(n)]
    return [everything[clusters != c] for c in range(int(clusters.max()) + 1)]
