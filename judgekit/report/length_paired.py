"""Length bias from the stored verdicts: judge-vs-length beside human-vs-length.

The live ``probe length`` pads responses and calls the judge again. Every report
can also read a length effect from what it already has: the judge's scores and
the human reference on the paired items, against each response's length (for a
pair, len(A) - len(B)). A judge whose scores rise with length *more than
people's do* is rewarding length; a correlation people share is the content.

Figures (probe entry ``length_from_verdicts``):

- ``length_correlation`` / ``human_length_correlation``: Spearman of the judge's
  (people's) score against length, on the same items;
- ``length_slope``: the judge's score change per doubling of length, with
  fixed effects by prompt (answers to one prompt compared with each other);
- ``length_slope_human_adjusted``: the same beyond the human score (the human
  reference as a covariate): the part of the length effect people do not share.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from judgekit import stats
from judgekit.report.levels import paired_numbers
from judgekit.report.model import ProbeEntry, Stat
from judgekit.report.pairing import AnyItem, ItemKey, Pairing, cluster_ids
from judgekit.report.stat_intervals import IntervalSpec, to_stat
from judgekit.stats.bias import length_slope
from judgekit.types import Scale

PROBE = "length_from_verdicts"
#: Items needed (with a length and both scores) for the probe to be shown.
MIN_ITEMS = 10


def _length(item: AnyItem | None) -> float | None:
    """Characters of the item's response (the report reads it with the item's facts)."""
    if item is None:
        return None
    found = getattr(item, "response_length", None)
    if found is not None:
        return float(found)
    response = getattr(item, "response", None)
    return None if response is None else float(len(response))


def length_entry(
    pairing: Pairing, items: Mapping[ItemKey, AnyItem], scale: Scale, spec: IntervalSpec
) -> tuple[ProbeEntry | None, str | None]:
    """The probe entry, or None with the reason it is not computed."""
    numbers = paired_numbers(pairing, scale)
    if numbers is None:
        return None, f"needs an ordinal or binary scale (this scale is {scale.kind})"
    jv, hv = numbers
    lengths = np.asarray([_length(items.get(k)) for k in pairing.keys], dtype=float)
    keep = np.isfinite(lengths) & (lengths > 0)
    if int(keep.sum()) < MIN_ITEMS:
        return None, (f"only {int(keep.sum())} compared items have a response length; "
                      f"at least {MIN_ITEMS} are needed")
    jv, hv, lengths = jv[keep], hv[keep], lengths[keep]
    keys = [k for k, kept in zip(pairing.keys, keep, strict=True) if kept]
    sub = spec.subset(keep)
    groups = cluster_ids(keys, items, "prompt")

    def slope(human: np.ndarray | None) -> Stat:
        return to_stat(length_slope(jv, lengths, groups=groups, human=human,
                                    n_resamples=spec.n_resamples,
                                    confidence_level=spec.confidence_level,
                                    random_state=spec.random_state), sub)

    figures: dict[str, Stat] = {
        "length_correlation": to_stat(stats.spearman(jv, lengths), sub),
        "human_length_correlation": to_stat(stats.spearman(hv, lengths), sub),
        "length_slope": slope(None),
        "length_slope_human_adjusted": slope(hv),
    }
    details = {
        "measure": "characters of the response (pairs: len(A) - len(B))",
        "note": "judge and human scores against response length on the compared items; a "
                "judge slope beyond the human score rewards length people do not",
    }
    return ProbeEntry(PROBE, "", figures, details), None


__all__ = ["PROBE", "length_entry"]
