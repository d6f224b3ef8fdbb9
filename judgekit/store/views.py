"""The browsing views' SQL: ``latest_judgments``, ``latest_labels``, ``judge_vs_human``.

The views apply the store's "latest wins" rules in SQL, so Datasette or ``sqlite3``
show what the reports use without knowing those rules. Nothing in judgekit reads
them; the migrations in ``schema.py`` create them.

Each definition is kept as the migration that created it ran it, and named after
that migration: a store holds the text a migration ran (``sqlite_master.sql``,
indentation included), so an old definition is never edited. A change to the
views is a new migration that drops them and creates them from new constants
here; ``CURRENT`` then names those, and ``tests/integration/test_schema_history.py``
checks that a fresh store's views are exactly ``CURRENT``.
"""

from __future__ import annotations

#: 0005: each key's latest row picked by ``id IN (SELECT MAX(id) ... GROUP BY key)``.
#: Compares ``source`` with ``'adjudicated'``, a value never stored (fixed by 0011).
VIEWS_0005 = """CREATE VIEW latest_judgments AS
            SELECT * FROM judgments
            WHERE id IN (SELECT MAX(id) FROM judgments GROUP BY cache_key);
        CREATE VIEW latest_labels AS
            SELECT * FROM labels
            WHERE id IN (
                SELECT MAX(id) FROM labels
                GROUP BY rubric_hash, dataset, item_id, annotator, source = 'adjudicated'
            );
        CREATE VIEW judge_vs_human AS
            SELECT j.rubric_name, j.rubric_version, j.rubric_hash, j.dataset, j.item_id,
                   j.model_requested AS judge_model, j.base_url AS judge_endpoint,
                   j.run_id, j.label AS judge_label, j.score AS judge_score,
                   l.annotator, l.source AS label_source, l.blind, l.label AS human_label,
                   CASE WHEN l.label IS NULL THEN NULL ELSE j.label = l.label END AS agree
            FROM latest_judgments j
            JOIN latest_labels l
              ON l.rubric_hash = j.rubric_hash AND l.dataset = j.dataset
             AND l.item_id = j.item_id
            WHERE j.status = 'ok' AND j.variant = '' AND j.sample_index = 0"""

#: 0009: a row is the latest of its key when no later row of that key exists.
LATEST_JUDGMENTS_0009 = """CREATE VIEW latest_judgments AS
            SELECT * FROM judgments AS j
            WHERE NOT EXISTS (SELECT 1 FROM judgments AS later
                              WHERE later.cache_key = j.cache_key AND later.id > j.id)"""


def _latest_labels(adjudication_source: str) -> str:
    """``latest_labels`` of 0009 and 0011: the same text but for the source compared with."""
    return f"""CREATE VIEW latest_labels AS
            SELECT * FROM labels AS l
            WHERE NOT EXISTS (SELECT 1 FROM labels AS later
                              WHERE later.rubric_hash = l.rubric_hash
                                AND later.dataset = l.dataset AND later.item_id = l.item_id
                                AND later.annotator = l.annotator AND later.id > l.id
                                AND (later.source = '{adjudication_source}')
                                    = (l.source = '{adjudication_source}'))"""


#: 0009 kept 0005's mistaken ``'adjudicated'``.
LATEST_LABELS_0009 = _latest_labels("adjudicated")

#: 0011: adjudications are stored as ``'adjudicate'`` (``judgekit.types.ADJUDICATED_SOURCE``).
LATEST_LABELS_0011 = _latest_labels("adjudicate")

#: 0009 (and 0011 unchanged): starts from the labels (``CROSS JOIN`` fixes SQLite's
#: loop order) and finds each item's judgments by ``judgments_by_rubric_dataset``.
JUDGE_VS_HUMAN_0009 = """CREATE VIEW judge_vs_human AS
            SELECT j.rubric_name, j.rubric_version, j.rubric_hash, j.dataset, j.item_id,
                   j.model_requested AS judge_model, j.base_url AS judge_endpoint,
                   j.run_id, j.label AS judge_label, j.score AS judge_score,
                   l.annotator, l.source AS label_source, l.blind, l.label AS human_label,
                   CASE WHEN l.label IS NULL THEN NULL ELSE j.label = l.label END AS agree
            FROM latest_labels l
            CROSS JOIN latest_judgments j
              ON l.rubric_hash = j.rubric_hash AND l.dataset = j.dataset
             AND l.item_id = j.item_id
            WHERE j.status = 'ok' AND j.variant = '' AND j.sample_index = 0"""

#: The views a fresh store has now, by name (the newest migration's definitions).
CURRENT: dict[str, str] = {
    "latest_judgments": LATEST_JUDGMENTS_0009,
    "latest_labels": LATEST_LABELS_0011,
    "judge_vs_human": JUDGE_VS_HUMAN_0009,
}
