"""Bringing a store's schema up to date: which migrations are pending, applying them safely.

The migrations themselves are in ``schema.py``. ``apply_migrations`` runs every
pending migration inside one ``BEGIN IMMEDIATE`` transaction, so two processes
opening a fresh file at the same moment cannot both create the tables, and a
failing migration leaves the file as it was. ``check_schema_known`` refuses a
store a newer judgekit migrated.
"""

from __future__ import annotations

import sqlite3

from judgekit.errors import StoreError
from judgekit.store._sqlite_utils import Database
from judgekit.store.schema import known_migrations, migrations


def check_schema_known(db: Database, path: object) -> None:
    """Refuse a store that a newer judgekit migrated: this code would misread or damage it.

    The store's newest applied migration and the newest one this code knows are
    both named, so the message says which judgekit to use.
    """
    known = set(known_migrations())
    applied = [m.name for m in migrations.applied(db)]
    unknown = [name for name in applied if name not in known]
    if unknown:
        from judgekit import __version__

        raise StoreError(
            f"store {path} has schema {applied[-1]}, newer than this judgekit {__version__} "
            f"knows (up to {known_migrations()[-1]}); upgrade judgekit to use it "
            f"(unknown migrations: {', '.join(unknown)})"
        )


def pending_migrations(db: Database) -> list[str]:
    """Names of migrations not yet applied to ``db`` (read-only)."""
    return [migration.name for migration in migrations.pending(db)]


def apply_migrations(db: Database) -> list[str]:
    """Apply pending migrations atomically under the write lock; returns their names."""
    if not migrations.pending(db):
        return []
    try:
        db.conn.execute("BEGIN IMMEDIATE")
        # Re-read inside the lock: another process may have migrated meanwhile.
        names = pending_migrations(db)
        migrations.apply(db)  # nested: each migration runs in a savepoint
        db.conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise StoreError(f"could not migrate the store: {exc}") from exc
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    return names
