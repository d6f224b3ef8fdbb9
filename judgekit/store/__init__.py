"""The single SQLite file that holds everything (items, rubrics, runs, judgments, labels).

Public surface: :class:`Store` (see ``store/database.py``) and :func:`open_store`.
The Store is assembled from one mixin per group of tables: ``items.py`` (items,
rubrics, capabilities), ``runs.py`` (runs, judgments), ``labels.py`` (labels,
queues, probe results), ``summary.py`` (aggregate judgment queries), ``judges.py``
and ``batches.py`` (prepared Batch API work and provider jobs).
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
from judgekit.store.judges import JUDGE_RUN_KINDS, Judge, JudgmentSelection, judge_endpoint
from judgekit.store.summary import JudgmentSummary, ScorePoint

__all__ = [
    "DEFAULT_DB_ENV",
    "JUDGE_RUN_KINDS",
    "Judge",
    "JudgmentSelection",
    "JudgmentSummary",
    "QueueEntry",
    "RunRecord",
    "ScorePoint",
    "Store",
    "judge_endpoint",
    "open_store",
    "resolve_db_path",
]
