"""What judge-vs-human figures compare: the human reference choice and the judge's score.

Two kinds of figure compare a judge with people. Figures that need a *level*
(kappa, exact agreement, the confusion matrix) compare the judge's label with one
label per item. Figures that compare *numbers* (correlations, mean bias, PPI++
means, the scale and length probes) can use more than a level on each side:

- **The human reference** (``--reference``): ``majority`` (the most frequent label;
  items whose annotators tie are left out), ``median`` (the lower median level, the
  ordinal default), or ``mean`` (the mean of the annotators' numeric values, as
  SummEval and G-Eval correlate with "the mean of the experts"; ordinal only). With
  ``mean`` the level figures use the lower median level, and every output says so.
- **The judge's score**: the ``score`` stored with a verdict when it is finite and
  differs from the label's value (an imported 3.5 beside label 4, G-Eval's
  probability-weighted score, or the logprob-weighted expected score of a live
  judge with ``--logprobs``); otherwise the label's value.

The defaults reproduce the figures judgekit gave before the choice existed: the
ordinal reference is the lower median level, the nominal one the majority label.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from judgekit.errors import InputError
from judgekit.types import Scale

#: The ``--reference`` choices, in the order ``--help`` lists them.
REFERENCES = ("majority", "median", "mean")


def default_reference(scale: Scale) -> str:
    """The reference a scale gets when none is asked for: lower median (ordinal), else majority."""
    return "median" if scale.kind == "ordinal" else "majority"


def check_reference(reference: str | None, scale: Scale) -> str:
    """``reference`` (or the scale's default) after checking the scale allows it.

    ``median`` and ``mean`` need numbers, so they are input errors on a binary,
    categorical or pairwise scale, never a silent fallback to the majority.
    """
    if reference is None:
        return default_reference(scale)
    if reference not in REFERENCES:
        raise InputError(
            f"--reference must be one of {', '.join(REFERENCES)}, got {reference!r}"
        )
    if reference != "majority" and scale.kind != "ordinal":
        raise InputError(
            f"--reference {reference} needs an ordinal scale (this rubric's is {scale.kind}); "
            "use --reference majority"
        )
    return reference


def level_values(scale: Scale) -> dict[str, float]:
    """Each label's number: its level value, else its position on the scale (binary: pass=1)."""
    if scale.kind == "binary":
        return {label: 1.0 if label == "pass" else 0.0 for label in scale.labels}
    return {
        level.label: float(level.value) if level.value is not None else float(i)
        for i, level in enumerate(scale.levels)
    }


def majority_level(values: Sequence[str]) -> str | None:
    """The most frequent label; None when the two most frequent tie."""
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def reference_level(by_annotator: Mapping[str, str], scale: Scale, reference: str) -> str | None:
    """The item's reference *level* (what kappa and the confusion matrix compare).

    ``majority``: the most frequent label (None on a tie); ``median`` and ``mean``:
    the lower median level (an ordinal scale has one for every item).
    """
    values = list(by_annotator.values())
    if len(values) == 1:
        return values[0]
    if reference == "majority" or scale.kind != "ordinal":
        return majority_level(values)
    order = {label: i for i, label in enumerate(scale.labels)}
    ranked = sorted(values, key=order.__getitem__)
    return ranked[(len(ranked) - 1) // 2]


def reference_number(
    by_annotator: Mapping[str, str], level: str, reference: str, numbers: Mapping[str, float]
) -> float:
    """The item's reference *number* (what correlations and means compare).

    ``mean``: the mean of the annotators' values; otherwise the value of ``level``.
    """
    if reference == "mean":
        values = [numbers[label] for label in by_annotator.values()]
        return math.fsum(values) / len(values)
    return numbers[level]


def judge_numbers(numbers: Mapping[str, float]) -> Callable[[str, float | None], float]:
    """:func:`judge_number` for one scale, its range worked out once (100,000 verdicts)."""
    low, high = min(numbers.values()), max(numbers.values())

    def number(label: str, score: float | None) -> float:
        if score is not None and low <= score <= high:  # NaN fails both comparisons
            return float(score)
        return numbers[label]

    return number


def judge_number(label: str, score: float | None, numbers: Mapping[str, float]) -> float:
    """The judge's number for one verdict: its own ``score``, else its label's value.

    A score that is not finite, or lies outside the scale's values (a 0-1 score beside
    1-5 labels is on another scale), is not the judge's number on this scale: the
    label's value is used and :func:`score_outside` lets the report count it.
    """
    if score is not None and not score_outside(score, numbers):
        return float(score)
    return numbers[label]


def score_outside(score: float | None, numbers: Mapping[str, float]) -> bool:
    """Whether a stored score cannot be read on the scale (not finite, or out of range)."""
    if score is None:
        return False
    if not math.isfinite(score):
        return True
    return not min(numbers.values()) <= score <= max(numbers.values())


def reference_sentence(
    reference: str, scale: Scale, annotator: str | None, max_annotators: int
) -> str:
    """How the human reference per item was formed, for every output format."""
    if annotator is not None:
        return f"labels of annotator {annotator!r} (--annotator)"
    if max_annotators <= 1:
        return "the single human label per item"
    if reference == "mean":
        return (
            "the mean of the annotators' values per item (--reference mean); kappa, exact "
            "agreement and the confusion matrix use the lower median level"
        )
    if reference == "median":
        return "the lower median of the annotators' labels per item"
    return "the majority label per item (items whose annotators tie are left out)"


def level_sentence(reference: str, annotator: str | None, max_annotators: int) -> str:
    """The reference of figures that compare levels only (kappa, agreement: ``compare``)."""
    if annotator is not None:
        return f"labels of annotator {annotator!r} (--annotator)"
    if max_annotators <= 1:
        return "the single human label per item"
    if reference == "majority":
        return "the majority label per item (--reference majority; ties left out)"
    rule = "the lower median of the annotators' labels per item"
    if reference == "mean":
        return f"{rule} (--reference mean: kappa and agreement need a level)"
    return f"{rule} (--reference median)"


def score_sentence(n_scored: int, n_items: int) -> str | None:
    """What the judge's side of the numeric figures is, when its scores are not its labels."""
    if not n_scored:
        return None
    return (
        f"the judge's own score (not its label's value) on {n_scored} of {n_items} items in "
        "correlations, mean bias, estimates and scale probes; its label in kappa and the "
        "confusion matrix"
    )


def estimate_reference(reference: str, numeric: bool) -> str:
    """What each labeled item's human value is in the estimate, and the judge's."""
    if not numeric:
        return "the majority label per item (--reference majority)"
    human = {
        "mean": "the mean of the annotators' values (--reference mean)",
        "median": "the lower median of the annotators' labels (--reference median)",
        "majority": "the majority label (--reference majority)",
    }[reference]
    text = f"mean score: human value {human}, judge value its own score where it has one"
    if reference == "mean":
        text += "; shares at or above a level: the lower median level"
    return text


def values_sentence(reference: str, annotator: str | None, n_scored: int) -> str:
    """The two numbers the correlations compare, in a few words."""
    if annotator is not None:
        human = f"annotator {annotator!r}'s value"
    else:
        human = {
            "mean": "the mean of the annotators' values",
            "median": "the lower median level's value",
            "majority": "the majority label's value",
        }[reference]
    judge = "the judge's own score where it has one" if n_scored else "the judge's label value"
    return f"{judge} against {human}"


__all__ = [
    "REFERENCES",
    "check_reference",
    "default_reference",
    "estimate_reference",
    "judge_number",
    "judge_numbers",
    "level_sentence",
    "level_values",
    "majority_level",
    "reference_level",
    "reference_number",
    "reference_sentence",
    "score_outside",
    "score_sentence",
    "values_sentence",
]
