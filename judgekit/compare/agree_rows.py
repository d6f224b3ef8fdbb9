"""The figures of ``judgekit agree`` from ratings as rows: a crowd costs its labels.

A ratings file of 20,000 crowd annotators over 1,000 items, three labels each, is
60,000 ratings; a raters x items table of it is 20 million cells that are almost all
empty, and the rater pairs are 200 million, nearly all sharing no item. Here every
figure starts from the ratings themselves: Krippendorff's alpha from how many raters
gave each value to each item, the pairwise kappas from the pairs that share an item
(found item by item), the parity figures from each item's labels. The numbers are
the ones the table gave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from judgekit import stats
from judgekit.stats.parity_crowd import CrowdLabels

#: Rater pairs (one per shared item) counted at once before they are merged.
PAIR_BLOCK = 2_000_000

IntArray = npt.NDArray[np.int64]


def alpha_of(
    by_item: Mapping[str, Mapping[str, Any]], items: Sequence[str], level: Any
) -> stats.AlphaResult:
    """Krippendorff's alpha from the items x values counts (one row per item, in order).

    The values are the distinct labels in sorted order, as the raters x items table
    encoded them, so the coincidences, the result and its bootstrap are the same.
    """
    values = sorted({v for i in items for v in by_item[i].values()})
    index = {v: j for j, v in enumerate(values)}
    k = len(values)
    sizes = [len(by_item[i]) for i in items]
    rows = np.repeat(np.arange(len(items), dtype=np.int64), sizes)
    codes = np.fromiter((index[v] for i in items for v in by_item[i].values()),
                        dtype=np.int64, count=rows.size)
    counts = np.bincount(rows * k + codes, minlength=len(items) * k).reshape(len(items), k)
    return stats.krippendorff_alpha(value_counts=counts.astype(np.float64), level=level,
                                     value_domain=values)


def _counted(block: list[IntArray]) -> tuple[IntArray, IntArray]:
    """Distinct pair codes of a block and how often each occurs (sorted in place: the
    block's pairs are held once more, not four times as ``np.unique``'s inverse would)."""
    codes = np.concatenate(block)
    block.clear()
    codes.sort()
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    counts = np.diff(np.append(starts, codes.size))
    return codes[starts], counts.astype(np.int64)


def _merge(keys: IntArray, counts: IntArray, block: list[IntArray]) -> tuple[IntArray, IntArray]:
    """Distinct pair codes and how many items each shares, with one more block added."""
    new, new_counts = _counted(block)
    if not keys.size:
        return new, new_counts
    merged, inverse = np.unique(np.concatenate([keys, new]), return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=np.concatenate([counts, new_counts]),
                        minlength=merged.size)
    return merged, total.astype(np.int64)


def _overlaps(per_item: Sequence[Sequence[int]], n_raters: int) -> tuple[IntArray, IntArray]:
    """Every rater pair ``a < b`` (as ``a * n_raters + b``) that shares an item, and how many.

    ``per_item`` is each item's raters, ascending. Rows are sorted by item, then rater;
    the d-th pass pairs each row with the row d further on in its item, over the rows
    whose item has more than d left: the work is the number of (pair, shared item), not
    raters squared.
    """
    sizes = np.asarray([len(raters) for raters in per_item], dtype=np.int64)
    rater = np.fromiter((j for raters in per_item for j in raters), dtype=np.int64,
                        count=int(sizes.sum()))
    starts = np.cumsum(sizes) - sizes
    left = np.repeat(starts + sizes, sizes) - np.arange(rater.size)  # rows to the item's end
    keys = np.zeros(0, dtype=np.int64)
    counts = np.zeros(0, dtype=np.int64)
    block: list[IntArray] = []
    held = 0
    active = np.flatnonzero(left > 1)
    d = 1
    while active.size:
        block.append(rater[active] * n_raters + rater[active + d])
        held += active.size
        if held >= PAIR_BLOCK:
            keys, counts = _merge(keys, counts, block)
            held = 0
        d += 1
        active = active[left[active] > d]
    if block:
        keys, counts = _merge(keys, counts, block)
    return keys, counts


def rater_pairs(
    by_item: Mapping[str, Mapping[str, Any]],
    items: Sequence[str],
    raters: Sequence[str],
    min_overlap: int,
) -> tuple[list[tuple[str, str, list[str]]], int]:
    """Rater pairs sharing ``min_overlap`` or more items, each with those items (in item
    order), in the order of ``itertools.combinations(raters, 2)``; and how many pairs
    share fewer. ``raters`` is sorted."""
    index = {r: j for j, r in enumerate(raters)}
    n = len(raters)
    total = n * (n - 1) // 2
    rated: dict[int, list[int]] = {}
    for position, item in enumerate(items):
        for rater in by_item[item]:
            rated.setdefault(index[rater], []).append(position)
    if min_overlap <= 0:  # every pair counts, also those sharing nothing
        keep = np.arange(total, dtype=np.int64)
        first, second = np.triu_indices(n, 1)
        keys = first.astype(np.int64) * n + second
    else:
        # a rater with fewer items than min_overlap is in no pair kept: a crowd's
        # annotators with a few labels each drop out before any pair is formed
        eligible = {j for j, positions in rated.items() if len(positions) >= min_overlap}
        per_item = [sorted(j for j in (index[r] for r in by_item[i]) if j in eligible)
                    for i in items]
        keys, counts = _overlaps(per_item, n)
        keep = np.flatnonzero(counts >= min_overlap)
    out = []
    for key in keys[keep].tolist():
        a, b = divmod(key, n)
        shared = np.intersect1d(rated[a], rated[b], assume_unique=True)
        out.append((raters[a], raters[b], [items[p] for p in shared.tolist()]))
    return out, total - len(out)


def parity_crowd(
    by_item: Mapping[str, Mapping[str, Any]],
    shared: Sequence[str],
    judge: str,
    others: Sequence[str],
    scoring: str = "accuracy",
) -> CrowdLabels:
    """The judge's label and the other raters' labels on the ``shared`` items, as rows.

    Every other rater is named (one with no label on these items is the alt-test's
    skipped annotator, as in the table) and each item's labels go in name order.
    """
    judge_labels = [by_item[i][judge] for i in shared]
    labels = [{r: v for r, v in sorted(by_item[i].items()) if r != judge} for i in shared]
    return CrowdLabels.from_items(judge_labels, labels, scoring, names=others)


__all__ = ["alpha_of", "parity_crowd", "rater_pairs"]
