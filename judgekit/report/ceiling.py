"""The human-human ceiling: how well annotators agree with each other on shared items.

The judge cannot be expected to agree with people better than they agree among
themselves; this section measures that ceiling (Krippendorff's alpha, Fleiss' kappa,
the share of agreeing annotator pairs) on items two or more annotators labeled, with
intervals over items (or their clusters). It reads no store.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.report.agreement import numeric_values
from judgekit.report.model import Ceiling, Stat, undefined
from judgekit.report.pairing import ItemKey
from judgekit.report.stat_intervals import IntervalSpec, counts_stat, resample_plan, to_stat
from judgekit.types import Scale


def _pair_agreement(item_labels: Sequence[Sequence[str]]) -> tuple[npt.NDArray[np.float64], ...]:
    """Per item: agreeing annotator pairs (sum over labels of c (c - 1) / 2) and all pairs.

    One count table (items x labels) in numpy instead of a Counter per item; both
    figures are whole numbers of pairs, so they are the same floats either way.
    """
    sizes = np.fromiter(map(len, item_labels), dtype=np.int64, count=len(item_labels))
    index: dict[str, int] = {}
    codes = np.fromiter(
        (index.setdefault(label, len(index)) for label in itertools.chain.from_iterable(
            item_labels)),
        dtype=np.int64,
        count=int(sizes.sum()),
    )
    width = max(len(index), 1)
    rows = np.repeat(np.arange(sizes.size), sizes)
    counts = np.bincount(rows * width + codes, minlength=sizes.size * width).reshape(-1, width)
    agreeing = (counts * (counts - 1)).sum(axis=1) / 2
    total = sizes * (sizes - 1) / 2
    return agreeing.astype(np.float64), total.astype(np.float64)


def pair_share(
    agreeing: npt.NDArray[np.float64], total: npt.NDArray[np.float64], spec: IntervalSpec
) -> Stat:
    """Agreeing pairs over all pairs, summed over items, with its bootstrap interval.

    Items are merged into their few (agreeing, total) patterns and the resamples drawn
    as pattern counts (:func:`~judgekit.report.stat_intervals.counts_stat`): both numbers
    are whole counts of pairs, so the resampled sums are exact and the figures are
    those of summing the resampled items.
    """
    patterns, codes = np.unique(np.column_stack([agreeing, total]), axis=0, return_inverse=True)

    def share(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        sums = counts @ patterns
        with np.errstate(divide="ignore", invalid="ignore"):
            out: npt.NDArray[np.float64] = sums[:, 0] / sums[:, 1]
        return out

    return counts_stat(share, resample_plan(codes.reshape(-1), len(patterns), spec), spec)


def _value_counts(
    labeled: Sequence[Mapping[str, str]], value: Mapping[str, Any] | None
) -> tuple[npt.NDArray[np.float64], list[Any]]:
    """Items x values: how many annotators gave each value (the label, or its number with
    ``value``) to each item, over the values seen in sorted order, as alpha would read
    them from an annotators x items table. One pass over the labels: a crowd of 20,000
    annotators costs its labels, not 20,000 x items cells."""
    keyed = [[lab if value is None else value[lab] for lab in by.values()] for by in labeled]
    seen = sorted({v for values in keyed for v in values})
    index = {v: j for j, v in enumerate(seen)}
    rows = np.repeat(np.arange(len(keyed)), [len(values) for values in keyed])
    cols = np.fromiter((index[v] for values in keyed for v in values), dtype=np.int64,
                       count=rows.size)
    counts = np.zeros((len(keyed), len(seen)))
    np.add.at(counts, (rows, cols), 1.0)
    return counts, seen


def human_ceiling(
    references: Mapping[ItemKey, Mapping[str, str]],
    scale: Scale,
    spec: IntervalSpec,
    clusters: Mapping[ItemKey, str] | None = None,
) -> Ceiling | None:
    """Human-human agreement on items labeled by two or more annotators (None if none are)."""
    multi = sorted(key for key, by in references.items() if len(by) >= 2)
    if not multi:
        return None
    labeled = [references[k] for k in multi]
    annotators = sorted({a for by in labeled for a in by})
    unit_spec = IntervalSpec(
        spec.confidence_level,
        spec.n_resamples,
        spec.random_state,
        None if clusters is None else np.asarray([clusters[k] for k in multi], dtype=object),
    )
    ordinal = scale.kind == "ordinal"
    level: Literal["ordinal", "nominal"] = "ordinal" if ordinal else "nominal"
    value = {
        lab: v for lab, v in zip(scale.labels, numeric_values(scale, scale.labels), strict=True)
    }
    counts, seen = _value_counts(labeled, value if ordinal else None)
    out: dict[str, Stat] = {
        "krippendorff_alpha": to_stat(
            stats.krippendorff_alpha(value_counts=counts, level=level, value_domain=seen),
            unit_spec,
        )
    }
    sizes = {len(by) for by in labeled}
    ratings = [list(by.values()) for by in labeled]
    reason = None
    if len(sizes) == 1:
        out["fleiss_kappa"] = to_stat(stats.fleiss_kappa(ratings), unit_spec)
    else:
        reason = (
            f"Items have {min(sizes)} to {max(sizes)} annotators, so Fleiss' kappa is not "
            "defined; Krippendorff's alpha allows unequal counts."
        )
        out["fleiss_kappa"] = undefined("unequal numbers of annotators per item", len(multi))
    agreeing, total = _pair_agreement(ratings)
    out["percent_agreement"] = pair_share(agreeing, total, unit_spec)
    return Ceiling(len(multi), len(annotators), out, reason)


__all__ = ["human_ceiling", "pair_share"]
