"""Per-class precision, recall and F1, and kappa over decisive pairs, against sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support

from judgekit import stats
from judgekit.report.per_class import decisive_kappa, per_class
from judgekit.report.stat_intervals import IntervalSpec

LABELS = ["A", "B", "tie"]


def _pairs(seed: int, n: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    human = rng.choice(LABELS, size=n, p=[0.45, 0.4, 0.15])
    judge = np.where(rng.random(n) < 0.7, human, rng.choice(LABELS, size=n))
    return [str(x) for x in judge], [str(x) for x in human]


def test_per_class_matches_sklearn_and_has_intervals() -> None:
    judge, human = _pairs(1, 300)
    figures = per_class(judge, human, LABELS, IntervalSpec(n_resamples=300))
    precision, recall, f1, _ = precision_recall_fscore_support(
        human, judge, labels=LABELS, zero_division=np.nan
    )
    for i, label in enumerate(LABELS):
        p, r, f = figures[f"precision_{label}"], figures[f"recall_{label}"], figures[f"f1_{label}"]
        assert (p.statistic, r.statistic, f.statistic) == pytest.approx(
            (precision[i], recall[i], f1[i])
        )
        said = sum(j == label for j in judge)
        hits = sum(j == h == label for j, h in zip(judge, human, strict=True))
        assert (p.ci_low, p.ci_high) == pytest.approx(stats.wilson_interval(hits, said))
        assert f.ci_low < f.statistic < f.ci_high


def test_per_class_says_why_a_class_has_no_figure() -> None:
    figures = per_class(["A", "A"], ["A", "B"], LABELS, IntervalSpec(n_resamples=100))
    assert not figures["precision_B"].defined and "never said 'B'" in figures["precision_B"].reason
    assert not figures["f1_tie"].defined


def test_decisive_kappa_is_kappa_on_pairs_where_both_chose_a_side() -> None:
    judge, human = _pairs(2, 400)
    stat = decisive_kappa(judge, human, LABELS, IntervalSpec(n_resamples=300))
    keep = [(j, h) for j, h in zip(judge, human, strict=True) if "tie" not in (j, h)]
    expected = cohen_kappa_score([j for j, _ in keep], [h for _, h in keep])
    assert stat.statistic == pytest.approx(expected) and stat.n == len(keep)
    assert stat.ci_low < stat.statistic < stat.ci_high
    assert not decisive_kappa(["tie"], ["A"], LABELS, IntervalSpec()).defined
