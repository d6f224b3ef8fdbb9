"""The self-preference probe: computed by the report from the paired items.

Like scale use and calibration it needs no call to the judge: the judge's
stored verdicts, the human reference and the items' ``model`` /
``model_a``/``model_b`` fields are enough (definitions in
:mod:`judgekit.stats._bias_self`, the family rule in :mod:`judgekit.families`).
When it cannot be computed the report says why in one line instead.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from judgekit.families import family_rule, is_known_family, model_family, response_models
from judgekit.report.agreement import numeric_values
from judgekit.report.model import ProbeEntry, Stat
from judgekit.report.pairing import AnyItem, AnyJudgment, ItemKey, Pairing
from judgekit.report.stat_intervals import IntervalSpec
from judgekit.stats._bias_self import (
    Figure,
    self_preference_pairwise,
    self_preference_pointwise,
    self_preference_stratified,
)
from judgekit.types import Scale

PROBE = "self_preference"
#: Below this many human levels holding both sides, the note says the figure rests on few.
MIN_STRATA = 3


def judge_model(pairing: Pairing, judgments: Mapping[ItemKey, AnyJudgment]) -> str | None:
    """The compared judgments' model as requested (as returned when only that one has a
    known family), the most common one if several."""
    rows = [j for j in map(judgments.get, pairing.keys) if j is not None]
    if not rows:
        return None
    requested = Counter(map(attrgetter("model_requested"), rows)).most_common(1)[0][0]
    if not is_known_family(requested):
        returned = Counter(j.model_returned for j in rows if j.model_returned).most_common(1)
        if returned and is_known_family(returned[0][0]):
            return returned[0][0]
    return requested


def response_families(
    items: Sequence[AnyItem | None], family_map: Mapping[str, str] | None = None
) -> list[tuple[str | None, ...]]:
    """The family of each response's model, item by item (``()`` for a missing item).

    A dataset names a few models over many items, and the store hands out one shared
    string per distinct ``meta`` JSON, so the models and families are worked out once
    per distinct (meta, pairwise) pair rather than parsed again for each of 100k items.
    """
    family_of = functools.lru_cache(maxsize=None)(
        functools.partial(model_family, family_map=family_map))
    seen: dict[tuple[str, bool], tuple[str | None, ...]] = {}

    def families_of(item: AnyItem) -> tuple[str | None, ...]:
        return tuple(family_of(m) if m else None for m in response_models(item))

    out: list[tuple[str | None, ...]] = []
    for item in items:
        if item is None:
            out.append(())
            continue
        meta_json = getattr(item, "meta_json", None)
        if meta_json is None:  # a full Item: its meta is a dict already
            out.append(families_of(item))
            continue
        key = (meta_json, item.is_pairwise)
        found = seen.get(key)
        if found is None:
            found = seen[key] = families_of(item)
        out.append(found)
    return out


def _stat(figure: Figure, spec: IntervalSpec) -> Stat:
    method = spec.bootstrap_name if math.isfinite(figure.ci_low) else ""
    notes = [figure.reason if math.isfinite(figure.statistic) else None, figure.p_reason]
    note = "; ".join(n for n in notes if n) or None
    return Stat(figure.statistic, figure.ci_low, figure.ci_high, figure.n, method,
                figure.reason if not math.isfinite(figure.statistic) else None,
                note, figure.pvalue)


def self_preference_entry(
    pairing: Pairing,
    items: Mapping[ItemKey, AnyItem],
    judgments: Mapping[ItemKey, AnyJudgment],
    scale: Scale,
    spec: IntervalSpec,
    judge_family: str | None = None,
    family_map: Mapping[str, str] | None = None,
) -> tuple[ProbeEntry | None, str | None]:
    """The probe entry, or None and the one-line reason it is absent.

    ``family_map`` (model name -> family, ``--family-map FILE``) overrides the name
    rule for the judge and the responses alike; the details name the rule that
    matched the judge and each model counted as its family.
    """
    if scale.kind == "categorical":
        return None, ("needs a pairwise, binary or ordinal scale "
                      "(categorical labels have no 'above')")
    if not pairing.keys:
        return None, "no item has both an ok judgment and a human reference"
    model = judge_model(pairing, judgments)
    family: str | None
    if judge_family is not None:
        family, source = judge_family.strip().lower(), "--judge-family"
    else:
        family, rule = family_rule(model or "", family_map)
        source = f"the judge's model {model!r} by {rule}"
    if not family:
        return None, "the judge's model has no name to take a family from; give --judge-family"
    present = [items.get(k) for k in pairing.keys]
    families = response_families(present, family_map)
    if not any(f for fams in families for f in fams):
        fields = "model_a and model_b" if scale.kind == "pairwise" else "model"
        return None, (f"no compared item names the model of its response (fields {fields}; "
                      "author is accepted too)")
    seen = Counter(f for fams in families for f in fams if f)
    if family not in seen:
        listed = ", ".join(name for name, _ in seen.most_common(5))
        return None, (f"no compared response is from the judge's family {family!r} "
                      f"(from {source}; families seen: {listed})")
    if scale.kind == "pairwise":
        entry = _pairwise(pairing, families, family, spec)
    else:
        entry = _pointwise(pairing, families, family, scale, spec)
    if entry is None:
        return None, (f"no pair has exactly one response from the judge's family {family!r} "
                      f"(from {source})")
    details = {**entry.details, "judge_family": family, "family_from": source,
               "families": dict(seen.most_common()),
               "own_family_models": _own_models(present, family, family_map)}
    return ProbeEntry(PROBE, "", entry.stats, details), None


def _own_models(
    items: Sequence[AnyItem | None], family: str, family_map: Mapping[str, str] | None
) -> dict[str, str]:
    """Each response model counted as the judge's family, with the rule that put it there."""
    names = {m for item in items if item is not None for m in response_models(item) if m}
    out = {}
    for name in sorted(names):
        found, rule = family_rule(name, family_map)
        if found == family:
            out[name] = rule
    return out


def _pairwise(pairing: Pairing, families: list[tuple[str | None, ...]], family: str,
              spec: IntervalSpec) -> ProbeEntry | None:
    keep, own_sides = [], []
    for i, fams in enumerate(families):
        if len(fams) == 2 and (fams[0] == family) != (fams[1] == family) and None not in fams:
            keep.append(i)
            own_sides.append("A" if fams[0] == family else "B")

    def won(verdict: str, own: str) -> float:
        return 0.5 if verdict == "tie" else float(verdict == own)

    if not keep:
        return None
    judge = np.array([won(pairing.judge[i], s) for i, s in zip(keep, own_sides, strict=True)])
    human = np.array([won(pairing.human[i], s) for i, s in zip(keep, own_sides, strict=True)])
    sub = spec.subset(np.isin(np.arange(len(pairing.keys)), keep))
    figures = self_preference_pairwise(judge, human, **_kwargs(sub))
    stats = {k: _stat(v, sub) for k, v in figures.items()}
    gap = stats["self_preference"]
    return ProbeEntry(PROBE, "", stats, {
        "mode": "pairwise", "n_pairs": len(keep),
        "note": (f"On {len(keep)} pairs with one response from the judge's family {family!r}, "
                 f"the judge picks it {_pct(stats['judge_own_win_rate'])} of the time and "
                 f"people {_pct(stats['human_own_win_rate'])}: "
                 f"{_signed(gap)} for its own family."),
    })


def _pointwise(pairing: Pairing, families: list[tuple[str | None, ...]], family: str,
               scale: Scale, spec: IntervalSpec) -> ProbeEntry | None:
    keep = [i for i, fams in enumerate(families) if fams and fams[0] is not None]
    if not keep:
        return None
    if pairing.judge_values:  # the judge's own score against the human reference number
        judge = np.asarray([pairing.judge_values[i] for i in keep])
        human = np.asarray([pairing.human_values[i] for i in keep])
    else:
        judge = _scores(scale, [pairing.judge[i] for i in keep])
        human = _scores(scale, [pairing.human[i] for i in keep])
    above = (judge > human).astype(float)
    own = np.array([float(families[i][0] == family) for i in keep])
    levels = [pairing.human[i] for i in keep]
    sub = spec.subset(np.isin(np.arange(len(pairing.keys)), keep))
    plain = self_preference_pointwise(above, own, **_kwargs(sub))
    stratified = self_preference_stratified(above, own, levels, **_kwargs(sub))
    stats = {k: _stat(v, sub) for k, v in plain.items() if k != "self_preference"}
    stats["other_rated_above_human_same_levels"] = _stat(
        stratified["other_rated_above_human_same_levels"], sub)
    stats["self_preference"] = _stat(stratified["self_preference"], sub)
    stats["self_preference_unstratified"] = _stat(plain["self_preference"], sub)
    n_strata = int(stratified["n_strata"].statistic)
    n_own, n_other = int(own.sum()), int(len(own) - own.sum())
    note = (f"The judge rates {_pct(stats['own_rated_above_human'])} of {n_own} responses from "
            f"its family {family!r} above people's rating, and "
            f"{_pct(stats['other_rated_above_human'])} of {n_other} from other families "
            f"({_pct(stats['other_rated_above_human_same_levels'])} at the same human levels): "
            f"{_signed(stats['self_preference'])} within levels of the human reference "
            f"({_signed(stats['self_preference_unstratified'])} before stratifying).")
    if n_strata < MIN_STRATA:
        note += (f" The comparison rests on {n_strata} human level(s) holding both families' "
                 "responses: few levels, read it with care.")
    return ProbeEntry(PROBE, "", stats, {
        "mode": "pointwise", "n_own": n_own, "n_other": n_other,
        "stratified_by": "human reference level", "n_strata": n_strata, "note": note,
    })


def _scores(scale: Scale, labels: list[str]) -> np.ndarray:
    """Binary pass = 1, fail = 0; ordinal levels by their value (else their index)."""
    if scale.kind == "binary":
        return np.array([scale.score_of(label) for label in labels], dtype=float)
    return numeric_values(scale, labels)


def _kwargs(spec: IntervalSpec) -> dict[str, Any]:
    return {"clusters": spec.clusters, "n_resamples": spec.n_resamples,
            "confidence_level": spec.confidence_level, "random_state": spec.random_state}


def _pct(stat: Stat) -> str:
    return "n/a" if not stat.defined else f"{stat.statistic:.0%}"


def _signed(stat: Stat) -> str:
    if not stat.defined:
        return "difference undefined"
    interval = ("" if not math.isfinite(stat.ci_low)
                else f" [{stat.ci_low:+.3f}, {stat.ci_high:+.3f}]")
    return f"a difference of {stat.statistic:+.3f}{interval}"


__all__ = ["PROBE", "judge_model", "self_preference_entry"]
