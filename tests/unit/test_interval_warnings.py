"""The report's warning rules fire in exactly the coverage grid's low cells (a check on the rules).

benchmarks/coverage.py measured where the report's default intervals cover under 93%:
binary kappa at kappa 0.4 and 85% prevalence with n = 50 and 200, 5-category kappa there at
n = 50, quadratic-weighted kappa (BCa) at n = 50, cluster bootstraps with 10 and 20 clusters,
and Krippendorff's alpha at n = 50 (3 raters, 30% missing: about 39 pairable units). Each rule
is evaluated here on the expected data of every grid cell (the population's confusion table
times n), so a change to a threshold that moves a warning off those cells, or onto others,
fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgekit.report.interval_warnings import (
    MIN_ALPHA_UNITS,
    alpha_notes,
    alpha_warns,
    effective_clusters,
    few_clusters_warns,
    interval_notes,
    kappa_warns,
    rare_labels,
    weighted_kappa_warns,
)
from judgekit.report.model import Stat

GRID_N = (50, 200, 1000)
#: The rare-class design cells: the rule reads the counts, not the estimate, so it fires there
#: whatever kappa is (the low cells are the kappa 0.4 ones; at kappa 0.8 it warns to spare
#: the samples whose estimate happens to be high, which are the ones that overstate).
RARE_KAPPA_CELLS = {(50, 0.85), (200, 0.85)}


def _expected_table(n: int, kappa: float, prevalence: float, k: int = 2) -> np.ndarray:
    m = np.array([prevalence] + [(1 - prevalence) / (k - 1)] * (k - 1))
    lam = 1 - kappa
    return np.rint(n * ((1 - lam) * np.diag(m) + lam * np.outer(m, m)))


def _kappa_of(table: np.ndarray) -> float:
    p = table / table.sum()
    p_o, p_e = np.trace(p), float(p.sum(axis=1) @ p.sum(axis=0))
    return float((p_o - p_e) / (1 - p_e))


@pytest.mark.parametrize("n", GRID_N)
@pytest.mark.parametrize("kappa", [0.4, 0.8])
@pytest.mark.parametrize("prevalence", [0.5, 0.85])
def test_kappa_rule_fires_in_the_rare_class_binary_cells(n, kappa, prevalence) -> None:
    table = _expected_table(n, kappa, prevalence)
    assert kappa_warns(table, _kappa_of(table)) == ((n, prevalence) in RARE_KAPPA_CELLS)


@pytest.mark.parametrize("n", GRID_N)
@pytest.mark.parametrize("kappa", [0.4, 0.8])
@pytest.mark.parametrize("prevalence", [0.5, 0.85])
def test_kappa_rule_fires_in_the_rare_five_category_cells(n, kappa, prevalence) -> None:
    # 5 categories: 0.911 (2000 replications) at n = 50, kappa 0.4, 85% prevalence
    table = _expected_table(n, kappa, prevalence, k=5)
    fires = kappa_warns(table, _kappa_of(table))
    assert fires == ((n, prevalence) == (50, 0.85))


def test_the_kappa_rule_ignores_the_estimate() -> None:
    """A rare-class sample whose kappa came out high is the one that overstates the judge:
    the old rule (kappa under 0.6) was silent exactly there."""
    table = np.array([[44, 1], [1, 4]])
    assert _kappa_of(table) > 0.7 and kappa_warns(table, _kappa_of(table))


def test_kappa_rule_needs_a_table_and_an_interval() -> None:
    assert not kappa_warns(np.zeros((2, 2)), 0.3)
    assert not kappa_warns(_expected_table(50, 0.4, 0.85), float("nan"))
    assert not kappa_warns(np.array([[1, 2, 3]]), 0.3)
    # a rater who used one category: kappa is 0 by construction and has no interval
    assert not kappa_warns(np.array([[45, 5, 0], [0, 0, 0], [0, 0, 0]]), 0.0)
    table = np.diag([40, 3, 3, 2, 2])
    table[0, 1] = table[3, 0] = 1
    assert rare_labels(table) == 11  # 52 labels, 41 in the most common class
    assert kappa_warns(table, 0.3) and kappa_warns(table, 0.7)


@pytest.mark.parametrize("n", GRID_N)
def test_weighted_kappa_rule_fires_at_n_50_only(n) -> None:
    assert weighted_kappa_warns(n) == (n == 50)


@pytest.mark.parametrize(("n", "prevalence", "k", "fires"), [
    (100, 0.95, 3, True),   # 0.845: 5 labels outside the top level
    (150, 0.95, 3, True),   # 0.92: 7.5 outside
    (100, 0.9, 5, True),    # 0.896: 10 outside
    (200, 0.85, 5, False),  # 30 outside: covers
    (1000, 0.95, 3, False),  # 50 outside
])
def test_weighted_kappa_warns_on_rare_levels_at_any_n(n, prevalence, k, fires) -> None:
    table = _expected_table(n, 0.8, prevalence, k=k)
    assert weighted_kappa_warns(n, table) == fires


def test_the_cluster_rule_counts_effective_clusters() -> None:
    """60 clusters, three of them holding 60% of 294 items: about 8 equal clusters' worth."""
    sizes = [60, 60, 60] + [2] * 57
    assert effective_clusters(sizes) == pytest.approx(294**2 / (3 * 3600 + 57 * 4))
    assert few_clusters_warns(60, 294, sizes) and not few_clusters_warns(60, 294)
    assert not few_clusters_warns(60, 300, [5] * 60)
    (note,) = interval_notes({}, [[20, 5], [5, 20]], 294, 60, "prompt", sizes)
    assert note.startswith("60 clusters of very unequal size, worth 8 equal ones (by prompt)")


@pytest.mark.parametrize("g", [10, 20, 50, 200])
def test_cluster_rule_fires_below_50_clusters(g) -> None:
    assert few_clusters_warns(g, 5 * g) == (g < 50)


def test_clusters_of_single_items_are_no_clustering() -> None:
    assert not few_clusters_warns(12, 12)


def test_notes_name_each_warning() -> None:
    table = _expected_table(50, 0.4, 0.85).astype(int)
    notes = interval_notes(
        {"cohen_kappa": Stat(_kappa_of(table)), "weighted_kappa": Stat(0.5)},
        table.tolist(),
        50,
        10,
        "prompt",
    )
    assert len(notes) == 3
    assert notes[0].startswith("Only 10 clusters (by prompt)")
    assert "rare class" in notes[1] and "Weighted kappa on 50 items" in notes[2]
    assert interval_notes({"cohen_kappa": Stat(0.8)}, [[20, 5], [5, 20]], 250, None, None) == []
    five = _expected_table(50, 0.4, 0.85, k=5).astype(int)
    (note,) = interval_notes({"cohen_kappa": Stat(_kappa_of(five))}, five.tolist(), 50, None, None)
    assert f"rare classes (only {rare_labels(five)} labels outside the most common class" in note
    figures = {"cohen_kappa": Stat(0.4), "weighted_kappa": Stat(0.4)}
    both = interval_notes(figures, five.tolist(), 50, None, None)
    assert len(both) == 2 and both[1].startswith("Weighted kappa on 50 items")


#: The coverage grid's alpha design: 3 raters, each rating missing with probability 0.3, so a
#: unit is pairable (two or more ratings) with probability 0.7**3 + 3 * 0.7**2 * 0.3.
PAIRABLE_SHARE = 0.7**3 + 3 * 0.7**2 * 0.3


@pytest.mark.parametrize("n", GRID_N)
def test_alpha_rule_fires_at_n_50_only(n) -> None:
    # the alpha cells below 93% are all at n = 50 (0.902-0.927); from n = 200 on they cover
    assert alpha_warns(round(n * PAIRABLE_SHARE)) == (n == 50)


def test_alpha_rule_needs_units() -> None:
    assert not alpha_warns(0)
    assert alpha_warns(MIN_ALPHA_UNITS - 1) and not alpha_warns(MIN_ALPHA_UNITS)


def test_alpha_notes_for_the_judge_and_for_the_annotators() -> None:
    small = {"krippendorff_alpha": Stat(0.6, 0.3, 0.8, n=39)}
    notes = interval_notes(small, [[20, 5], [5, 20]], 50, None, None)
    assert notes == alpha_notes(small, "judge and humans")
    assert len(notes) == 1 and "alpha of judge and humans rests on 39 units" in notes[0]
    (ceiling,) = alpha_notes(small, "the annotators")
    assert "of the annotators" in ceiling and "90-93%" in ceiling
    assert alpha_notes({"krippendorff_alpha": Stat(0.6, 0.5, 0.7, n=157)}, "x") == []
    # an undefined alpha, or one whose interval was refused, has nothing to warn about
    assert alpha_notes({"krippendorff_alpha": Stat(float("nan"), n=39)}, "x") == []
    assert alpha_notes({"krippendorff_alpha": Stat(0.6, n=39)}, "x") == []
    assert alpha_notes({}, "x") == []
