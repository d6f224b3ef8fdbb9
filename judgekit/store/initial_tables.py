"""The tables of judgekit's first release, as migration ``0001_initial`` creates them.

Kept apart from ``schema.py`` because it is the longest migration's text and is
frozen: a store holds the text of each ``CREATE`` statement as it ran
(``sqlite_master.sql``, indentation and an index's trailing white space included),
so this string is never edited; docs/store.md says what each column means.
"""

from __future__ import annotations

INITIAL_TABLES = """
        CREATE TABLE items (
            dataset TEXT NOT NULL,
            id TEXT NOT NULL,
            input TEXT NOT NULL,
            response TEXT,
            response_a TEXT,
            response_b TEXT,
            reference TEXT,
            slice TEXT,
            cluster TEXT,
            meta TEXT NOT NULL DEFAULT '{}',
            content_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (dataset, id)
        );
        CREATE TABLE rubrics (
            sha256 TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            version TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            dataset TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            base_url TEXT NOT NULL,
            sampling TEXT NOT NULL DEFAULT '{}',
            capabilities TEXT NOT NULL DEFAULT '{}',
            judgekit_version TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            summary TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX runs_by_rubric ON runs (rubric_hash, kind);
        CREATE TABLE judgments (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (id),
            dataset TEXT NOT NULL,
            item_id TEXT NOT NULL,
            item_hash TEXT NOT NULL DEFAULT '',
            variant TEXT NOT NULL DEFAULT '',
            sample_index INTEGER NOT NULL,
            status TEXT NOT NULL,
            label TEXT,
            score REAL,
            reasoning TEXT,
            raw_text TEXT,
            model_requested TEXT NOT NULL,
            model_returned TEXT,
            base_url TEXT NOT NULL,
            sampling TEXT NOT NULL DEFAULT '{}',
            rubric_name TEXT NOT NULL,
            rubric_version TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            cache_key TEXT NOT NULL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms REAL,
            finish_reason TEXT,
            error TEXT,
            judgekit_version TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            imported INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX judgments_by_cache_key ON judgments (cache_key, id);
        CREATE INDEX judgments_by_rubric_dataset ON judgments (rubric_hash, dataset, item_id);
        CREATE INDEX judgments_by_run ON judgments (run_id);
        CREATE TABLE capabilities (
            base_url TEXT NOT NULL,
            model TEXT NOT NULL,
            capabilities TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL,
            PRIMARY KEY (base_url, model)
        );
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            dataset TEXT NOT NULL,
            item_id TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            annotator TEXT NOT NULL,
            label TEXT,
            note TEXT,
            flagged INTEGER NOT NULL DEFAULT 0,
            blind INTEGER NOT NULL DEFAULT 1,
            seconds REAL,
            created_at TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT 'annotate'
        );
        CREATE INDEX labels_by_key ON labels (rubric_hash, dataset, item_id, annotator, id);
        CREATE TABLE queues (
            name TEXT PRIMARY KEY,
            rubric_hash TEXT NOT NULL,
            strategy TEXT NOT NULL,
            seed INTEGER,
            params TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        );
        CREATE TABLE queue_items (
            queue TEXT NOT NULL REFERENCES queues (name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            dataset TEXT NOT NULL,
            item_id TEXT NOT NULL,
            inclusion_prob REAL NOT NULL,
            stratum TEXT,
            PRIMARY KEY (queue, position)
        );
        CREATE TABLE probe_results (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (id),
            probe TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            result TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX probe_results_by_rubric ON probe_results (rubric_hash, probe, id)
        """
