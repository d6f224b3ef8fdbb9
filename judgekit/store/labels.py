"""Human labels, labeling queues and probe results: the store's human-facing half.

Labels are append-only: changing a label adds a row, and "latest wins" is a
query over autoincrement ids, so the full history of every decision is kept.
A queue is saved once and read back by later sessions, so an annotator resumes
exactly the same selection (with the inclusion probabilities reports need).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.errors import StoreError
from judgekit.store import rows as R
from judgekit.store._base import StoreBase
from judgekit.store.columns import LABEL_ROW_SELECT, LabelRow, label_row_reader
from judgekit.types import ADJUDICATED_SOURCE, Label


@dataclass(frozen=True)
class QueueEntry:
    """One item in a labeling queue, with the probability it had of being picked."""

    position: int
    dataset: str
    item_id: str
    inclusion_prob: float
    stratum: str | None = None


#: Latest annotator row id per (dataset, item, annotator) for one rubric; filters are
#: appended. Adjudications are kept apart: an adjudicator who also labeled the item
#: keeps their own label.
_LATEST_IDS = (
    "SELECT MAX(id) FROM labels WHERE rubric_hash = ? "
    f"AND source != '{ADJUDICATED_SOURCE}'{{filters}} "
    "GROUP BY dataset, item_id, annotator"
)


def latest_labels_sql(columns: str, filters: str, *, include_skips: bool) -> str:
    """``columns`` of the latest annotator label per (dataset, item, annotator), oldest first.

    The one statement behind :meth:`LabelQueueMixin.latest_labels`, its lean and
    paged reads and the exports' streaming reads, so they all select the same rows.
    """
    return (f"SELECT {columns} FROM labels WHERE id IN ({_LATEST_IDS.format(filters=filters)})"
            + ("" if include_skips else " AND label IS NOT NULL") + " ORDER BY id")


def adjudicated_labels_sql(columns: str, filters: str, *, include_skips: bool) -> str:
    """``columns`` of the latest adjudication per item, oldest first (one statement for
    :meth:`LabelQueueMixin.adjudicated_labels` and the exports)."""
    return ("SELECT " + columns + " FROM labels WHERE id IN (SELECT MAX(id) FROM labels "
            f"WHERE rubric_hash = ? AND source = '{ADJUDICATED_SOURCE}'{filters} "
            "GROUP BY dataset, item_id)"
            + ("" if include_skips else " AND label IS NOT NULL") + " ORDER BY id")


class LabelQueueMixin(StoreBase):
    """Labels, queues and probe results (mixed into :class:`~judgekit.store.Store`)."""

    # -- human labels ------------------------------------------------------
    def add_label(self, label: Label) -> int:
        """Append a label (committed before returning); returns its row id."""
        with self._write() as conn:
            cursor = conn.execute(R.insert_sql("labels", R.LABEL_COLUMNS), R.label_to_row(label))
            row_id = cursor.lastrowid
        assert row_id is not None
        return row_id

    def add_labels(self, labels: Sequence[Label]) -> int:
        """Append many labels in one transaction (all or nothing); returns how many."""
        if not labels:
            return 0
        with self._write() as conn:
            conn.executemany(
                R.insert_sql("labels", R.LABEL_COLUMNS), [R.label_to_row(lb) for lb in labels]
            )
        return len(labels)

    def latest_labels(
        self,
        rubric_hash: str,
        *,
        dataset: str | None = None,
        annotator: str | None = None,
        include_skips: bool = False,
    ) -> list[Label]:
        """Latest label per (dataset, item, annotator); skips (label None) excluded.

        The latest row wins even when it is a skip: an annotator who skips an
        item they labeled earlier has withdrawn that label. ``include_skips=True``
        keeps those rows (the annotate app uses it to find where to resume).
        Ordered by when each latest label was given. Adjudicated labels are not
        an annotator's labels: :meth:`adjudicated_labels` reads them.
        """
        filters, params = self._label_filters(rubric_hash, dataset, annotator)
        sql = latest_labels_sql("*", filters, include_skips=include_skips)
        return [R.row_to_label(row) for row in self._rows(sql, params)]

    def latest_label_rows(self, rubric_hash: str, *, dataset: str | None = None) -> list[LabelRow]:
        """:meth:`latest_labels` with skips, as lean :class:`LabelRow` tuples (same rows, order).

        For reads over every label of a large set; :meth:`iter_latest_label_rows`
        yields the same rows without holding them all.
        """
        return list(self.iter_latest_label_rows(rubric_hash, dataset=dataset))

    def iter_latest_label_rows(
        self, rubric_hash: str, *, dataset: str | None = None
    ) -> Iterator[LabelRow]:
        """The rows of :meth:`latest_label_rows`, read and yielded a page at a time.

        The human reference folds 300,000 rows into one entry per item, so it never
        needs them all at once. The store's lock is held until the iteration ends.
        """
        convert = label_row_reader()
        for page in self.latest_label_pages(rubric_hash, dataset=dataset):
            yield from map(convert, page)

    def latest_label_pages(
        self, rubric_hash: str, *, dataset: str | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of :meth:`latest_label_rows` as ``sqlite3`` reads them, a page at a time:
        plain tuples in :data:`~judgekit.store.columns.LABEL_ROW_SELECT` order (``blind``
        and ``flagged`` as 0/1), for a caller that folds them without a row object each.
        """
        filters, params = self._label_filters(rubric_hash, dataset, None)
        yield from self._paged(latest_labels_sql(LABEL_ROW_SELECT, filters, include_skips=True),
                               params)

    def adjudicated_labels(
        self, rubric_hash: str, *, dataset: str | None = None, include_skips: bool = False
    ) -> list[Label]:
        """The latest adjudication per item (``source="adjudicate"``), oldest first.

        An adjudication is the item's reference label in reports; a later one by
        anyone replaces it. Adjudicated rows are never among :meth:`latest_labels`.
        ``include_skips`` keeps latest rows without a label (the adjudicate app's
        skips and notes), which withdraw nothing but are where a session resumes.
        """
        filters, params = self._label_filters(rubric_hash, dataset, None)
        sql = adjudicated_labels_sql("*", filters, include_skips=include_skips)
        return [R.row_to_label(row) for row in self._rows(sql, params)]

    def label_history(
        self, rubric_hash: str, dataset: str, item_id: str, annotator: str
    ) -> list[Label]:
        """Every label this annotator gave this item, oldest first (skips included)."""
        rows = self._rows(
            "SELECT * FROM labels WHERE rubric_hash = ? AND dataset = ? AND item_id = ? "
            "AND annotator = ? ORDER BY id",
            [rubric_hash, dataset, item_id, annotator],
        )
        return [R.row_to_label(row) for row in rows]

    def all_labels(self, rubric_hash: str, *, dataset: str | None = None) -> list[Label]:
        """Every label row for the rubric, oldest first (the full history, for export/audit)."""
        filters, params = self._label_filters(rubric_hash, dataset, None)
        sql = f"SELECT * FROM labels WHERE rubric_hash = ?{filters} ORDER BY id"
        rows = self._rows(sql, params)
        return [R.row_to_label(row) for row in rows]

    def label_counts(self, rubric_hash: str, *, dataset: str | None = None) -> dict[str, int]:
        """Annotator -> number of items with a current (non-skip) label."""
        filters, params = self._label_filters(rubric_hash, dataset, None)
        rows = self._rows(
            "SELECT annotator, COUNT(*) AS n FROM labels WHERE id IN "
            f"({_LATEST_IDS.format(filters=filters)}) AND label IS NOT NULL "
            "GROUP BY annotator ORDER BY annotator",
            params,
        )
        return {row["annotator"]: int(row["n"]) for row in rows}

    @staticmethod
    def _label_filters(
        rubric_hash: str, dataset: str | None, annotator: str | None
    ) -> tuple[str, list[Any]]:
        filters, params = "", [rubric_hash]
        if dataset is not None:
            filters += " AND dataset = ?"
            params.append(dataset)
        if annotator is not None:
            filters += " AND annotator = ?"
            params.append(annotator)
        return filters, params

    # -- labeling queues ---------------------------------------------------
    def save_queue(
        self,
        name: str,
        rubric_hash: str,
        strategy: str,
        seed: int | None,
        entries: Sequence[QueueEntry],
        *,
        params: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> None:
        """Persist a labeling queue atomically so later sessions resume the same selection.

        Saving an identical queue again is a no-op. A different queue under an
        existing name is a :class:`StoreError` unless ``replace=True`` (labels
        are unaffected either way). ``params`` records how the queue was drawn
        (e.g. sample size, dataset) and comes back in ``get_queue``'s metadata.
        """
        with self._write() as conn:
            existing = self.get_queue(name)  # read under the write lock: no race
            if existing is not None:
                meta, old_entries = existing
                same = (
                    meta["rubric_hash"] == rubric_hash
                    and meta["strategy"] == strategy
                    and meta["seed"] == seed
                    and old_entries == list(entries)
                )
                if same:
                    return
                if not replace:
                    raise StoreError(
                        f"queue {name!r} already exists with a different selection "
                        "(choose another name or replace it)"
                    )
            conn.execute("DELETE FROM queue_items WHERE queue = ?", [name])
            conn.execute("DELETE FROM queues WHERE name = ?", [name])
            conn.execute(
                "INSERT INTO queues (name, rubric_hash, strategy, seed, params, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [name, rubric_hash, strategy, seed, R.dump_json(params), R.utc_now()],
            )
            conn.executemany(
                "INSERT INTO queue_items (queue, position, dataset, item_id, inclusion_prob, "
                "stratum) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (name, e.position, e.dataset, e.item_id, e.inclusion_prob, e.stratum)
                    for e in entries
                ],
            )

    def get_queue(self, name: str) -> tuple[dict[str, Any], list[QueueEntry]] | None:
        """(queue metadata, entries in order) or None.

        Metadata keys: ``name``, ``rubric_hash``, ``strategy``, ``seed``,
        ``params`` (dict), ``created_at``, ``size``.
        """
        with self._lock:  # metadata and entries from one consistent read
            head = self._one("SELECT * FROM queues WHERE name = ?", [name])
            if head is None:
                return None
            rows = self._rows(
                "SELECT * FROM queue_items WHERE queue = ? ORDER BY position", [name]
            )
        entries = [
            QueueEntry(
                position=row["position"],
                dataset=row["dataset"],
                item_id=row["item_id"],
                inclusion_prob=row["inclusion_prob"],
                stratum=row["stratum"],
            )
            for row in rows
        ]
        meta = {
            "name": head["name"],
            "rubric_hash": head["rubric_hash"],
            "strategy": head["strategy"],
            "seed": head["seed"],
            "params": R.load_json(head["params"]),
            "created_at": head["created_at"],
            "size": len(entries),
        }
        return meta, entries

    def queues_marker(self) -> tuple[int, int, str]:
        """Changes whenever a queue is saved, replaced or deleted, read without the entries.

        (queues, last rowid, newest ``created_at``): a new queue moves the rowid, a
        deleted one the count, and a replaced one is deleted and saved again with a
        new ``created_at`` (and a new rowid unless it was the newest row).
        ``judgekit serve`` keeps who is assigned which queue until this moves.
        """
        row = self._tuples("SELECT COUNT(*), IFNULL(MAX(rowid), 0), IFNULL(MAX(created_at), '') "
                           "FROM queues")[0]
        return int(row[0]), int(row[1]), str(row[2])

    def list_queues(self, rubric_hash: str | None = None) -> list[str]:
        """Queue names, oldest first, optionally for one rubric."""
        sql, params = "SELECT name FROM queues", []
        if rubric_hash is not None:
            sql, params = sql + " WHERE rubric_hash = ?", [rubric_hash]
        return [row["name"] for row in self._rows(sql + " ORDER BY created_at, name", params)]

    # -- probe results -----------------------------------------------------
    def save_probe_result(
        self, run_id: str, probe: str, rubric_hash: str, result: Mapping[str, Any]
    ) -> None:
        """Store a probe's summary (JSON) with its run; the run must exist."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO probe_results (run_id, probe, rubric_hash, result, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [run_id, probe, rubric_hash, R.dump_json(result), R.utc_now()],
            )

    def probe_results(self, rubric_hash: str, probe: str | None = None) -> list[dict[str, Any]]:
        """Stored probe results, oldest first.

        Each is ``{"id", "run_id", "probe", "rubric_hash", "created_at", "result"}``
        with ``result`` the dict given to :meth:`save_probe_result`.
        """
        sql, params = "SELECT * FROM probe_results WHERE rubric_hash = ?", [rubric_hash]
        if probe is not None:
            sql, params = sql + " AND probe = ?", [rubric_hash, probe]
        return [
            {
                "id": row["id"],
                "run_id": row["run_id"],
                "probe": row["probe"],
                "rubric_hash": row["rubric_hash"],
                "created_at": row["created_at"],
                "result": R.load_json(row["result"]),
            }
            for row in self._rows(sql + " ORDER BY id", params)
        ]
