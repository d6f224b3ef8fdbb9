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

The functions here read the store but compute nothing statistical; the
per-item rule (single label, majority, lower median) is
:func:`judgekit.report.pairing.reference_label`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from judgekit.report.pairing import ItemKey, reference_label
from judgekit.store import Store
from judgekit.store.columns import LabelRow
from judgekit.types import ADJUDICATED_SOURCE, Label, Rubric, Scale


@dataclass(frozen=True)
class HumanReference:
    """The labels a comparison may use, and what was left out of them (with counts)."""

    #: item -> annotator -> label (latest per annotator; adjudications not included)
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
        by_item = {k: {annotator: v[annotator]} for k, v in self.by_item.items() if annotator in v}
        return HumanReference(by_item, {}, self.include_unblinded, self.unblinded,
                              self.off_scale, self.flagged)

    def label_of(self, key: ItemKey, scale: Scale) -> str | None:
        """The item's reference label: its adjudication, else the annotators' rule (None: tie)."""
        if key in self.adjudicated:
            return self.adjudicated[key]
        by = self.by_item.get(key)
        return reference_label(by, scale) if by else None

    def references(self) -> dict[ItemKey, dict[str, str]]:
        """Item -> annotator -> label, with each adjudicated item reduced to its adjudication.

        This is the mapping :func:`~judgekit.report.pairing.pair_up` takes: an
        adjudicated item's reference is the adjudicated label alone.
        """
        out = {k: dict(v) for k, v in self.by_item.items() if k not in self.adjudicated}
        out.update({k: {ADJUDICATED_SOURCE: v} for k, v in self.adjudicated.items()})
        return out

    def no_majority_items(self, scale: Scale) -> list[ItemKey]:
        """Items left out because their annotators split with no majority (none adjudicated)."""
        return sorted(
            k for k, by in self.by_item.items()
            if k not in self.adjudicated and reference_label(by, scale) is None
        )


def split_labels(
    labels: Iterable[Label | LabelRow], scale: Scale, *, include_unblinded: bool = False
) -> HumanReference:
    """Build the reference from latest label rows (annotators' and adjudicators' together)."""
    by_item: dict[ItemKey, dict[str, str]] = {}
    adjudicated: dict[ItemKey, str] = {}
    unblinded = off_scale = 0
    valid = set(scale.labels)  # Scale.is_valid, without a scan of the levels per label
    for label in labels:  # oldest first: a later adjudication replaces an earlier one
        if label.label is None:
            continue
        if label.label not in valid:
            off_scale += 1
            continue
        if not label.blind:
            unblinded += 1
            if not include_unblinded:
                continue
        key = (label.dataset, label.item_id)
        if label.source == ADJUDICATED_SOURCE:
            adjudicated[key] = label.label
        else:
            by_item.setdefault(key, {})[label.annotator] = label.label
    return HumanReference(by_item, adjudicated, include_unblinded, unblinded, off_scale)


def human_reference(
    store: Store,
    rubric: Rubric,
    *,
    dataset: str | None = None,
    include_unblinded: bool = False,
) -> HumanReference:
    """The human reference for ``rubric`` (optionally one dataset) from the store."""
    rows = store.latest_label_rows(rubric.sha256, dataset=dataset)  # lean: skips included
    adjudications = store.adjudicated_labels(rubric.sha256, dataset=dataset)
    reference = split_labels(
        itertools.chain(rows, adjudications), rubric.scale, include_unblinded=include_unblinded
    )
    flagged = len({(r.dataset, r.item_id) for r in rows if r.flagged})
    return HumanReference(
        reference.by_item, reference.adjudicated, include_unblinded, reference.unblinded,
        reference.off_scale, flagged,
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
