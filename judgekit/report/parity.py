"""Human parity in the report: does the judge agree with people as they agree with each other?

Built on :mod:`judgekit.stats.parity` from per-annotator labels (whatever rule
forms the report's single human reference), on the compared items that two or
more annotators labeled: the judge-minus-human agreement gap with its paired
bootstrap interval, and, with three or more annotators, the alternative
annotator test. One sentence states the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.report._format import num
from judgekit.report.agreement import numeric_values
from judgekit.report.model import Stat
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.stats.parity import AltTestResult, agreement_gap_of, alt_test_of, crowd_labels
from judgekit.stats.parity_crowd import CrowdLabels, gap_pvalue
from judgekit.types import Scale

#: The alt-test's cost-benefit margin: the authors' value for expert annotators.
ALT_TEST_EPSILON = 0.2
#: Items an annotator needs (shared with the judge and another annotator) to be tested.
ALT_TEST_MIN_ITEMS = 30
#: The alt-test needs this many annotators ("the rest" must be more than one person).
ALT_TEST_MIN_ANNOTATORS = 3

GAP_KEY = "judge_minus_human_agreement"


@dataclass(frozen=True)
class Parity:
    """The gap statistic, the alt-test (None with fewer than 3 annotators) and the sentence."""

    gap: Stat
    alt_test: AltTestResult | None
    sentence: str


def parity_section(
    keys: Sequence[ItemKey],
    judge: Sequence[str],
    annotators: Mapping[ItemKey, Mapping[str, str]],
    scale: Scale,
    spec: IntervalSpec,
    epsilon: float = ALT_TEST_EPSILON,
) -> Parity | None:
    """Parity on the compared items (``keys`` with the judge's labels), or None.

    ``epsilon`` is the alternative annotator test's margin (``report --epsilon``).

    None unless some compared item has labels from two or more annotators.
    ``spec.clusters`` (one id per key) makes the bootstrap resample clusters.
    """
    multi = [i for i, key in enumerate(keys) if len(annotators.get(key, {})) >= 2]
    if not multi:
        return None
    per_item = [annotators[keys[i]] for i in multi]
    judge_labels: list[Any] = [judge[i] for i in multi]
    clusters = None if spec.clusters is None else spec.clusters[np.asarray(multi)]
    numbers = None
    if scale.kind == "ordinal":
        labels = list(scale.labels)
        value = dict(zip(labels, numeric_values(scale, labels).tolist(), strict=True))
        numbers = CrowdLabels.from_items(
            [value[j] for j in judge_labels],
            [{a: value[v] for a, v in by.items()} for by in per_item], "neg_rmse")
    # labels as rows: a crowd of 20,000 annotators costs its labels, not 20,000 x items
    return parity_of(CrowdLabels.from_items(judge_labels, per_item), numbers, spec,
                     clusters=clusters, epsilon=epsilon)


def judge_parity(
    judge: Sequence[Any],
    annotators: Mapping[str, Sequence[Any]],
    spec: IntervalSpec,
    *,
    clusters: npt.NDArray[Any] | None = None,
    numeric: tuple[Sequence[Any], Mapping[str, Sequence[Any]]] | None = None,
    epsilon: float = ALT_TEST_EPSILON,
) -> Parity:
    """Parity from per-annotator labels aligned by item (None = not labeled).

    Labels are compared for equality in the gap; the alt-test scores by accuracy,
    or, when ``numeric`` gives the same labels as numbers (an ordinal scale), by
    minus the RMSE. The alt-test runs with 3 or more annotators.
    """
    numbers = None if numeric is None else crowd_labels(numeric[0], numeric[1], "neg_rmse")
    return parity_of(crowd_labels(judge, annotators), numbers, spec, clusters=clusters,
                     epsilon=epsilon)


def parity_of(
    crowd: CrowdLabels,
    numbers: CrowdLabels | None,
    spec: IntervalSpec,
    *,
    clusters: npt.NDArray[Any] | None = None,
    epsilon: float = ALT_TEST_EPSILON,
) -> Parity:
    """:func:`judge_parity` on labels as rows: ``crowd`` the labels (codes), ``numbers``
    the same labels as numbers for an ordinal scale (the alt-test then scores by minus
    the RMSE), ``clusters`` one id per item of ``crowd``."""
    res = agreement_gap_of(
        crowd,
        clusters=clusters,
        n_resamples=spec.n_resamples,
        confidence_level=spec.confidence_level,
        random_state=spec.random_state,
    )
    interval = res.confidence_interval(spec.confidence_level)
    reason = getattr(interval, "reason", None)
    pvalue = gap_pvalue(crowd, 1000, spec.random_state)
    gap = Stat(
        res.statistic,
        res.ci_low,
        res.ci_high,
        res.n,
        spec.bootstrap_name,
        None,
        f"no interval: {reason}" if reason else None,
        pvalue,
    )
    test = None
    if len(crowd.names) >= ALT_TEST_MIN_ANNOTATORS:
        test = alt_test_of(crowd if numbers is None else numbers,
                           scoring="accuracy" if numbers is None else "neg_rmse",
                           epsilon=epsilon, min_items=ALT_TEST_MIN_ITEMS)
    return Parity(gap, test, _sentence(gap, res.statistic_a, res.statistic_b, test,
                                       1 - spec.confidence_level))


def _sentence(gap: Stat, judge_human: float, human_human: float, test: AltTestResult | None,
              alpha: float = 0.05) -> str:
    """One sentence: the gap's verdict, with the alt-test's when it ran.

    It names the items its figures are over: those with an ok judgment and a human
    reference, fewer than the ceiling's (a failed judgment, or annotators who tie,
    leave an item out), so its human-human figure can differ from the ceiling's.
    "More closely" or "less well" needs the interval to exclude 0 *and* the randomization
    test of "the judge is one more annotator" (``gap.pvalue``) to be significant: the
    bootstrap interval alone claimed a difference for an exchangeable judge in 7.3% of
    samples of 50 items.
    """
    figures = (
        f"judge-human agreement {num(judge_human)} vs human-human {num(human_human)} on "
        f"the {gap.n} items that also have an ok judgment and a human reference, "
        f"difference {num(gap.statistic)}"
    )
    if not (np.isfinite(gap.ci_low) and np.isfinite(gap.ci_high)):
        head = (
            "Whether the judge agrees with people as well as they agree with each other "
            f"cannot be told ({figures}, no interval)"
        )
    else:
        bounds = f"{figures} [{num(gap.ci_low)}, {num(gap.ci_high)}]"
        tested = gap.pvalue is not None and gap.pvalue < alpha
        if (gap.ci_low > 0 or gap.ci_high < 0) and not tested:
            head = (
                "The data cannot tell whether the judge agrees with people as well as they agree "
                f"with each other ({bounds}: the interval excludes 0 but the randomization test "
                f"of the judge as one more annotator gives p = {gap.pvalue:.3g})"
            )
        elif gap.ci_low > 0:
            head = (
                "The judge agrees with people more closely than they agree with each other "
                f"({bounds})"
            )
        elif gap.ci_high < 0:
            head = (
                f"The judge agrees with people less well than they agree with each other ({bounds})"
            )
        else:
            head = (
                "The data cannot tell whether the judge agrees with people as well as they agree "
                f"with each other ({bounds}, an interval that includes 0)"
            )
    if test is None:
        return head + "."
    if not np.isfinite(test.winning_rate):
        return f"{head}; the alternative annotator test could not run ({test.reason})."
    verdict = "passes" if test.passed else "fails"
    return (
        f"{head}; it {verdict} the alternative annotator test (winning rate "
        f"{test.winning_rate:.2f} over {len(test.annotators)} annotators, epsilon "
        f"{test.epsilon:g}; it needs 0.5)."
    )


__all__ = ["ALT_TEST_EPSILON", "GAP_KEY", "Parity", "judge_parity", "parity_of", "parity_section"]
