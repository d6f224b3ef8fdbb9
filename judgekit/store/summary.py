"""Lean judgment queries: counts and aggregates computed in SQL, not row by row in Python.

A report over 100,000 judgments needs full rows only for the few thousand labeled
items; for everything else it needs counts (per status), the provenance of the
judgments (runs, models, endpoints, sampling, dates) and a bounded sample of
scores. Loading every row as a :class:`~judgekit.types.Judgment` for that costs
seconds, so these queries aggregate inside SQLite and return a handful of rows.

Two selection rules, both over the latest row per cache key (after the filters):

- per cache key: every latest row counts (``one_per_item=False``);
- one per item: the row at the lowest sample index, latest first, as the report
  uses (:func:`judgekit.report.pairing.select_judgments` applies the same rule to
  loaded rows). A cache key belongs to one item (dataset and item id are part of
  it), so "latest per cache key" never mixes items.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Unpack

from judgekit.store import rows as R
from judgekit.store._base import StoreBase
from judgekit.store.columns import JudgmentRow, shared
from judgekit.store.judges import JudgmentFilters, JudgmentSelection, selection_of

#: The one-per-item pick orders rows by ``sample_index * _ID_SPAN + (_ID_SPAN - id)``:
#: lowest sample index first, then the highest (latest) id. Row ids stay below
#: 2**40 and sample indices below 2**23, so the key fits SQLite's 64-bit integers.
_ID_SPAN = 1 << 40


def _selection(where: str, one_per_item: bool) -> str:
    """A ``WITH`` clause defining ``selected``: judgment rows plus ``first_id``.

    ``first_id`` is the id of the item's first latest row: ordering by it gives the
    order in which items first appear, as when loaded rows are grouped by item.
    """
    latest = (
        "WITH latest AS (SELECT MAX(id) AS id, dataset, item_id, sample_index "
        f"FROM judgments {where} GROUP BY cache_key)"
    )
    if not one_per_item:
        return (
            f"{latest}, selected AS (SELECT j.*, j.id AS first_id "
            "FROM latest JOIN judgments j ON j.id = latest.id) "
        )
    span = _ID_SPAN
    return (
        f"{latest}, picked AS (SELECT MIN(sample_index * {span} + ({span} - id)) AS pick, "
        "MIN(id) AS first_id FROM latest GROUP BY dataset, item_id), "
        "selected AS (SELECT j.*, picked.first_id FROM picked "
        f"JOIN judgments j ON j.id = {span} - picked.pick % {span}) "
    )


class JudgedItem(NamedTuple):
    """One item's verdict (the one-per-item pick) with the item fields an estimate needs.

    ``current`` is False when the item is gone or the verdict judged an older
    version of it (its ``item_hash`` differs from the item's content hash). Rows with
    the same meta text share one ``meta`` mapping: read it, never change it.
    """

    dataset: str
    item_id: str
    status: str
    label: str | None
    current: bool
    slice: str | None
    cluster: str | None
    meta: Mapping[str, Any]
    #: the verdict's stored score (an imported 3.5 beside label 4; else the label's value)
    score: float | None = None


@dataclass(frozen=True)
class JudgmentSummary:
    """Counts and provenance of a selection of judgments (see :meth:`judgment_summary`).

    Tuples of names are sorted (NULLs left out, empty strings kept); ``sampling``
    holds each distinct sampling mapping once, in the order items first use it.
    """

    n: int = 0
    status_counts: Mapping[str, int] = field(default_factory=dict)
    run_ids: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    models_requested: tuple[str, ...] = ()
    models_returned: tuple[str, ...] = ()
    endpoints: tuple[str, ...] = ()
    judgekit_versions: tuple[str, ...] = ()
    sampling: tuple[dict[str, Any], ...] = ()
    first_created_at: str | None = None
    last_created_at: str | None = None
    imported: bool = False


@dataclass(frozen=True)
class ScorePoint:
    """One judged item's numeric score and the length of its response (characters)."""

    dataset: str
    item_id: str
    score: float
    response_length: int | None  # None when the item is not in the store


_GROUP_COLUMNS = (
    "status", "run_id", "dataset", "model_requested", "model_returned", "base_url",
    "judgekit_version", "imported", "sampling",
)


class JudgmentSummaryMixin(StoreBase):
    """Aggregate judgment queries (mixed into :class:`~judgekit.store.Store`)."""

    def judgment_models(
        self,
        *,
        rubric_hash: str | None = None,
        run_id: str | None = None,
        dataset: str | None = None,
        variant: str | None = None,
    ) -> list[str]:
        """Judge models (as requested) with judgments matching the filters, most recent last.

        The model is part of the cache key, so the models of the latest rows are
        the models of all rows and no "latest per cache key" step is needed.
        """
        where, params = JudgmentSelection(rubric_hash, run_id, dataset, variant).where()
        rows = self._tuples(
            f"SELECT model_requested FROM judgments {where} "
            "GROUP BY model_requested ORDER BY MAX(id)",
            params,
        )
        return [row[0] for row in rows]

    def judgment_summary(
        self,
        *,
        one_per_item: bool = False,
        **filters: Unpack[JudgmentFilters],
    ) -> JudgmentSummary:
        """Status counts and provenance of the latest judgments matching the filters.

        ``model`` matches the model as requested. With ``one_per_item`` each item
        counts once: its row at the lowest sample index (the latest such row).
        """
        selection = selection_of(filters)
        where, params = selection.where()
        columns = ", ".join(_GROUP_COLUMNS)
        # the runs standing for each row besides its writer, read in the same pass
        linkers = ("(SELECT group_concat(o.run_id, char(31)) FROM run_outcomes o "
                   "WHERE o.judgment_id = selected.id) AS linkers")
        rows = self._tuples(
            f"{_selection(where, one_per_item)}SELECT {columns}, COUNT(*), "
            "MIN(NULLIF(created_at, '')), MAX(NULLIF(created_at, '')), MIN(first_id), "
            f"{linkers} FROM selected GROUP BY {columns}, linkers ORDER BY MIN(first_id)",
            params,
        )
        if not rows:
            return JudgmentSummary()
        counts: dict[str, int] = {}
        names: dict[str, set[str]] = {c: set() for c in _GROUP_COLUMNS[1:7]}
        samplings: dict[str, dict[str, Any]] = {}
        first = [row[10] for row in rows if row[10]]
        last = [row[11] for row in rows if row[11]]
        for row in rows:
            counts[row[0]] = counts.get(row[0], 0) + int(row[9])
            for i, column in enumerate(_GROUP_COLUMNS[1:7], start=1):
                if row[i] is not None:
                    names[column].add(str(row[i]))
            if row[13]:
                names["run_id"].update(row[13].split("\x1f"))
            samplings.setdefault(row[8] or "", R.load_json(row[8]))
        return JudgmentSummary(
            n=sum(counts.values()),
            status_counts=counts,
            run_ids=self._of_kinds(names["run_id"], selection.run_kinds),
            datasets=tuple(sorted(names["dataset"])),
            models_requested=tuple(sorted(names["model_requested"])),
            models_returned=tuple(sorted(names["model_returned"])),
            endpoints=tuple(sorted(names["base_url"])),
            judgekit_versions=tuple(sorted(names["judgekit_version"])),
            sampling=tuple(samplings.values()),
            first_created_at=min(first) if first else None,
            last_created_at=max(last) if last else None,
            imported=any(bool(row[7]) for row in rows),
        )

    def _of_kinds(self, run_ids: set[str], kinds: tuple[str, ...] | None) -> tuple[str, ...]:
        """``run_ids`` (writers of the selected rows and the runs standing for them) of ``kinds``.

        A judge run whose calls a probe answered first stands for the probe's rows
        (``run_outcomes``): it is listed, and the probe (of another kind) is not, so
        a report names the same runs whichever command ran first.
        """
        if kinds is None or not run_ids:
            return tuple(sorted(run_ids))
        ids = sorted(run_ids)
        rows = self._tuples(
            f"SELECT id FROM runs WHERE id IN ({', '.join('?' * len(ids))}) "
            f"AND kind IN ({', '.join('?' * len(kinds))}) ORDER BY id", [*ids, *kinds])
        return tuple(row[0] for row in rows)

    def status_counts(
        self,
        *,
        one_per_item: bool = False,
        **filters: Unpack[JudgmentFilters],
    ) -> dict[str, int]:
        """How many latest judgments (per cache key, or one per item) have each status."""
        where, params = selection_of(filters).where()
        rows = self._tuples(
            f"{_selection(where, one_per_item)}SELECT status, COUNT(*) FROM selected "
            "GROUP BY status ORDER BY status",
            params,
        )
        return {str(status): int(n) for status, n in rows}

    def score_sample(
        self,
        label_values: Mapping[str, float],
        *,
        max_points: int,
        one_per_item: bool = True,
        **filters: Unpack[JudgmentFilters],
    ) -> tuple[list[ScorePoint], int]:
        """Numeric scores of ``ok`` judgments, evenly thinned to at most ``max_points``.

        A judgment's score is its ``score`` when finite, else ``label_values[label]``;
        judgments with neither are left out. Items are taken in the order they
        first appear and every ``ceil(total / max_points)``-th is kept. Returns the
        points and ``total``, the number of judgments that had a score.
        """
        if max_points < 1:
            raise ValueError(f"max_points must be at least 1, got {max_points}")
        where, params = selection_of(filters).where()
        rows = self._tuples(
            f"{_selection(where, one_per_item)}, scored AS ("
            "SELECT s.dataset, s.item_id, s.first_id, COALESCE(CASE WHEN s.score "
            "BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308 THEN s.score END, "
            "v.value) AS value FROM selected s LEFT JOIN json_each(?) v ON v.key = s.label "
            "WHERE s.status = 'ok'), "
            "numbered AS (SELECT *, ROW_NUMBER() OVER (ORDER BY first_id) - 1 AS position, "
            "COUNT(*) OVER () AS total FROM scored WHERE value IS NOT NULL) "
            "SELECT n.dataset, n.item_id, n.value, n.total, i.id IS NOT NULL, "
            "length(COALESCE(i.response, '')) FROM numbered n "
            "LEFT JOIN items i ON i.dataset = n.dataset AND i.id = n.item_id "
            "WHERE n.position % MAX(1, (n.total + ? - 1) / ?) = 0 ORDER BY n.position",
            [*params, json.dumps(dict(label_values)), max_points, max_points],
        )
        points = [
            ScorePoint(ds, item_id, float(value), int(length) if found else None)
            for ds, item_id, value, _, found, length in rows
        ]
        return points, int(rows[0][3]) if rows else 0

    def judgment_rows(
        self,
        items: Collection[tuple[str, str]] | None = None,
        **filters: Unpack[JudgmentFilters],
    ) -> Iterator[JudgmentRow]:
        """The latest judgment per cache key matching the filters, of the (dataset, item id)
        keys in ``items`` (all when None), as lean rows in id order.

        Each row says whether it is stale: made for another version of its item (its
        ``item_hash`` is not the stored item's content hash). Rows are read a page at a
        time and yielded, so a caller that keeps one row per item never holds a
        million. When ``items`` is a mapping (key -> the caller's key), each row's
        ``item_id`` is the string in the caller's key, not a second copy of it.
        """
        where, params = selection_of(filters).where()
        share = shared()
        known = items if isinstance(items, Mapping) else None
        sql = (
            "SELECT j.dataset, j.item_id, j.variant, j.sample_index, j.status, j.label, "
            "j.confidence, j.model_requested, j.model_returned, "
            "(j.item_hash != '' AND i.content_hash IS NOT NULL AND j.item_hash != i.content_hash), "
            "j.score "
            "FROM judgments j LEFT JOIN items i ON i.dataset = j.dataset AND i.id = j.item_id "
            f"WHERE j.id IN (SELECT MAX(id) FROM judgments {where} GROUP BY cache_key) "
            "ORDER BY j.id"
        )
        for page in self._paged(sql, params):
            for (dataset, item_id, variant, sample_index, status, label, conf, requested,
                 returned, stale, score) in page:
                if items is None or (dataset, item_id) in items:
                    if known is not None:
                        item_id = known[dataset, item_id][1]
                    yield JudgmentRow(
                        share(dataset, dataset), item_id, share(variant, variant), sample_index,
                        share(status, status), share(label, label), conf,
                        share(requested, requested), share(returned, returned), bool(stale),
                        score,
                    )

    def judgment_outcomes(
        self, **filters: Unpack[JudgmentFilters]
    ) -> Iterator[tuple[int, str, str, int, str, str | None]]:
        """``(id, item_id, variant, sample_index, status, label)`` of the latest judgment per
        cache key matching the filters, in id order, a page at a time.

        The row id lets a run that uses outcomes other runs wrote (a probe over imported
        verdicts) stand for exactly those rows (:meth:`stand_for`).
        """
        where, params = selection_of(filters).where()
        share = shared()
        sql = ("SELECT id, item_id, variant, sample_index, status, label FROM judgments "
               f"WHERE id IN (SELECT MAX(id) FROM judgments {where} GROUP BY cache_key) "
               "ORDER BY id")
        for page in self._paged(sql, params):
            for row_id, item_id, variant, sample_index, status, label in page:
                yield (row_id, item_id, share(variant, variant), sample_index,
                       share(status, status), share(label, label))

    def judged_items(self, **filters: Unpack[JudgmentFilters]) -> Iterator[JudgedItem]:
        """Every item's verdict under the one-per-item rule, without loading full rows.

        For estimates over all judged items (``judgekit estimate``): a status, a
        label and the item's slice, cluster and meta per item, sorted by item. Rows
        are read and yielded a page at a time: an estimate keeps a label per item,
        never 100,000 rows. The store's lock is held until the iteration ends.
        """
        where, params = selection_of(filters).where()
        pages = self._paged(
            f"{_selection(where, True)}"
            "SELECT s.dataset, s.item_id, s.status, s.label, "
            "i.id IS NOT NULL AND (s.item_hash = '' OR s.item_hash = i.content_hash), "
            "i.slice, i.cluster, i.meta, s.score FROM selected s "
            "LEFT JOIN items i ON i.dataset = s.dataset AND i.id = s.item_id "
            "ORDER BY s.dataset, s.item_id",
            params,
        )
        metas: dict[str | None, dict[str, Any]] = {}  # most items share one meta text ("{}")

        def meta_of(text: str | None) -> dict[str, Any]:
            found = metas.get(text)
            if found is None:
                found = metas[text] = R.load_json(text)
            return found

        share = shared()
        for page in pages:
            for ds, item_id, status, label, current, sl, cl, meta, score in page:
                yield JudgedItem(share(ds, ds), item_id, share(status, status),
                                 share(label, label), bool(current), share(sl, sl),
                                 share(cl, cl), meta_of(meta), score)
