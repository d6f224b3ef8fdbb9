"""Lean rows for reads over a whole calibration set: only the columns a report compares.

A report on 100,000 items needs, per label, who said what about which item (not the
note or the time), per judgment its status, label and confidence (not the raw
completion), and per item its prompt, grouping fields and content hash (not its
responses). Building full domain objects for that costs seconds and hundreds of
megabytes, so these reads return small named tuples whose repeated strings
(dataset, annotator, label, status) are shared, read a page at a time. The
attribute names are those of :class:`~judgekit.types.Label`,
:class:`~judgekit.types.Judgment` and :class:`~judgekit.types.Item`, so code that
reads those attributes takes either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from judgekit.store.rows import load_json


class LabelRow(NamedTuple):
    """One annotator's latest label of an item, as the human reference needs it."""

    dataset: str
    item_id: str
    annotator: str
    label: str | None  # None = skipped
    blind: bool
    flagged: bool
    source: str


class JudgmentRow(NamedTuple):
    """One judgment as pairing needs it: which item, which presentation, what outcome."""

    dataset: str
    item_id: str
    variant: str
    sample_index: int
    status: str
    label: str | None
    confidence: float | None
    model_requested: str
    model_returned: str | None
    stale: bool  # made for an older version of its item (``item_hash`` differs)
    #: the verdict's stored score (an imported 3.5 beside label 4; else the label's value)
    score: float | None = None


class ItemFacts(NamedTuple):
    """An item's identity, prompt and grouping fields, without its responses."""

    dataset: str
    id: str
    input: str
    slice: str | None
    cluster: str | None
    meta_json: str
    is_pairwise: bool
    #: characters of the response; for a pair, len(A) - len(B) (the length probe's measure)
    response_length: float | None = None

    @property
    def meta(self) -> dict[str, Any]:
        return load_json(self.meta_json)


#: Columns of :class:`LabelRow`, in order, for ``SELECT``.
LABEL_ROW_SELECT = "dataset, item_id, annotator, label, blind, flagged, source"
#: Columns of :class:`ItemFacts`, in order, for ``SELECT``.
ITEM_FACTS_SELECT = (
    "dataset, id, input, slice, cluster, meta, "
    "response_a IS NOT NULL AND response_b IS NOT NULL, "
    "CASE WHEN response_a IS NOT NULL AND response_b IS NOT NULL "
    "THEN length(response_a) - length(response_b) ELSE length(COALESCE(response, '')) END"
)


def shared() -> Callable[[Any, Any], Any]:
    """``share(value, value)`` returns one copy of each repeated string.

    ``sqlite3`` makes a new string for every cell; a bound ``dict.setdefault`` keeps
    the first and costs no Python call frame per cell.
    """
    return {}.setdefault


def label_row_reader() -> Callable[[tuple[Any, ...]], LabelRow]:
    """A converter from a ``LABEL_ROW_SELECT`` tuple to a :class:`LabelRow`."""
    share = shared()

    def convert(row: tuple[Any, ...]) -> LabelRow:
        dataset, item_id, annotator, label, blind, flagged, source = row
        return LabelRow(share(dataset, dataset), item_id, share(annotator, annotator),
                        share(label, label), bool(blind), bool(flagged), share(source, source))

    return convert


def item_facts_reader() -> Callable[[tuple[Any, ...], str], ItemFacts]:
    """A converter from an ``ITEM_FACTS_SELECT`` tuple and the item's id to :class:`ItemFacts`.

    The id is passed apart so that the caller's own string (the one in its keys)
    is kept instead of the new copy ``sqlite3`` read.
    """
    share = shared()

    def convert(row: tuple[Any, ...], item_id: str) -> ItemFacts:
        dataset, _, text, slice_name, cluster, meta, pairwise, length = row
        return ItemFacts(share(dataset, dataset), item_id, text, share(slice_name, slice_name),
                         share(cluster, cluster), share(meta, meta), bool(pairwise),
                         None if length is None else float(length))

    return convert


__all__ = [
    "ITEM_FACTS_SELECT",
    "LABEL_ROW_SELECT",
    "ItemFacts",
    "JudgmentRow",
    "LabelRow",
    "item_facts_reader",
    "label_row_reader",
    "shared",
]
