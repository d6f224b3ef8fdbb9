"""Streaming reads for the exports: plain rows straight from SQLite, a page at a time.

``export``, ``labels export`` and ``labels disagreements`` write every row of a
large store once, in order, and keep none of them: the store's list-returning
queries (built for the report, which needs every row at once) would hold
hundreds of thousands of objects only to write them out. These readers yield
pages of plain tuples or dicts, so an export's memory stays flat however large
the store is. They select the same rows, in the same order, as the store
queries named in each docstring.

:func:`snapshot` runs several reads in one read transaction: in WAL mode a
writer may add rows meanwhile, but every read inside the block sees the store
as it was when the first one started, so an export never mixes two states.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from judgekit.store import rows as R
from judgekit.store.database import Store
from judgekit.store.judges import JudgmentSelection
from judgekit.store.labels import adjudicated_labels_sql, latest_labels_sql
from judgekit.store.runs import judgments_sql
from judgekit.types import ADJUDICATED_SOURCE, Judgment

#: Rows read from SQLite at a time.
PAGE = 5000
#: A judgment's fields in :class:`~judgekit.types.Judgment` order (the export's columns).
JUDGMENT_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Judgment))
#: What ``labels disagreements`` needs of each label.
OPINION_COLUMNS = ("dataset", "item_id", "annotator", "label", "note", "flagged", "blind")



@contextmanager
def snapshot(store: Store) -> Iterator[None]:
    """Run the block's reads in one read transaction (one consistent view of the store).

    Inside a transaction already (a caller's), the block simply joins it.
    """
    with store._lock:
        conn = store._conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")  # a read transaction: nothing to keep or undo


@lru_cache(maxsize=256)
def _sampling(text: str | None) -> dict[str, Any]:
    return R.load_json(text)


def judgment_pages(
    store: Store, selection: JudgmentSelection, *, latest_only: bool = True, page: int = PAGE
) -> Generator[list[dict[str, Any]], None, None]:
    """:meth:`Store.judgments` as pages of export records (no :class:`Judgment` objects).

    A record is the judgment's fields in :class:`Judgment` order, ``sampling`` a
    fresh dict and ``imported`` a bool: what ``dataclasses.asdict`` of the
    judgment gives, without building it.
    """
    where, params = selection.where()
    sql = judgments_sql(", ".join(JUDGMENT_FIELDS), where, latest_only=latest_only)
    names = JUDGMENT_FIELDS
    for rows in store._paged(sql + " ORDER BY id", params, page):
        records = [dict(zip(names, row, strict=True)) for row in rows]
        for record in records:
            record["sampling"] = dict(_sampling(record["sampling"]))
            record["imported"] = bool(record["imported"])
        yield records


def _label_filters(rubric_hash: str, dataset: str | None) -> tuple[str, list[Any]]:
    return Store._label_filters(rubric_hash, dataset, None)


def latest_label_pages(
    store: Store, rubric_hash: str, columns: Sequence[str], *, dataset: str | None = None,
    include_skips: bool = False, page: int = PAGE,
) -> Generator[list[tuple[Any, ...]], None, None]:
    """:meth:`Store.latest_labels` as pages of ``columns`` tuples (0/1 flags as stored)."""
    filters, params = _label_filters(rubric_hash, dataset)
    sql = latest_labels_sql(", ".join(columns), filters, include_skips=include_skips)
    yield from store._paged(sql, params, page)


def adjudicated_label_pages(
    store: Store, rubric_hash: str, columns: Sequence[str], *, dataset: str | None = None,
    include_skips: bool = False, page: int = PAGE,
) -> Generator[list[tuple[Any, ...]], None, None]:
    """:meth:`Store.adjudicated_labels` as pages of ``columns`` tuples, oldest first."""
    filters, params = _label_filters(rubric_hash, dataset)
    sql = adjudicated_labels_sql(", ".join(columns), filters, include_skips=include_skips)
    yield from store._paged(sql, params, page)


def labels_by_item(
    store: Store, rubric_hash: str, *, dataset: str | None = None
) -> Iterator[list[tuple[Any, ...]]]:
    """Each item's latest labels (skips included), item by item in (dataset, item id) order.

    The rows of :meth:`Store.latest_labels` with ``include_skips``, as
    :data:`OPINION_COLUMNS` tuples, an item's sorted by annotator. Read in the
    order of the ``labels_by_key`` index (no sort, no subquery): every row of the
    rubric, each annotator's rows oldest first, so the last one of a run is the
    latest. SQLite compares text as UTF-8 bytes, which orders strings as Python
    does, so items come in ``sorted()`` order of their ``(dataset, item_id)``.
    """
    filters, params = _label_filters(rubric_hash, dataset)
    sql = (f"SELECT {', '.join(OPINION_COLUMNS)} FROM labels WHERE rubric_hash = ? "
           f"AND source != '{ADJUDICATED_SOURCE}'{filters} "
           "ORDER BY dataset, item_id, annotator, id")
    current: list[tuple[Any, ...]] = []
    key: tuple[Any, Any] | None = None
    for rows in store._paged(sql, params, PAGE):
        for row in rows:
            if (row[0], row[1]) != key:
                if current:
                    yield current
                current, key = [row], (row[0], row[1])
            elif current[-1][2] == row[2]:
                current[-1] = row  # a later row of the same annotator: it is the latest
            else:
                current.append(row)
    if current:
        yield current


def candidate_rows(store: Store, dataset: str) -> Iterator[tuple[str, str | None, bool, str]]:
    """``(item id, slice, is pairwise, group)`` of every item of ``dataset`` in import order.

    What drawing a labeling queue needs of each item, without reading its texts
    (:meth:`Store.iter_items` builds every :class:`~judgekit.types.Item`). ``group``
    keeps items to read together adjacent in the queue: the item's cluster, else the
    opening of its input (the same story with another question or another summary).
    """
    sql = ("SELECT id, slice, response_a IS NOT NULL AND response_b IS NOT NULL, "
           f"COALESCE('cluster:' || cluster, 'input:' || substr(input, 1, {GROUP_PREFIX})) "
           "FROM items WHERE dataset = ? ORDER BY rowid")
    for rows in store._paged(sql, [dataset]):
        for item_id, slice_, pairwise, group in rows:
            yield item_id, slice_, bool(pairwise), str(group)


#: Characters of an item's input that decide whether two items share a source.
GROUP_PREFIX = 200


def ok_verdict_counts(store: Store, rubric_hash: str, dataset: str) -> dict[str, int]:
    """Per model as requested: its latest plain first-sample ``ok`` verdicts on ``dataset``.

    The counts :func:`~judgekit.types.primary_model` picks the primary judge from,
    counted in SQLite instead of over every :class:`Judgment` of the dataset.
    """
    rows = store._tuples(
        "SELECT model_requested, COUNT(*) FROM judgments WHERE id IN (SELECT MAX(id) FROM "
        "judgments WHERE rubric_hash = ? AND dataset = ? GROUP BY cache_key) AND status = 'ok' "
        "AND (variant IS NULL OR variant = '') AND sample_index = 0 GROUP BY model_requested",
        [rubric_hash, dataset],
    )
    return {str(model): int(count) for model, count in rows}


__all__ = [
    "JUDGMENT_FIELDS", "OPINION_COLUMNS", "PAGE",
    "adjudicated_label_pages", "candidate_rows", "judgment_pages", "labels_by_item",
    "latest_label_pages", "ok_verdict_counts", "snapshot",
]
