"""Bulk imports written a batch at a time inside one transaction: all stored or none.

A file of 200,000 verdicts or 300,000 labels is validated and written in
batches so that memory stays flat, but every batch goes into the same
``BEGIN IMMEDIATE`` transaction: a problem found on the last line (raised out
of the ``with`` block) still leaves the store exactly as it was. The session
reads what the store held *before* the import (latest outcomes, current
labels) so that "already stored" means the same whether a file is written in
one batch or in fifty.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from judgekit.store import rows as R
from judgekit.store._base import StoreBase, chunks, marks
from judgekit.store.items import ItemsRubricsMixin
from judgekit.store.runs import RunRecord, RunsJudgmentsMixin
from judgekit.types import ADJUDICATED_SOURCE, Item, Rubric

#: SQLite page cache (KiB) during an import (the default is 2,000).
IMPORT_CACHE_KIB = 32_768
#: What decides whether an imported verdict changes anything: (status, label, reasoning, score).
Outcome = tuple[str, str | None, str | None, float | None]
#: What decides whether an imported label changes anything: (label, note, flagged).
LabelState = tuple[str | None, str | None, bool]
#: A label's fields in ``LABEL_COLUMNS`` order, the order of :class:`~judgekit.types.Label`'s:
#: dataset, item_id, rubric_hash, annotator, label, note, flagged, blind, seconds,
#: created_at, source.
LabelRow = tuple[str, str, str, str, str | None, str | None, bool, bool, float | None, str, str]


class ImportSession:
    """Writes of one import, all in the transaction of :meth:`ImportsMixin.importing`."""

    def __init__(self, store: StoreBase, conn: sqlite3.Connection) -> None:
        self._store, self._conn = store, conn
        row = conn.execute("SELECT IFNULL(MAX(id), 0) FROM labels").fetchone()
        self._labels_before = int(row[0])  # label rows after this one are this import's
        self.started_at = R.utc_now()

    def save_rubric(self, rubric: Rubric) -> None:
        self._conn.execute(
            "INSERT OR IGNORE INTO rubrics (sha256, name, version, text, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [rubric.sha256, rubric.name, rubric.version, rubric.source_text, R.utc_now()],
        )

    # -- items -------------------------------------------------------------------
    def add_items(self, dataset: str, items: Sequence[Item], *, replace: bool = False) -> int:
        """Items as :meth:`~judgekit.store.items.ItemsRubricsMixin.import_items` stores them
        (same checks, same count of new or changed), but in this import's transaction:
        ``import --from TOOL`` stores a file's items and its verdicts all or nothing."""
        if not isinstance(self._store, ItemsRubricsMixin):
            raise TypeError("items are stored through a judgekit Store")
        return self._store._import_batch(self._conn, dataset, items, R.utc_now(), set(),
                                         replace)

    # -- verdicts ----------------------------------------------------------------
    def item_hashes(self, dataset: str, item_ids: Iterable[str]) -> dict[str, str]:
        """Stored content hash per item id (what an imported verdict's cache key names)."""
        found: dict[str, str] = {}
        for chunk in chunks(list(dict.fromkeys(item_ids))):
            found.update(self._conn.execute(
                f"SELECT id, content_hash FROM items WHERE dataset = ? "
                f"AND id IN ({marks(len(chunk))})", [dataset, *chunk]))
        return found

    def latest_outcomes(self, cache_keys: Sequence[str]) -> dict[str, Outcome]:
        """(status, label, reasoning, score) of the latest judgment per key, where one exists."""
        found: dict[str, Outcome] = {}
        for chunk in chunks(list(dict.fromkeys(cache_keys))):
            for key, *outcome in self._conn.execute(
                "SELECT cache_key, status, label, reasoning, score FROM judgments WHERE id IN "
                f"(SELECT MAX(id) FROM judgments WHERE cache_key IN ({marks(len(chunk))}) "
                "GROUP BY cache_key)", list(chunk)):
                found[key] = (outcome[0], outcome[1], outcome[2], outcome[3])
        return found

    def add_run(self, run: RunRecord) -> None:
        RunsJudgmentsMixin._insert_run(self._conn, run)

    def set_run_summary(self, run_id: str, summary: Mapping[str, Any]) -> None:
        self._conn.execute("UPDATE runs SET summary = ? WHERE id = ?",
                           [R.dump_json(summary), run_id])

    def add_judgment_values(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Judgments as value tuples in ``JUDGMENT_COLUMNS`` order (their runs added first)."""
        self._conn.executemany(R.JUDGMENT_VALUES_INSERT_SQL, rows)

    # -- labels ------------------------------------------------------------------
    def current_labels(
        self, rubric_hash: str, dataset: str, item_ids: Iterable[str], *, adjudicated: bool
    ) -> dict[tuple[str, str], LabelState]:
        """The latest row before this import per (item, annotator) among ``item_ids``.

        With ``adjudicated`` the latest adjudication per item (keyed ``(item, "")``).
        Skips count: the latest row wins even without a label, as in
        :meth:`~judgekit.store.labels.LabelQueueMixin.latest_labels`.
        """
        source = "source = ?" if adjudicated else "source != ?"
        group = "item_id" if adjudicated else "item_id, annotator"
        found: dict[tuple[str, str], LabelState] = {}
        for chunk in chunks(list(dict.fromkeys(item_ids))):
            rows = self._conn.execute(
                "SELECT item_id, annotator, label, note, flagged FROM labels WHERE id IN "
                f"(SELECT MAX(id) FROM labels WHERE rubric_hash = ? AND dataset = ? AND {source} "
                f"AND id <= ? AND item_id IN ({marks(len(chunk))}) GROUP BY {group})",
                [rubric_hash, dataset, ADJUDICATED_SOURCE, self._labels_before, *chunk])
            for item_id, annotator, label, note, flagged in rows:
                found[(item_id, "" if adjudicated else annotator)] = (label, note, bool(flagged))
        return found

    def add_label_rows(self, rows: Sequence[LabelRow]) -> None:
        """Append labels given as their fields; those without a ``created_at`` get the
        session's start time."""
        now = self.started_at
        self._conn.executemany(
            f"INSERT INTO labels ({', '.join(R.LABEL_COLUMNS)}) "
            f"VALUES ({marks(len(R.LABEL_COLUMNS))})",
            [(*row[:6], int(row[6]), int(row[7]), row[8], row[9] or now, row[10])
             for row in rows])


@contextmanager
def large_page_cache(conn: sqlite3.Connection, kib: int = IMPORT_CACHE_KIB) -> Iterator[None]:
    """SQLite's page cache raised to ``kib`` for the block, then restored.

    For bulk writes: index pages of random keys (cache keys, item ids) are then
    written once each instead of being evicted and read back every few rows.
    """
    before = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{int(kib)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {int(before)}")


class ImportsMixin(StoreBase):
    """Batched imports in one transaction (mixed into :class:`~judgekit.store.Store`)."""

    @contextmanager
    def importing(self) -> Iterator[ImportSession]:
        """One transaction for a whole import: committed when the block ends, else rolled back.

        SQLite's page cache is raised to :data:`IMPORT_CACHE_KIB` meanwhile: index
        pages of random keys (cache keys, item ids) are then written once each
        instead of being evicted and read back for every few rows.
        """
        with self._lock, large_page_cache(self._conn), self._write() as conn:
            yield ImportSession(self, conn)
