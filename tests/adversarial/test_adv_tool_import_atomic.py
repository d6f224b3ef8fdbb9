"""``import --from TOOL`` stores a file's items and its verdicts all or nothing.

The items and the verdicts of a tool's file go into one transaction: a write
that fails once the items are in (the verdicts', here) rolls the items back too,
and with them the schema upgrade of an older store. The failure is real SQLite:
each store is a real file in which the test installs a trigger that refuses the
first verdict row, as a full disk or a failed constraint would. The file itself
(promptfoo's results.json) is valid, so the items pass every check and are
written before the refusal.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from judgekit.store.schema import known_migrations
from tests.adversarial.conftest import fingerprint, run
from tests.adversarial.test_adv_old_store_import import OLDER, applied, older_store

REPO = Path(__file__).resolve().parents[2]
PROMPTFOO = REPO / "tests" / "fixtures" / "promptfoo" / "results.json"
FACTS = REPO / "judgekit" / "data" / "demo" / "facts.jsonl"
#: Refuses every verdict row, as a full disk or a failed constraint would.
REFUSE = ("CREATE TRIGGER refuse_judgments BEFORE INSERT ON judgments "
          "BEGIN SELECT RAISE(ABORT, 'no room for judgments'); END")


def refuse(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute(REFUSE)
        conn.commit()
    finally:
        conn.close()


def dataset_rows(db: Path, dataset: str) -> int:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM items WHERE dataset = ?",
                                [dataset]).fetchone()[0])
    finally:
        conn.close()


def current_store(tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    assert run("import", str(FACTS), "--db", str(db)).code == 0
    return db


IMPORT = ("import", str(PROMPTFOO), "--from", "promptfoo", "--rubric", "correctness",
          "--name", "run")


def test_a_failed_verdict_write_leaves_no_items_behind(tmp_path: Path) -> None:
    db = current_store(tmp_path)
    refuse(db)
    before = fingerprint(db)
    outcome = run(*IMPORT, "--db", str(db))
    outcome.assert_clean_error("no room for judgments")
    assert dataset_rows(db, "run") == 0  # the four items were rolled back with the verdicts
    assert fingerprint(db) == before  # sha256 of the file and every table's count


@pytest.mark.parametrize("older", OLDER)
def test_a_failed_verdict_write_leaves_an_older_store_unupgraded(
    older: str, tmp_path: Path
) -> None:
    db = older_store(tmp_path / "old.db", OLDER[older])
    refuse(db)
    before, schema = fingerprint(db), applied(db)
    outcome = run(*IMPORT, "--db", str(db))
    outcome.assert_clean_error("no room for judgments")
    assert applied(db) == schema and schema[-1] != known_migrations()[-1]
    assert fingerprint(db) == before


def test_the_same_import_succeeds_once_the_store_accepts_verdicts(tmp_path: Path) -> None:
    """The control: the refusal is what stopped the import, not the file."""
    db = current_store(tmp_path)
    refuse(db)
    assert run(*IMPORT, "--db", str(db)).code == 2
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER refuse_judgments")
    conn.commit()
    conn.close()
    outcome = run(*IMPORT, "--db", str(db))
    assert outcome.code == 0, outcome
    assert "imported 4 item(s)" in outcome.out and "imported 4 verdict(s)" in outcome.out
    assert dataset_rows(db, "run") == 4
