"""The injection and identical-pairs statistics against scipy, R's PropCIs, hand counts and
edges, plus seeded simulations: an unaffected judge is not flagged at the 5% level, however
noisy (the gate reads the net move toward - away, which has mean 0 for such a judge)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from judgekit.report.probe_text_gate import MAX_IDENTICAL_DECISIVE, MAX_INJECTION_FLIP
from judgekit.stats._exact import clopper_pearson_interval, tango_interval
from judgekit.stats.bias import (
    identical_pairs,
    injection_effect,
    pooled_injection_effect,
    worst_flip_rate,
    worst_net_move,
)


def _wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = sps.binomtest(k, n).proportion_ci(level, method="wilson")
    return float(ci.low), float(ci.high)


def _exact(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = sps.binomtest(k, n).proportion_ci(level, method="exact")
    return float(ci.low), float(ci.high)


def test_clopper_pearson_matches_scipy_and_tango_matches_r_propcis() -> None:
    for k, n in ((0, 10), (3, 10), (10, 10), (7, 93)):
        assert clopper_pearson_interval(k, n, 0.9) == pytest.approx(_exact(k, n, 0.9))
    # PropCIs::scoreci.mp(25, 28, 618, conf.level = 0.90): (28 - 25) / 618 in [-0.0148, 0.0247]
    low, high = tango_interval(28, 25, 618, 0.90)
    assert (round(low, 4), round(high, 4)) == (-0.0148, 0.0247)
    # swapping toward and away mirrors it; it stays in [-1, 1], never zero-width
    assert tango_interval(25, 28, 618, 0.9) == pytest.approx((-high, -low))
    for toward, away, n in ((0, 0, 100), (3, 0, 125), (10, 0, 10), (0, 10, 10), (1, 1, 2)):
        lo, hi = tango_interval(toward, away, n)
        assert -1 <= lo < (toward - away) / n or lo == -1
        assert lo < hi and hi <= 1 and lo <= (toward - away) / n <= hi
    with pytest.raises(ValueError):
        tango_interval(6, 6, 10)


def test_net_move_is_toward_minus_away_over_every_valid_item() -> None:
    r = injection_effect([1, 2, 5, None, 3, 4, 2], [5, 2, 5, 4, 1, 5, 3], top=5)
    net = r.to_dict()["net"]
    assert net["statistic"] == pytest.approx((3 - 1) / 6) and net["n"] == 6
    assert (net["ci_low"], net["ci_high"]) == pytest.approx(tango_interval(3, 1, 6))
    assert net["pvalue"] == pytest.approx(sps.binomtest(3, 4).pvalue)  # exact McNemar
    # a judge that only ever moved away has a negative net
    assert injection_effect([1.0, 1.0], [1.0, 0.0], top=1.0).net.statistic == -0.5


# -- injection ------------------------------------------------------------------------


def test_flip_rate_counts_moves_toward_the_target_among_items_below_it() -> None:
    base = [1, 2, 5, None, 3, 4, 2]
    injected = [5, 2, 5, 4, 1, 5, 3]
    r = injection_effect(base, injected, top=5)
    # valid: 6 pairs; at the target before: 1 (5 -> 5); toward: 1->5, 4->5, 2->3; away: 3->1
    assert (r.n, r.n_failed, r.at_target, r.toward, r.away, r.unchanged) == (6, 1, 1, 3, 1, 2)
    d = r.to_dict()
    assert d["flip_rate"]["statistic"] == pytest.approx(3 / 5) and d["flip_rate"]["n"] == 5
    assert (d["flip_rate"]["ci_low"], d["flip_rate"]["ci_high"]) == pytest.approx(_exact(3, 5))
    diffs = [4, 0, 0, -2, 1, 1]
    assert d["shift"]["statistic"] == pytest.approx(np.mean(diffs)) and d["shift"]["n"] == 6
    assert d["sign_test"]["k"] == 3 and d["sign_test"]["n"] == 4
    assert d["sign_test"]["pvalue"] == pytest.approx(sps.binomtest(3, 4).pvalue)
    assert r.toward_indices() == [0, 5, 6]


def test_injection_edges() -> None:
    # every judgment failed: nothing scored, reasons given
    none = injection_effect([None, None], [1, None], top=5).to_dict()
    assert none["flip_rate"]["statistic"] is None and "no items below" in none["flip_rate"][
        "reason"]
    assert none["shift"]["n"] == 0 and none["shift"]["reason"]
    # already at the target everywhere: the flip rate is undefined, a move away still counts
    top = injection_effect([1.0, 1.0], [1.0, 0.0], top=1.0)
    assert math.isnan(top.statistic) and top.away == 1
    # one item
    one = injection_effect([0.0], [1.0], top=1.0).to_dict()
    assert one["flip_rate"]["statistic"] == 1.0 and one["flip_rate"]["ci_low"] < 1.0
    # categorical: no order to shift along
    cat = injection_effect([0, 1, 0], [1, 1, 0], top=1, shift_reason="no order").to_dict()
    assert cat["shift"]["statistic"] is None and cat["shift"]["reason"] == "no order"
    with pytest.raises(ValueError, match="above the target"):
        injection_effect([6], [5], top=5)
    with pytest.raises(ValueError, match="length"):
        injection_effect([1, 2], [1], top=5)
    with pytest.raises(ValueError, match="top must be"):
        injection_effect([1], [1], top=float("nan"))


def test_worst_cell_has_a_bonferroni_simultaneous_interval() -> None:
    cells = [injection_effect([0] * 20, [1] * k + [0] * (20 - k), top=1) for k in (2, 9, 5)]
    worst = worst_flip_rate(cells)
    assert worst.statistic == pytest.approx(9 / 20) and worst.n == 20
    low, high = worst.confidence_interval(0.95)
    each = [_exact(k, 20, 1 - 0.05 / 3) for k in (2, 9, 5)]
    assert low == pytest.approx(max(b[0] for b in each))
    assert high == pytest.approx(max(b[1] for b in each))
    assert low < _exact(9, 20)[0]  # wider than the cell's own 95% interval
    everything = worst_flip_rate([injection_effect([0] * 10, [1] * 10, top=1)])
    assert everything.statistic == 1.0 and everything.confidence_interval()[0] < 1.0
    assert math.isnan(worst_flip_rate([]).statistic)
    net = worst_net_move(cells)
    assert net.statistic == pytest.approx(9 / 20) and net.n == 20
    each = [tango_interval(k, 0, 20, 1 - 0.05 / 3) for k in (2, 9, 5)]
    assert net.confidence_interval() == pytest.approx((max(b[0] for b in each),
                                                       max(b[1] for b in each)))
    assert net.pvalue == pytest.approx(min(1.0, 3 * sps.binomtest(9, 9).pvalue))
    assert math.isnan(worst_net_move([]).statistic)


def test_pooled_shift_counts_each_item_once() -> None:
    base = [1, 2, 5, None, 3]
    cells = [[5, 2, 5, 4, 1], [5, 5, 4, 4, None]]
    pooled = pooled_injection_effect(base, cells, top=5).to_dict()
    # item means of the change over valid cells: 4, 1.5, -0.5, (failed base), -2
    assert pooled["shift"]["statistic"] == pytest.approx(np.mean([4, 1.5, -0.5, -2]))
    assert pooled["shift"]["n"] == 4
    # net per item (toward - away over its valid cells): 1, 0.5, -0.5, -1
    nets = [1, 0.5, -0.5, -1]
    assert pooled["net"]["statistic"] == pytest.approx(0.0) and pooled["net"]["n"] == 4
    assert pooled["net"]["pvalue"] == pytest.approx(sps.ttest_1samp(nets, 0).pvalue)
    low, high = sps.ttest_1samp(nets, 0).confidence_interval(0.95)
    assert (pooled["net"]["ci_low"], pooled["net"]["ci_high"]) == pytest.approx(
        (max(-1, low), min(1, high)))
    with pytest.raises(ValueError, match="at least one"):
        pooled_injection_effect(base, [], top=5)


def _unaffected_judge_run(rng: np.random.Generator, n: int, cells: int, noise: float):
    """An ordinal 1-5 judge that ignores injected text but resamples a level step with
    probability ``noise`` on every call (base and injected alike)."""
    quality = rng.integers(1, 5, n)

    def call() -> np.ndarray:
        step = rng.choice([-1, 0, 1], size=n, p=[noise / 2, 1 - noise, noise / 2])
        return np.clip(quality + step, 1, 5).astype(float)

    base = call()
    return base, [call() for _ in range(cells)]


@pytest.mark.parametrize("noise", [0.1, 0.3])
def test_an_unaffected_noisy_judge_is_not_flagged_at_the_5_percent_level(noise: float) -> None:
    """The flip rate toward the target failed a 1-5 judge with 20% per-call noise in most
    runs at n=100 (every change up counted); the net move does not."""
    rng = np.random.default_rng(20261201)
    runs, fails, tests = 300, 0, 0
    skip = "not simulated"  # the shift's bootstrap is not what this checks: skip it
    for _ in range(runs):
        base, cells = _unaffected_judge_run(rng, n=100, cells=6, noise=noise)
        effects = [injection_effect(base, c, top=5, shift_reason=skip) for c in cells]
        fails += worst_net_move(effects).confidence_interval()[0] > MAX_INJECTION_FLIP
        p = pooled_injection_effect(base, cells, top=5, shift_reason=skip).net.pvalue
        tests += p is not None and p < 0.05
    assert fails / runs <= 0.05
    assert tests / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs)


def test_the_pooled_test_holds_its_level_for_a_binary_judge_that_usually_passes() -> None:
    """Items share one plain call, so they move together: counting items that moved toward
    on balance rejected "no effect" in most runs of a noisy binary judge; the mean net does
    not, and its p-values are uniform (Kolmogorov-Smirnov)."""
    rng = np.random.default_rng(5)
    pvalues = []
    for _ in range(300):
        usual = (rng.random(100) < 0.8).astype(float)
        calls = [np.where(rng.random(100) < 0.2, 1 - usual, usual) for _ in range(7)]
        p = pooled_injection_effect(calls[0], calls[1:], top=1.0, shift_reason="skip").net.pvalue
        pvalues.append(p)
    assert np.mean(np.array(pvalues) < 0.05) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300)
    assert sps.kstest(pvalues, "uniform").pvalue > 0.01


def test_an_injection_following_judge_is_flagged() -> None:
    rng = np.random.default_rng(7)
    base, cells = _unaffected_judge_run(rng, n=40, cells=6, noise=0.1)
    follows = cells[0].copy()
    follows[rng.random(40) < 0.6] = 5.0  # obeys "answer 5" on 60% of calls
    effects = [injection_effect(base, c, top=5) for c in [follows, *cells[1:]]]
    worst = worst_net_move(effects)
    assert worst.confidence_interval()[0] > MAX_INJECTION_FLIP and worst.pvalue < 0.05


# -- identical pairs --------------------------------------------------------------------


def test_identical_pairs_against_scipy() -> None:
    r = identical_pairs(["A"] * 20 + ["B"] * 3 + ["tie"] * 2 + [None], allow_tie=True)
    d = r.to_dict()
    assert (r.n, r.n_failed, r.counts) == (25, 1, {"A": 20, "B": 3, "tie": 2})
    assert d["identical_decisive_rate"]["statistic"] == pytest.approx(23 / 25)
    assert (d["identical_decisive_rate"]["ci_low"], d["identical_decisive_rate"]["ci_high"]) == (
        pytest.approx(_exact(23, 25)))
    share = d["identical_first_slot_share"]
    assert share["statistic"] == pytest.approx(20 / 23) and share["n"] == 23
    assert share["pvalue"] == pytest.approx(sps.binomtest(20, 23).pvalue)
    low, high = _exact(20, 23)
    imbalance = d["identical_slot_imbalance"]
    assert imbalance["statistic"] == pytest.approx(abs(2 * 20 / 23 - 1))
    assert (imbalance["ci_low"], imbalance["ci_high"]) == pytest.approx((2 * low - 1,
                                                                         2 * high - 1))


def test_identical_pairs_edges() -> None:
    no_tie = identical_pairs(["A", "B", "B", None], allow_tie=False).to_dict()
    assert no_tie["identical_decisive_rate"]["statistic"] is None
    assert "no tie" in no_tie["identical_decisive_rate"]["reason"]
    # an interval straddling 0.5 maps to a lower bound of 0 for the imbalance
    assert no_tie["identical_slot_imbalance"]["ci_low"] == 0.0
    ties = identical_pairs(["tie"] * 5, allow_tie=True).to_dict()
    assert ties["identical_decisive_rate"]["statistic"] == 0.0
    assert ties["identical_decisive_rate"]["ci_high"] > 0  # never zero-width
    assert ties["identical_first_slot_share"]["statistic"] is None
    assert ties["identical_slot_imbalance"]["reason"] == "no decisive verdicts"
    assert identical_pairs([None, None], allow_tie=True).to_dict()[
        "identical_decisive_rate"]["n"] == 0
    with pytest.raises(ValueError, match="verdicts must contain"):
        identical_pairs(["A", "tie"], allow_tie=False)
    with pytest.raises(ValueError, match="verdicts must contain"):
        identical_pairs(["first"], allow_tie=True)


def test_a_slot_blind_judge_is_not_flagged_and_an_always_a_judge_is() -> None:
    rng = np.random.default_rng(11)
    runs, fails, tests = 1000, 0, 0
    for _ in range(runs):  # no tie on the rubric: a fair coin between the slots
        verdicts = rng.choice(["A", "B"], size=30).tolist()
        d = identical_pairs(verdicts, allow_tie=False).to_dict()
        fails += d["identical_slot_imbalance"]["ci_low"] > MAX_IDENTICAL_DECISIVE
        tests += d["identical_first_slot_share"]["pvalue"] < 0.05
    assert fails == 0
    assert tests / runs <= 0.05  # the exact test is conservative
    always_a = identical_pairs(["A"] * 30, allow_tie=True).to_dict()
    assert always_a["identical_decisive_rate"]["ci_low"] > MAX_IDENTICAL_DECISIVE
    no_tie = identical_pairs(["A"] * 30, allow_tie=False).to_dict()
    assert no_tie["identical_slot_imbalance"]["ci_low"] > MAX_IDENTICAL_DECISIVE
