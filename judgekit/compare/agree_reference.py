"""``agree --judge RATER --reference R``: one rater against the reference of the others.

The parity figures of ``agree --judge`` compare the judge with each other rater
one at a time. A report compares it with the *reference* the others make
together (majority, lower median or mean, :mod:`judgekit.report.measures`); this
module gives that figure for a ratings file or the store's annotators, so the
two commands can be read side by side: Cohen's kappa against the majority of the
others for nominal ratings, Spearman's rho against the median or mean of their
values otherwise.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgekit import stats
from judgekit.errors import InputError
from judgekit.report.model import Stat, undefined
from judgekit.report.stat_intervals import IntervalSpec, to_stat


@dataclass(frozen=True)
class ReferenceFigure:
    """The judge against the others' reference: the rule, the statistic, the items used."""

    reference: str
    statistic_name: str
    stat: Stat

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "measure": self.statistic_name,
                **self.stat.to_dict()}


def _others_reference(values: list[Any], reference: str) -> Any:
    """The others' reference on one item (None: a tie with no majority)."""
    if reference == "mean":
        return math.fsum(float(v) for v in values) / len(values)
    if reference == "median":
        ranked = sorted(float(v) for v in values)
        return ranked[(len(ranked) - 1) // 2]  # the lower median, as the report
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def judge_against_reference(
    by_item: Mapping[str, Mapping[str, Any]],
    items: list[str],
    judge: str,
    level: str,
    reference: str,
    spec_for: Callable[[list[str]], IntervalSpec],
) -> ReferenceFigure:
    """Cohen's kappa (nominal, majority) or Spearman (numbers) of the judge vs the others."""
    if reference != "majority" and level == "nominal":
        raise InputError(f"--reference {reference} needs numeric ratings (--level ordinal, "
                         "interval or ratio)")
    pairs: list[tuple[str, Any, Any]] = []
    for item in items:
        given = by_item[item]
        if judge not in given:
            continue
        others = [v for r, v in given.items() if r != judge]
        if not others:
            continue
        ref = _others_reference(others, reference)
        if ref is not None:
            pairs.append((item, given[judge], ref))
    name = "cohen_kappa" if level == "nominal" else "spearman"
    words = {"majority": "the majority of the other raters",
             "median": "the lower median of the other raters",
             "mean": "the mean of the other raters"}[reference]
    if not pairs:
        return ReferenceFigure(words, name, undefined("no item has the judge and another rater"))
    keys = [p[0] for p in pairs]
    spec = spec_for(keys)
    result: Any
    if level == "nominal":
        result = stats.cohen_kappa([p[1] for p in pairs], [p[2] for p in pairs])
    else:
        result = stats.spearman(np.asarray([float(p[1]) for p in pairs]),
                                np.asarray([float(p[2]) for p in pairs]))
    return ReferenceFigure(words, name, to_stat(result, spec))


__all__ = ["ReferenceFigure", "judge_against_reference"]
