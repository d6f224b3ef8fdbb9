"""Store plumbing shared by the store's parts: the connection, its lock, transactions.

Every write goes through :meth:`StoreBase._write` (``BEGIN IMMEDIATE`` ... ``COMMIT``)
so concurrent writers queue on SQLite's busy timeout instead of failing, and a
half-done write is rolled back. Reads take the same lock because one
``sqlite3`` connection is shared by threads.

A store opened with deferred migrations (``open_store(..., defer_migrations=True)``,
the imports) is upgraded inside the transaction of its first write: a file
rejected on its last line rolls the upgrade back with everything else, so bad
input leaves an older store's schema as it was.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from judgekit.errors import StoreError
from judgekit.store._sqlite_utils import Database
from judgekit.store.schema import migrations

#: Keys per ``IN (...)`` list: far below SQLite's variable limit, large enough to be fast.
CHUNK = 500


def chunks(values: Sequence[str], size: int = CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def marks(n: int) -> str:
    """``?, ?, ?`` for an ``IN`` list of ``n`` values."""
    return ", ".join("?" * n)


def where_clause(filters: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """``WHERE a = ? AND b = ?`` for the filters that are not None (column names are ours)."""
    clauses = [f"{column} = ?" for column, value in filters.items() if value is not None]
    params = [value for value in filters.values() if value is not None]
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def write_failure(path: Path, exc: sqlite3.Error) -> str:
    """One line saying why a write to the store failed; earlier commits are kept."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"store {path} is busy: {text}"
    if "full" in text:
        return f"store {path}: the disk is full ({text}); what was committed before is kept"
    if "readonly" in text:
        return f"store {path} is read-only ({text})"
    return f"cannot write to store {path}: {text}"


class StoreBase:
    """The connection and the two ways to use it: ``_write()`` and ``_rows()``."""

    path: Path

    def __init__(self, db: Database, path: Path) -> None:
        self.db = db  # the sqlite_utils Database, for ad-hoc inspection
        self.path = path
        self._conn = db.conn
        self._lock = threading.RLock()
        #: Migrations still to apply, inside the next write's transaction (deferred opening).
        self.deferred_migrations: list[str] = []

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(write_failure(self.path, exc)) from exc
            try:
                if self.deferred_migrations:
                    migrations.apply(self.db)  # each in a savepoint of this transaction
                yield conn
                conn.execute("COMMIT")
                self.deferred_migrations = []
            except sqlite3.IntegrityError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"store integrity error: {exc}") from exc
            except sqlite3.OperationalError as exc:  # disk full, read-only file, I/O error
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(write_failure(self.path, exc)) from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _rows(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._conn.cursor()
            cursor.row_factory = sqlite3.Row
            return cursor.execute(sql, params).fetchall()

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Plain tuples: faster than ``sqlite3.Row`` for bulk reads converted positionally."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _paged(
        self, sql: str, params: Sequence[Any], page: int = 10_000
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Plain tuples a page at a time: a large read never holds every raw row at once.

        The caller converts each page into smaller rows (shared strings, fewer
        columns) or folds it away; the store's lock is held until the read ends.
        """
        with self._lock:
            cursor = self._conn.execute(sql, params)
            while rows := cursor.fetchmany(page):
                yield rows

    def _one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        found = self._rows(sql, params)
        return found[0] if found else None

    def get_meta(self, key: str) -> str | None:
        """A fact about the store file (table ``store_meta``), or None."""
        row = self._one("SELECT value FROM store_meta WHERE key = ?", [key])
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        """Record a fact about the store file (``created_by = demo`` marks the demo's store)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO store_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
