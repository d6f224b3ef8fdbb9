"""The human reference: which stored labels a report (or a comparison) may rest on.

Every calibration figure compares the judge with humans, so the rules that pick
the human labels live here, in one place, and are shared by ``report`` and
``compare``:

- **Blind labels only, by default.** A label given while the judge's verdict was
  on screen (``annotate --show-judge``, or an import with ``blind=false``) is
  anchored on the judge and would flatter it. Such labels are counted and left
  out; ``include_unblinded=True`` (``report --include-unblinded``) pools them and
  the report says so. The rule applies to each annotator's *latest* label: a
  label changed with the judge shown is unblinded even if an earlier one was not.
- **Adjudicated labels win.** A label written by ``annotate --adjudicate`` is
  stored with ``source="adjudicate"`` and becomes the item's reference, whatever
  the annotators said; the annotators' own labels stay in :attr:`by_item` (the
  human-human ceiling compares single annotators, never the adjudicator).
- **No majority is counted, never hidden.** Items whose annotators split with
  no majority (and no adjudication) are left out of agreement; the count is in
  :attr:`HumanReference.no_majority` so every format can show it.
- Flagged items (any annotator's latest row has the flag, labeled or not) are
  counted in :attr:`flagged`.

A reference over 100,000 items would hold 100,000 small annotator -> label
dicts, but three annotators on a three-label scale give at most a few dozen
distinct ones: items with the same labels from the same annotators (in the same
order) share one dict, so the reference costs an entry per item, not a dict.
The shared dicts are read-only.

The functions here read the store but compute nothing statistical; the
per-item rule (single label, majority, lower median) is
:func:`judgekit.report.pairing.reference_label`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from judgekit.report.pairing import ItemKey, reference_label, reference_rule_of
from judgekit.store import Store
from judgekit.store.columns import LabelRow, shared
from judgekit.types import ADJUDICATED_SOURCE, Label, Rubric, Scale


@dataclass(frozen=True)
class HumanReference:
    """The labels a comparison may use, and what was left out of them (with counts)."""

    #: item -> annotator -> label (latest per annotator; adjudications not included).
    #: Items with the same labels share one dict: read it, never change it.
    by_item: dict[ItemKey, dict[str, str]] = field(default_factory=dict)
    #: item -> adjudicated label (the latest adjudication of the item)
    adjudicated: dict[ItemKey, str] = field(default_factory=dict)
    include_unblinded: bool = False
    #: latest labels given with the judge shown (pooled only when ``include_unblinded``)
    unblinded: int = 0
    #: labels whose value is not on the rubric's scale (never used)
    off_scale: int = 0
    #: items flagged for review by at least one annotator
    flagged: int = 0
    #: ``--reference`` (majority, median, mean; None: the scale's default)
    reference: str | None = None

    @property
    def n_labels(self) -> int:
        """Annotator labels in the reference (adjudications not counted)."""
        return sum(map(len, self.by_item.values()))

    @property
    def annotators(self) -> set[str]:
        return {a for by in self.by_item.values() for a in by}

    @property
    def keys(self) -> set[ItemKey]:
        """Every item with a usable human label or an adjudication."""
        return set(self.by_item) | set(self.adjudicated)

    def for_annotator(self, annotator: str) -> HumanReference:
        """Only ``annotator``'s labels (``report --annotator``): no pooling, no adjudication."""
        single: dict[str, dict[str, str]] = {}  # one shared dict per label
        by_item = {
            k: single.setdefault(v[annotator], {annotator: v[annotator]})
            for k, v in self.by_item.items()
            if annotator in v
        }
        return HumanReference(by_item, {}, self.include_unblinded, self.unblinded,
                              self.off_scale, self.flagged, self.reference)

    def label_of(self, key: ItemKey, scale: Scale) -> str | None:
        """The item's reference label: its adjudication, else the annotators' rule (None: tie)."""
        if key in self.adjudicated:
            return self.adjudicated[key]
        by = self.by_item.get(key)
        return reference_label(by, scale, self.reference) if by else None

    def references(self) -> dict[ItemKey, dict[str, str]]:
        """Item -> annotator -> label, with each adjudicated item reduced to its adjudication.

        This is the mapping :func:`~judgekit.report.pairing.pair_up` takes: an
        adjudicated item's reference is the adjudicated label alone. The inner
        dicts are those of :attr:`by_item` (shared, read-only), not copies.
        """
        adjudicated = self.adjudicated
        if not adjudicated:
            return dict(self.by_item)
        out = {k: v for k, v in self.by_item.items() if k not in adjudicated}
        single: dict[str, dict[str, str]] = {}
        out.update({k: single.setdefault(v, {ADJUDICATED_SOURCE: v})
                    for k, v in adjudicated.items()})
        return out

    def no_majority_items(self, scale: Scale) -> list[ItemKey]:
        """Items left out because their annotators split with no majority (none adjudicated)."""
        rule = reference_rule_of(scale, self.reference)
        return sorted(
            k for k, by in self.by_item.items()
            if k not in self.adjudicated and rule(by) is None
        )


def split_labels(
    labels: Iterable[Label | LabelRow],
    scale: Scale,
    *,
    include_unblinded: bool = False,
    reference: str | None = None,
) -> HumanReference:
    """Build the reference from latest label rows (annotators' and adjudicators' together)."""
    rows = (
        label if isinstance(label, tuple) else (
            label.dataset, label.item_id, label.annotator, label.label, label.blind,
            label.flagged, label.source)
        for label in labels
    )
    return _fold(rows, scale, include_unblinded, reference)


#: One label as :data:`~judgekit.store.columns.LABEL_ROW_SELECT` reads it (a
#: :class:`LabelRow` is one): dataset, item id, annotator, label, blind, flagged, source.
RawLabel = tuple[str, str, str, str | None, Any, Any, str]
#: An item's labels as (annotator, label) pairs, in the order they were given.
Combo = tuple[tuple[str, str], ...]
#: Annotators of an item kept as a shared tuple; an item with more gets its own dict.
SHARED_UP_TO = 16


def _fold(
    rows: Iterable[RawLabel], scale: Scale, include_unblinded: bool, reference: str | None = None
) -> HumanReference:
    """The reference of label rows, oldest first (a later adjudication replaces an earlier one).

    Each item's (annotator, label) pairs are collected as one interned tuple, so
    items labeled alike share it, and each distinct tuple becomes one dict. An item
    with more than :data:`SHARED_UP_TO` annotators (a crowd) gets a dict of its own
    at once: growing a tuple by copying it would cost the square of its annotators.
    ``flagged`` counts the items flagged in an annotator's (not an adjudicator's) row.
    """
    combos: dict[ItemKey, Combo] = {}
    crowds: dict[ItemKey, dict[str, str]] = {}
    interned: dict[Combo, Combo] = {}
    adjudicated: dict[ItemKey, str] = {}
    flagged: set[ItemKey] = set()
    share = shared()  # one dataset string for all keys
    unblinded = off_scale = 0
    valid = scale.label_set
    for dataset, item_id, annotator, label, blind, flag, source in rows:
        if flag and source != ADJUDICATED_SOURCE:
            flagged.add((dataset, item_id))
        if label is None:
            continue
        if label not in valid:
            off_scale += 1
            continue
        if not blind:
            unblinded += 1
            if not include_unblinded:
                continue
        key = (share(dataset, dataset), item_id)
        if source == ADJUDICATED_SOURCE:
            adjudicated[key] = label
            continue
        crowd = crowds.get(key)
        if crowd is not None:
            crowd[annotator] = label  # a known annotator keeps their place, as below
            continue
        old = combos.get(key)
        if old is None:
            combo: Combo = ((annotator, label),)
        elif len(old) >= SHARED_UP_TO:  # its place in ``combos`` keeps the items' order
            crowds[key] = {**dict(old), annotator: label}
            continue
        elif any(name == annotator for name, _ in old):  # the same annotator again
            combo = tuple((name, label if name == annotator else given) for name, given in old)
        else:
            combo = (*old, (annotator, label))
        combos[key] = interned.setdefault(combo, combo)
    as_dict = {combo: dict(combo) for combo in interned}
    by_item = cast(dict[ItemKey, dict[str, str]], combos)
    for key, combo in combos.items():  # in place: values only, so the order is kept
        by_item[key] = crowds.get(key) or as_dict[combo]
    return HumanReference(
        by_item, adjudicated, include_unblinded, unblinded, off_scale, len(flagged), reference
    )


def human_reference(
    store: Store,
    rubric: Rubric,
    *,
    dataset: str | None = None,
    include_unblinded: bool = False,
    reference: str | None = None,
) -> HumanReference:
    """The human reference for ``rubric`` (optionally one dataset) from the store.

    The annotators' latest rows (skips included: they count flags) are folded a page
    at a time as ``sqlite3`` reads them, then the adjudications.
    """
    adjudications = [
        (lb.dataset, lb.item_id, lb.annotator, lb.label, lb.blind, lb.flagged, lb.source)
        for lb in store.adjudicated_labels(rubric.sha256, dataset=dataset)
    ]
    pages = store.latest_label_pages(rubric.sha256, dataset=dataset)
    return _fold(
        itertools.chain(itertools.chain.from_iterable(pages), adjudications),
        rubric.scale,
        include_unblinded,
        reference,
    )


def reference_notes(reference: HumanReference, scale: Scale) -> list[str]:
    """What the reader must know about the labels left out of (or pooled into) the reference."""
    notes: list[str] = []
    if reference.off_scale:
        notes.append(
            f"{reference.off_scale} human label(s) are not on the rubric's scale and were ignored."
        )
    if reference.unblinded and reference.include_unblinded:
        notes.append(
            f"{reference.unblinded} human label(s) were given with the judge's verdict shown "
            "and are pooled into the reference (--include-unblinded): they may be anchored on "
            "the judge and flatter it."
        )
    elif reference.unblinded:
        notes.append(
            f"{reference.unblinded} human label(s) were given with the judge's verdict shown "
            "and were left out of the reference (--include-unblinded pools them)."
        )
    if reference.adjudicated:
        notes.append(
            f"{len(reference.adjudicated)} item(s) have an adjudicated label, used as their "
            "reference."
        )
    if reference.flagged:
        notes.append(f"{reference.flagged} item(s) are flagged for review by an annotator "
                     "(judgekit labels disagreements lists them).")
    return notes


def label_counts(reference: HumanReference, scale: Scale) -> Mapping[str, int]:
    """The counts every report format shows beside the label count."""
    return {
        "unblinded_labels": reference.unblinded,
        "adjudicated_items": len(reference.adjudicated),
        "no_majority_items": len(reference.no_majority_items(scale)),
        "flagged_items": reference.flagged,
    }


__all__ = [
    "HumanReference",
    "human_reference",
    "label_counts",
    "reference_notes",
    "split_labels",
]
