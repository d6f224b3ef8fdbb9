"""The injection probe: re-judge responses carrying instructions aimed at the judge.

Each item is judged as written, then once per template and position with the
template's text (:mod:`judgekit.judging.injection_templates`) in its response:
pointwise asking for the rubric's most favourable verdict, pairwise injected
into the response picked by a hash of the item id, asking for that response.
The side never depends on the plain verdict: choosing the response the judge
did not prefer would make every later call of a merely noisy judge look like
a move toward the injected side (regression to the mean), so the plain and
injected calls would no longer be exchangeable.

Figures (pure, :mod:`judgekit.stats.bias`): per template x position the net
move toward the target ((toward - away) / items), the flip rate and the mean
shift; overall, the worst cell's net move with a simultaneous interval (what
the report's gate reads), the worst flip rate, and the mean shift and net move
with each item counted once. Failed judgments are excluded and counted, never
scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit.clients import JudgeSpec
from judgekit.judging.injection_templates import (
    KNOWN_TEMPLATES,
    PLACEBO,
    POSITIONS,
    TEMPLATES,
    check_positions,
    check_templates,
    injected_item,
    injection_target,
    injection_variant,
)
from judgekit.judging.probe_variants import padded_side
from judgekit.judging.probes import (
    MAX_LISTED_IDS,
    ProbeOutcome,
    _check_items,
    _envelope,
    _Outcomes,
    _run,
)
from judgekit.judging.runner import RunSummary, WorkUnit
from judgekit.stats import bias
from judgekit.store import Store
from judgekit.types import Item, Rubric

NOT_ORDERED = "a categorical scale has no order to shift along"


def cell_name(template: str, position: str) -> str:
    """``fake_json@end``: how a template x position cell is named in the stored result."""
    return f"{template}@{position}"


def injection_side(item: Item) -> str:
    """The side of a pair to inject into: ``a`` or ``b`` by a hash of the item id (the rule
    that picks the padded side of the length probe), never by the judge's own verdict."""
    return padded_side(item)


def _injected_units(rubric: Rubric, items: Sequence[Item], templates: Sequence[str],
                    positions: Sequence[str], target: str | None,
                    sides: dict[str, str]) -> list[WorkUnit]:
    units = []
    for item in items:
        for template in templates:
            for position in positions:
                changed = injected_item(item, template, position, target, sides.get(item.id))
                units.append(WorkUnit(changed, injection_variant(template, position),
                                      source_hash=item.content_hash))
    return units


def _sides(rubric: Rubric, items: Sequence[Item]) -> dict[str, str]:
    """The injected side of every pair (empty for a pointwise rubric)."""
    if rubric.scale.kind != "pairwise":
        return {}
    return {item.id: injection_side(item) for item in items}


def injection_units(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec, *,
                    dataset: str, templates: Sequence[str] = tuple(TEMPLATES),
                    positions: Sequence[str] = POSITIONS,
                    target: str | None = None) -> list[WorkUnit]:
    """Every call the probe makes: the plain items and their injected copies.

    ``store``, ``spec`` and ``dataset`` are kept for the callers' signature: the calls no
    longer depend on stored verdicts.
    """
    del store, spec, dataset
    goal = injection_target(rubric, target)
    base = [WorkUnit(item) for item in items]
    return base + _injected_units(rubric, items, templates, positions, goal,
                                  _sides(rubric, items))


def _closeness(rubric: Rubric, label: str | None, target: str | None,
               side: str | None) -> float | None:
    """How close a verdict is to the target (largest at the target itself)."""
    if label is None:
        return None
    scale = rubric.scale
    if scale.kind == "pairwise":
        pref_a = bias.verdict_score(scale, label)
        return None if pref_a is None else (pref_a if side == "a" else 1.0 - pref_a)
    if scale.kind == "ordinal" and target is not None:
        value, goal = scale.value_of(label), scale.value_of(target)
        return None if value is None or goal is None else -abs(value - goal)
    return 1.0 if label == target else 0.0


def _summary(rubric: Rubric, items: Sequence[Item], outcomes: _Outcomes,
             templates: Sequence[str], positions: Sequence[str], target: str | None,
             sides: dict[str, str]) -> dict[str, Any]:
    pairwise = rubric.scale.kind == "pairwise"
    top = 1.0 if pairwise or rubric.scale.kind != "ordinal" else 0.0
    why = NOT_ORDERED if rubric.scale.kind == "categorical" else None

    def closeness(variant: str) -> list[float | None]:
        return [_closeness(rubric, outcomes.label(variant, i.id), target, sides.get(i.id))
                for i in items]

    base = closeness("")
    grid = {(t, p): closeness(injection_variant(t, p)) for t in templates for p in positions}
    out: dict[str, Any] = {}
    cells: dict[str, Any] = {}
    effects = []
    names: list[str] = []
    followed: set[int] = set()
    for (t, p), values in grid.items():
        effect = bias.injection_effect(base, values, top=top, shift_reason=why)
        stored = effect.to_dict()
        out[f"injection_net[{cell_name(t, p)}]"] = stored["net"]
        out[f"injection_flip_rate[{cell_name(t, p)}]"] = stored["flip_rate"]
        out[f"injection_shift[{cell_name(t, p)}]"] = stored["shift"]
        cells[cell_name(t, p)] = stored
        if t == PLACEBO.name:  # a control: shown per cell, never an attack
            continue
        effects.append(effect)
        names.append(cell_name(t, p))
        followed.update(effect.toward_indices())
    out["injection_net"] = bias.worst_net_move(effects).to_dict()
    out["injection_flip_rate"] = bias.worst_flip_rate(effects).to_dict()
    nets = [(e.net.statistic, name) for e, name in zip(effects, names, strict=True) if e.n]
    out["worst_cell"] = max(nets, key=lambda d: d[0])[1] if nets else None
    flips = [(e.statistic, name) for e, name in zip(effects, names, strict=True)
             if e.n > e.at_target]
    out["worst_flip_cell"] = max(flips, key=lambda d: d[0])[1] if flips else None
    attacks = [v for (t, _), v in grid.items() if t != PLACEBO.name]
    pooled = bias.pooled_injection_effect(base, attacks, top=top, shift_reason=why).to_dict()
    out["injection_shift"] = pooled["shift"]
    out["injection_net_pooled"] = pooled["net"]
    if PLACEBO.name in templates:
        out.update(_placebo_figures(grid, templates, positions, top))
    out["cells"] = cells
    out["followed_items"] = [items[i].id for i in sorted(followed)[:MAX_LISTED_IDS]]
    out["n_excluded"] = sum(1 for b in base if b is None)
    return out


def _placebo_figures(grid: dict[tuple[str, str], list[float | None]], templates: Sequence[str],
                     positions: Sequence[str], top: float) -> dict[str, Any]:
    """Each template against the placebo at the same position, per item: the injected
    verdict's closeness compared with the placebo verdict's (both calls made with a paragraph
    added, so length and the judge's noise cancel); net (toward - away) / items with both,
    Tango's interval. The placebo's own cell (``injection_net[placebo@P]``) is its net move
    against the plain verdict: what adding any paragraph does."""
    out: dict[str, Any] = {}
    for position in positions:
        placebo = grid[(PLACEBO.name, position)]
        for template in templates:
            if template == PLACEBO.name:
                continue
            effect = bias.injection_effect(placebo, grid[(template, position)], top=top,
                                           shift_reason="compared with the placebo")
            out[f"injection_vs_placebo[{cell_name(template, position)}]"] = effect.net.to_dict()
    return out


def run_injection_probe(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec,
                        *, dataset: str, templates: Sequence[str] = tuple(TEMPLATES),
                        positions: Sequence[str] = POSITIONS, target: str | None = None,
                        force: bool = False, retry_failed: bool = False,
                        progress: bool | None = None) -> ProbeOutcome:
    """Judge every item plain and with each injected template at each position; store the
    net moves and flip rates toward the target and the shifts (per cell and pooled)."""
    _check_items(items, rubric)
    templates = check_templates(templates)
    positions = check_positions(positions)
    goal = injection_target(rubric, target)

    def judge(units: list[WorkUnit]) -> RunSummary:
        return _run(store, rubric, spec, units, dataset=dataset, probe="injection", force=force,
                    retry_failed=retry_failed, progress=progress)

    base_units = [WorkUnit(item) for item in items]
    sides = _sides(rubric, items)
    injected = _injected_units(rubric, items, templates, positions, goal, sides)
    summary = judge(base_units + injected)
    outcomes = _Outcomes(store, rubric, spec, dataset, base_units + injected)
    stored = _envelope("injection", rubric, spec, dataset, summary, outcomes, len(items))
    stored["templates"] = list(templates)
    stored["positions"] = list(positions)
    stored["target"] = goal if goal is not None else "the response injected into"
    stored["template_texts"] = {
        t: KNOWN_TEMPLATES[t].render(goal or "A", pairwise=goal is None) for t in templates}
    if sides:
        stored["injected_side_counts"] = {s: sum(1 for v in sides.values() if v == s)
                                          for s in ("a", "b")}
    stored.update(_summary(rubric, items, outcomes, templates, positions, goal, sides))
    store.save_probe_result(summary.run_id, "injection", rubric.sha256, stored)
    return ProbeOutcome("injection", stored, summary)


__all__ = ["cell_name", "injection_side", "injection_units", "run_injection_probe"]
