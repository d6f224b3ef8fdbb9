"""The store's schema: every migration, oldest first, recorded by name once applied.

Each migration is a function registered on one :class:`sqlite_utils.Migrations`
set, in the order they appear here; its name is recorded once applied, so opening
an up-to-date store never touches the schema. Never edit an applied migration: a
user's database was created by the old text. A schema change is a new migration
at the end of this file. The browsing views' SQL is in ``views.py``; applying
migrations to a store (under its write lock) is ``migrate.py``.
"""

from __future__ import annotations

from judgekit.store import initial_tables, views
from judgekit.store._sqlite_utils import Database, Migrations

MIGRATION_SET = "judgekit"

migrations = Migrations(MIGRATION_SET)


def known_migrations() -> list[str]:
    """Every migration this version of judgekit knows, oldest first."""
    return [migration.name for migration in migrations._migrations]


def _run(db: Database, *scripts: str) -> None:
    """Execute each script's ``;``-separated DDL, in order, inside the caller's transaction."""
    for script in scripts:
        for statement in script.split(";"):
            if statement.strip():
                db.execute(statement)


@migrations(name="0001_initial")
def initial(db: Database) -> None:
    """Every table of the first release (see docs/store.md for the meaning of each column)."""
    _run(db, initial_tables.INITIAL_TABLES)


@migrations(name="0002_judgment_confidence")
def judgment_confidence(db: Database) -> None:
    """``judgments.confidence``: the judge's probability for its verdict, from logprobs.

    Nullable: endpoints without logprobs, failures and rows written before this
    migration have none.
    """
    _run(db, "ALTER TABLE judgments ADD COLUMN confidence REAL")


@migrations(name="0003_batches")
def batches(db: Database) -> None:
    """Batch API work: prepared batches, their files and calls, and submitted jobs.

    ``batch_requests`` maps each line's ``custom_id`` (the call's cache key) back
    to its call, so ``judgekit batch collect`` stores an output line as the
    judgment the live runner would have written. ``batch_files`` holds each
    prepared file's sha256, so ``submit`` knows which file it is given.
    """
    _run(
        db,
        """
        CREATE TABLE batches (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            dataset TEXT NOT NULL,
            rubric_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            base_url TEXT NOT NULL,
            sampling TEXT NOT NULL DEFAULT '{}',
            request TEXT NOT NULL DEFAULT '{}',
            n_requests INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
        CREATE TABLE batch_files (
            batch_id TEXT NOT NULL REFERENCES batches (id),
            part INTEGER NOT NULL,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            n_requests INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            PRIMARY KEY (batch_id, part)
        );
        CREATE INDEX batch_files_by_sha256 ON batch_files (sha256);
        CREATE TABLE batch_requests (
            batch_id TEXT NOT NULL REFERENCES batches (id),
            custom_id TEXT NOT NULL,
            part INTEGER NOT NULL,
            item_id TEXT NOT NULL,
            variant TEXT NOT NULL DEFAULT '',
            sample_index INTEGER NOT NULL,
            item_hash TEXT NOT NULL,
            swap_labels INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (batch_id, custom_id)
        );
        CREATE INDEX batch_requests_by_custom_id ON batch_requests (custom_id);
        CREATE TABLE batch_jobs (
            id TEXT PRIMARY KEY,
            batch_id TEXT NOT NULL REFERENCES batches (id),
            part INTEGER NOT NULL,
            base_url TEXT NOT NULL,
            input_file_id TEXT NOT NULL,
            state TEXT NOT NULL,
            output_file_id TEXT,
            error_file_id TEXT,
            request_counts TEXT NOT NULL DEFAULT '{}',
            submitted_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            collected_at TEXT
        );
        CREATE INDEX batch_jobs_by_batch ON batch_jobs (batch_id, part)
        """,
    )


@migrations(name="0004_store_meta")
def store_meta(db: Database) -> None:
    """``store_meta``: facts about the store file itself, one ``key``/``value`` row each.

    ``created_by = demo`` marks a store made by ``judgekit demo``, the only kind
    the demo may delete and make again.
    """
    _run(db, "CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migrations(name="0005_tokens_and_views")
def tokens_and_views(db: Database) -> None:
    """API tokens for ``judgekit serve`` (hashed), and read-only views for browsing.

    The views (``latest_judgments``, ``latest_labels``, ``judge_vs_human``) apply the
    store's "latest wins" rules in SQL, so Datasette or ``sqlite3`` show what the
    reports use without knowing those rules.
    """
    _run(
        db,
        """
        CREATE TABLE tokens (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            role TEXT NOT NULL,
            token_hash TEXT NOT NULL UNIQUE,
            prefix TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        );
        CREATE INDEX tokens_by_name ON tokens (name);
        """,  # the ';' ends the index's text where 0005's ended (SQLite keeps trailing space)
        views.VIEWS_0005,
    )


@migrations(name="0006_one_outcome_per_call")
def one_outcome_per_call(db: Database) -> None:
    """Claims on calls, and at most one finished outcome per cache key and predecessor.

    ``claims`` holds the calls runs are making now (see ``judgekit/store/claims.py``).
    ``judgments.supersedes`` is the id of the finished outcome a finished row
    replaces (NULL for the first; always NULL for transient failures). Stores
    written before may already hold duplicate finished rows for one key (two runs
    at once): the backfill chains them in id order, so every existing row is kept,
    the latest still wins, and the unique index can be built.
    """
    finished = "('ok', 'parse_error', 'refusal', 'truncated')"
    _run(
        db,
        f"""
        CREATE TABLE claims (
            cache_key TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL,
            supersedes INTEGER
        );
        CREATE INDEX claims_by_owner ON claims (owner);
        ALTER TABLE judgments ADD COLUMN supersedes INTEGER;
        UPDATE judgments SET supersedes = (
            SELECT MAX(earlier.id) FROM judgments AS earlier
            WHERE earlier.cache_key = judgments.cache_key AND earlier.id < judgments.id
              AND earlier.status IN {finished}
        ) WHERE status IN {finished};
        CREATE UNIQUE INDEX judgments_one_outcome
            ON judgments (cache_key, IFNULL(supersedes, 0)) WHERE status IN {finished}
        """,
    )


@migrations(name="0007_run_outcomes")
def run_outcomes(db: Database) -> None:
    """The outcomes a run stands for although another run made the calls.

    The cache is shared between runs: a run whose call was answered earlier (by a
    probe's plain verdicts, an earlier judge run, a collected batch, another
    process's claim) pays nothing and writes no judgment. One row here per such
    call says that run ``run_id`` stands for judgment ``judgment_id``; the
    judgment's own ``run_id`` is the run that made the call (``answered_by_run``).
    Stores written before hold no such rows: their reruns keep standing for their
    judge's rows by judge identity, as before.
    """
    _run(
        db,
        """
        CREATE TABLE run_outcomes (
            run_id TEXT NOT NULL REFERENCES runs (id),
            judgment_id INTEGER NOT NULL REFERENCES judgments (id),
            PRIMARY KEY (run_id, judgment_id)
        ) WITHOUT ROWID;
        CREATE INDEX run_outcomes_by_judgment ON run_outcomes (judgment_id, run_id)
        """,
    )


@migrations(name="0008_batch_submit_intents")
def batch_submit_intents(db: Database) -> None:
    """``batch_submits``: a ``batch submit`` recorded before its batch is created.

    One row per attempt to submit a prepared file: the file's sha256, the
    idempotency ``key`` sent in the provider batch's ``metadata``, where it was
    sent and, once known, the provider's batch id. A submit interrupted between
    the create call and recording its job leaves the row ``creating``; the
    next ``submit`` or ``status`` finds the batch at the provider by its key
    instead of creating a second one.
    """
    _run(
        db,
        """
        CREATE TABLE batch_submits (
            key TEXT PRIMARY KEY,
            batch_id TEXT NOT NULL REFERENCES batches (id),
            part INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            base_url TEXT NOT NULL,
            state TEXT NOT NULL,
            input_file_id TEXT,
            job_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX batch_submits_by_part ON batch_submits (batch_id, part)
        """,
    )


@migrations(name="0009_browsing_views_use_indexes")
def browsing_views_use_indexes(db: Database) -> None:
    """The browsing views, rewritten so that SQLite answers them from the indexes.

    0005 picked each key's latest row with ``id IN (SELECT MAX(id) ... GROUP BY
    key)``; joined in ``judge_vs_human`` and grouped (a Datasette facet), SQLite
    re-ran that grouping for every row: 29.6 s at 20,000 judgments and 2,000 labels,
    11 minutes at 200,000 and 10,000, where Datasette gives up after 1 s. A row is
    the latest of its key when no later row of that key exists, one probe of
    ``judgments_by_cache_key`` (``labels_by_key``) per row. ``judge_vs_human`` starts
    from the labels (``CROSS JOIN`` fixes SQLite's loop order), usually far fewer than
    the judgments, and finds each item's judgments by ``judgments_by_rubric_dataset``.
    The same rows; ``benchmarks/bench_views.py`` times both definitions.
    """
    _run(
        db,
        "DROP VIEW judge_vs_human; DROP VIEW latest_judgments; DROP VIEW latest_labels",
        views.LATEST_JUDGMENTS_0009,
        views.LATEST_LABELS_0009,
        views.JUDGE_VS_HUMAN_0009,
    )


@migrations(name="0010_align_splits")
def align_splits(db: Database) -> None:
    """Train/dev/test splits of labeled items for ``judgekit align``, and every look at them.

    ``splits`` (one per rubric and dataset scope, ``''`` = every dataset) keeps the seed
    and fractions; ``split_items`` each item's part and the group it moved with;
    ``split_uses`` each evaluation on a part (who, when, which candidates, the result),
    so the number of looks at the test split is counted; ``align_proposals`` the
    optimizer's answers, so a resumed ``align`` does not pay for them again.
    """
    _run(
        db,
        """
        CREATE TABLE splits (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            rubric_hash TEXT NOT NULL,
            scope TEXT NOT NULL,
            seed INTEGER NOT NULL,
            fractions TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (rubric_hash, scope)
        );
        CREATE TABLE split_items (
            split_id INTEGER NOT NULL REFERENCES splits (id),
            dataset TEXT NOT NULL,
            item_id TEXT NOT NULL,
            part TEXT NOT NULL,
            grp TEXT NOT NULL,
            stratum TEXT,
            added_at TEXT NOT NULL,
            PRIMARY KEY (split_id, dataset, item_id)
        );
        CREATE TABLE split_uses (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            split_id INTEGER NOT NULL REFERENCES splits (id),
            part TEXT NOT NULL,
            who TEXT NOT NULL,
            created_at TEXT NOT NULL,
            candidates TEXT NOT NULL,
            result TEXT NOT NULL
        );
        CREATE INDEX split_uses_by_split ON split_uses (split_id, part);
        CREATE TABLE align_proposals (
            request_hash TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            status TEXT NOT NULL,
            text TEXT,
            error TEXT,
            created_at TEXT NOT NULL
        )
        """,
    )


@migrations(name="0011_latest_labels_keep_adjudications_apart")
def latest_labels_keep_adjudications_apart(db: Database) -> None:
    """``latest_labels`` keeps a person's adjudication apart from her own label.

    0005 and 0009 compared ``source`` with ``'adjudicated'``, a value never stored
    (adjudications are ``'adjudicate'``, ``judgekit.types.ADJUDICATED_SOURCE``), so a
    lead who had labeled an item and then adjudicated it kept only the later row.
    ``judge_vs_human`` reads the view, so it is made again unchanged.
    """
    _run(
        db,
        "DROP VIEW judge_vs_human; DROP VIEW latest_labels",
        views.LATEST_LABELS_0011,
        views.JUDGE_VS_HUMAN_0009,
    )
