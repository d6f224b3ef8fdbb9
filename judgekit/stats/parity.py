"""Human parity: can the judge stand in for an annotator?

Two answers, both from per-annotator labels aligned by item (``None`` where an
annotator did not label an item), so they work whichever way the reference
labels are chosen elsewhere:

- :func:`alt_test`, the alternative annotator test (Calderon, Reichart & Dror
  2025, arXiv 2501.10970; reference code nitaytech/AltTest). Each annotator is
  left out in turn; on the items they labeled, the judge and the left-out
  annotator are each scored against the remaining annotators, and a one-sided
  t-test asks whether the annotator's advantage is below the cost-benefit margin
  epsilon. The p-values are adjusted across annotators (Benjamini-Yekutieli, as
  the reference code does; Benjamini-Hochberg on request); the winning rate
  omega is the share of annotators the judge beats, and the judge passes when
  omega >= 0.5. Needs 3 or more annotators to be meaningful (with 2, "the rest"
  is one person); the authors suggest 50-100 items.
- :func:`agreement_gap`: on items with two or more annotators, the mean
  judge-annotator agreement minus the mean annotator-annotator agreement, with a
  paired bootstrap interval over items (or clusters). Both are single-rater
  agreement rates on the same items, so the difference says whether the judge
  agrees with people as well as they agree with each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit.stats._result_outcomes import PairedBootstrapResult
from judgekit.stats._tdist import ttest_1samp_pvalue
from judgekit.stats._validate import FloatArray, RandomState, check_choice, encode
from judgekit.stats.intervals import paired_bootstrap
from judgekit.stats.parity_crowd import CrowdLabels, alt_scores, gap_pvalue, pair_agreement
from judgekit.stats.significance import benjamini_hochberg

__all__ = [
    "AltTestAnnotator",
    "AltTestResult",
    "agreement_gap",
    "agreement_gap_of",
    "agreement_gap_pvalue",
    "alt_test",
    "alt_test_of",
    "crowd_labels",
]

Scoring = Literal["accuracy", "neg_rmse"]


@dataclass(frozen=True)
class AltTestAnnotator:
    """One left-out annotator: the judge's and the annotator's advantage rates and the test."""

    annotator: str
    n: int  # items this annotator labeled that at least one other annotator labeled too
    judge_advantage: float  # rho_f: share of items where the judge scores >= the annotator
    annotator_advantage: float  # rho_h: share where the annotator scores >= the judge
    pvalue: float  # one-sided t-test of mean(1[h >= f] - 1[f >= h]) < epsilon
    adjusted_pvalue: float
    judge_wins: bool


@dataclass(frozen=True)
class AltTestResult:
    """The alternative annotator test: ``winning_rate`` (omega) and ``passed`` (omega >= 0.5)."""

    winning_rate: float
    advantage_probability: float  # mean over annotators of judge_advantage
    passed: bool
    epsilon: float
    q: float
    fdr_method: str
    annotators: tuple[AltTestAnnotator, ...]
    skipped: tuple[str, ...]  # annotators with fewer than min_items items
    reason: str | None = None
    #: items each skipped annotator shares with the judge and another annotator
    skipped_items: tuple[int, ...] = ()
    min_items: int = 30

    def skipped_groups(self, limit: int) -> list[dict[str, Any]]:
        """The skipped annotators grouped by why: ``{reason, count, annotators}`` with at
        most ``limit`` names per group (in name order)."""
        counts = self.skipped_items or (0,) * len(self.skipped)
        groups: dict[str, list[str]] = {}
        for name, n in zip(self.skipped, counts, strict=True):
            reason = (
                "labeled no item that the judge and another annotator also labeled" if n == 0
                else f"fewer than {self.min_items} items shared with the judge and another "
                "annotator"
            )
            groups.setdefault(reason, []).append(name)
        return [{"reason": reason, "count": len(names), "annotators": names[:limit]}
                for reason, names in groups.items()]

    def to_dict(self, skipped_limit: int | None = None) -> dict[str, Any]:
        """The result as JSON; with ``skipped_limit``, ``skipped`` holds only the first that
        many names, beside ``n_skipped`` and ``skipped_groups`` (a crowd of 20,000 annotators
        would otherwise list every name)."""
        def number(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "winning_rate": number(self.winning_rate),
            "advantage_probability": number(self.advantage_probability),
            "passed": self.passed,
            "epsilon": self.epsilon,
            "q": self.q,
            "fdr_method": self.fdr_method,
            "annotators": [
                {
                    "annotator": a.annotator,
                    "n": a.n,
                    "judge_advantage": number(a.judge_advantage),
                    "annotator_advantage": number(a.annotator_advantage),
                    "pvalue": number(a.pvalue),
                    "adjusted_pvalue": number(a.adjusted_pvalue),
                    "judge_wins": a.judge_wins,
                }
                for a in self.annotators
            ],
            "skipped": list(self.skipped if skipped_limit is None
                            else self.skipped[:skipped_limit]),
            "reason": self.reason,
            **({} if skipped_limit is None else {
                "n_skipped": len(self.skipped),
                "skipped_groups": self.skipped_groups(skipped_limit),
            }),
        }


def _label_matrix(
    judge: Sequence[Any], annotators: Mapping[str, Sequence[Any]], scoring: str
) -> tuple[FloatArray, FloatArray, list[str]]:
    """Judge values (n,) and annotator values (n, A) as floats, NaN where missing.

    For ``accuracy`` labels are encoded as category codes (only equality matters);
    for ``neg_rmse`` they must be numbers.
    """
    names = sorted(annotators)
    if len(names) < 2:
        raise ValueError(f"the comparison needs at least 2 annotators, got {len(names)}")
    n = len(judge)
    for name in names:
        if len(annotators[name]) != n:
            raise ValueError(
                f"annotator {name!r} has {len(annotators[name])} labels for {n} items"
            )
    columns = [("judge", np.asarray(list(judge), dtype=object))] + [
        (f"annotator {name!r}", np.asarray(list(annotators[name]), dtype=object))
        for name in names
    ]
    if scoring == "accuracy":
        codes, _ = encode(columns, None)
        values = np.column_stack(codes).astype(np.float64)
        values[values < 0] = np.nan
    else:
        from judgekit.stats._validate import as_float_with_missing

        values = np.column_stack([as_float_with_missing(arr, label) for label, arr in columns])
    return values[:, 0], values[:, 1:], names


def crowd_labels(judge: Sequence[Any], annotators: Mapping[str, Sequence[Any]],
                 scoring: str = "accuracy") -> CrowdLabels:
    """Per-annotator labels aligned by item (None: not labeled), as rows (:class:`CrowdLabels`)."""
    f, h, names = _label_matrix(judge, annotators, scoring)
    n_values = 0
    if scoring == "accuracy":
        both = np.concatenate([f[~np.isnan(f)], h[~np.isnan(h)]])
        n_values = int(both.max()) + 1 if both.size else 1
    return CrowdLabels.from_table(f, h, names, n_values)


def _one_sided_pvalue(differences: FloatArray, epsilon: float) -> float:
    """scipy's one-sample t-test of mean < epsilon, as the reference code runs it
    (its p-value bit for bit, without importing scipy.stats: :mod:`judgekit.stats._tdist`).

    Constant differences have no variance: the test is decided by the mean alone
    (p = 0 below epsilon, 1 otherwise), which is what the t statistic's limit says.
    """
    if differences.size < 2:
        return float("nan")
    if np.ptp(differences) == 0:
        return 0.0 if differences[0] < epsilon else 1.0
    return ttest_1samp_pvalue(differences, epsilon, alternative="less")


def alt_test(
    judge: Sequence[Any],
    annotators: Mapping[str, Sequence[Any]],
    *,
    scoring: Scoring = "accuracy",
    epsilon: float = 0.2,
    q: float = 0.05,
    fdr_method: Literal["by", "bh"] = "by",
    min_items: int = 30,
) -> AltTestResult:
    """The alternative annotator test of a judge against per-annotator labels.

    ``judge`` has one label per item (None where it has none); ``annotators``
    maps each annotator to one label per item (None where they did not label).
    ``scoring`` compares one value with the rest: ``"accuracy"`` (share of the
    others with the same label; categorical and pairwise scales) or
    ``"neg_rmse"`` (minus the root mean squared difference; numeric scales).
    ``epsilon`` is the cost-benefit margin (the authors suggest 0.2 for experts,
    0.15 for skilled annotators, 0.1 for crowd workers). Items need the judge and
    two or more annotators; an annotator with fewer than ``min_items`` such items
    is skipped, as in the reference code.
    """
    check_choice(scoring, "scoring", ("accuracy", "neg_rmse"))
    return alt_test_of(crowd_labels(judge, annotators, scoring), scoring=scoring, epsilon=epsilon,
                       q=q, fdr_method=fdr_method, min_items=min_items)


def alt_test_of(
    crowd: CrowdLabels,
    *,
    scoring: Scoring = "accuracy",
    epsilon: float = 0.2,
    q: float = 0.05,
    fdr_method: Literal["by", "bh"] = "by",
    min_items: int = 30,
) -> AltTestResult:
    """:func:`alt_test` on labels as rows (:class:`~judgekit.stats.parity_crowd.CrowdLabels`):
    the cost of a crowd is its labels, not annotators x items."""
    check_choice(scoring, "scoring", ("accuracy", "neg_rmse"))
    check_choice(fdr_method, "fdr_method", ("by", "bh"))
    if not (np.isfinite(epsilon) and 0.0 <= epsilon < 1.0):
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}")
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    if len(crowd.names) < 2:
        raise ValueError(f"the comparison needs at least 2 annotators, got {len(crowd.names)}")
    rows: list[tuple[str, int, float, float, float]] = []
    skipped: list[str] = []
    skipped_items: list[int] = []
    for scores in alt_scores(crowd, scoring):
        if scores.n < max(min_items, 2):
            skipped.append(scores.name)
            skipped_items.append(scores.n)
            continue
        pvalue = _one_sided_pvalue(scores.human_ind - scores.judge_ind, epsilon)
        rows.append((scores.name, scores.n, float(scores.judge_ind.mean()),
                     float(scores.human_ind.mean()), pvalue))
    nan = float("nan")
    if not rows:
        return AltTestResult(
            nan, nan, False, epsilon, q, fdr_method, (), tuple(skipped),
            f"no annotator has {min_items} or more items shared with the judge and another "
            "annotator", tuple(skipped_items), max(min_items, 2),
        )
    pvalues = np.array([r[4] for r in rows])
    finite = np.isfinite(pvalues)
    adjusted = np.full(pvalues.size, nan)
    if finite.any():
        _, bh = benjamini_hochberg(pvalues[finite], q=q)
        m = int(finite.sum())
        factor = float(np.sum(1.0 / np.arange(1, m + 1))) if fdr_method == "by" else 1.0
        adjusted[finite] = np.minimum(bh * factor, 1.0)
    wins = np.where(finite, adjusted <= q, False)
    out = tuple(
        AltTestAnnotator(name, n, rho_f, rho_h, p, float(adj), bool(won))
        for (name, n, rho_f, rho_h, p), adj, won in zip(rows, adjusted, wins, strict=True)
    )
    omega = float(wins.mean())
    rho = float(np.mean([r[2] for r in rows]))
    return AltTestResult(omega, rho, omega >= 0.5, epsilon, q, fdr_method, out, tuple(skipped),
                         None, tuple(skipped_items), max(min_items, 2))


def agreement_gap_pvalue(judge: Sequence[Any], annotators: Mapping[str, Sequence[Any]], *,
                         n_draws: int = 2000, random_state: RandomState = 0) -> float:
    """Two-sided randomization p of "the judge is one more annotator" for the agreement gap.

    Under that null the judge's and the annotators' labels on an item are exchangeable, so
    which of them plays the judge can be drawn at random per item; the gap's distribution
    over such draws is its exact null distribution (p = (1 + hits) / (1 + draws), whatever
    the clustering, as the draws stay within items). The percentile bootstrap alone
    excluded 0 for an exchangeable judge in 7.3% of samples at 50 items: the per-item
    difference takes the values -1, 0 and +1/3 mostly, too skewed for it.
    """
    return gap_pvalue(crowd_labels(judge, annotators, "accuracy"), n_draws, random_state)


def agreement_gap(
    judge: Sequence[Any],
    annotators: Mapping[str, Sequence[Any]],
    *,
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> PairedBootstrapResult:
    """Judge-human minus human-human agreement on the same items, with a paired bootstrap.

    On each item the judge and two or more annotators labeled: judge-human
    agreement is the share of its annotators whose label equals the judge's;
    human-human agreement is the share of annotator pairs that agree. The
    statistic is the mean of the first minus the mean of the second over those
    items, ``statistic_a`` and ``statistic_b`` the two means; the interval is a
    paired bootstrap over items (clusters when given, one id per item), so an
    item hard for both sides counts for both. Negative: the judge agrees with
    people less than they agree with each other.
    """
    return agreement_gap_of(crowd_labels(judge, annotators, "accuracy"), clusters=clusters,
                            n_resamples=n_resamples, confidence_level=confidence_level,
                            random_state=random_state)


def agreement_gap_of(
    crowd: CrowdLabels,
    *,
    clusters: npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    random_state: RandomState = 0,
) -> PairedBootstrapResult:
    """:func:`agreement_gap` on labels as rows (accuracy codes), from per-item counts."""
    usable = crowd.usable
    if not usable.any():
        raise ValueError("no item has a judge label and labels from two or more annotators")
    judge_human, human_human = pair_agreement(crowd)
    codes = None
    if clusters is not None:
        n = crowd.judge.size
        ids = np.empty(n, dtype=object)
        listed = list(clusters)  # type: ignore[arg-type]
        if len(listed) != n:
            raise ValueError(f"clusters has length {len(listed)}; expected {n}")
        ids[:] = listed
        codes = ids[usable]
    return paired_bootstrap(
        judge_human,
        human_human,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        random_state=random_state,
        clusters=codes,
    )
