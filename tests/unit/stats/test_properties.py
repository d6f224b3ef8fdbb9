"""Property tests: invariances and bounds that must hold for any input."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from judgekit.stats import (
    benjamini_hochberg,
    cohen_kappa,
    gwet_ac1,
    kendall_tau,
    krippendorff_alpha,
    percent_agreement,
    spearman,
    wilson_interval,
)

LABELS = ["pass", "fail", "tie"]
pairs = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60
)


def _split(data):
    return [x for x, _ in data], [y for _, y in data]


@settings(max_examples=80, deadline=None)
@given(pairs, st.permutations(["r", "s", "t"]))
def test_kappa_invariant_to_relabelling(data, new_names):
    a, b = _split(data)
    mapping = dict(zip(LABELS, new_names, strict=True))
    original = cohen_kappa(a, b).statistic
    renamed = cohen_kappa([mapping[x] for x in a], [mapping[x] for x in b]).statistic
    assert (math.isnan(original) and math.isnan(renamed)) or math.isclose(
        original, renamed, abs_tol=1e-12
    )


@settings(max_examples=80, deadline=None)
@given(pairs, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_symmetric_and_bounded(data, weights):
    a, b = _split(data)
    ab = cohen_kappa(a, b, weights=weights, labels=LABELS)
    ba = cohen_kappa(b, a, weights=weights, labels=LABELS)
    if math.isnan(ab.statistic):
        assert math.isnan(ba.statistic) and ab.reason
        return
    assert math.isclose(ab.statistic, ba.statistic, abs_tol=1e-12)
    assert -1.0 - 1e-12 <= ab.statistic <= 1.0 + 1e-12
    assert math.isclose(ab.statistic, 1.0) == (a == b and len(set(a)) > 1) or weights is not None


@settings(max_examples=60, deadline=None)
@given(pairs)
def test_ac1_and_percent_agreement_bounds(data):
    a, b = _split(data)
    share = percent_agreement(a, b)
    assert 0.0 <= share.statistic <= 1.0
    low, high = share.confidence_interval()
    assert 0.0 <= low <= share.statistic <= high <= 1.0
    ac1 = gwet_ac1(a, b, labels=LABELS).statistic
    assert -1.0 - 1e-12 <= ac1 <= 1.0 + 1e-12
    assert math.isclose(gwet_ac1(b, a, labels=LABELS).statistic, ac1, abs_tol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_estimate(kn):
    k, n = kn
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=3, max_size=40))
def test_rank_correlations_symmetric_and_bounded(data):
    x = [p for p, _ in data]
    y = [q for _, q in data]
    assume(len(set(x)) > 1 and len(set(y)) > 1)
    for fn in (spearman, kendall_tau):
        xy, yx = fn(x, y).statistic, fn(y, x).statistic
        assert math.isclose(xy, yx, abs_tol=1e-12)
        assert -1.0 <= xy <= 1.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=6, max_size=6),
        min_size=2,
        max_size=5,
    )
)
def test_alpha_invariant_to_rater_order_and_at_most_one(rows):
    first = krippendorff_alpha(rows).statistic
    second = krippendorff_alpha(rows[::-1]).statistic
    if math.isnan(first):
        assert math.isnan(second)
        return
    assert math.isclose(first, second, abs_tol=1e-12)
    assert first <= 1.0 + 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_bh_adjusted_monotone_and_at_least_raw(ps):
    rejected, adjusted = benjamini_hochberg(ps)
    p = np.asarray(ps)
    assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)
    assert np.array_equal(rejected, adjusted <= 0.05)
