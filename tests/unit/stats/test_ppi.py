"""PPI++, labels-only and Rogan-Gladen estimates against ppi_py and the papers' closed forms.

The ``PPI_PY`` numbers were produced by ``ppi_py`` 0.2.3 (PyPI ``ppi-python``:
``ppi_mean_ci``, ``ppi_mean_pointestimate``, ``baselines.classical_mean_ci``) on the
fixed arrays below. The package is not a test dependency because it installs a
top-level ``tests`` package that shadows this repository's ``tests/`` (so
``tests.support`` stops importing); the closed forms of Angelopoulos, Duchi &
Zrnic (arXiv 2311.01453, PPI++ for a mean) are re-derived here as a second check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats import (
    classical_mean,
    ppi_mean,
    ppi_mean_difference,
    ppi_mean_stratified,
    ppi_sample_size,
    proportion_sample_size,
    rogan_gladen,
    wilson_interval,
)

Y = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0], float)
F = np.array([1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1], float)
FU = np.array(
    [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0]  # noqa: RUF005
    + [1, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1],
    float,
)
YO = np.array([3, 4, 2, 5, 1, 4, 3, 3, 2, 5, 4, 1, 3], float)
FO = np.array([3, 5, 2, 4, 2, 4, 3, 4, 2, 5, 3, 2, 3], float)
FOU = np.array([4, 3, 2, 5, 1, 3, 3, 4, 5, 2, 4, 3, 1, 2, 5, 4, 3, 3, 2, 4, 5, 1, 3, 4], float)
W = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 4, 1, 1, 2, 1, 1, 1, 3, 1, 1, 2], float)

PPI_PY = {
    "binary": {
        "point": 0.6097062279670975,
        "ci_0.05": (0.4211358154539419, 0.798276640480253),
        "ci_0.1": (0.4514529491290238, 0.7679595068051712),
        "point_lam1": 0.625,
        "ci_lam1": (0.3781738749960898, 0.8718261250039102),
        "ci_lam03": (0.41740022717599246, 0.7975997728240074),
        "classical": (0.3852967027539411, 0.8147032972460588),
    },
    "ordinal": {
        "point": 3.044013993978095,
        "ci_0.05": (2.5127577333832654, 3.5752702545729247),
        "ci_0.1": (2.59816968562712, 3.48985830232907),
        "point_lam1": 3.0128205128205128,
        "ci_lam1": (2.397700534594381, 3.6279404910466444),
        "ci_lam03": (2.486865240116684, 3.6285193752679317),
        "classical": (2.387290903279509, 3.766555250566645),
    },
}
ARRAYS = {"binary": (Y, F, FU), "ordinal": (YO, FO, FOU)}


def paper_ppi(y, f, fu, level=0.95, lam=None):
    """PPI++ for a mean, written out from the paper: tuned lambda, then a Wald interval."""
    n, big_n = len(y), len(fu)
    if lam is None:
        cov = np.mean((y - y.mean()) * (f - f.mean()))
        var = np.var(np.concatenate([f, fu]), ddof=1)
        lam = min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))
    theta = lam * fu.mean() + np.mean(y - lam * f)
    se = math.sqrt(lam**2 * np.var(fu) / big_n + np.var(y - lam * f) / n)
    z = sps.norm.ppf(0.5 + level / 2)
    return theta, (theta - z * se, theta + z * se), lam


def wald(result, level=0.95):
    """PPI++'s own (Wald) interval from the result's estimate and standard error."""
    z = sps.norm.ppf(0.5 + level / 2)
    half = z * result.standard_error
    return result.statistic - half, result.statistic + half


def floor_by_hand(y, f, fu, lam):
    """PPI++'s variance with half a disagreement each way added to the labeled residuals."""
    values = np.concatenate([y - lam * f, [1.0, -lam]])
    weights = np.concatenate([np.ones(len(y)), [0.5, 0.5]])
    mean = np.average(values, weights=weights)
    spread = np.average((values - mean) ** 2, weights=weights)
    return lam**2 * np.var(fu) / len(fu) + spread / len(y)


def wilson_by_roots(p, n, level=0.95):
    """Wilson's interval as the roots of (p_hat - p)^2 = z^2 p (1 - p) / n, any real n."""
    z2 = sps.norm.ppf(0.5 + level / 2) ** 2
    roots = np.roots([1 + z2 / n, -(2 * p + z2 / n), p * p])
    return float(roots.real.min()), float(roots.real.max())


@pytest.mark.parametrize("kind", ["binary", "ordinal"])
def test_equals_ppi_py_on_fixed_arrays(kind):
    """Estimate and standard error equal ppi_py; its Wald interval is the ordinal one, while
    a 0/1 target gets Wilson's interval at PPI++'s effective sample size (Wald's lies above
    the truth at pass rates near 1)."""
    y, f, fu = ARRAYS[kind]
    ref = PPI_PY[kind]
    interval = wald if kind == "binary" else (lambda r, level=0.95: r.confidence_interval(level))
    result = ppi_mean(y, f, fu)
    assert result.statistic == pytest.approx(ref["point"], abs=1e-9)
    for alpha in (0.05, 0.1):
        low, high = interval(result, 1 - alpha)
        assert low == pytest.approx(ref[f"ci_{alpha}"][0], abs=1e-9)
        assert high == pytest.approx(ref[f"ci_{alpha}"][1], abs=1e-9)
    plain = ppi_mean(y, f, fu, lam=1.0)
    assert plain.statistic == pytest.approx(ref["point_lam1"], abs=1e-9)
    assert interval(plain) == pytest.approx(ref["ci_lam1"], abs=1e-9)
    assert interval(ppi_mean(y, f, fu, lam=0.3)) == pytest.approx(ref["ci_lam03"], abs=1e-9)
    if kind == "binary":
        assert result.effective_n == pytest.approx(
            y.mean() * (1 - y.mean()) / result.standard_error ** 2)
        n_eff = y.mean() * (1 - y.mean()) / max(result.standard_error ** 2,
                                                floor_by_hand(y, f, fu, result.lam))
        assert result.wilson_n == pytest.approx(n_eff)
        assert result.confidence_interval(0.9) == pytest.approx(
            wilson_by_roots(result.statistic, n_eff, 0.9), abs=1e-12)


def test_a_judge_agreeing_with_every_label_still_gets_a_real_interval():
    """50 labels, a judge that agreed with all of them: the residuals are constant, PPI++'s
    variance is only the judge's own term, and the interval was as narrow as if the judge
    never erred; half a disagreement each way keeps it honest (the pass-rate grid of
    benchmarks/ppi_coverage.py: 84% -> 99% coverage at n = 50)."""
    rng = np.random.default_rng(9)
    y = (rng.random(50) < 0.9).astype(float)
    fu = (rng.random(2000) < 0.9).astype(float)
    r = ppi_mean(y, y.copy(), fu)
    low, high = r.confidence_interval()
    assert r.wilson_n == pytest.approx(y.mean() * (1 - y.mean()) / floor_by_hand(y, y, fu, r.lam))
    assert r.wilson_n < r.effective_n / 5 and high - low > 0.05  # was 0.02 wide


def test_a_pass_rate_near_one_gets_an_interval_inside_0_1_that_is_not_wald():
    """49 of 50 labels pass, the judge agrees: Wald reaches above 1 (clipped there), Wilson at
    the effective n keeps a real upper tail below 1 and a lower tail further down."""
    rng = np.random.default_rng(4)
    y = np.ones(50)
    y[7] = 0
    f = y.copy()
    fu = (rng.random(500) < 0.97).astype(float)
    r = ppi_mean(y, f, fu, bounds=(0.0, 1.0))
    low, high = r.confidence_interval()
    assert 0 <= low < r.statistic < high <= 1
    assert low < wald(r)[0] and high < 1.0
    with pytest.raises(ValueError, match="outside bounds"):
        ppi_mean([0, 2], [0, 1], [1, 1], bounds=(0.0, 1.0))


@pytest.mark.parametrize("kind", ["binary", "ordinal"])
def test_equals_the_papers_closed_form(kind):
    y, f, fu = ARRAYS[kind]
    theta, (low, high), lam = paper_ppi(y, f, fu, 0.9)
    result = ppi_mean(list(y), list(f), list(fu))
    assert result.lam == pytest.approx(lam, abs=1e-12)
    assert result.statistic == pytest.approx(theta, abs=1e-12)
    assert wald(result, 0.9) == pytest.approx((low, high), abs=1e-12)
    if kind == "ordinal":
        assert result.confidence_interval(0.9) == pytest.approx((low, high), abs=1e-12)
    assert result.n == len(y) and result.n_unlabeled == len(fu)


def test_ordinal_classical_interval_equals_ppi_py():
    result = classical_mean(YO)
    assert result.confidence_interval() == pytest.approx(PPI_PY["ordinal"]["classical"], abs=1e-9)
    assert ppi_mean(YO, FO, FOU, lam=0.0).confidence_interval() == pytest.approx(
        PPI_PY["ordinal"]["classical"], abs=1e-9
    )


def test_binary_labels_only_is_the_wilson_interval():
    result = classical_mean(Y)
    assert result.statistic == pytest.approx(Y.mean())
    assert result.confidence_interval(0.9) == pytest.approx(
        wilson_interval(int(Y.sum()), len(Y), 0.9), abs=1e-12
    )


def test_weighted_point_estimate_equals_ppi_py_and_variance_is_hajek():
    result = ppi_mean(Y, F, FU, lam=0.5, weights=W)
    assert result.statistic == pytest.approx(0.6028225806451613, abs=1e-9)
    wn = W / W.mean()
    r = Y - 0.5 * F
    r_hat = np.sum(wn * r) / np.sum(wn)
    expected = 0.25 * np.var(FU) / len(FU) + np.sum((wn * (r - r_hat)) ** 2) / len(Y) ** 2
    assert result.standard_error == pytest.approx(math.sqrt(expected), rel=1e-12)


def test_strata_centre_contributions_within_each_stratum():
    strata = ["a"] * 10 + ["b"] * 10
    result = classical_mean(YO[:10].tolist() + (YO[:10] + 10).tolist(), strata=strata)
    # strata differ only by a constant: the stratified variance is that of the within parts
    y = np.concatenate([YO[:10], YO[:10] + 10])
    within = sum(np.var(part) * 10 * 10 / 9 for part in (YO[:10], YO[:10] + 10)) / 20**2
    assert result.standard_error == pytest.approx(math.sqrt(within))
    assert result.standard_error < classical_mean(y).standard_error / 3


def test_equal_weights_change_nothing():
    assert ppi_mean(Y, F, FU, weights=np.full(len(Y), 7.0), lam=0.4).confidence_interval() == (
        pytest.approx(ppi_mean(Y, F, FU, lam=0.4).confidence_interval(), abs=1e-12)
    )


def test_singleton_clusters_give_the_plain_variance_times_g_over_g_minus_1():
    n, big_n = len(Y), len(FU)
    clustered = ppi_mean(
        Y, F, FU, lam=0.6, clusters=range(n), unlabeled_clusters=range(n, n + big_n)
    )
    plain = ppi_mean(Y, F, FU, lam=0.6)
    # the small-sample factor counts the clusters with labeled items; t with n - 1 df
    assert clustered.standard_error**2 == pytest.approx(plain.standard_error**2 * n / (n - 1))
    assert clustered.n_clusters == n + big_n and clustered.df == n - 1
    t = sps.t.ppf(0.975, n - 1)
    # a 0/1 target: Wilson at the effective n with t's critical value
    n_eff = Y.mean() * (1 - Y.mean()) / max(clustered.standard_error ** 2,
                                            floor_by_hand(Y, F, FU, 0.6))
    z2 = t * t
    roots = np.roots([1 + z2 / n_eff, -(2 * clustered.statistic + z2 / n_eff),
                      clustered.statistic ** 2])
    assert clustered.confidence_interval() == pytest.approx((roots.min(), roots.max()))


def test_duplicated_items_in_one_cluster_widen_the_interval():
    y, f = np.repeat(Y, 2), np.repeat(F, 2)
    fu = np.repeat(FU, 2)
    naive = ppi_mean(y, f, fu, lam=0.6)
    ids = [f"p{i}" for i in range(len(Y))]
    ids_u = [f"u{i}" for i in range(len(FU))]
    clustered = ppi_mean(
        y, f, fu, lam=0.6, clusters=np.repeat(ids, 2), unlabeled_clusters=np.repeat(ids_u, 2)
    )
    assert clustered.statistic == pytest.approx(naive.statistic)
    # duplicates are one unit: the robust SE is ~sqrt(2) times the naive one
    assert clustered.standard_error / naive.standard_error == pytest.approx(math.sqrt(2), rel=0.05)


def test_a_cluster_shared_by_labeled_and_unlabeled_items_counts_their_covariance():
    lab = [f"c{i % 5}" for i in range(len(Y))]
    unl = [f"c{i % 5}" for i in range(len(FU))]
    joined = ppi_mean(Y, F, FU, lam=0.6, clusters=lab, unlabeled_clusters=unl)
    apart = ppi_mean(
        Y, F, FU, lam=0.6, clusters=lab, unlabeled_clusters=[f"u{c}" for c in unl]
    )
    assert joined.standard_error != pytest.approx(apart.standard_error)


def test_useless_judge_tunes_lambda_to_zero_and_matches_labels_only():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1], float)
    f = np.array([1, 1, 0, 0, 1, 1, 0, 1, 0, 0], float)  # anti-correlated
    result = ppi_mean(y, f, FU)
    assert result.lam == 0.0
    assert result.statistic == pytest.approx(y.mean())
    assert result.effective_n == pytest.approx(len(y))


def test_a_perfect_judge_is_worth_more_labels():
    fu = np.tile(FU, 20)
    result = ppi_mean(Y, Y, fu)
    assert result.lam > 0.8
    assert result.effective_n > 3 * len(Y)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (([], [], [1, 0, 1]), "no labeled items"),
        (([1, 0], [1, 0], []), "no unlabeled items"),
    ],
)
def test_missing_sets_are_nan_with_a_reason(args, reason):
    result = ppi_mean(*args)
    assert math.isnan(result.statistic) and reason in (result.reason or "")
    assert all(math.isnan(v) for v in result.confidence_interval())
    assert result.to_dict()["reason"] == result.reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"labels": [1, 0, 1], "judge_on_labeled": [1, 0]}, "every labeled item needs"),
        ({"labels": [1, None, 1]}, "labels contains missing values"),
        ({"judge_on_unlabeled": [1.0, float("nan")]}, "judge_on_unlabeled contains missing"),
        ({"lam": 1.5}, "lam must be between 0 and 1"),
        ({"weights": [1, 1, 0]}, "weights must be positive"),
        ({"weights": [1, 1]}, "weights has length 2"),
        ({"clusters": [1, 2, 3]}, "give clusters and unlabeled_clusters together"),
        ({"labels": "pass"}, "not a single string"),
    ],
)
def test_invalid_input_names_the_problem(kwargs, message):
    args = {"labels": [1, 0, 1], "judge_on_labeled": [1, 0, 0], "judge_on_unlabeled": [1, 0]}
    args.update({k: v for k, v in kwargs.items() if k in args})
    extra = {k: v for k, v in kwargs.items() if k not in args}
    with pytest.raises(ValueError, match=message):
        ppi_mean(args["labels"], args["judge_on_labeled"], args["judge_on_unlabeled"], **extra)


def test_one_cluster_is_nan_with_a_reason():
    result = ppi_mean(Y, F, FU, clusters=["a"] * len(Y), unlabeled_clusters=["a"] * len(FU))
    assert math.isnan(result.statistic) and "one cluster" in (result.reason or "")


def test_constant_labels_never_give_a_zero_width_interval():
    result = ppi_mean([1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1], bounds=(0, 1))
    low, high = result.confidence_interval()
    assert result.statistic == 1.0 and high == 1.0 and low < 1.0
    assert "Wilson" in (result.note or "")
    single = classical_mean([1])
    low, high = single.confidence_interval()
    assert high - low > 0.5


def test_bounds_clip_the_interval():
    result = ppi_mean([1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1, 1, 1], bounds=(0.0, 1.0))
    assert result.confidence_interval()[1] <= 1.0


# -- Rogan-Gladen ------------------------------------------------------------


def test_rogan_gladen_closed_form_delta_method():
    result = rogan_gladen(Y, F, FU)
    pos, neg = Y == 1, Y == 0
    se, sp, p = F[pos].mean(), 1 - F[neg].mean(), FU.mean()
    j = se + sp - 1
    theta = (p + sp - 1) / j
    var = (
        p * (1 - p) / len(FU)
        + theta**2 * se * (1 - se) / pos.sum()
        + (1 - theta) ** 2 * sp * (1 - sp) / neg.sum()
    ) / j**2
    assert result.sensitivity == pytest.approx(se)
    assert result.specificity == pytest.approx(sp)
    assert result.apparent_rate == pytest.approx(p)
    assert result.statistic == pytest.approx(theta, abs=1e-12)
    assert result.standard_error == pytest.approx(math.sqrt(var), rel=1e-12)
    low, high = result.confidence_interval()
    z = sps.norm.ppf(0.975)
    assert (low, high) == pytest.approx(
        (max(0, theta - z * math.sqrt(var)), min(1, theta + z * math.sqrt(var)))
    )


def test_rogan_gladen_with_an_error_free_judge_is_the_judges_rate():
    result = rogan_gladen(Y, Y, FU)
    assert result.statistic == pytest.approx(FU.mean())
    assert "too narrow" in (result.note or "")


def test_rogan_gladen_interval_is_wider_than_ignoring_se_and_sp():
    result = rogan_gladen(Y, F, FU)
    naive = math.sqrt(FU.mean() * (1 - FU.mean()) / len(FU)) / (
        result.sensitivity + result.specificity - 1
    )
    assert result.standard_error > naive


@pytest.mark.parametrize(
    ("y", "f", "reason"),
    [
        ([1, 1, 1], [1, 0, 1], "no human fail label"),
        ([0, 0], [0, 1], "no human pass label"),
        ([1, 0, 1, 0], [0, 1, 0, 1], "no better than chance"),
        ([], [], "no labeled items"),
    ],
)
def test_rogan_gladen_undefined_cases(y, f, reason):
    result = rogan_gladen(y, f, [1, 0, 1])
    assert math.isnan(result.statistic) and reason in (result.reason or "")


def test_rogan_gladen_rejects_non_binary_values():
    with pytest.raises(ValueError, match="must be 0/1"):
        rogan_gladen([1, 0, 2], [1, 0, 1], [1, 0])


# -- designs -------------------------------------------------------------------


def test_one_stratum_is_the_plain_estimate():
    result = ppi_mean_stratified(Y, F, FU, ["s"] * len(Y), ["s"] * len(FU))
    plain = ppi_mean(Y, F, FU)
    assert result.statistic == pytest.approx(plain.statistic)
    assert result.standard_error == pytest.approx(plain.standard_error)


def test_strata_combine_by_size():
    strata = ["a"] * 10 + ["b"] * 10
    strata_u = ["a"] * 30 + ["b"] * 10
    result = ppi_mean_stratified(Y, F, FU, strata, strata_u)
    a = ppi_mean(Y[:10], F[:10], FU[:30])
    b = ppi_mean(Y[10:], F[10:], FU[30:])
    assert result.sizes == {"a": 40, "b": 20}
    assert result.statistic == pytest.approx((40 * a.statistic + 20 * b.statistic) / 60)
    expected = ((40 / 60) ** 2 * a.standard_error**2 + (20 / 60) ** 2 * b.standard_error**2) ** 0.5
    assert result.standard_error == pytest.approx(expected)
    assert result.strata["a"].lam == pytest.approx(a.lam)


def test_a_stratum_without_labels_makes_the_overall_undefined():
    result = ppi_mean_stratified(Y, F, FU, ["a"] * len(Y), ["a"] * 39 + ["b"])
    assert math.isnan(result.statistic) and "'b'" in (result.reason or "")
    assert math.isfinite(result.strata["a"].statistic)


def test_a_fully_labeled_stratum_uses_its_labels():
    result = ppi_mean_stratified(Y, F, FU[:5], ["a"] * 15 + ["b"] * 5, ["a"] * 5)
    assert result.strata["b"].method == "labels only"
    assert math.isfinite(result.statistic)


def test_independent_difference_is_the_difference_of_two_estimates():
    a, b = ppi_mean(Y, F, FU), ppi_mean(YO / 5, FO / 5, FOU / 5)
    result = ppi_mean_difference((Y, F, FU), (YO / 5, FO / 5, FOU / 5))
    assert result.statistic == pytest.approx(a.statistic - b.statistic)
    assert result.standard_error == pytest.approx(math.hypot(a.standard_error, b.standard_error))


def test_paired_difference_cancels_what_the_prompts_share():
    rng = np.random.default_rng(0)
    n, big_n = 60, 400
    prompt = rng.normal(size=n + big_n)  # a prompt effect both candidates share
    ya = prompt[:n] + rng.normal(scale=0.3, size=n)
    yb = prompt[:n] + 0.2 + rng.normal(scale=0.3, size=n)
    fa, fb = ya + rng.normal(scale=0.3, size=n), yb + rng.normal(scale=0.3, size=n)
    fua = prompt[n:] + rng.normal(scale=0.4, size=big_n)
    fub = prompt[n:] + 0.2 + rng.normal(scale=0.4, size=big_n)
    ids, ids_u = [f"p{i}" for i in range(n)], [f"q{i}" for i in range(big_n)]
    paired = ppi_mean_difference((ya, fa, fua), (yb, fb, fub), clusters=(ids, ids_u, ids, ids_u))
    apart = ppi_mean_difference((ya, fa, fua), (yb, fb, fub))
    assert paired.standard_error < 0.6 * apart.standard_error
    assert paired.n_clusters == n + big_n


def test_sample_size_closed_forms():
    # a useless judge needs what labels alone need
    assert ppi_sample_size(half_width=0.05, variance=0.25) == proportion_sample_size(
        half_width=0.05, p=0.5
    )
    z = sps.norm.ppf(0.975)
    assert ppi_sample_size(half_width=0.05, variance=0.25, correlation=0.8) == math.ceil(
        z * z * 0.25 * (1 - 0.64) / 0.05**2
    )
    finite = ppi_sample_size(half_width=0.05, variance=0.25, correlation=0.8, n_unlabeled=1000)
    # at that n the PPI++ variance formula meets the target; one fewer does not
    def half(n):
        return z * math.sqrt(0.25 / n * (1 - 0.64 * 1000 / (1000 + n)))

    assert half(finite) <= 0.05 < half(finite - 1)
    with pytest.raises(ValueError, match="correlation"):
        ppi_sample_size(half_width=0.05, variance=0.25, correlation=2)


def test_rogan_gladen_is_refused_when_the_judge_is_not_shown_better_than_chance():
    """Se + Sp - 1 = 0.25 on 8 labels: its interval reaches below 0, and the corrected rate
    (which divides by it) was printed anyway, often outside [0, 1]."""
    y = [1, 1, 1, 1, 0, 0, 0, 0]
    f = [1, 1, 1, 0, 1, 1, 0, 0]  # Se 0.75, Sp 0.5
    result = rogan_gladen(y, f, [1] * 90 + [0] * 10)
    assert math.isnan(result.statistic)
    assert "not shown to be better than chance" in (result.reason or "")
    assert result.sensitivity == pytest.approx(0.75) and result.specificity == pytest.approx(0.5)
    # the lower bound is Newcombe's MOVER from the two Wilson intervals
    se_low = wilson_interval(3, 4)[0]
    fpr_high = wilson_interval(2, 4)[1]
    bound = 0.25 - math.sqrt((0.75 - se_low) ** 2 + (fpr_high - 0.5) ** 2)
    assert f"{bound:.3f}" in result.reason


def test_rogan_gladen_is_truncated_to_0_1():
    """A judge better than chance whose apparent rate lies beyond its own error rates: the raw
    correction is above 1; the estimate is truncated like its interval."""
    y = [1] * 40 + [0] * 40
    f = [1] * 30 + [0] * 10 + [0] * 35 + [1] * 5  # Se 0.75, Sp 0.875
    result = rogan_gladen(y, f, [1] * 97 + [0] * 3)
    raw = (0.97 + 0.875 - 1) / (0.75 + 0.875 - 1)
    assert raw > 1 and result.statistic == 1.0
    low, high = result.confidence_interval()
    assert low < 1.0 and high == 1.0


def test_the_difference_of_two_rates_is_newcombes_hybrid_score_interval():
    """Independent sides: Newcombe (1998) method 10 from each side's Wilson interval."""
    a = ppi_mean(Y, F, FU)
    b = ppi_mean(Y[::-1], F[::-1], FU[:30])
    diff = ppi_mean_difference((Y, F, FU), (Y[::-1], F[::-1], FU[:30]))
    (l1, u1), (l2, u2) = a.confidence_interval(), b.confidence_interval()
    d = a.statistic - b.statistic
    expected = (d - math.hypot(a.statistic - l1, u2 - b.statistic),
                d + math.hypot(u1 - a.statistic, b.statistic - l2))
    assert diff.statistic == pytest.approx(d)
    assert diff.confidence_interval() == pytest.approx(expected)
    low, high = diff.confidence_interval()
    assert -1 <= low < d < high <= 1


def test_sample_size_refuses_a_variance_of_zero():
    with pytest.raises(ValueError, match="positive"):
        ppi_sample_size(half_width=0.05, variance=0.0)


def test_a_pairwise_win_share_with_ties_gets_wilson_at_its_effective_n():
    """Win shares count a tie as half: not 0/1, but a share in [0, 1] (bounds (0, 1)), so the
    interval is Wilson's at p(1 - p) / Var, the binomial size with the same variance."""
    rng = np.random.default_rng(8)
    y = rng.choice([0.0, 0.5, 1.0], size=60, p=[0.05, 0.1, 0.85])
    f = np.where(rng.random(60) < 0.8, y, rng.choice([0.0, 0.5, 1.0], size=60))
    fu = rng.choice([0.0, 0.5, 1.0], size=600, p=[0.05, 0.1, 0.85])
    r = ppi_mean(y, f, fu, bounds=(0.0, 1.0))
    n_eff = y.mean() * (1 - y.mean()) / r.standard_error ** 2
    assert r.wilson_n == pytest.approx(n_eff)
    assert r.confidence_interval() == pytest.approx(wilson_by_roots(r.statistic, n_eff))
    assert ppi_mean(y, f, fu).wilson_n is None  # without bounds: a mean like any other
