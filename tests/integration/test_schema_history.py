"""Every migration leaves a store's schema exactly as it always did.

A store keeps the text of each ``CREATE`` statement it ran (``sqlite_master.sql``),
so the migrations in ``judgekit/store/schema.py`` (and the frozen SQL they read from
``views.py`` and ``initial_tables.py``) must never change what they create. The
fingerprints below are the schema after each migration as released; a new migration
adds its own line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from judgekit.store import views
from judgekit.store._sqlite_utils import Database
from judgekit.store.schema import known_migrations, migrations

#: sha256 of the JSON list of (type, name, tbl_name, sql) rows of ``sqlite_master``
#: (ordered by type and name, without ``_sqlite_migrations``) after each migration.
SCHEMA_AFTER = {
    "0001_initial": "740e292534e1a60fd9b82b9c3e28f89354c10ee033d3eab1b46f5553dbf79b4a",
    "0002_judgment_confidence": "b69f98dc905fec8daa738dea4062902a7d8ae0e798de906fbc2f120d552cd897",
    "0003_batches": "c1da0ee359e649d2f160e8fcb4f30a1ad638c7db4ee0148354371514a820e232",
    "0004_store_meta": "142512213b24ba55cbc59b61ffa637c2d384bfed4b1cd220aab4ed8b042d4bb1",
    "0005_tokens_and_views": "bf794eec8f677c96e31c8383019dc4ff8daf857dddf9e24adc63fb0da4a1c39a",
    "0006_one_outcome_per_call":
        "2a6d42468d7d585b0d3557337a166d19d5719fa8a8c4bb601035ce1ac123ece1",
    "0007_run_outcomes": "89c3725260669aad5f084ecb283b004ad9bf8580770582f75eaebf0df9a9ffd6",
    "0008_batch_submit_intents":
        "bcc916262f275905f9afa166abff3ce19d4c7e9dc670141f80a6a280982c0c16",
    "0009_browsing_views_use_indexes":
        "bd4cf769a0504a6d4eafbe6ce75eb4a044cf852de49020e1a18016cba5614992",
    "0010_align_splits": "94084fa0f03f481ba4acb8c4dc8c8ce837d94227ee816558ba1e4ac5b659cb60",
    "0011_latest_labels_keep_adjudications_apart":
        "607c98aa4a933e130e53e604af6dad1aba229aac85fe7130de3d60bf4b5a6445",
}


def schema_rows(db: Database) -> list[tuple[str, str, str, str | None]]:
    return [tuple(row) for row in db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE name NOT LIKE '_sqlite_migrations%' ORDER BY type, name").fetchall()]


def migrated_through(name: str) -> Database:
    """An in-memory store with every migration up to and including ``name``."""
    names = known_migrations()
    db = Database(memory=True)
    following = names.index(name) + 1
    migrations.apply(db, stop_before=names[following] if following < len(names) else None)
    return db


@pytest.mark.parametrize("name", list(SCHEMA_AFTER))
def test_each_released_migration_creates_what_it_always_created(name: str) -> None:
    assert name in known_migrations()
    rows = schema_rows(migrated_through(name))
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    assert digest == SCHEMA_AFTER[name], f"{name} no longer creates the schema it released"


def test_released_migrations_keep_their_order() -> None:
    assert known_migrations()[: len(SCHEMA_AFTER)] == list(SCHEMA_AFTER)


def test_a_fresh_store_has_the_current_views() -> None:
    db = migrated_through(known_migrations()[-1])
    found = {name: sql for kind, name, _, sql in schema_rows(db) if kind == "view"}
    assert found == views.CURRENT


def test_views_answer_on_a_fresh_store() -> None:
    db = migrated_through(known_migrations()[-1])
    for name in views.CURRENT:
        try:
            db.execute(f"SELECT * FROM {name}").fetchall()
        except sqlite3.Error as exc:  # pragma: no cover - the failure message
            pytest.fail(f"{name}: {exc}")
