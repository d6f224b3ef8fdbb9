"""A shared resample plan gives exactly the intervals of one ``bootstrap_ci`` per statistic.

The report evaluates several statistics (an F1 per label, the human ceiling's share of
agreeing pairs) on one :class:`~judgekit.stats._plan.ResamplePlan` instead of one
bootstrap each. Each test sets the plan's interval against ``bootstrap_ci`` with the
statistic written over the items' arrays, the path the report used before, with the
same seed, and asks for the same floats, not approximately the same: item, cluster,
stratified and stratified-cluster designs, several resampling chunks, and the report's
own F1 and pair-share figures.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from judgekit import stats
from judgekit.report.ceiling import pair_share
from judgekit.report.per_class import per_class
from judgekit.report.stat_intervals import IntervalSpec, bootstrap_stat
from judgekit.stats._plan import ResamplePlan, code_counts

K = 4  # codes 0..3


def _data(n: int, seed: int = 0) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    rng = np.random.default_rng(seed)
    codes = rng.choice(K, size=n, p=[0.5, 0.25, 0.15, 0.1])
    clusters = rng.integers(0, max(2, n // 7), size=n)  # clusters of unequal size
    return codes, clusters


def _share_of_code_1(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = counts[:, 1] / (counts[:, 1] + counts[:, 2])
    return out


def _share_over_items(x: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The same statistic over the resampled items' codes (bootstrap_ci's form)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = (x == 1).sum(axis=-1) / (
            (x == 1).sum(axis=-1) + (x == 2).sum(axis=-1)
        )
    return out


def _reference(codes: npt.ArrayLike, **design: object) -> tuple[float, float]:
    return tuple(stats.bootstrap_ci(  # type: ignore[return-value]
        _share_over_items, np.asarray(codes), vectorized=True, random_state=7, **design
    ))


@pytest.mark.parametrize("design", ["items", "clusters", "strata", "strata+clusters"])
def test_plan_interval_is_bootstrap_ci_number_for_number(design: str) -> None:
    codes, clusters = _data(600, seed=1)
    strata = codes % 2  # two strata
    kwargs: dict[str, object] = {"n_resamples": 400}
    if "clusters" in design:
        kwargs["clusters"] = clusters
    if "strata" in design:
        kwargs["strata"] = strata
    plan = ResamplePlan(codes, K, random_state=7, **kwargs)  # type: ignore[arg-type]
    got = tuple(plan.interval(_share_of_code_1, 0.95))
    assert got == _reference(codes, **kwargs)
    assert got[0] < got[1]


@pytest.mark.parametrize("clustered", [False, True])
def test_several_chunks_draw_the_same_resamples(clustered: bool) -> None:
    """At 100,000 items bootstrap_ci draws 20 (40 clustered) resamples per chunk."""
    codes, clusters = _data(100_000, seed=2)
    design: dict[str, object] = {"n_resamples": 45}
    if clustered:
        design["clusters"] = clusters
    plan = ResamplePlan(codes, K, random_state=7, **design)  # type: ignore[arg-type]
    assert tuple(plan.interval(_share_of_code_1, 0.9)) == _reference(
        codes, confidence_level=0.9, **design
    )


def test_counts_are_the_resampled_items_counted() -> None:
    codes, _ = _data(50, seed=3)
    n = codes.size
    counts = code_counts(codes, K, 30, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    for row in counts:
        idx = rng.integers(0, n, size=n)
        assert row.tolist() == np.bincount(codes[idx], minlength=K).tolist()
    assert (counts.sum(axis=1) == n).all()


def test_two_statistics_on_one_plan_see_the_same_resamples() -> None:
    codes, clusters = _data(300, seed=4)
    plan = ResamplePlan(codes, K, n_resamples=300, random_state=3, clusters=clusters)
    first = plan.interval(_share_of_code_1, 0.95)

    def share_of_code_0(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = counts[:, 0] / counts.sum(axis=1)
        return out

    second = plan.interval(share_of_code_0, 0.95)
    assert tuple(first) == tuple(stats.bootstrap_ci(
        _share_over_items, codes, n_resamples=300, random_state=3, clusters=clusters,
        vectorized=True,
    ))
    assert tuple(second) == tuple(stats.bootstrap_ci(
        lambda x: (x == 0).mean(axis=-1), codes, n_resamples=300, random_state=3,
        clusters=clusters, vectorized=True,
    ))


def test_edges_refuse_or_reject() -> None:
    with pytest.raises(ValueError, match=r"codes must lie in 0\.\.3"):
        ResamplePlan([0, 4], K)
    with pytest.raises(ValueError, match="n_resamples"):
        ResamplePlan([0, 1], K, n_resamples=0)
    empty = ResamplePlan([], K, n_resamples=50, random_state=0)
    assert empty.interval(_share_of_code_1, 0.95).reason == "no items"
    undefined = ResamplePlan([0, 0, 3], K, n_resamples=50, random_state=0)  # no code 1 or 2
    assert undefined.interval(_share_of_code_1, 0.95).reason == (
        "the statistic is undefined on the data"
    )
    one = ResamplePlan([1], K, n_resamples=50, random_state=0)  # one item: no spread
    interval = one.interval(_share_of_code_1, 0.95)
    assert np.isnan(interval.low) and "same value" in str(interval.reason)


# -- the report's figures on the plan against the per-statistic bootstrap they replaced --

LABELS = ["A", "B", "tie"]
_TP, _FP, _FN = 1, 2, 3


def _f1_over_items(outcome: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """F1 from one outcome code per item (0 TN, 1 TP, 2 FP, 3 FN), as per_class had it."""
    t = (outcome == _TP).sum(axis=-1)
    wrong = (outcome == _FP).sum(axis=-1) + (outcome == _FN).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: npt.NDArray[np.float64] = 2.0 * t / (2.0 * t + wrong)
    return out


def _pairs(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(seed)
    human = rng.choice(LABELS, size=n, p=[0.45, 0.4, 0.15])
    judge = np.where(rng.random(n) < 0.7, human, rng.choice(LABELS, size=n))
    return [str(x) for x in judge], [str(x) for x in human]


@pytest.mark.parametrize("clustered", [False, True])
def test_f1_per_label_is_the_per_statistic_bootstrap(clustered: bool) -> None:
    judge, human = _pairs(500, seed=6)
    clusters = (
        np.asarray([f"c{i % 60}" for i in range(len(judge))], dtype=object) if clustered else None
    )
    spec = IntervalSpec(n_resamples=300, random_state=11, clusters=clusters)
    figures = per_class(judge, human, LABELS, spec)
    ja, ha = np.asarray(judge), np.asarray(human)
    for label in LABELS:
        said, truth = ja == label, ha == label
        outcome = np.zeros(len(ja), dtype=np.int8)
        outcome[said & truth], outcome[said & ~truth], outcome[~said & truth] = _TP, _FP, _FN
        assert figures[f"f1_{label}"] == bootstrap_stat(_f1_over_items, [outcome], spec)


def test_f1_of_a_label_outside_the_list_counts_as_other() -> None:
    judge, human = ["A", "B", "x", "A", "tie"] * 20, ["A", "x", "B", "B", "tie"] * 20
    spec = IntervalSpec(n_resamples=200, random_state=1)
    ja, ha = np.asarray(judge), np.asarray(human)
    said, truth = ja == "B", ha == "B"
    outcome = np.zeros(len(ja), dtype=np.int8)
    outcome[said & truth], outcome[said & ~truth], outcome[~said & truth] = _TP, _FP, _FN
    assert per_class(judge, human, LABELS, spec)["f1_B"] == bootstrap_stat(
        _f1_over_items, [outcome], spec
    )


@pytest.mark.parametrize("clustered", [False, True])
def test_pair_share_is_the_per_statistic_bootstrap(clustered: bool) -> None:
    rng = np.random.default_rng(8)
    raters = rng.integers(2, 5, size=400).astype(float)  # 2 to 4 annotators per item
    total = raters * (raters - 1) / 2
    agreeing = np.floor(rng.random(400) * (total + 1))
    clusters = (
        np.asarray([f"p{i // 3}" for i in range(400)], dtype=object) if clustered else None
    )
    spec = IntervalSpec(n_resamples=300, random_state=2, clusters=clusters)
    expected = bootstrap_stat(
        lambda a, t: a.sum(axis=-1) / t.sum(axis=-1), [agreeing, total], spec
    )
    assert pair_share(agreeing, total, spec) == expected


def test_pair_agreement_counts_are_those_of_a_counter_per_item() -> None:
    from collections import Counter

    from judgekit.report.ceiling import _pair_agreement

    rng = np.random.default_rng(9)
    items = [
        [str(x) for x in rng.choice(["A", "B", "tie", "other"], size=int(m))]
        for m in rng.integers(1, 6, size=300)
    ]
    agreeing, total = _pair_agreement(items)
    assert agreeing.tolist() == [
        sum(c * (c - 1) for c in Counter(labels).values()) / 2 for labels in items
    ]
    assert total.tolist() == [len(labels) * (len(labels) - 1) / 2 for labels in items]
