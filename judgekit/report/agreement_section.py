"""The judge-vs-human section: its figures, its interval method and the notes it needs.

:mod:`judgekit.report.agreement` computes statistics from aligned label lists;
this module assembles them into the report's :class:`Agreement` and says, in
notes, which labeled items were left out of the comparison and why, so the
reader knows what the figures describe.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from judgekit.errors import InputError
from judgekit.report.agreement import confusion_of, judge_vs_human, mean_difference, numeric_values
from judgekit.report.measures import score_sentence
from judgekit.report.model import Agreement
from judgekit.report.pairing import ItemKey, Pairing, reference_rule
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.types import Scale

#: Human labels of each compared item, by annotator.
References = dict[ItemKey, dict[str, str]]


def interval_method(n_resamples: int, cluster_by: str | None, spec: IntervalSpec) -> str:
    """How the intervals were computed, in words for the report."""
    if cluster_by is None or spec.clusters is None:
        return (
            f"{n_resamples}-resample percentile bootstrap (BCa for weighted kappa); "
            "Wilson for proportions and AC1"
        )
    k = len(set(spec.clusters.tolist()))
    return (
        f"{n_resamples}-resample cluster bootstrap by {cluster_by} ({k} clusters; BCa for "
        "weighted kappa)"
    )


def agreement_section(
    pairing: Pairing,
    references: References,
    scale: Scale,
    spec: IntervalSpec,
    primary: str,
    *,
    annotator: str | None,
    n_resamples: int,
    cluster_by: str | None,
) -> Agreement:
    """Judge vs human on the paired items (``pairing.keys`` must not be empty).

    Raises :class:`InputError` when ``primary`` is not computed for the scale, so a
    misspelt ``--primary`` is never a silent switch to another statistic.
    """
    numbers = (
        (pairing.judge_values, pairing.human_values)
        if scale.kind == "ordinal" and pairing.judge_values
        else None
    )
    figures = judge_vs_human(pairing.judge, pairing.human, scale, spec, numbers)
    if scale.kind == "pairwise" and primary == "percent_agreement":
        # one figure under two names: percent agreement of a pairwise scale is the
        # agreement with ties (the report shows it once unless asked for by this name)
        figures["percent_agreement"] = figures["agreement_with_ties"]
    if primary not in figures:
        raise InputError(
            f"--primary {primary!r} is not computed for a {scale.kind} scale; "
            f"choose one of: {', '.join(figures)}"
        )
    agreement = Agreement(
        scale.kind,
        primary,
        figures,
        confusion_of(pairing.judge, pairing.human, scale.labels),
        len(pairing.keys),
        _reference_text(pairing, references, scale, annotator),
        interval_method(n_resamples, cluster_by, spec),
        cluster_by,
        None if spec.clusters is None else len(set(spec.clusters.tolist())),
        pairing.reference,
        pairing.n_scored,
    )
    if scale.kind == "ordinal" and "mean_bias" in figures and pairing.reference == "median":
        medians = _median_values(pairing, references, scale)
        if medians is not None:
            figures["mean_bias"] = mean_difference(
                np.asarray(pairing.judge_values, dtype=float), medians, spec
            )
    return agreement


def _reference_text(
    pairing: Pairing, references: References, scale: Scale, annotator: str | None
) -> str:
    """The reference sentence, and what the judge's side of the numeric figures is."""
    text = reference_rule(
        annotator, max(map(len, references.values())), scale, pairing.reference
    )
    scored = score_sentence(pairing.n_scored, len(pairing.keys))
    return text if scored is None else f"{text}; against {scored}"


def pairing_notes(
    pairing: Pairing, n_stale: int, references: References, scale: Scale, annotator: str | None
) -> list[str]:
    """Notes on the labeled items the comparison left out, and on a pooled reference."""
    notes: list[str] = []
    if pairing.no_judgment > n_stale:
        notes.append(
            f"{pairing.no_judgment - n_stale} labeled item(s) have no judgment in this selection."
        )
    if n_stale:
        notes.append(
            f"{n_stale} judgment(s) are of an older version of their item (its content changed "
            "after it was judged, e.g. by import --replace) and were left out of agreement; "
            "re-run judge."
        )
    if pairing.no_majority:
        notes.append(
            f"{pairing.no_majority} item(s) were left out: their annotators tie. Ties mark "
            "items humans find hard, so judge-human agreement on the rest is likely higher "
            "than on all items."
        )
    notes.extend(_reference_notes(pairing, references, scale, annotator))
    if pairing.n_score_outside:
        notes.append(
            f"{pairing.n_score_outside} judgment(s) carry a score outside the scale's values "
            "(another scale, e.g. 0-1 beside 1-5 labels); their label's value is used instead."
        )
    return notes


def _reference_notes(
    pairing: Pairing,
    references: References,
    scale: Scale,
    annotator: str | None,
) -> list[str]:
    """What the reader must know when the reference pools several annotators."""
    if annotator is not None or not pairing.keys:
        return []
    sizes = np.fromiter(map(len, map(references.__getitem__, pairing.keys)), dtype=np.int64,
                        count=len(pairing.keys))
    pooled = int(np.count_nonzero(sizes >= 2))
    if not pooled:
        return []
    rule = {"mean": "mean", "median": "lower median"}.get(pairing.reference, "majority label")
    return [
        f"On {pooled} of {len(pairing.keys)} compared items the human reference is the {rule} "
        "of several annotators. A pooled reference is less noisy than one annotator, so the "
        "judge figures are not directly comparable with the human-human ceiling, which "
        "compares single annotators; use --annotator for a like-for-like comparison."
    ]


def _median_values(
    pairing: Pairing, references: References, scale: Scale
) -> npt.NDArray[np.float64] | None:
    """Per-item median of the annotators' numeric values, when it differs from the reference.

    With an even number of annotators split between two levels the on-scale reference is
    the lower one; the signed bias judge - human must use the true median (the midpoint),
    or it is pushed upward. None when no item is affected.
    """
    values = [
        float(np.median(numeric_values(scale, list(references[key].values()))))
        for key in pairing.keys
    ]
    reference = numeric_values(scale, pairing.human)
    medians = np.asarray(values, dtype=float)
    return None if np.allclose(medians, reference) else medians


__all__ = ["References", "agreement_section", "interval_method", "pairing_notes"]
