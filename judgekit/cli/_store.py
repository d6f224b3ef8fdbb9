"""Opening the store for commands that only read it: a missing file is an error.

A mistyped ``--db`` must never create an empty store that a report then reads as
"no labels yet".
"""

from __future__ import annotations

from judgekit.cli._common import resolve_db_path
from judgekit.errors import InputError
from judgekit.store import Store, open_store


def existing_store(db: str) -> Store:
    """The store at ``--db``; a missing file is an error (never created silently)."""
    path = resolve_db_path(db)
    if not path.is_file():
        raise InputError(f"no store at {path} (set --db or $JUDGEKIT_DB)")
    return open_store(path)
