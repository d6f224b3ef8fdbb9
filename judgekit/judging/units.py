"""What one judge call is: an item as presented (a work unit) and the call's cache key.

Kept apart from the runner so that code which only needs to *name* a call
(probes reading back their outcomes, the CLI checking whether anything is left
to judge before it starts the local judge) computes exactly the runner's key
without pulling in the runner's HTTP machinery. :mod:`judgekit.judging.runner`
re-exports everything here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from judgekit.clients.spec import JudgeSpec
from judgekit.errors import InputError
from judgekit.judging.cache import cache_key
from judgekit.parsing import PARSER_VERSION
from judgekit.prompts import render_messages
from judgekit.types import Item, Rubric

#: Variants :func:`unit_for` can build from a plain item.
BUILTIN_VARIANTS = ("", "swapped", "reversed_levels")


@dataclass(frozen=True)
class WorkUnit:
    """One item as presented to the judge.

    ``item`` is what the judge sees (for a swapped pair: responses already
    exchanged) and keeps the original ``id``. ``swap_labels`` maps a pairwise
    verdict back (A<->B) before storing; the raw text is kept as answered.
    ``source_hash`` is the content hash of the original item, stored on the
    judgment so it can be matched to the dataset (defaults to ``item``'s own).
    """

    item: Item
    variant: str = ""
    reverse_levels: bool = False
    swap_labels: bool = False
    source_hash: str | None = None


def swapped_pair(item: Item) -> Item:
    """``item`` with ``response_a`` and ``response_b`` exchanged (pairwise items only)."""
    if not item.is_pairwise:
        raise InputError(f"item {item.id!r} is not a pair; only pairs can be swapped")
    return replace(item, response_a=item.response_b, response_b=item.response_a)


def unit_for(item: Item, variant: str = "") -> WorkUnit:
    """The work unit for a built-in variant: ``""``, ``"swapped"`` or ``"reversed_levels"``."""
    if variant == "":
        return WorkUnit(item)
    if variant == "swapped":
        return WorkUnit(swapped_pair(item), "swapped", swap_labels=True,
                        source_hash=item.content_hash)
    if variant == "reversed_levels":
        return WorkUnit(item, "reversed_levels", reverse_levels=True)
    raise InputError(
        f"unknown variant {variant!r}: build a WorkUnit for it, or use one of "
        f"{', '.join(repr(v) for v in BUILTIN_VARIANTS)}"
    )


def unit_key(rubric: Rubric, unit: WorkUnit, spec: JudgeSpec, *, dataset: str,
             sample: int = 0, item_hash: str | None = None) -> str:
    """The cache key of one call: find its stored outcome with ``Store.cached_judgments``.

    Probes use it to read back the latest judgment of each unit they ran,
    whichever run produced it (a cached unit keeps its original row).
    ``item_hash`` is ``unit.item.content_hash`` when the caller already has it
    (hashing an item serialises all its text).
    """
    return cache_key(
        model=spec.model, base_url=spec.public_base_url, rubric_hash=rubric.sha256,
        item_hash=unit.item.content_hash if item_hash is None else item_hash,
        sampling=spec.sampling.as_dict(),
        sample_index=sample, parser_version=PARSER_VERSION, dataset=dataset,
        item_id=unit.item.id, variant=unit.variant, reverse_levels=unit.reverse_levels,
    )


def unit_messages(rubric: Rubric, unit: WorkUnit) -> list[dict[str, str]]:
    """The chat messages of a unit's call, as the live runner and a batch file both send them."""
    return render_messages(rubric, unit.item, reverse_levels=unit.reverse_levels)
