"""Effect sizes for a judge's biases, computed from plain arrays.

A judge is measuring something other than quality when its verdict moves with
the order the answers are shown in (position bias), with length that adds no
content (length bias), or simply from one call to the next (instability). The
probes in :mod:`judgekit.judging.probes` produce the arrays; everything here is pure so
the same figures can be computed for verdicts made elsewhere.

Conventions: pairwise verdicts are ``"A"``, ``"B"`` or ``"tie"`` in the item's
*original* orientation (a verdict given on the swapped presentation is mapped
back first, as the runner stores it); ``None`` or NaN marks a failed judgment,
which is excluded and counted, never scored. Definitions follow Zheng et al.
2023 (consistency, first/second slot), Wang et al. 2023 (conflict rate, BPDE),
Shi et al. 2024 (position fairness, repetition stability) and Dubois et al.
2024 (P(prefer longer) over pairs whose lengths differ by more than 30 chars;
the length-controlled idea behind the fixed-effects length slope).
"""

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgekit.stats._bias_common import (
    NAN,
    PAIRWISE_VERDICTS,
    Estimate,
    Reportable,
    check_verdicts,
    labels_of,
    mean_estimate,
    obj_array,
    paired_shift,
    proportion,
)
from judgekit.stats._bias_injection import (
    IdenticalPairsResult,
    InjectionEffectResult,
    PooledInjection,
    exact_proportion,
    identical_pairs,
    injection_effect,
    pooled_injection_effect,
    worst_flip_rate,
    worst_net_move,
)
from judgekit.stats._bias_length import (
    LengthEffectResult,
    PaddingEffectResult,
    PreferLongerResult,
    length_effect,
    padding_effect,
    prefer_longer_rate,
    subsample_points,
)
from judgekit.stats._bias_repetition import RepetitionResult, repetition_stability
from judgekit.stats._bias_slope import LengthSlopeResult, length_slope
from judgekit.stats._validate import FloatArray, as_1d, check_same_length, missing_mask
from judgekit.stats.significance import binomial_test
from judgekit.types import Scale

__all__ = [
    "PAIRWISE_VERDICTS",
    "Estimate",
    "IdenticalPairsResult",
    "InjectionEffectResult",
    "LengthEffectResult",
    "LengthSlopeResult",
    "PaddingEffectResult",
    "PooledInjection",
    "PositionBiasResult",
    "PreferLongerResult",
    "RepetitionResult",
    "Reportable",
    "bpde",
    "human_length_correlation",
    "human_scores",
    "identical_pairs",
    "injection_effect",
    "length_effect",
    "length_slope",
    "level_order_bias",
    "padding_effect",
    "pooled_injection_effect",
    "position_bias",
    "prefer_longer_rate",
    "repetition_stability",
    "subsample_points",
    "verdict_score",
    "worst_flip_rate",
    "worst_net_move",
]

_PRIMACY = {("A", "B"), ("A", "tie"), ("tie", "B")}
_RECENCY = {("B", "A"), ("B", "tie"), ("tie", "A")}


@dataclass(frozen=True)
class PositionBiasResult:
    """Swap-probe summary; ``statistic`` is the position consistency.

    ``codes`` has one entry per input item: 0 consistent, -1 primacy, +1 recency, NaN failed.
    """

    n: int
    n_failed: int
    consistent: int
    primacy: int
    recency: int
    pair_counts: dict[str, int]
    codes: FloatArray = field(compare=False, repr=False)
    entropies: FloatArray = field(compare=False, repr=False)
    shift: Estimate | None = None

    @property
    def statistic(self) -> float:
        return self.consistent / self.n if self.n else NAN

    @property
    def consistency(self) -> Estimate:
        return proportion(self.consistent, self.n, what="valid pairs")

    @property
    def conflict_rate(self) -> Estimate:
        """1 - consistency, with the Clopper-Pearson interval: the position gate reads its
        lower bound, which Wilson's puts above a true rate at the threshold too often."""
        return exact_proportion(self.n - self.consistent, self.n, what="valid pairs")

    @property
    def first_slot_test(self) -> Any:
        """Exact two-sided binomial test of primacy vs recency among inconsistent pairs."""
        k, m = self.primacy, self.primacy + self.recency
        return binomial_test(k, m, 0.5) if m else None

    @property
    def pvalue(self) -> float:
        test = self.first_slot_test
        return NAN if test is None else float(test.pvalue)

    @property
    def first_slot_rate(self) -> Estimate:
        return proportion(self.primacy, self.n, pvalue=self.pvalue, what="valid pairs")

    @property
    def second_slot_rate(self) -> Estimate:
        return proportion(self.recency, self.n, pvalue=self.pvalue, what="valid pairs")

    @property
    def position_fairness(self) -> Estimate:
        """Shi et al. PF = (recency - primacy) / n: -1 always first slot, +1 always last, 0 fair.

        Their raw score rc*rc/(rc+pc) - pc*pc/(rc+pc) equals rc - pc; min-max
        scaling over [-n, n] then divides by n, i.e. PF is the mean of the
        per-item codes, whose interval is bootstrapped over items.
        """
        return mean_estimate(self.codes[~np.isnan(self.codes)], what="valid pairs")

    @property
    def bpde(self) -> Estimate:
        return mean_estimate(self.entropies, what="valid pairs")

    def inconsistent_indices(self) -> list[int]:
        """Input positions whose verdict changed with the order (candidates for human labels)."""
        return [int(i) for i in np.flatnonzero(np.nan_to_num(self.codes) != 0)]

    def is_biased(self, alpha: float = 0.05) -> bool:
        """True when the binomial test rejects "both slots equally likely" at ``alpha``."""
        return math.isfinite(self.pvalue) and self.pvalue < alpha

    def to_dict(self, confidence_level: float = 0.95) -> dict[str, Any]:
        test = self.first_slot_test
        if test is None:
            test_dict: dict[str, Any] = {
                "k": 0,
                "n": 0,
                "statistic": None,
                "ci_low": None,
                "ci_high": None,
                "pvalue": None,
                "reason": "no inconsistent pairs",
            }
        else:
            test_dict = {"k": self.primacy, **test.to_dict(confidence_level, method="exact")}
        out: dict[str, Any] = {
            "position_consistency": self.consistency.to_dict(confidence_level),
            "conflict_rate": self.conflict_rate.to_dict(confidence_level),
            "first_slot_rate": self.first_slot_rate.to_dict(confidence_level),
            "second_slot_rate": self.second_slot_rate.to_dict(confidence_level),
            "position_fairness": self.position_fairness.to_dict(confidence_level),
            "bpde": self.bpde.to_dict(confidence_level),
            "first_slot_test": test_dict,
            "slot_counts": {
                "consistent": self.consistent,
                "first": self.primacy,
                "second": self.recency,
            },
            "pair_counts": dict(self.pair_counts),
            "n_failed": self.n_failed,
        }
        if self.shift is not None:
            out["level_order_shift"] = self.shift.to_dict(confidence_level)
        return out


def bpde(verdicts: Sequence[Sequence[Any]]) -> FloatArray:
    """Wang et al. BPDE per item: entropy (natural log) of its verdicts over both orders.

    ``verdicts`` is items x 2k (k samples in each order, original orientation);
    missing verdicts are ignored. An item with no verdict gets NaN.
    """
    rows = np.asarray(verdicts, dtype=object).tolist()
    out = np.full(len(rows), NAN)
    # a probe has few distinct verdict rows (9 for one pairwise sample): each one's entropy
    # is computed once, by the same arithmetic, so 100k items cost a dictionary lookup each
    seen: dict[tuple[Any, ...], float] = {}
    for i, row in enumerate(rows):
        key = tuple(row)
        value = seen.get(key)
        if value is None:
            value = seen[key] = _entropy(row)
        out[i] = value
    return out


def _entropy(row: Sequence[Any]) -> float:
    """Entropy (natural log) of one item's present verdicts; NaN when none is present."""
    present = [v for v in row if not (v is None or (isinstance(v, float) and math.isnan(v)))]
    if not present:
        return NAN
    p = np.array(list(Counter(present).values()), dtype=np.float64) / len(present)
    return float(-(p * np.log(p)).sum()) + 0.0


def _summarise(
    pairs: list[tuple[Any, Any]], kinds: list[int | None], shift: Estimate | None = None
) -> PositionBiasResult:
    codes = np.array([NAN if k is None else float(k) for k in kinds])
    valid = ~np.isnan(codes)
    counts = Counter(f"{a}/{b}" for (a, b), ok in zip(pairs, valid.tolist(), strict=True) if ok)
    used = [p for p, ok in zip(pairs, valid.tolist(), strict=True) if ok]
    return PositionBiasResult(
        n=int(valid.sum()),
        n_failed=int((~valid).sum()),
        consistent=int((codes[valid] == 0).sum()),
        primacy=int((codes[valid] == -1).sum()),
        recency=int((codes[valid] == 1).sum()),
        pair_counts=dict(sorted(counts.items())),
        codes=codes,
        entropies=bpde(used) if used else np.array([], dtype=np.float64),
        shift=shift,
    )


def position_bias(original: Iterable[Any], swapped: Iterable[Any]) -> PositionBiasResult:
    """Position consistency, first/second-slot shares and fairness from a swap probe.

    ``original[i]`` is the verdict on pair i as written; ``swapped[i]`` the
    verdict with the answers exchanged, **already mapped back** to the original
    orientation (so a consistent judge gives equal values). Primacy (the judge
    picked whatever was shown first both times) is A/B, A/tie, tie/B; recency
    is B/A, B/tie, tie/A. A pair with a failed verdict on either side is
    excluded from every figure and counted in ``n_failed``.
    """
    orig, _ = labels_of(original, "original")
    swap, _ = labels_of(swapped, "swapped")
    check_same_length(("original", obj_array(orig)), ("swapped", obj_array(swap)))
    check_verdicts(orig, "original", PAIRWISE_VERDICTS)
    check_verdicts(swap, "swapped", PAIRWISE_VERDICTS)
    kinds: list[int | None] = []
    for pair in zip(orig, swap, strict=True):
        if pair[0] is None or pair[1] is None:
            kinds.append(None)
        else:
            kinds.append(0 if pair[0] == pair[1] else -1 if pair in _PRIMACY else 1)
    return _summarise(list(zip(orig, swap, strict=True)), kinds)


def level_order_bias(original: Iterable[Any], reversed_: Iterable[Any]) -> PositionBiasResult:
    """The pointwise analogue of the swap: rubric levels listed as written, then reversed.

    Values are level indices in rubric order (0 = the level listed first as
    written), None for a failed judgment. Primacy = the verdict moved toward
    the level listed first in each presentation (reversed index > original
    index), recency = toward the one listed last. ``shift`` is the mean
    change reversed - original in level steps, with a paired bootstrap CI.
    """
    orig = as_1d(original, "original")
    rev = as_1d(reversed_, "reversed_")
    check_same_length(("original", orig), ("reversed_", rev))
    o = _as_index(orig, "original")
    r = _as_index(rev, "reversed_")
    kinds: list[int | None] = []
    for a, b in zip(o.tolist(), r.tolist(), strict=True):
        if math.isnan(a) or math.isnan(b):
            kinds.append(None)
        else:
            kinds.append(0 if a == b else -1 if b > a else 1)
    pairs = [(_fmt(a), _fmt(b)) for a, b in zip(o.tolist(), r.tolist(), strict=True)]
    valid = ~(np.isnan(o) | np.isnan(r))
    shift = paired_shift(r, o) if valid.any() else Estimate(NAN, 0, None, "no valid pairs")
    return _summarise(pairs, kinds, shift)


def _fmt(value: float) -> str | None:
    return None if math.isnan(value) else str(int(value))


def _as_index(arr: np.ndarray, name: str) -> FloatArray:
    missing = missing_mask(arr)
    out = np.full(arr.shape, NAN)
    for i, (v, m) in enumerate(zip(arr.tolist(), missing.tolist(), strict=True)):
        if m:
            continue
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float | np.integer | np.floating)
            or not math.isfinite(float(v))
            or not float(v).is_integer()
            or v < 0
        ):
            raise ValueError(f"{name} must hold level indices (integers >= 0) or None; got {v!r}")
        out[i] = float(v)
    return out


def human_length_correlation(
    scores: Mapping[str, float],
    lengths: Mapping[str, float],
    *,
    max_points: int = 2000,
    groups: Mapping[str, str] | None = None,
    cluster_by: str = "prompt",
) -> dict[str, Any]:
    """The human side of the length probe: Spearman of human score against length.

    ``scores`` is one human score per item id (the mean over annotators),
    ``lengths`` the length of every probed item, in the probe's item order. Items
    in both are used, in ``lengths`` order. Returns the ``human_length_correlation``
    estimate and the ``human_points`` scatter as a length probe stores them; with
    fewer than two labelled items the correlation is undefined with a reason.
    ``groups`` (item id -> its prompt; an item not in it is its own) adds the p-value
    by prompt when labelled items share one (:func:`length_effect`).
    """
    labelled = [(x, scores[item_id]) for item_id, x in lengths.items() if item_id in scores]
    if len(labelled) < 2:
        return {
            "human_length_correlation": Estimate(
                NAN, len(labelled), None, "fewer than two labelled items"
            ).to_dict(),
            "human_points": [],
        }
    ids = [item_id for item_id in lengths if item_id in scores]
    effect = length_effect(
        [s for _, s in labelled], [x for x, _ in labelled], max_points=max_points,
        groups=None if groups is None else [groups.get(i, f"\x00item {i}") for i in ids],
        cluster_by=cluster_by,
    )
    return {
        "human_length_correlation": effect.to_dict()["length_correlation"],
        "human_points": effect.points,
    }


def verdict_score(scale: Scale, label: str | None) -> float | None:
    """A number per verdict, as the length probe uses it.

    Pairwise: the preference for A (1, 0.5 for a tie, 0); categorical: the level's
    index; binary and ordinal: the level's score. None for a missing label.
    """
    if label is None:
        return None
    if scale.kind == "pairwise":
        return {"A": 1.0, "tie": 0.5, "B": 0.0}.get(label)
    if scale.kind == "categorical":
        return float(scale.labels.index(label)) if label in scale.labels else None
    return scale.score_of(label)


def human_scores(scale: Scale, labels: Iterable[tuple[str, str | None]]) -> dict[str, float]:
    """Mean :func:`verdict_score` per item over ``(item_id, label)`` pairs (one per annotator)."""
    per_item: dict[str, list[float]] = {}
    for item_id, label in labels:
        value = verdict_score(scale, label)
        if value is not None:
            per_item.setdefault(item_id, []).append(value)
    return {item_id: sum(v) / len(v) for item_id, v in per_item.items()}
