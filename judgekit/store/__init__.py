"""The single SQLite file that holds everything (items, rubrics, runs, judgments, labels).

Public surface: :class:`Store` (see ``store/database.py``) and :func:`open_store`.
"""

from __future__ import annotations

from judgekit.store.database import DEFAULT_DB_ENV, QueueEntry, RunRecord, Store, open_store

__all__ = ["DEFAULT_DB_ENV", "QueueEntry", "RunRecord", "Store", "open_store"]
