"""Bias probes: judge controlled variants of items and measure how far verdicts move.

Three probes, each a thin layer over :func:`judgekit.judging.runner.run_judgments` (so
they are cached, resumable and take the same endpoint spec as ``judge``) and
:mod:`judgekit.stats.bias` (so the numbers are the pure, tested ones):

- position: pairs judged as written and swapped (the runner maps the swapped
  verdict back); for pointwise rubrics the levels listed as written and reversed.
- length: rank correlation of score with length, the same for human labels,
  the score change per doubling of length within prompts (with and without the
  human score as a covariate), re-judging with content-free filler added
  (+25/50/100%), and for pairs P(the longer answer wins | gap > 30 chars).
- consistency: K samples per item at the production sampling parameters.

Each run stores one JSON summary with :meth:`Store.save_probe_result`; the
shape is documented in ``docs/probes.md``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.clients import JudgeSpec
from judgekit.errors import InputError
from judgekit.judging.probe_variants import (
    DEFAULT_FILLER,
    DEFAULT_LEVELS,
    added_chars,
    check_levels,
    item_length,
    length_units,
    load_filler,
    pad_item,
    pad_text,
    padded_side,
    padding_variant,
    position_units,
)
from judgekit.judging.runner import RunSummary, WorkUnit, run_judgments, unit_key
from judgekit.stats import bias
from judgekit.store import Store
from judgekit.types import Item, Judgment, Label, Rubric, Scale

__all__ = [
    "DEFAULT_FILLER", "DEFAULT_LEVELS", "PROBES", "ProbeOutcome", "added_chars", "check_items",
    "check_levels",
    "length_units", "load_filler", "pad_item", "pad_text", "padded_side", "padding_variant",
    "position_units", "run_consistency_probe", "run_length_probe", "run_position_probe",
]

PROBES = ("position", "length", "consistency")
SCHEMA_VERSION = 1
#: Item ids listed in a stored result (inconsistent / unstable items), at most.
MAX_LISTED_IDS = 200
#: Scatter points kept for the report's plots, at most.
MAX_POINTS = 2000


@dataclass(frozen=True)
class ProbeOutcome:
    """What a probe run produced: the stored result dict and the runner's summary."""

    probe: str
    result: dict[str, Any]
    summary: RunSummary


class _Outcomes:
    """Judgments of a probe's units, looked up by (variant, item id, sample)."""

    def __init__(self, store: Store, rubric: Rubric, spec: JudgeSpec, dataset: str,
                 units: Sequence[WorkUnit], samples: int = 1) -> None:
        keys = {(u.variant, u.item.id, s): unit_key(rubric, u, spec, dataset=dataset, sample=s)
                for u in units for s in range(samples)}
        found = store.cached_judgments(keys.values())
        self.by: dict[tuple[str, str, int], Judgment | None] = {
            ident: found.get(key) for ident, key in keys.items()
        }
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        for (variant, _, _), judgment in self.by.items():
            counts[variant][judgment.status if judgment else "missing"] += 1
        self.status_counts = {v: dict(sorted(c.items())) for v, c in sorted(counts.items())}

    def label(self, variant: str, item_id: str, sample: int = 0) -> str | None:
        """The label of an ``ok`` judgment; None for any failure (excluded, never scored)."""
        judgment = self.by.get((variant, item_id, sample))
        return judgment.label if judgment is not None and judgment.status == "ok" else None


def _envelope(probe: str, rubric: Rubric, spec: JudgeSpec, dataset: str, summary: RunSummary,
              outcomes: _Outcomes, n_items: int) -> dict[str, Any]:
    return {
        "probe": probe,
        "schema_version": SCHEMA_VERSION,
        "mode": "pairwise" if rubric.scale.kind == "pairwise" else "pointwise",
        "dataset": dataset,
        "run_id": summary.run_id,
        "rubric": {"name": rubric.name, "version": rubric.version, "sha256": rubric.sha256,
                   "kind": rubric.scale.kind},
        "model": spec.model,
        "base_url": spec.public_base_url,
        "sampling": spec.sampling.as_dict(),
        "n_items": n_items,
        "status_counts": outcomes.status_counts,
        "confidence_level": 0.95,
    }


def _run(store: Store, rubric: Rubric, spec: JudgeSpec, units: list[WorkUnit], *, dataset: str,
         probe: str, samples: int = 1, force: bool = False, retry_failed: bool = False,
         progress: bool | None = None) -> RunSummary:
    return run_judgments(store, rubric, units, spec, dataset=dataset, samples=samples,
                         force=force, retry_failed=retry_failed, progress=progress,
                         kind=f"probe:{probe}")


def _check_items(items: Sequence[Item], rubric: Rubric) -> None:
    if not items:
        raise InputError("no items to probe")
    pairwise = rubric.scale.kind == "pairwise"
    wrong = [i.id for i in items if i.is_pairwise != pairwise]
    if wrong:
        need = "pairs (response_a/response_b)" if pairwise else "single responses"
        raise InputError(f"rubric {rubric.name!r} needs {need}; item {wrong[0]!r} is not one")


#: The check every probe makes first: items of the kind the rubric judges (CLI: before import).
check_items = _check_items


def _ids(indices: Sequence[int], items: Sequence[Item]) -> list[str]:
    return [items[i].id for i in indices[:MAX_LISTED_IDS]]


# -- position --------------------------------------------------------------------


def _level_index(scale: Scale, label: str | None) -> int | None:
    return None if label is None or label not in scale.labels else scale.labels.index(label)


def run_position_probe(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
                       dataset: str, force: bool = False, retry_failed: bool = False,
                       progress: bool | None = None) -> ProbeOutcome:
    """Judge every item in both orders and store position consistency, slot shares and PF."""
    _check_items(items, rubric)
    units = position_units(items, rubric)
    summary = _run(store, rubric, spec, units, dataset=dataset, probe="position", force=force,
                   retry_failed=retry_failed, progress=progress)
    outcomes = _Outcomes(store, rubric, spec, dataset, units)
    if rubric.scale.kind == "pairwise":
        result = bias.position_bias(
            [outcomes.label("", i.id) for i in items],
            [outcomes.label("swapped", i.id) for i in items],
        )
    else:
        scale = rubric.scale
        result = bias.level_order_bias(
            [_level_index(scale, outcomes.label("", i.id)) for i in items],
            [_level_index(scale, outcomes.label("reversed_levels", i.id)) for i in items],
        )
    stored = _envelope("position", rubric, spec, dataset, summary, outcomes, len(items))
    stored.update(result.to_dict())
    stored["n_excluded"] = result.n_failed
    stored["inconsistent_items"] = _ids(result.inconsistent_indices(), items)
    store.save_probe_result(summary.run_id, "position", rubric.sha256, stored)
    return ProbeOutcome("position", stored, summary)


# -- length ------------------------------------------------------------------------


def _preference_for_a(label: str | None) -> float | None:
    return {"A": 1.0, "tie": 0.5, "B": 0.0}.get(label) if label is not None else None


def _score(rubric: Rubric, label: str | None) -> float | None:
    """A number per verdict: pairwise = preference for A; categorical = level index."""
    return bias.verdict_score(rubric.scale, label)


def _human_scores(store: Store, rubric: Rubric, dataset: str) -> dict[str, float]:
    """Mean human score per item over annotators' latest labels."""
    labels = store.latest_labels(rubric.sha256, dataset=dataset)
    return bias.human_scores(rubric.scale, ((lab.item_id, lab.label) for lab in labels))


def _human_verdicts(labels: Sequence[Label]) -> dict[str, str]:
    """Majority pairwise label per item (a split vote counts as a tie)."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for label in labels:
        if label.label is not None:
            votes[label.item_id][label.label] += 1
    out: dict[str, str] = {}
    for item_id, counter in votes.items():
        ranked = counter.most_common()
        split = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        out[item_id] = "tie" if split else ranked[0][0]
    return out


def _padded_score(rubric: Rubric, item: Item, label: str | None) -> float | None:
    """Pairwise: preference for the padded side (1, 0.5, 0); otherwise the verdict's score."""
    if rubric.scale.kind != "pairwise":
        return _score(rubric, label)
    pref = _preference_for_a(label)
    if pref is None:
        return None
    return pref if padded_side(item) == "a" else 1.0 - pref


def _length_slopes(rubric: Rubric, items: Sequence[Item], scores: list[float | None],
                   humans: dict[str, float]) -> dict[str, Any]:
    """Score change per doubling of length, fixed effects by prompt (cluster, else input).

    Pairwise: the preference for A against log2(len(A) / len(B)). With human labels on
    the probed items, also the slope with the human score as a covariate.
    """
    if rubric.scale.kind == "categorical":
        undefined = bias.Estimate(
            float("nan"), 0, None, "a categorical scale has no order to regress on length"
        ).to_dict()
        return {"length_slope": undefined}
    pairwise = rubric.scale.kind == "pairwise"
    lengths = [len((i.response_a if pairwise else i.response) or "") for i in items]
    reference = [len(i.response_b or "") for i in items] if pairwise else None
    groups = [i.cluster if i.cluster is not None else i.input for i in items]
    out = {"length_slope": bias.length_slope(scores, lengths, groups=groups,
                                             reference_lengths=reference).to_dict()}
    if any(i.id in humans for i in items):
        out["length_slope_human_adjusted"] = bias.length_slope(
            scores, lengths, groups=groups, reference_lengths=reference,
            human=[humans.get(i.id) for i in items]).to_dict()
    return out


def _length_section(store: Store, rubric: Rubric, dataset: str, items: Sequence[Item],
                    outcomes: _Outcomes) -> dict[str, Any]:
    lengths = [item_length(i) for i in items]
    scores = [_score(rubric, outcomes.label("", i.id)) for i in items]
    # items of one prompt (or one `cluster`) are not independent evidence: the p-value
    # counts prompts when items share one (an item without either is its own cluster)
    by_cluster = any(i.cluster is not None for i in items)
    groups = [i.source_group or f"\0{i.id}" for i in items]
    judge = bias.length_effect(scores, lengths, max_points=MAX_POINTS, groups=groups,
                               cluster_by="cluster or prompt" if by_cluster else "prompt")
    humans = _human_scores(store, rubric, dataset)
    out = judge.to_dict()
    out.update(bias.human_length_correlation(
        humans, {i.id: item_length(i) for i in items}, max_points=MAX_POINTS))
    out.update(_length_slopes(rubric, items, scores, humans))
    return out


def _prefer_longer_section(store: Store, rubric: Rubric, dataset: str, items: Sequence[Item],
                           outcomes: _Outcomes, min_gap: int) -> dict[str, Any]:
    len_a = [len(i.response_a or "") for i in items]
    len_b = [len(i.response_b or "") for i in items]
    judge = bias.prefer_longer_rate([outcomes.label("", i.id) for i in items], len_a, len_b,
                                    min_gap=min_gap)
    humans = _human_verdicts(store.latest_labels(rubric.sha256, dataset=dataset))
    human = bias.prefer_longer_rate([humans.get(i.id) for i in items], len_a, len_b,
                                    min_gap=min_gap)
    return {
        "prefer_longer_rate": judge.to_dict(),
        "human_prefer_longer_rate": human.to_dict(),
        "prefer_longer_threshold": 0.7,
        "min_gap_chars": min_gap,
    }


def run_length_probe(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
                     dataset: str, levels: Sequence[int] = DEFAULT_LEVELS,
                     filler: Sequence[str] = DEFAULT_FILLER, min_gap: int = 30,
                     force: bool = False, retry_failed: bool = False,
                     progress: bool | None = None) -> ProbeOutcome:
    """Length correlation (judge and human), length slope, padding shift and flip rate,
    P(prefer longer)."""
    _check_items(items, rubric)
    levels = check_levels(levels)
    units = length_units(items, levels, filler)
    summary = _run(store, rubric, spec, units, dataset=dataset, probe="length", force=force,
                   retry_failed=retry_failed, progress=progress)
    outcomes = _Outcomes(store, rubric, spec, dataset, units)
    stored = _envelope("length", rubric, spec, dataset, summary, outcomes, len(items))
    stored["length_unit"] = "chars"
    stored.update(_length_section(store, rubric, dataset, items, outcomes))
    base = [_padded_score(rubric, i, outcomes.label("", i.id)) for i in items]
    per_level: dict[str, Any] = {}
    for level in levels:
        variant = padding_variant(level)
        padded = [_padded_score(rubric, i, outcomes.label(variant, i.id)) for i in items]
        effect = bias.padding_effect(base, padded).to_dict()
        if rubric.scale.kind == "categorical":
            effect["padding_shift"] = bias.Estimate(
                float("nan"), 0, None, "a categorical scale has no order to shift along"
            ).to_dict()
        added = [added_chars(i, level, filler) for i in items]
        effect["mean_added_chars"] = sum(added) / len(added)
        per_level[str(level)] = effect
    top = str(max(levels))
    stored["padding_level"] = max(levels)
    stored["padding_shift"] = per_level[top]["padding_shift"]
    stored["padding_flip_rate"] = per_level[top]["padding_flip_rate"]
    stored["padding_levels"] = per_level
    if rubric.scale.kind == "pairwise":
        stored.update(_prefer_longer_section(store, rubric, dataset, items, outcomes, min_gap))
    stored["n_excluded"] = sum(1 for s in base if s is None)
    store.save_probe_result(summary.run_id, "length", rubric.sha256, stored)
    return ProbeOutcome("length", stored, summary)


# -- consistency -----------------------------------------------------------------


def run_consistency_probe(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec,
                          *, dataset: str, samples: int = 5, force: bool = False,
                          retry_failed: bool = False,
                          progress: bool | None = None) -> ProbeOutcome:
    """K samples per item at ``spec``'s sampling parameters: RS, flip rate, kappa/alpha.

    Sample 0 is the plain judgment, so a previous ``judge`` run with the same
    parameters is reused. With a fixed ``seed`` a backend that honours seeds
    may repeat itself exactly; that is what production would see too.
    """
    if samples < 2:
        raise InputError(f"--samples must be at least 2 to measure consistency, got {samples}")
    _check_items(items, rubric)
    units = [WorkUnit(item) for item in items]
    summary = _run(store, rubric, spec, units, dataset=dataset, probe="consistency",
                   samples=samples, force=force, retry_failed=retry_failed, progress=progress)
    outcomes = _Outcomes(store, rubric, spec, dataset, units, samples)
    matrix = [[outcomes.label("", i.id, s) for s in range(samples)] for i in items]
    result = bias.repetition_stability(
        matrix,
        level="ordinal" if rubric.scale.kind == "ordinal" else "nominal",
        labels=list(rubric.scale.labels),
    )
    stored = _envelope("consistency", rubric, spec, dataset, summary, outcomes, len(items))
    stored.update(result.to_dict())
    stored["temperature"] = spec.sampling.temperature
    stored["unstable_items"] = _ids(result.unstable, items)
    store.save_probe_result(summary.run_id, "consistency", rubric.sha256, stored)
    return ProbeOutcome("consistency", stored, summary)
