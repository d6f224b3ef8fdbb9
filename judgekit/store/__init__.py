"""The single SQLite file that holds everything (items, rubrics, runs, judgments, labels).

Public surface: :class:`Store` (see ``store/database.py``) and :func:`open_store`.
``docs/store.md`` describes the tables, the concurrency model and the migrations.
"""

from __future__ import annotations

from judgekit.store.database import (
    DEFAULT_DB_ENV,
    QueueEntry,
    RunRecord,
    Store,
    open_store,
    resolve_db_path,
)
from judgekit.store.summary import JudgmentSummary, ScorePoint

__all__ = [
    "DEFAULT_DB_ENV",
    "JudgmentSummary",
    "QueueEntry",
    "RunRecord",
    "ScorePoint",
    "Store",
    "open_store",
    "resolve_db_path",
]
