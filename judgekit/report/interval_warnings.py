"""When the report warns that an interval may be too narrow, and why those rules.

Every rule here comes from ``benchmarks/coverage.py``: it fires in the design
cells where the report's default 95% interval covered less than 93% of the
time in the simulation, and is written in terms the report can compute from its
own data (the number of clusters, the compared items, the confusion table, the
estimate, alpha's pairable units). docs/statistics.md ("Coverage") has the
measured table; a unit test (tests/unit/test_interval_warnings.py) checks each
rule against the conditions of the cells it is meant for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

#: Below this many clusters the cluster-bootstrap intervals (already widened by
#: sqrt(G/(G-1)) t_{G-1}/z) still covered under 93% in some cells of the simulation
#: (0.89-0.92 at 10 and 20 clusters of 5 items with kappa 0.8); from 50 on they did not.
MIN_TRUSTED_CLUSTERS = 50

#: Binary kappa: its percentile bootstrap undercovers when the rarer category is
#: rare (under this share of either rater's labels) ...
RARE_SHARE = 0.25
#: ... and few (under this many labels of either rater): 0.898 at n = 50 and 0.928 at
#: n = 200 with kappa 0.4 at 85% prevalence; 0.946 at n = 1000. The rule reads the design
#: (the counts), never the estimate: a rule that also asked for an estimated kappa under
#: 0.6 stayed silent in exactly the samples that overstate the judge (those it missed
#: covered 0.816 at n = 50, every miss above the truth).
RARE_COUNT = 40

#: Kappa on three or more categories: the same undercoverage when the labels outside the
#: most common category are this few (and under RARE_SHARE): 0.911 (2000 replications)
#: at n = 50, 5 categories, 85% prevalence, kappa 0.4, where 7.5 labels fall outside it;
#: 0.956 at n = 200 (30 labels outside).
RARE_CLASSES_COUNT = 15

#: Quadratic-weighted kappa's interval (BCa) covered 0.91-0.96 at n = 50 (0.909 and
#: 0.926 with 2000 replications in two of the four cells; the percentile bootstrap had
#: 0.88-0.92) and 0.94-0.97 from n = 200 on: below this many compared items the report warns.
MIN_WEIGHTED_KAPPA_ITEMS = 100
#: ... and at any n when fewer than this many labels (of either rater) fall outside the most
#: common level: 3 levels with 95% at the top covered 0.845 at n = 100 (5 outside) and 0.92
#: at n = 150 (7.5); 5 levels at 90%, 0.896 at n = 100 (10).
MIN_WEIGHTED_KAPPA_OUTSIDE = 20

#: Krippendorff's alpha (3 raters, 30% missing): its percentile bootstrap over units covered
#: 0.90-0.93 in half the cells at n = 50 (about 39 pairable units) and 0.93-0.97 from n = 200
#: (about 157) on: below this many pairable units the report warns.
MIN_ALPHA_UNITS = 100



def effective_clusters(sizes: npt.ArrayLike) -> float:
    """(sum n_g)^2 / sum n_g^2: as many equal clusters as these carry information (60
    clusters, three of them holding 60% of the items, count as about 8)."""
    n = np.asarray(sizes, dtype=np.float64)
    total = float((n * n).sum())
    return float(n.sum()) ** 2 / total if total > 0 else 0.0


def few_clusters_warns(n_clusters: int, n_items: int,
                       sizes: npt.ArrayLike | None = None) -> bool:
    """True when a cluster bootstrap rests on too few clusters to be trusted: fewer than
    MIN_TRUSTED_CLUSTERS *effective* clusters when the sizes are given (very unequal
    sizes: 60 clusters covered 0.922 for agreement and 0.908 for AC1 without a warning).

    Clusters that are all single items are no clustering at all (no warning).
    """
    count = n_clusters if sizes is None else min(n_clusters, effective_clusters(sizes))
    return count < MIN_TRUSTED_CLUSTERS and n_clusters < n_items


def rare_labels(confusion: npt.ArrayLike) -> int:
    """Labels outside the most common category, for the rater with fewer of them.

    With two categories this is the rarer category's count.
    """
    table = np.asarray(confusion, dtype=np.float64)
    n = float(table.sum())
    outside = min(n - float(table.sum(axis=0).max()), n - float(table.sum(axis=1).max()))
    return round(outside)


def kappa_warns(confusion: npt.ArrayLike, kappa: float) -> bool:
    """True for an unweighted kappa whose bootstrap interval undercovers: few labels outside
    the most common category (under RARE_COUNT for 2 categories, RARE_CLASSES_COUNT for
    more, and under RARE_SHARE of them). ``kappa`` only has to be defined: the rule is
    the design's, whatever the estimate."""
    table = np.asarray(confusion, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] < 2:
        return False
    n = float(table.sum())
    if n <= 0 or not math.isfinite(kappa):
        return False
    rarer = rare_labels(table)
    few = RARE_COUNT if table.shape[0] == 2 else RARE_CLASSES_COUNT
    # rarer == 0: a rater used one category, kappa is 0 by construction and has no interval
    return 0 < rarer < RARE_SHARE * n and rarer < few


def weighted_kappa_warns(n_items: int, confusion: npt.ArrayLike | None = None) -> bool:
    """True when a quadratic-weighted kappa rests on too few items for its interval, or on
    too few labels outside the most common level (rare levels)."""
    if n_items < MIN_WEIGHTED_KAPPA_ITEMS:
        return True
    if confusion is None:
        return False
    return 0 < rare_labels(confusion) < MIN_WEIGHTED_KAPPA_OUTSIDE


def alpha_warns(n_units: int) -> bool:
    """True when Krippendorff's alpha rests on too few pairable units for its interval.

    The undercovering cells are those where the interval's spread changes with alpha (the
    percentile interval is then short on the side of the true value); the BCa interval
    corrects that there but over-covers (0.98) where disagreements are few, so the default
    stays the percentile interval and the report says when n is small.
    """
    return 0 < n_units < MIN_ALPHA_UNITS


def alpha_notes(stats: Mapping[str, object], whose: str) -> list[str]:
    """The alpha warning for one section's figures (``whose`` names the raters compared)."""
    alpha = stats.get("krippendorff_alpha")
    n_units = int(getattr(alpha, "n", 0))
    defined = all(
        math.isfinite(float(getattr(alpha, name, math.nan)))
        for name in ("statistic", "ci_low", "ci_high")
    )
    if not (defined and alpha_warns(n_units)):
        return []
    return [
        f"Krippendorff's alpha of {whose} rests on {n_units} units rated at least twice: "
        f"below {MIN_ALPHA_UNITS} its interval covered 90-93% instead of 95% in some "
        "simulated designs (docs/statistics.md, coverage); treat it as optimistic."
    ]


def interval_notes(
    stats: Mapping[str, object],
    confusion: Sequence[Sequence[int]],
    n_items: int,
    n_clusters: int | None,
    cluster_by: str | None,
    cluster_sizes: npt.ArrayLike | None = None,
) -> list[str]:
    """The report's warnings about intervals that may be too narrow, one line each."""
    notes = []
    if n_clusters is not None and few_clusters_warns(n_clusters, n_items, cluster_sizes):
        effective = (n_clusters if cluster_sizes is None
                     else effective_clusters(cluster_sizes))
        count = (f"Only {n_clusters} clusters" if effective >= n_clusters else
                 f"{n_clusters} clusters of very unequal size, worth {effective:.0f} equal ones")
        notes.append(
            f"{count} (by {cluster_by}): with fewer than "
            f"{MIN_TRUSTED_CLUSTERS} the cluster-bootstrap intervals, even widened for few "
            "clusters, cover less than 93% of the time (see docs/statistics.md, coverage); "
            "treat them as optimistic and add clusters, not items."
        )
    kappa = getattr(stats.get("cohen_kappa"), "statistic", math.nan)
    if kappa_warns(confusion, float(kappa)) and len(confusion) == 2:
        notes.append(
            f"Cohen's kappa {float(kappa):.2f} with a rare class (fewer than {RARE_COUNT} "
            f"labels and under {RARE_SHARE:.0%} for judge or humans): its interval covered "
            "90-93% instead of 95% in such samples (docs/statistics.md, coverage); label "
            "more items of the rare class."
        )
    elif kappa_warns(confusion, float(kappa)):
        notes.append(
            f"Cohen's kappa {float(kappa):.2f} with rare classes (only "
            f"{rare_labels(confusion)} labels outside the most common class for judge or "
            f"humans; fewer than {RARE_CLASSES_COUNT}): its interval covered 91% instead of "
            "95% in such samples (docs/statistics.md, coverage); label more items of the "
            "rare classes."
        )
    if "weighted_kappa" in stats and weighted_kappa_warns(n_items):
        notes.append(
            f"Weighted kappa on {n_items} items: below {MIN_WEIGHTED_KAPPA_ITEMS} its interval "
            "covered as little as 91% instead of 95% (docs/statistics.md, coverage)."
        )
    elif "weighted_kappa" in stats and weighted_kappa_warns(n_items, confusion):
        notes.append(
            f"Weighted kappa with rare levels (only {rare_labels(confusion)} labels outside the "
            f"most common level; fewer than {MIN_WEIGHTED_KAPPA_OUTSIDE}): its interval covered "
            "85-92% instead of 95% in such samples (docs/statistics.md, coverage)."
        )
    notes.extend(alpha_notes(stats, "judge and humans"))
    return notes


__all__ = [
    "MIN_ALPHA_UNITS",
    "MIN_TRUSTED_CLUSTERS",
    "alpha_notes",
    "alpha_warns",
    "effective_clusters",
    "few_clusters_warns",
    "interval_notes",
    "kappa_warns",
    "rare_labels",
    "weighted_kappa_warns",
]
