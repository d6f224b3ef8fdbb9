"""System-level intervals: the projection of simultaneous pairwise intervals (rank figures)
and of a simultaneous ball (Pearson), each against a brute-force or written-out computation,
and the edges (two systems, one side all tied, one document, every pair settled)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.stats.levels import system_level
from judgekit.stats.system_intervals import (
    PairSigns,
    accuracy_bounds,
    coverage_note,
    kendall_bounds,
    pearson_bounds,
    resampled_means,
    simultaneous_signs,
    spearman_bounds,
)


def _signs(judge: list[int], human: list[int]) -> PairSigns:
    return PairSigns(np.asarray(judge), np.asarray(human), math.nan, 0, len(judge) * 2)


def _orders_allowed(signs: np.ndarray, n_sys: int) -> list[np.ndarray]:
    """Every vector of distinct means (as a permutation of ranks) whose settled pairs agree."""
    pairs = list(itertools.combinations(range(n_sys), 2))
    out = []
    for perm in itertools.permutations(range(n_sys)):
        ranks = np.asarray(perm, dtype=float)
        if all(s == 0 or np.sign(ranks[a] - ranks[b]) == s
               for (a, b), s in zip(pairs, signs, strict=True)):
            out.append(ranks)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_bounds_hold_every_order_the_settled_pairs_allow(seed: int) -> None:
    # 5 systems: brute force over every pair of orders consistent with the settled pairs;
    # the relaxation's range must contain every one (and equal it for tau and accuracy
    # when no transitivity binds: checked on the per-pair brute force below)
    rng = np.random.default_rng(seed)
    n_sys = 5
    true_j, true_h = rng.permutation(n_sys), rng.permutation(n_sys)
    pairs = list(itertools.combinations(range(n_sys), 2))
    judge = [int(np.sign(true_j[a] - true_j[b])) * int(rng.random() < 0.6) for a, b in pairs]
    human = [int(np.sign(true_h[a] - true_h[b])) * int(rng.random() < 0.6) for a, b in pairs]
    signs = _signs(judge, human)
    tau, rho, acc = kendall_bounds(signs), spearman_bounds(signs, n_sys), accuracy_bounds(signs)
    values = {"tau": [], "rho": [], "acc": []}
    for rj in _orders_allowed(signs.judge, n_sys):
        for rh in _orders_allowed(signs.human, n_sys):
            values["tau"].append(sps.kendalltau(rj, rh).statistic)
            values["rho"].append(sps.spearmanr(rj, rh).statistic)
            dj = np.sign([rj[a] - rj[b] for a, b in pairs])
            dh = np.sign([rh[a] - rh[b] for a, b in pairs])
            values["acc"].append(float(np.mean(dj == dh)))
    for name, (low, high) in (("tau", tau), ("rho", rho), ("acc", acc)):
        assert low - 1e-12 <= min(values[name]) and max(values[name]) <= high + 1e-12, name
    # per-pair brute force (every sign of every unsettled pair, transitive or not) is exact
    free = [i for i in range(len(pairs)) if judge[i] == 0 or human[i] == 0]
    taus, accs = [], []
    for choice in itertools.product((-1, 1), repeat=2 * len(free)):
        j, h = np.asarray(judge), np.asarray(human)
        for k, i in enumerate(free):
            j[i] = j[i] or choice[2 * k]
            h[i] = h[i] or choice[2 * k + 1]
        taus.append(float(np.mean(j * h)))
        accs.append(float(np.mean(j == h)))
    assert tau == pytest.approx((min(taus), max(taus)))
    assert acc == pytest.approx((min(accs), max(accs)))


def test_every_pair_settled_gives_the_figures_of_the_orders() -> None:
    order_j, order_h = np.array([0, 2, 1, 3]), np.array([0, 1, 2, 3])
    pairs = list(itertools.combinations(range(4), 2))
    signs = _signs([int(np.sign(order_j[a] - order_j[b])) for a, b in pairs],
                   [int(np.sign(order_h[a] - order_h[b])) for a, b in pairs])
    tau = sps.kendalltau(order_j, order_h).statistic
    rho = sps.spearmanr(order_j, order_h).statistic
    assert kendall_bounds(signs) == pytest.approx((tau, tau))
    assert spearman_bounds(signs, 4) == pytest.approx((rho, rho))
    assert accuracy_bounds(signs) == pytest.approx((5 / 6, 5 / 6))


def _loop_signs(mean_j: np.ndarray, mean_h: np.ndarray, rep_j: np.ndarray, rep_h: np.ndarray,
                n_groups: int, level: float) -> tuple[list[int], list[int]]:
    """Step-down max-|t|, written out pair by pair and resample by resample."""
    pairs = list(itertools.combinations(range(mean_j.size), 2))
    factor = math.sqrt(n_groups / (n_groups - 1)) * sps.t.ppf(0.975, n_groups - 1) / 1.959963985
    sides = []
    for mean, rep in ((mean_j, rep_j), (mean_h, rep_h)):
        rows = []
        for a, b in pairs:
            d = mean[a] - mean[b]
            boot = rep[:, a] - rep[:, b]
            rows.append((d, boot, float(np.std(boot, ddof=1))))
        sides.append(rows)
    settled = [[False] * len(pairs) for _ in sides]
    while True:
        worst = np.zeros(rep_j.shape[0])
        for side, rows in enumerate(sides):
            for p, (d, boot, sd) in enumerate(rows):
                if not settled[side][p] and sd > 0:
                    worst = np.maximum(worst, np.abs(boot - d) / sd)
        crit = np.quantile(worst, level, method="higher")
        new = False
        for side, rows in enumerate(sides):
            for p, (d, _boot, sd) in enumerate(rows):
                if not settled[side][p] and sd > 0 and abs(d) / (sd * factor) > crit:
                    settled[side][p] = new = True
        if not new:
            break
    return tuple(  # type: ignore[return-value]
        [int(np.sign(rows[p][0])) if settled[s][p] else 0 for p in range(len(pairs))]
        for s, rows in enumerate(sides)
    )


def test_simultaneous_signs_equal_a_loop_implementation() -> None:
    rng = np.random.default_rng(3)
    n_grp, n_sys = 30, 6
    base = np.array([0.0, 0.1, 0.5, 0.55, 1.2, 2.0])
    sum_j = base + rng.normal(0, 0.8, (n_grp, n_sys))
    sum_h = base[::-1] * 0.3 + base * 0.7 + rng.normal(0, 0.5, (n_grp, n_sys))
    count = np.ones((n_grp, n_sys))
    rep_j, rep_h = resampled_means(sum_j, sum_h, count, 400, np.random.default_rng(0))
    mean_j, mean_h = sum_j.mean(axis=0), sum_h.mean(axis=0)
    got = simultaneous_signs(mean_j, mean_h, rep_j, rep_h, n_grp, 0.95)
    want_j, want_h = _loop_signs(mean_j, mean_h, rep_j, rep_h, n_grp, 0.95)
    assert got.judge.tolist() == want_j and got.human.tolist() == want_h
    assert 0 in want_j and any(want_j)  # some pairs settled, some not: the test can fail


def test_pearson_bounds_hold_every_point_of_the_balls() -> None:
    # the bounds must contain Pearson's r of any centred means inside both balls
    rng = np.random.default_rng(4)
    n_grp, n_sys = 40, 6
    base = np.linspace(0, 1.5, n_sys)
    sum_j = base + rng.normal(0, 1.0, (n_grp, n_sys))
    sum_h = base**2 / 2 + rng.normal(0, 0.6, (n_grp, n_sys))
    rep_j, rep_h = resampled_means(sum_j, sum_h, np.ones((n_grp, n_sys)), 500,
                                   np.random.default_rng(0))
    mean_j, mean_h = sum_j.mean(axis=0), sum_h.mean(axis=0)
    low, high = pearson_bounds(mean_j, mean_h, rep_j, rep_h, n_grp, 0.95)
    r = sps.pearsonr(mean_j, mean_h).statistic
    assert -1 < low < r < high <= 1
    # the radii, recomputed by hand
    cj, ch = mean_j - mean_j.mean(), mean_h - mean_h.mean()
    dj = np.linalg.norm(rep_j - rep_j.mean(axis=1, keepdims=True) - cj, axis=1)
    dh = np.linalg.norm(rep_h - rep_h.mean(axis=1, keepdims=True) - ch, axis=1)
    sj, sh = np.sqrt(np.mean(dj**2)), np.sqrt(np.mean(dh**2))
    factor = math.sqrt(n_grp / (n_grp - 1)) * sps.t.ppf(0.975, n_grp - 1) / sps.norm.ppf(0.975)
    k = np.quantile(np.maximum(dj / sj, dh / sh), 0.95, method="higher") * factor
    seen = []
    for _ in range(20000):
        u, v = rng.normal(size=n_sys), rng.normal(size=n_sys)
        a = cj + k * sj * rng.uniform() ** (1 / n_sys) * u / np.linalg.norm(u)
        b = ch + k * sh * rng.uniform() ** (1 / n_sys) * v / np.linalg.norm(v)
        seen.append(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert low - 1e-12 <= min(seen) and max(seen) <= high + 1e-12
    # and the angle argument is tight: the extremes are reached by the balls' tangent points
    angle = math.acos(r)
    turn = math.asin(k * sj / np.linalg.norm(cj)) + math.asin(k * sh / np.linalg.norm(ch))
    assert (low, high) == pytest.approx((math.cos(min(math.pi, angle + turn)),
                                         math.cos(max(0.0, angle - turn))))


def test_pearson_bounds_shrink_to_the_point_when_noise_vanishes() -> None:
    rng = np.random.default_rng(6)
    n_grp, n_sys = 50, 5
    base = np.array([0.0, 1.0, 1.5, 3.0, 4.0])
    sum_j = base + rng.normal(0, 1e-4, (n_grp, n_sys))
    sum_h = np.sqrt(base) + rng.normal(0, 1e-4, (n_grp, n_sys))
    rep_j, rep_h = resampled_means(sum_j, sum_h, np.ones((n_grp, n_sys)), 300,
                                   np.random.default_rng(1))
    low, high = pearson_bounds(sum_j.mean(axis=0), sum_h.mean(axis=0), rep_j, rep_h, n_grp, 0.95)
    r = sps.pearsonr(base, np.sqrt(base)).statistic
    assert low == pytest.approx(r, abs=1e-3) and high == pytest.approx(r, abs=1e-3)


def _design(n_sys: int, n_docs: int, gap: float, seed: int = 0
            ) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    rng = np.random.default_rng(seed)
    system = np.tile(np.arange(n_sys), n_docs)
    doc = np.repeat(np.arange(n_docs), n_sys)
    latent = gap * system + rng.normal(0, 1, n_docs)[doc] + rng.normal(0, 0.5, doc.size)
    judge = latent + rng.normal(0, 0.5, doc.size)
    return judge, latent, [f"s{s}" for s in system], doc.tolist()


def test_widely_separated_systems_settle_every_pair_to_the_point() -> None:
    judge, human, systems, docs = _design(5, 60, gap=3.0)
    result = system_level(judge, human, systems, docs, n_resamples=300)
    for name in ("kendall_tau", "spearman", "pairwise_accuracy"):
        fig = result.figures[name]
        assert fig.statistic == 1.0 and (fig.ci_low, fig.ci_high) == (1.0, 1.0), name
        assert fig.method == "simultaneous pairwise intervals over groups"
        assert fig.note is not None and fig.note.startswith("every system pair's order")
    assert result.n_settled == result.n_pairs == 10


def test_close_systems_leave_pairs_open_and_the_interval_wide() -> None:
    judge, human, systems, docs = _design(6, 20, gap=0.05)
    result = system_level(judge, human, systems, docs, n_resamples=300)
    tau = result.figures["kendall_tau"]
    assert tau.ci_low <= tau.statistic <= tau.ci_high
    assert tau.ci_low == -1.0 and tau.ci_high == 1.0  # nothing settled: every order possible
    assert result.n_settled == 0
    acc = result.figures["pairwise_accuracy"]
    assert (acc.ci_low, acc.ci_high) == (0.0, 1.0)


def test_two_systems_give_an_accuracy_interval_and_no_correlation() -> None:
    judge, human, systems, docs = _design(2, 30, gap=0.02)
    result = system_level(judge, human, systems, docs, n_resamples=300)
    assert result.figures["kendall_tau"].reason == (
        "needs 3 or more systems with compared items (found 2)")
    acc = result.figures["pairwise_accuracy"]
    assert (acc.ci_low, acc.ci_high) == (0.0, 1.0)  # one unresolved pair: either way


def test_all_systems_tied_on_one_side_is_nan_with_the_reason() -> None:
    judge = [3.0] * 12
    human = [1.0, 2.0, 4.0, 2.0, 3.0, 5.0, 1.0, 2.0, 4.0, 2.0, 3.0, 4.0]
    systems = ["a", "b", "c"] * 4
    docs = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    result = system_level(judge, human, systems, docs, n_resamples=200)
    for name in ("kendall_tau", "spearman", "pearson"):
        fig = result.figures[name]
        assert math.isnan(fig.statistic) and math.isnan(fig.ci_low)
        assert fig.reason == "the judge or people give every system the same mean score"


def test_one_document_is_refused() -> None:
    result = system_level([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], ["a", "b", "c"], [0, 0, 0])
    fig = result.figures["kendall_tau"]
    assert fig.statistic == pytest.approx(1 / 3)
    assert math.isnan(fig.ci_low) and fig.note == "no interval: one group only: nothing to resample"
    assert result.n_settled is None


def test_coverage_note_names_a_design_below_the_measured_range() -> None:
    assert coverage_note(12, 100) is None and coverage_note(5, 20) is None
    note = coverage_note(8, 12)
    assert note is not None and "12 groups" in note and "from 20 groups on" in note
