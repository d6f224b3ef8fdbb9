"""SQLite store: WAL mode, named migrations, one transaction per write.

CONTRACT (other modules code against these signatures; keep them stable):
every method below is implemented; domain types come from ``judgekit.types``.

Why it is built this way:

- Every write runs in ``BEGIN IMMEDIATE`` (the write lock is taken up front), so
  a judge run and the annotate app writing to one file wait for each other via
  ``busy_timeout`` instead of failing with "database is locked" (a deferred
  transaction that upgrades from read to write cannot wait in WAL mode).
- WAL with ``synchronous=NORMAL``: a committed transaction survives the process
  being killed (``kill -9``); only an OS crash or power loss may drop the last
  few commits.
- One connection shared by threads (``check_same_thread=False``) behind a lock,
  so Textual thread workers may use the same :class:`Store`.
- Labels and judgments are append-only; "latest wins" is computed by queries on
  autoincrement ids, so history is never lost.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from judgekit.errors import InputError, StoreError
from judgekit.store import rows as R
from judgekit.store._base import chunks, marks, where_clause
from judgekit.store.judges import JudgesMixin, JudgmentSelection
from judgekit.store.labels import LabelQueueMixin, QueueEntry
from judgekit.store.schema import apply_migrations
from judgekit.store.summary import JudgmentSummaryMixin
from judgekit.types import Item, Judgment, Rubric

__all__ = ["DEFAULT_DB_ENV", "QueueEntry", "RunRecord", "Store", "open_store", "resolve_db_path"]

DEFAULT_DB_ENV = "JUDGEKIT_DB"
DEFAULT_DB_NAME = "judgekit.db"
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class RunRecord:
    """One invocation of the runner (a judge run, a probe run, or an import)."""

    id: str
    kind: str  # "judge" | "probe:position" | "probe:length" | "probe:consistency" | "import"
    dataset: str
    rubric_hash: str
    model: str
    base_url: str
    sampling: Mapping[str, Any]
    capabilities: Mapping[str, Any]
    judgekit_version: str
    started_at: str
    finished_at: str | None = None
    summary: Mapping[str, Any] = field(default_factory=dict)


def resolve_db_path(path: str | Path | None = None) -> Path:
    """``path``, else ``$JUDGEKIT_DB``, else ``./judgekit.db`` (as an absolute path)."""
    chosen = path if path not in (None, "") else os.environ.get(DEFAULT_DB_ENV) or DEFAULT_DB_NAME
    return Path(chosen).expanduser().absolute()


def _enable_wal(conn: sqlite3.Connection, deadline_s: float = BUSY_TIMEOUT_S) -> None:
    """Switch the file to WAL mode, waiting out other processes doing the same.

    Changing the journal mode needs an exclusive lock, and SQLite reports
    "database is locked" at once (without calling the busy handler) when several
    processes open a fresh file together, e.g. a judge run and the annotate app
    started side by side. So retry with a short backoff until the deadline.
    """
    deadline = time.monotonic() + deadline_s
    delay = 0.005
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating and migrating) the store at ``path``, ``$JUDGEKIT_DB`` or ./judgekit.db."""
    resolved = resolve_db_path(path)
    try:
        resolved.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(resolved), timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open store {resolved}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        db = Database(conn, execute_plugins=False)
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        apply_migrations(db)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"cannot open store {resolved}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return Store(db, resolved)


class Store(LabelQueueMixin, JudgmentSummaryMixin, JudgesMixin):
    """All persistence. Safe to use from several processes at once (WAL, busy timeout).

    Build it with :func:`open_store`; usable as a context manager (closes on exit).
    Plumbing (lock, transactions) lives in :class:`StoreBase`; labels, queues and
    probe results in :class:`LabelQueueMixin`; aggregate judgment queries (status
    counts, provenance, score samples) in :class:`JudgmentSummaryMixin`; judge
    identities and the judgments a run stands for in :class:`JudgesMixin`.
    """

    # -- items -------------------------------------------------------------
    def import_items(self, dataset: str, items: Sequence[Item], *, replace: bool = False) -> int:
        """Insert items atomically (all or nothing); returns how many were new/changed.

        Re-importing identical items is a no-op. An id whose content (content
        hash, slice or cluster) changed is an :class:`InputError` naming the id,
        unless ``replace=True``, which updates it in place.
        """
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise InputError(f"dataset {dataset!r}: duplicate item id {item.id!r}")
            seen.add(item.id)
        now = R.utc_now()
        new_rows = [R.item_to_row(dataset, item, now) for item in items]
        changed = 0
        with self._write() as conn:
            existing: dict[str, tuple[Any, ...]] = {}
            ids = [row["id"] for row in new_rows]
            for chunk in chunks(ids):
                cursor = conn.execute(
                    "SELECT id, content_hash, slice, cluster FROM items "
                    f"WHERE dataset = ? AND id IN ({marks(len(chunk))})",
                    [dataset, *chunk],
                )
                for item_id, content_hash, slice_, cluster in cursor:
                    existing[item_id] = (content_hash, slice_, cluster)
            inserts, updates = [], []
            for row in new_rows:
                old = existing.get(row["id"])
                if old is None:
                    inserts.append(row)
                elif old != R.item_fingerprint(row):
                    if not replace:
                        raise InputError(
                            f"dataset {dataset!r}: item {row['id']!r} already exists with "
                            "different content (import it with --replace, or replace=True, "
                            "to update it)"
                        )
                    updates.append(row)
            conn.executemany(R.insert_sql("items", R.ITEM_COLUMNS), inserts)
            conn.executemany(
                "UPDATE items SET input = :input, response = :response, "
                "response_a = :response_a, response_b = :response_b, reference = :reference, "
                "slice = :slice, cluster = :cluster, meta = :meta, "
                "content_hash = :content_hash, created_at = :created_at "
                "WHERE dataset = :dataset AND id = :id",
                updates,
            )
            changed = len(inserts) + len(updates)
        return changed

    def get_item(self, dataset: str, item_id: str) -> Item | None:
        row = self._one("SELECT * FROM items WHERE dataset = ? AND id = ?", [dataset, item_id])
        return None if row is None else R.row_to_item(row)

    def items_by_ids(self, dataset: str, item_ids: Iterable[str]) -> dict[str, Item]:
        """Items of ``dataset`` among ``item_ids`` (missing ids are simply absent)."""
        wanted = list(dict.fromkeys(item_ids))
        found: dict[str, Item] = {}
        for chunk in chunks(wanted):
            for row in self._rows(
                f"SELECT * FROM items WHERE dataset = ? AND id IN ({marks(len(chunk))})",
                [dataset, *chunk],
            ):
                found[row["id"]] = R.row_to_item(row)
        return found

    def item_ids(self, dataset: str) -> list[str]:
        """All item ids of ``dataset`` in import order (cheap: no item text is read)."""
        rows = self._rows("SELECT id FROM items WHERE dataset = ? ORDER BY rowid", [dataset])
        return [row["id"] for row in rows]

    def iter_items(self, dataset: str, *, page_size: int = 1000) -> Iterator[Item]:
        """Items in import order, read ``page_size`` at a time (flat memory for big datasets)."""
        last = -1
        while True:
            page = self._rows(
                "SELECT rowid AS _rowid, * FROM items WHERE dataset = ? AND rowid > ? "
                "ORDER BY rowid LIMIT ?",
                [dataset, last, page_size],
            )
            if not page:
                return
            for row in page:
                yield R.row_to_item(row)
            last = page[-1]["_rowid"]

    def count_items(self, dataset: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM items WHERE dataset = ?", [dataset])
        return 0 if row is None else int(row["n"])

    def datasets(self) -> list[str]:
        return [row["dataset"] for row in self._rows(
            "SELECT DISTINCT dataset FROM items ORDER BY dataset")]

    # -- rubrics -----------------------------------------------------------
    def save_rubric(self, rubric: Rubric) -> None:
        """Store the rubric's full text once per sha256 (idempotent)."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO rubrics (sha256, name, version, text, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [rubric.sha256, rubric.name, rubric.version, rubric.source_text, R.utc_now()],
            )

    def get_rubric_text(self, sha256: str) -> str | None:
        row = self._one("SELECT text FROM rubrics WHERE sha256 = ?", [sha256])
        return None if row is None else str(row["text"])

    def list_rubrics(self) -> list[dict[str, Any]]:
        """Stored rubrics (sha256, name, version, created_at), oldest first; no text."""
        rows = self._rows(
            "SELECT sha256, name, version, created_at FROM rubrics ORDER BY created_at, sha256")
        return [dict(row) for row in rows]

    # -- runs --------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        """Record a run; its id must be new. Credentials in ``base_url`` are stripped."""
        with self._write() as conn:
            self._insert_run(conn, run)

    @staticmethod
    def _insert_run(conn: sqlite3.Connection, run: RunRecord) -> None:
        try:
            conn.execute(
                "INSERT INTO runs (id, kind, dataset, rubric_hash, model, base_url, sampling, "
                "capabilities, judgekit_version, started_at, finished_at, summary) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run.id, run.kind, run.dataset, run.rubric_hash, run.model,
                    R.strip_credentials(run.base_url), R.dump_json(run.sampling),
                    R.dump_json(run.capabilities), run.judgekit_version,
                    run.started_at or R.utc_now(), run.finished_at, R.dump_json(run.summary),
                ],
            )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"run {run.id!r} already exists") from exc

    def finish_run(self, run_id: str, summary: Mapping[str, Any]) -> None:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?",
                [R.utc_now(), R.dump_json(summary), run_id],
            )
            if cursor.rowcount == 0:
                raise StoreError(f"unknown run {run_id!r}")

    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._one("SELECT * FROM runs WHERE id = ?", [run_id])
        return None if row is None else _row_to_run(row)

    def list_runs(
        self, *, rubric_hash: str | None = None, kind: str | None = None
    ) -> list[RunRecord]:
        """Runs in start order, optionally filtered."""
        where, params = where_clause({"rubric_hash": rubric_hash, "kind": kind})
        rows = self._rows(f"SELECT * FROM runs {where} ORDER BY started_at, rowid", params)
        return [_row_to_run(row) for row in rows]

    # -- judgments ---------------------------------------------------------
    def record_judgment(self, judgment: Judgment) -> None:
        """Commit one judgment immediately (its own transaction). A later row with
        the same cache_key supersedes an earlier one (history is kept).

        The run must exist (:meth:`create_run` first): every row stays traceable
        to its run. ``base_url`` is stored without credentials.
        """
        self.record_judgments([judgment])

    def record_judgments(self, judgments: Sequence[Judgment]) -> int:
        """Commit many judgments in one transaction (all or nothing); returns the count."""
        if not judgments:
            return 0
        with self._write() as conn:
            self._insert_judgments(conn, judgments)
        return len(judgments)

    def record_import(self, run: RunRecord, judgments: Sequence[Judgment]) -> int:
        """Create ``run`` and insert its ``judgments`` in one transaction (for imports)."""
        return self.record_imports([(run, judgments)])

    def record_imports(self, batches: Sequence[tuple[RunRecord, Sequence[Judgment]]]) -> int:
        """Several (run, judgments) pairs in one transaction: all stored or none."""
        with self._write() as conn:
            for run, judgments in batches:
                self._insert_run(conn, run)
                self._insert_judgments(conn, judgments)
        return sum(len(judgments) for _, judgments in batches)

    @staticmethod
    def _insert_judgments(conn: sqlite3.Connection, judgments: Sequence[Judgment]) -> None:
        try:
            conn.executemany(
                R.insert_sql("judgments", R.JUDGMENT_COLUMNS),
                [R.judgment_to_row(j) for j in judgments],
            )
        except sqlite3.IntegrityError as exc:
            runs = sorted({j.run_id for j in judgments})
            raise StoreError(
                f"cannot record judgments of run(s) {', '.join(runs)}: {exc} "
                "(create the run with create_run first)"
            ) from exc

    def cached_judgments(self, cache_keys: Iterable[str]) -> dict[str, Judgment]:
        """Latest judgment per cache key among ``cache_keys`` (any status)."""
        keys = list(dict.fromkeys(cache_keys))
        found: dict[str, Judgment] = {}
        for chunk in chunks(keys):
            for row in self._tuples(
                f"SELECT {R.JUDGMENT_SELECT} FROM judgments WHERE id IN (SELECT MAX(id) "
                f"FROM judgments WHERE cache_key IN ({marks(len(chunk))}) GROUP BY cache_key)",
                list(chunk),
            ):
                judgment = R.row_to_judgment(row)
                found[judgment.cache_key] = judgment
        return found

    def judgments(
        self,
        *,
        rubric_hash: str | None = None,
        run_id: str | None = None,
        dataset: str | None = None,
        variant: str | None = None,
        latest_only: bool = True,
        model: str | None = None,
        status: str | None = None,
        endpoint: str | None = None,
        sampling: Mapping[str, Any] | None = None,
        run_kinds: Sequence[str] | None = None,
    ) -> list[Judgment]:
        """Judgments filtered by the given fields; ``latest_only`` keeps the latest per cache key.

        Filters apply first, then "latest per cache key" among what is left (so
        ``run_id=X`` gives run X's own latest rows). ``model`` matches the model
        as requested; ``status`` is applied after the latest row is chosen.
        ``endpoint``, ``sampling`` and ``run_kinds`` select a judge and the kinds of
        run that wrote the rows (see :class:`~judgekit.store.judges.JudgmentSelection`).
        Rows come in insertion order.
        """
        where, params = JudgmentSelection(
            rubric_hash, run_id, dataset, variant, model, endpoint, sampling,
            None if run_kinds is None else tuple(run_kinds),
        ).where()
        if latest_only:
            sql = (f"SELECT {R.JUDGMENT_SELECT} FROM judgments WHERE id IN "
                   f"(SELECT MAX(id) FROM judgments {where} GROUP BY cache_key)")
        else:
            sql = f"SELECT {R.JUDGMENT_SELECT} FROM judgments {where}"
        if status is not None:
            sql += (" AND" if latest_only or where else " WHERE") + " status = ?"
            params.append(status)
        rows = self._tuples(sql + " ORDER BY id", params)
        return [R.row_to_judgment(row) for row in rows]

    def judgments_for_items(
        self,
        rubric_hash: str,
        dataset: str,
        item_ids: Iterable[str],
        *,
        variant: str | None = None,
        run_id: str | None = None,
        model: str | None = None,
        endpoint: str | None = None,
        sampling: Mapping[str, Any] | None = None,
        run_kinds: Sequence[str] | None = None,
    ) -> dict[str, list[Judgment]]:
        """Latest judgments per cache key for the given items, grouped by item id.

        For the annotate app (judge verdict next to an item), disagreement
        sampling and reports, without loading every judgment of a large dataset.
        ``variant``, ``run_id``, ``model`` (as requested), ``endpoint``, ``sampling``
        and ``run_kinds`` filter like :meth:`judgments`; each item's rows come in
        insertion order.
        """
        ids = list(dict.fromkeys(item_ids))
        grouped: dict[str, list[Judgment]] = {}
        extra, extra_params = JudgmentSelection(
            run_id=run_id, variant=variant, model=model, endpoint=endpoint, sampling=sampling,
            run_kinds=None if run_kinds is None else tuple(run_kinds),
        ).where()
        extra = extra.replace("WHERE", "AND", 1)
        for chunk in chunks(ids):
            rows = self._tuples(
                f"SELECT {R.JUDGMENT_SELECT} FROM judgments WHERE id IN (SELECT MAX(id) "
                "FROM judgments WHERE rubric_hash = ? AND dataset = ? "
                f"AND item_id IN ({marks(len(chunk))}) "
                f"{extra} GROUP BY cache_key) ORDER BY id",
                [rubric_hash, dataset, *chunk, *extra_params],
            )
            for row in rows:
                judgment = R.row_to_judgment(row)
                grouped.setdefault(judgment.item_id, []).append(judgment)
        return grouped

    def count_judgments(self, *, rubric_hash: str | None = None, run_id: str | None = None) -> int:
        """Number of judgment rows (history included) matching the filters."""
        where, params = where_clause({"rubric_hash": rubric_hash, "run_id": run_id})
        row = self._one(f"SELECT COUNT(*) AS n FROM judgments {where}", params)
        return 0 if row is None else int(row["n"])

    # -- capabilities cache -----------------------------------------------
    def get_capabilities(self, base_url: str, model: str) -> dict[str, Any] | None:
        row = self._one(
            "SELECT capabilities FROM capabilities WHERE base_url = ? AND model = ?",
            [R.strip_credentials(base_url), model],
        )
        return None if row is None else R.load_json(row["capabilities"])

    def set_capabilities(self, base_url: str, model: str, capabilities: Mapping[str, Any]) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO capabilities (base_url, model, capabilities, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (base_url, model) DO UPDATE SET "
                "capabilities = excluded.capabilities, updated_at = excluded.updated_at",
                [R.strip_credentials(base_url), model, R.dump_json(capabilities), R.utc_now()],
            )


def _row_to_run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(
        id=row["id"],
        kind=row["kind"],
        dataset=row["dataset"],
        rubric_hash=row["rubric_hash"],
        model=row["model"],
        base_url=row["base_url"],
        sampling=R.load_json(row["sampling"]),
        capabilities=R.load_json(row["capabilities"]),
        judgekit_version=row["judgekit_version"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        summary=R.load_json(row["summary"]),
    )
