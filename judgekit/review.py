"""Items the humans need to look at again: annotators disagree, or someone flagged it.

``judgekit labels disagreements`` lists them and ``judgekit annotate --adjudicate``
walks through them. Dropping such items silently would measure agreement on
the easy items only, so they are listed with every annotator's label and note
(never anything from a judge), and an adjudicated label, once given, becomes
the item's reference in reports (:mod:`judgekit.report.reference`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.progress import phase
from judgekit.report.pairing import reference_label
from judgekit.store import QueueEntry, Store
from judgekit.textsafe import json_safe
from judgekit.types import Label, Rubric

NO_MAJORITY = "no majority"
SPLIT = "split"
FLAGGED = "flagged"


@dataclass(frozen=True)
class Opinion:
    """One annotator's latest word on an item: label (None: skipped or a note only)."""

    annotator: str
    label: str | None
    note: str | None
    flagged: bool
    blind: bool


@dataclass(frozen=True)
class ReviewItem:
    """An item to review, why, and what each annotator said."""

    dataset: str
    item_id: str
    reasons: tuple[str, ...]  # NO_MAJORITY or SPLIT, and/or FLAGGED
    opinions: tuple[Opinion, ...]
    majority: str | None  # the reference the annotators give (None: no majority)
    adjudicated: str | None  # the adjudicated label, when there is one

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)


def review_items(store: Store, rubric: Rubric, *, dataset: str | None = None) -> list[ReviewItem]:
    """Items whose annotators disagree, or that an annotator flagged, in item order.

    Every annotator's latest row counts, labels given with the judge shown
    included (marked ``blind=False``): the point is to see what people said.
    """
    scale = rubric.scale
    phase("reading labels")
    by_item: dict[tuple[str, str], list[Label]] = {}
    for row in store.latest_labels(rubric.sha256, dataset=dataset, include_skips=True):
        by_item.setdefault((row.dataset, row.item_id), []).append(row)
    adjudicated = {
        (row.dataset, row.item_id): row.label
        for row in store.adjudicated_labels(rubric.sha256, dataset=dataset)
    }
    phase("finding disagreements")
    out = []
    for key in sorted(by_item):
        rows = sorted(by_item[key], key=lambda r: r.annotator)
        labels = {r.annotator: r.label for r in rows if r.label is not None and
                  scale.is_valid(r.label)}
        reasons: list[str] = []
        majority = reference_label(labels, scale) if labels else None
        if len(set(labels.values())) > 1:
            reasons.append(NO_MAJORITY if majority is None else SPLIT)
        if any(r.flagged for r in rows):
            reasons.append(FLAGGED)
        if not reasons:
            continue
        out.append(ReviewItem(
            key[0], key[1], tuple(reasons),
            tuple(Opinion(r.annotator, r.label, r.note, bool(r.flagged), r.blind) for r in rows),
            majority, adjudicated.get(key),
        ))
    return out


def adjudication_queue(items: Sequence[ReviewItem]) -> list[QueueEntry]:
    """The items to adjudicate as queue entries (not stored: drawn afresh each time)."""
    return [QueueEntry(i, item.dataset, item.item_id, 1.0, None) for i, item in enumerate(items)]


def opinion_text(opinions: Sequence[Opinion]) -> str:
    """Each annotator's label, flag and note, one per line (the adjudicate app shows this)."""
    lines = []
    for o in opinions:
        said = o.label if o.label is not None else "(no label)"
        extra = ("  ⚑ flagged" if o.flagged else "") + (
            "" if o.blind else "  (labeled with the judge shown)")
        lines.append(f"{o.annotator}: {said}{extra}")
        if o.note:
            lines.append(f"    note: {o.note}")
    return "\n".join(lines) or "(no annotator labels)"


def as_json(items: Sequence[ReviewItem]) -> str:
    """One JSON object per line."""
    return "".join(
        json_safe(json.dumps(_record(item), ensure_ascii=False)) + "\n" for item in items
    )


def _record(item: ReviewItem) -> Mapping[str, Any]:
    return {
        "dataset": item.dataset,
        "item_id": item.item_id,
        "reasons": list(item.reasons),
        "majority": item.majority,
        "adjudicated": item.adjudicated,
        "labels": [
            {"annotator": o.annotator, "label": o.label, "note": o.note,
             "flagged": o.flagged, "blind": o.blind}
            for o in item.opinions
        ],
    }


def as_text(items: Sequence[ReviewItem]) -> str:
    """A block per item: id, reasons, then each annotator's label and note."""
    if not items:
        return "No item has disagreeing annotators or a flag.\n"
    blocks = []
    for item in items:
        head = f"{item.dataset}/{item.item_id}: {', '.join(item.reasons)}"
        if item.adjudicated is not None:
            head += f" · adjudicated: {item.adjudicated}"
        elif item.majority is not None:
            head += f" · majority: {item.majority}"
        body = "\n".join("  " + line for line in opinion_text(item.opinions).splitlines())
        blocks.append(f"{head}\n{body}")
    no_majority = sum(1 for i in items if NO_MAJORITY in i.reasons and i.adjudicated is None)
    summary = (f"{len(items)} item(s) to review; {no_majority} with no majority and no "
               "adjudication (left out of reports until adjudicated)")
    return "\n\n".join(blocks) + f"\n\n{summary}\n"


__all__ = [
    "FLAGGED",
    "NO_MAJORITY",
    "SPLIT",
    "Opinion",
    "ReviewItem",
    "adjudication_queue",
    "as_json",
    "as_text",
    "opinion_text",
    "review_items",
]
