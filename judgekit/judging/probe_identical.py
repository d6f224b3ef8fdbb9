"""The identical-pairs probe: the same response shown as A and as B.

Nothing but the slot tells the two apart, so a fair judge says ``tie`` (or,
when the rubric has no tie, picks A and B about equally often). Which
response of the pair is duplicated alternates by a hash of the item id, so a
dataset whose A side always comes from one model does not decide the text.
The figures are :func:`judgekit.stats.bias.identical_pairs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from judgekit.clients import JudgeSpec
from judgekit.errors import InputError
from judgekit.judging.probe_variants import padded_side
from judgekit.judging.probes import (
    MAX_LISTED_IDS,
    ProbeOutcome,
    _check_items,
    _envelope,
    _Outcomes,
    _run,
)
from judgekit.judging.runner import WorkUnit
from judgekit.stats import bias
from judgekit.store import Store
from judgekit.types import Item, Rubric

VARIANT = "identical"


def check_pairwise(rubric: Rubric) -> None:
    """An InputError unless ``rubric`` compares two responses."""
    if rubric.scale.kind != "pairwise":
        raise InputError(f"probe identical needs a pairwise rubric: {rubric.name!r} is "
                         f"{rubric.scale.kind} (it judges one response, not a pair)")


def identical_item(item: Item) -> Item:
    """``item`` with one of its responses (A or B, by a hash of the id) in both slots."""
    text = item.response_a if padded_side(item) == "a" else item.response_b
    return replace(item, response_a=text, response_b=text)


def identical_units(items: Sequence[Item]) -> list[WorkUnit]:
    """One call per pair: its duplicated response as A and B (variant ``identical``)."""
    return [WorkUnit(identical_item(i), VARIANT, source_hash=i.content_hash) for i in items]


def run_identical_probe(store: Store, rubric: Rubric, items: Sequence[Item], spec: JudgeSpec,
                        *, dataset: str, force: bool = False, retry_failed: bool = False,
                        progress: bool | None = None) -> ProbeOutcome:
    """Judge every pair with one response in both slots; store the decisive share and the
    slot split."""
    check_pairwise(rubric)
    _check_items(items, rubric)
    units = identical_units(items)
    summary = _run(store, rubric, spec, units, dataset=dataset, probe="identical", force=force,
                   retry_failed=retry_failed, progress=progress)
    outcomes = _Outcomes(store, rubric, spec, dataset, units)
    labels = [outcomes.label(VARIANT, i.id) for i in items]
    result = bias.identical_pairs(labels, allow_tie="tie" in rubric.scale.labels)
    stored = _envelope("identical", rubric, spec, dataset, summary, outcomes, len(items))
    stored.update(result.to_dict())
    stored["n_excluded"] = result.n_failed
    stored["duplicated_side_counts"] = {s: sum(1 for i in items if padded_side(i) == s)
                                        for s in ("a", "b")}
    stored["decisive_items"] = [i.id for i, lab in zip(items, labels, strict=True)
                                if lab in ("A", "B")][:MAX_LISTED_IDS]
    store.save_probe_result(summary.run_id, "identical", rubric.sha256, stored)
    return ProbeOutcome("identical", stored, summary)


__all__ = ["VARIANT", "check_pairwise", "identical_item", "identical_units",
           "run_identical_probe"]
