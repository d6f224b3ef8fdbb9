"""Human parity from labels as rows: a crowd costs its labels, not annotators x items cells.

The parity figures (:mod:`judgekit.stats.parity`) compare the judge with each
annotator and the annotators with each other on the items they share. Everything
they need is, per item, how many annotators gave each value (and, for the
alternative annotator test, which value each annotator gave): an annotators x items
table of 20,000 crowd workers over 5,000 items has 100 million cells that are almost
all empty, and the randomization test of the agreement gap used to compare every
rater with every other rater on an item (20,000 squared per item). Here the labels
are rows ``(item, annotator, value)`` and the figures come from per-item counts,
with the same numbers as the table gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit.stats._validate import FloatArray, IntArray, encode, rng_from

#: Random numbers drawn at once by the randomization test (draws x items x values).
DRAW_BLOCK = 2_000_000


@dataclass(frozen=True)
class CrowdLabels:
    """The judge's value per item and the annotators' labels as rows.

    ``judge`` is one value per item (NaN: no judge label); ``item``, ``annotator`` and
    ``value`` are one entry per label (``annotator`` indexes ``names``, in name order).
    Values are category codes (``accuracy`` scoring: only equality matters) or numbers
    (``neg_rmse``). ``n_values`` is the number of codes (0 for numbers).
    """

    judge: FloatArray
    item: IntArray
    annotator: IntArray
    value: FloatArray
    names: tuple[str, ...]
    n_values: int

    @classmethod
    def from_items(cls, judge: Sequence[Any], labels: Sequence[Mapping[str, Any]],
                   scoring: str = "accuracy", names: Sequence[str] | None = None) -> CrowdLabels:
        """From the judge's label per item and each item's ``{annotator: label}``.

        ``names`` lists every annotator, also those with no label here (the alt-test
        reports them as skipped); default: the annotators of ``labels``, in name order.
        """
        if len(judge) != len(labels):
            raise ValueError(f"{len(labels)} items of labels for {len(judge)} judge labels")
        if names is None:
            names = sorted({a for by in labels for a in by})
        names = tuple(names)
        index = {name: j for j, name in enumerate(names)}
        sizes = [len(by) for by in labels]
        item = np.repeat(np.arange(len(labels), dtype=np.int64), sizes)
        annotator = np.fromiter((index[a] for by in labels for a in by), dtype=np.int64,
                                count=item.size)
        raw = [v for by in labels for v in by.values()]
        if scoring == "accuracy":
            columns = [("judge", np.asarray(list(judge), dtype=object)),
                       ("labels", np.asarray(raw, dtype=object))]
            codes, categories = encode(columns, None)
            f, value = (c.astype(np.float64) for c in codes)
            f[f < 0] = np.nan
            keep = value >= 0
            return cls(f, item[keep], annotator[keep], value[keep], names, len(categories))
        from judgekit.stats._validate import as_float_with_missing

        f = as_float_with_missing(np.asarray(list(judge), dtype=object), "judge")
        value = as_float_with_missing(np.asarray(raw, dtype=object), "labels")
        keep = ~np.isnan(value)
        return cls(f, item[keep], annotator[keep], value[keep], names, 0)

    @classmethod
    def from_table(cls, judge: FloatArray, table: FloatArray, names: Sequence[str],
                   n_values: int) -> CrowdLabels:
        """From the judge column and an items x annotators table (NaN: not labeled)."""
        item, annotator = np.nonzero(~np.isnan(table))
        return cls(judge, item.astype(np.int64), annotator.astype(np.int64),
                   table[item, annotator], tuple(names), n_values)

    @property
    def per_item(self) -> IntArray:
        """Annotators per item."""
        return np.bincount(self.item, minlength=self.judge.size)

    @property
    def usable(self) -> npt.NDArray[np.bool_]:
        """Items with a judge label and labels from two or more annotators."""
        return ~np.isnan(self.judge) & (self.per_item >= 2)

    def counts(self) -> FloatArray:
        """Items x values: how many annotators gave each code to each item (accuracy)."""
        k = max(self.n_values, 1)
        out = np.zeros((self.judge.size, k))
        np.add.at(out, (self.item, self.value.astype(np.int64)), 1.0)
        return out


def pair_agreement(crowd: CrowdLabels) -> tuple[FloatArray, FloatArray]:
    """Per usable item: mean judge-annotator agreement and share of agreeing annotator pairs."""
    usable = crowd.usable
    counts = crowd.counts()[usable]
    f = crowd.judge[usable].astype(np.int64)
    m = counts.sum(axis=1)
    judge_human = counts[np.arange(f.size), f] / m
    agreeing = np.sum(counts * (counts - 1.0), axis=1) / 2.0
    return judge_human, agreeing / (m * (m - 1.0) / 2.0)


def gap_pvalue(crowd: CrowdLabels, n_draws: int, random_state: Any) -> float:
    """The randomization p of "the judge is one more annotator" (see
    :func:`judgekit.stats.parity.agreement_gap_pvalue`), from per-item counts.

    On an item with m annotators, count N_c of raters (the judge included) giving value
    c, and A = sum_c N_c (N_c - 1) / 2 agreeing pairs among them, the item's gap when a
    rater with value c plays the judge is (N_c - 1) / m - (A - (N_c - 1)) / (m (m - 1) / 2):
    it depends on the value only, so drawing a random rater is drawing c with
    probability N_c / (m + 1).
    """
    usable = crowd.usable
    if not usable.any():
        raise ValueError("no item has a judge label and labels from two or more annotators")
    f = crowd.judge[usable].astype(np.int64)
    n = crowd.counts()[usable]
    n[np.arange(f.size), f] += 1.0  # the judge is one of the raters
    raters = n.sum(axis=1)
    m = raters - 1.0
    pairs = np.sum(n * (n - 1.0), axis=1) / 2.0
    gap = (n - 1.0) / m[:, None] - (pairs[:, None] - (n - 1.0)) / (m * (m - 1.0) / 2.0)[:, None]
    observed = abs(float(gap[np.arange(f.size), f].mean())) - 1e-12
    cumulative = np.cumsum(n, axis=1) / raters[:, None]
    cumulative[:, -1] = 1.0
    rng = rng_from(random_state)
    hits = 0
    rows = np.arange(f.size)
    step = max(1, min(n_draws, DRAW_BLOCK // max(n.size, 1)))
    for start in range(0, n_draws, step):
        draws = min(step, n_draws - start)
        u = rng.random((draws, f.size))
        pick = (u[:, :, None] >= cumulative[None, :, :]).sum(axis=2)
        means = gap[rows[None, :], pick].mean(axis=1)
        hits += int((np.abs(means) >= observed).sum())
    return (1 + hits) / (1 + n_draws)


@dataclass(frozen=True)
class AnnotatorScores:
    """One annotator's rows of the alternative annotator test, over their usable items."""

    name: str
    n: int
    judge_ind: FloatArray  # 1[judge scores >= the annotator] per item
    human_ind: FloatArray  # 1[annotator scores >= the judge] per item


def alt_scores(crowd: CrowdLabels, scoring: str) -> list[AnnotatorScores]:
    """Per annotator (in name order), the judge's and the annotator's score against the
    other annotators on each item they labeled that the test uses, as indicators.

    ``accuracy``: the share of the others with the same value; ``neg_rmse``: minus the
    root mean squared difference from the others' values. Items in item order.
    """
    usable = crowd.usable
    keep = usable[crowd.item]
    item, annotator, h = crowd.item[keep], crowd.annotator[keep], crowd.value[keep]
    order = np.lexsort((item, annotator))
    item, annotator, h = item[order], annotator[order], h[order]
    f = crowd.judge[item]
    others = crowd.per_item[item].astype(np.float64) - 1.0
    if scoring == "accuracy":
        counts = crowd.counts()
        hc, fc = h.astype(np.int64), f.astype(np.int64)
        human = (counts[item, hc] - 1.0) / others
        judge = (counts[item, fc] - (hc == fc)) / others
    else:
        # sum over the others of (o - x)^2 = S2 - 2 x S1 + m x^2 less the annotator's own term
        s1 = np.bincount(crowd.item, weights=crowd.value, minlength=crowd.judge.size)[item]
        s2 = np.bincount(crowd.item, weights=crowd.value**2, minlength=crowd.judge.size)[item]
        m = others + 1.0

        def spread(x: FloatArray) -> FloatArray:
            return s2 - 2.0 * x * s1 + m * x * x - (h - x) ** 2

        human = -np.sqrt(np.maximum(spread(h), 0.0) / others)
        judge = -np.sqrt(np.maximum(spread(f), 0.0) / others)
    judge_ind = (judge >= human).astype(np.float64)
    human_ind = (human >= judge).astype(np.float64)
    bounds = np.searchsorted(annotator, np.arange(len(crowd.names) + 1))
    return [
        AnnotatorScores(name, int(bounds[j + 1] - bounds[j]),
                        judge_ind[bounds[j]:bounds[j + 1]], human_ind[bounds[j]:bounds[j + 1]])
        for j, name in enumerate(crowd.names)
    ]


__all__ = ["CrowdLabels", "alt_scores", "gap_pvalue", "pair_agreement"]
