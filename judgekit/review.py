"""Items the humans need to look at again: annotators disagree, or someone flagged it.

``judgekit labels disagreements`` lists them and ``judgekit annotate --adjudicate``
walks through them. Dropping such items silently would measure agreement on
the easy items only, so they are listed with every annotator's label and note
(never anything from a judge), and an adjudicated label, once given, becomes
the item's reference in reports (:mod:`judgekit.report.reference`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.progress import advance, phase
from judgekit.report.pairing import reference_label
from judgekit.store import QueueEntry, Store
from judgekit.textsafe import json_safe
from judgekit.types import Rubric, Scale

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
    rule: str = "majority"  # how ``majority`` was picked: "majority" or "lower median"

    @property
    def two_way_split(self) -> bool:
        """Two annotators gave different labels and nobody adjudicated: the reference
        rests on the rule alone (on an ordinal scale, the lower of the two labels)."""
        labels = [o.label for o in self.opinions if o.label is not None]
        return self.adjudicated is None and len(labels) == 2 and labels[0] != labels[1]

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)


def review_items(store: Store, rubric: Rubric, *, dataset: str | None = None) -> list[ReviewItem]:
    """Items whose annotators disagree, or that an annotator flagged, in item order.

    Every annotator's latest row counts, labels given with the judge shown
    included (marked ``blind=False``): the point is to see what people said.
    """
    return list(iter_review_items(store, rubric, dataset=dataset))


def iter_review_items(
    store: Store, rubric: Rubric, *, dataset: str | None = None
) -> Iterator[ReviewItem]:
    """:func:`review_items` one at a time, reading the labels item by item (flat memory).

    Reads in one snapshot of the store (:func:`judgekit.store.exports.snapshot`).
    """
    from judgekit.store.exports import adjudicated_label_pages, labels_by_item, snapshot

    scale = rubric.scale
    valid = scale.label_set
    with snapshot(store):
        phase("reading labels")
        adjudicated = {
            (row[0], row[1]): row[2]
            for page in adjudicated_label_pages(store, rubric.sha256,
                                                ("dataset", "item_id", "label"), dataset=dataset)
            for row in page
        }
        phase("finding disagreements")
        for seen, rows in enumerate(labels_by_item(store, rubric.sha256, dataset=dataset), 1):
            if seen % PROGRESS_EVERY == 0:
                advance(PROGRESS_EVERY)
            item = _review_item(rows, valid, scale, adjudicated)
            if item is not None:
                yield item


#: Items between two progress counts.
PROGRESS_EVERY = 5000


def _review_item(
    rows: Sequence[tuple[Any, ...]], valid: frozenset[str], scale: Scale,
    adjudicated: Mapping[tuple[str, str], str],
) -> ReviewItem | None:
    """The item of one item's label rows (``OPINION_COLUMNS``, by annotator), if to review."""
    labels = {r[2]: r[3] for r in rows if r[3] in valid}
    split = len(set(labels.values())) > 1
    flagged = any(r[5] for r in rows)
    if not split and not flagged:
        return None  # the common case: agreed (a single label is its own reference)
    majority = reference_label(labels, scale) if labels else None
    reasons: list[str] = []
    if split:
        reasons.append(NO_MAJORITY if majority is None else SPLIT)
    if flagged:
        reasons.append(FLAGGED)
    key = (rows[0][0], rows[0][1])
    return ReviewItem(
        key[0], key[1], tuple(reasons),
        tuple(Opinion(r[2], r[3], r[4], bool(r[5]), bool(r[6])) for r in rows),
        majority, adjudicated.get(key), RULES[scale.kind == "ordinal"],
    )


#: How the reference label is picked from several annotators' labels
#: (:func:`judgekit.report.pairing.reference_label`), by whether the scale is ordinal.
RULES = {True: "lower median", False: "majority"}


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


def as_json(items: Iterable[ReviewItem]) -> str:
    """One JSON object per line."""
    return "".join(json_lines(items))


def json_lines(items: Iterable[ReviewItem]) -> Iterator[str]:
    """:func:`as_json` line by line, for items read as they are written."""
    for item in items:
        yield json_safe(json.dumps(_record(item), ensure_ascii=False)) + "\n"


def _record(item: ReviewItem) -> Mapping[str, Any]:
    return {
        "dataset": item.dataset,
        "item_id": item.item_id,
        "reasons": list(item.reasons),
        "majority": item.majority,
        "rule": item.rule,
        "adjudicated": item.adjudicated,
        "labels": [
            {"annotator": o.annotator, "label": o.label, "note": o.note,
             "flagged": o.flagged, "blind": o.blind}
            for o in item.opinions
        ],
    }


def as_text(items: Iterable[ReviewItem]) -> str:
    """A block per item: id, reasons, then each annotator's label and note."""
    return "".join(text_blocks(items))


def text_blocks(items: Iterable[ReviewItem]) -> Iterator[str]:
    """:func:`as_text` block by block (each ends with a newline), then the summary line."""
    count = no_majority = two_way = 0
    rule = "majority"
    for item in items:
        head = f"{item.dataset}/{item.item_id}: {', '.join(item.reasons)}"
        if item.adjudicated is not None:
            head += f" · adjudicated: {item.adjudicated}"
        elif item.majority is not None:
            label = "reference" if item.rule != "majority" else "majority"
            head += f" · {label}: {item.majority} ({item.rule})"
        body = "\n".join("  " + line for line in opinion_text(item.opinions).splitlines())
        count += 1
        no_majority += NO_MAJORITY in item.reasons and item.adjudicated is None
        two_way += item.two_way_split and item.majority is not None
        rule = item.rule
        yield f"{head}\n{body}\n\n"
    if not count:
        yield "No item has disagreeing annotators or a flag.\n"
        return
    yield (f"{count} item(s) to review; {no_majority} with no majority and no "
           "adjudication (left out of reports until adjudicated)\n")
    if two_way:
        yield (f"{two_way} item(s) rest on a split between two annotators: their reference "
               f"is the {rule} rule's pick (the lower of the two labels) until someone "
               "adjudicates (annotate --adjudicate)\n")


__all__ = [
    "FLAGGED",
    "NO_MAJORITY",
    "SPLIT",
    "Opinion",
    "ReviewItem",
    "adjudication_queue",
    "as_json",
    "as_text",
    "iter_review_items",
    "json_lines",
    "opinion_text",
    "review_items",
    "text_blocks",
]
