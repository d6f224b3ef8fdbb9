"""Probes the report computes itself from the paired items: scale use and confidence.

Neither needs a call to the judge: both compare the judge's stored verdicts with
the human reference on the same items, so they are always as fresh as the labels.
They join the bias section as probe entries (``scale_use``,
``confidence_calibration``), with ``{statistic, ci_low, ci_high, n}`` for each
figure in every format, and paired (cluster) bootstrap intervals that resample
items together with their human label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from judgekit.report.agreement import IntervalSpec, bootstrap_stat, numeric_values
from judgekit.report.model import Bias, ProbeEntry, Stat, undefined
from judgekit.report.pairing import ItemKey, Pairing
from judgekit.stats._bias_scale import (
    brier_score,
    expected_calibration_error,
    extreme_share,
    normalized_entropy,
    reliability_bins,
    variance_ratio,
)
from judgekit.types import Judgment, Scale

#: Confidence calibration is shown once at least this many paired items carry a confidence.
MIN_CONFIDENCES = 10


def scale_use_entry(pairing: Pairing, scale: Scale, spec: IntervalSpec) -> ProbeEntry | None:
    """Entropy, end-of-scale share and variance ratio, judge against humans (ordinal scales)."""
    if scale.kind != "ordinal" or len(scale.levels) < 3 or not pairing.keys:
        return None
    labels = list(scale.labels)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    j_codes = np.array([index[x] for x in pairing.judge])
    h_codes = np.array([index[x] for x in pairing.human])
    j_vals = numeric_values(scale, pairing.judge)
    h_vals = numeric_values(scale, pairing.human)
    ends = numeric_values(scale, [labels[0], labels[-1]])
    low, high = float(ends[0]), float(ends[1])

    def entropy_gap(j: np.ndarray, h: np.ndarray) -> np.ndarray:
        return normalized_entropy(j, k) - normalized_entropy(h, k)

    def ends_gap(j: np.ndarray, h: np.ndarray) -> np.ndarray:
        return extreme_share(j, low, high) - extreme_share(h, low, high)

    stats: dict[str, Stat] = {
        "judge_entropy": bootstrap_stat(lambda j: normalized_entropy(j, k), [j_codes], spec),
        "human_entropy": bootstrap_stat(lambda h: normalized_entropy(h, k), [h_codes], spec),
        "entropy_difference": bootstrap_stat(entropy_gap, [j_codes, h_codes], spec),
        "judge_extreme_share": bootstrap_stat(lambda j: extreme_share(j, low, high), [j_vals],
                                              spec),
        "human_extreme_share": bootstrap_stat(lambda h: extreme_share(h, low, high), [h_vals],
                                              spec),
        "extreme_share_difference": bootstrap_stat(ends_gap, [j_vals, h_vals], spec),
    }
    if float(np.var(h_vals)) > 0:
        stats["variance_ratio"] = bootstrap_stat(variance_ratio, [j_vals, h_vals], spec)
    else:
        stats["variance_ratio"] = undefined("the human labels use one level only",
                                            len(pairing.keys))
    details: dict[str, Any] = {}
    unused = [labels[0], labels[-1]]
    unused = [end for end in unused if end not in pairing.judge and end in pairing.human]
    if unused:
        details["judge_never_uses"] = unused
        details["note"] = (
            f"the judge never used {' or '.join(unused)}, which people gave on "
            f"{sum(h in unused for h in pairing.human)} of {len(pairing.keys)} items"
        )
    return ProbeEntry("scale_use", "", stats, details)


def calibration_entry(pairing: Pairing, judgments: Mapping[ItemKey, Judgment],
                      spec: IntervalSpec) -> ProbeEntry | None:
    """ECE and Brier score of the judge's stated confidence against agreeing with people."""
    keep = [i for i, key in enumerate(pairing.keys)
            if (j := judgments.get(key)) is not None and j.confidence is not None]
    if len(keep) < MIN_CONFIDENCES:
        return None
    conf = np.array([judgments[pairing.keys[i]].confidence for i in keep], dtype=float)
    hit = np.array([pairing.judge[i] == pairing.human[i] for i in keep], dtype=float)
    sub = spec.subset(np.isin(np.arange(len(pairing.keys)), keep))
    stats = {
        "expected_calibration_error": bootstrap_stat(expected_calibration_error, [conf, hit],
                                                     sub),
        "brier_score": bootstrap_stat(brier_score, [conf, hit], sub),
        "mean_confidence": bootstrap_stat(lambda c: c.mean(axis=-1), [conf], sub),
        "accuracy": bootstrap_stat(lambda h: h.mean(axis=-1), [hit], sub),
    }
    details = {
        "reliability": reliability_bins(conf, hit),
        "n_without_confidence": len(pairing.keys) - len(keep),
    }
    return ProbeEntry("confidence_calibration", "", stats, details)




def with_paired_probes(bias: Bias, pairing: Pairing, judgments: Mapping[ItemKey, Judgment],
                       scale: Scale, spec: IntervalSpec) -> Bias:
    """The bias section with the scale-use and calibration entries added where they apply."""
    extra = [scale_use_entry(pairing, scale, spec), calibration_entry(pairing, judgments, spec)]
    return replace(bias, probes=bias.probes + tuple(e for e in extra if e is not None))


__all__ = ["MIN_CONFIDENCES", "calibration_entry", "scale_use_entry", "with_paired_probes"]
