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
from pathlib import Path

from judgekit.errors import StoreError
from judgekit.store._sqlite_utils import Database
from judgekit.store.access import AccessMixin, QueueProgressMixin
from judgekit.store.batches import BatchesMixin
from judgekit.store.claims import ClaimsMixin
from judgekit.store.imports import ImportsMixin
from judgekit.store.items import ItemsRubricsMixin
from judgekit.store.judges import JudgesMixin
from judgekit.store.labels import LabelQueueMixin, QueueEntry
from judgekit.store.migrate import apply_migrations, check_schema_known, pending_migrations
from judgekit.store.queues import QueueCountsMixin
from judgekit.store.runs import RunRecord, RunsJudgmentsMixin
from judgekit.store.splits import SplitsMixin
from judgekit.store.summary import JudgmentSummaryMixin

__all__ = ["DEFAULT_DB_ENV", "QueueEntry", "RunRecord", "Store", "open_store", "resolve_db_path"]

DEFAULT_DB_ENV = "JUDGEKIT_DB"
DEFAULT_DB_NAME = "judgekit.db"
#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_S = 30.0


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


def open_store(
    path: str | Path | None = None, *, create: bool = True, defer_migrations: bool = False
) -> Store:
    """Open (and migrate) the store at ``path``, ``$JUDGEKIT_DB`` or ./judgekit.db.

    ``create=False`` is for commands that only read: a missing file is a
    :class:`StoreError` (``no store at PATH``) instead of a new empty store, and
    a file the process may not write is opened read-only. A store migrated by a
    newer judgekit is refused either way, naming both schema versions.

    ``defer_migrations=True`` is for imports, which read only tables of the first
    schema before they write: an existing store of an older schema is upgraded
    inside the transaction of the first write (:class:`StoreBase`), so a file
    rejected before anything is committed leaves the store's schema unchanged too.
    A new file is migrated at once, as always.
    """
    resolved = resolve_db_path(path)
    if not create and not resolved.is_file():
        raise StoreError(f"no store at {resolved} (check --db or ${DEFAULT_DB_ENV})")
    read_only = not create and not _writable(resolved)
    defer = defer_migrations and resolved.is_file() and resolved.stat().st_size > 0
    if create and not _writable(resolved):
        raise StoreError(
            f"store {resolved} is read-only (the file or its folder cannot be written), "
            "and this command writes to it" if resolved.exists()
            else f"cannot create store {resolved}: its folder cannot be written"
        )
    try:
        if create:
            resolved.parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(resolved, "ro" if read_only else ("rwc" if create else "rw"))
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open store {resolved}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        db = Database(conn, execute_plugins=False)
        check_schema_known(db, resolved)
        if not read_only:
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if read_only and pending_migrations(db):
            raise StoreError(f"store {resolved} is read-only and needs upgrading to this "
                             "judgekit's schema; open it once where it can be written")
        deferred = pending_migrations(db) if defer and not read_only else []
        if not read_only and not deferred:
            apply_migrations(db)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"cannot open store {resolved}: {_reason(exc)}") from exc
    except BaseException:
        conn.close()
        raise
    store = Store(db, resolved)
    store.deferred_migrations = deferred
    return store


def _writable(path: Path) -> bool:
    """Whether this process may write the store (or create it) and its -wal/-shm beside it.

    A folder that does not exist yet counts as writable: ``open_store`` creates it.
    """
    folder = next((p for p in path.parents if p.exists()), Path("/"))
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _connect(path: Path, mode: str) -> sqlite3.Connection:
    """A connection in SQLite's URI ``mode`` (``rwc`` creates, ``rw`` does not, ``ro`` reads).

    A WAL store on a read-only disk cannot be opened ``ro`` when its ``-shm``
    file is absent (SQLite cannot create it), so it is opened ``immutable``:
    nothing can write it there anyway.
    """
    def connect(query: str) -> sqlite3.Connection:
        return sqlite3.connect(f"{path.as_uri()}?{query}", uri=True, timeout=BUSY_TIMEOUT_S,
                               check_same_thread=False)

    conn = connect(f"mode={mode}")
    if mode != "ro":
        return conn
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        conn = connect("mode=ro&immutable=1")
    return conn


def _reason(exc: sqlite3.Error) -> str:
    """SQLite's message, with the usual causes said plainly."""
    text = str(exc)
    if "readonly" in text:
        return f"{text} (the file or its folder is read-only)"
    if "disk is full" in text or "disk I/O" in text:
        return f"{text} (free some disk space)"
    return text


class Store(
    ItemsRubricsMixin, RunsJudgmentsMixin, LabelQueueMixin, JudgmentSummaryMixin, JudgesMixin,
    BatchesMixin, AccessMixin, QueueProgressMixin, QueueCountsMixin, ClaimsMixin, ImportsMixin,
    SplitsMixin,
):
    """All persistence. Safe to use from several processes at once (WAL, busy timeout).

    Build it with :func:`open_store`; usable as a context manager (closes on exit).
    Plumbing (lock, transactions) lives in :class:`StoreBase`; items, rubrics and
    the capabilities cache in :class:`ItemsRubricsMixin`; runs and judgments in
    :class:`RunsJudgmentsMixin`; labels, queues and
    probe results in :class:`LabelQueueMixin`; aggregate judgment queries (status
    counts, provenance, score samples) in :class:`JudgmentSummaryMixin`; judge
    identities and the judgments a run stands for in :class:`JudgesMixin`; prepared
    Batch API work and provider jobs in :class:`BatchesMixin`; API
    tokens in :class:`AccessMixin`; who opened a queue in :class:`QueueProgressMixin`; queue
    listings and progress through queues (whole-file queues counted whole) in
    :class:`QueueCountsMixin`;
    claims on calls in progress in :class:`ClaimsMixin`; batched imports in one
    transaction in :class:`ImportsMixin`.
    """
