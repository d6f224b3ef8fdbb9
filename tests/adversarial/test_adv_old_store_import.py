"""Bad input into an existing store of an older schema leaves it exactly as it was.

Opening a store upgrades its schema; before, an import opened (and so migrated)
the store and only then rejected the file, leaving a file that an older judgekit
can no longer open. Imports now upgrade inside the transaction of their first
write, so a rejected file rolls the upgrade back with the rest. Each store here
is a real SQLite file built by applying only the earlier migrations of
``judgekit/store/schema.py``, with an item and a label of its own.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.store import rows as R
from judgekit.store._sqlite_utils import Database
from judgekit.store.schema import known_migrations, migrations
from judgekit.types import Item
from tests.adversarial.conftest import fingerprint, run

REPO = Path(__file__).resolve().parents[2]
PAIRS = REPO / "tests" / "fixtures" / "openai-batch" / "pairs.jsonl"
BATCH_OUTPUT = REPO / "tests" / "fixtures" / "openai-batch" / "output.jsonl"
PREFERENCE = str(REPO / "rubrics" / "preference.toml")

#: Stop before the second migration (the first schema only) and before the newest one.
OLDER = {"first schema": known_migrations()[1], "one behind": known_migrations()[-1]}


def applied(path: Path) -> list[str]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    finally:
        conn.close()


def older_store(path: Path, stop_before: str) -> Path:
    """A store as an older judgekit left it: WAL, earlier migrations only, a pair and a label."""
    db = Database(path)
    db.conn.execute("PRAGMA journal_mode = WAL")
    migrations.apply(db, stop_before=stop_before)
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        db["items"].insert(R.item_to_row("pairs", Item(**row), "2026-01-01T00:00:00+00:00"))
    db["labels"].insert({"dataset": "pairs", "item_id": "p1", "annotator": "ann",
                         "rubric_hash": load_rubric(PREFERENCE).sha256, "label": "A",
                         "created_at": "2026-01-01T00:00:00+00:00", "source": "import"})
    db.conn.commit()
    db.close()
    assert applied(path)[-1] != known_migrations()[-1]
    return path


def _lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def bad_files(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each import command with a file that is rejected only after the store is open, and
    the words of its error (the file's own problem, not the store's)."""
    changed = _lines(tmp / "changed.jsonl", [
        {"id": "p9", "input": "New?", "response_a": "x", "response_b": "y"},
        {"id": "p1", "input": "What is the capital of Spain?", "response_a": "Madrid.",
         "response_b": "Lyon."},  # p1 exists with other text, and no --replace
    ])
    bad_line = _lines(tmp / "bad_line.jsonl", [
        {"id": "p8", "input": "Q?", "response_a": "x", "response_b": "y"},
        {"id": "p7", "input": "Q?", "response_a": "x", "response_b": "y"},
    ])
    with bad_line.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "p6", "input": \n')
    labels = _lines(tmp / "labels.jsonl", [
        {"item_id": "p2", "annotator": "ann", "label": "B"},
        {"item_id": "nope", "annotator": "ann", "label": "A"},  # no such item in the store
    ])
    verdicts = _lines(tmp / "verdicts.jsonl", [
        {"item_id": "p2", "judge": "j", "label": "B"},
        {"item_id": "p3", "judge": "j", "label": "maybe"},  # not on the scale
    ])
    output = [json.loads(line) for line in BATCH_OUTPUT.read_text(encoding="utf-8").splitlines()]
    output[-1]["custom_id"] = "p99"  # a verdict for an item the dataset does not hold
    batch = _lines(tmp / "batch_output.jsonl", output)
    return {
        "import (item changed)": (["import", str(changed), "--name", "pairs"],
                                  "item 'p1' already exists with different content"),
        "import (bad line)": (["import", str(bad_line), "--name", "pairs"],
                              "bad_line.jsonl:3: invalid JSON"),
        "labels import": (["labels", "import", str(labels), "-r", PREFERENCE,
                           "--dataset", "pairs"], "labels.jsonl:2: unknown item id 'nope'"),
        "judgments import": (["judgments", "import", str(verdicts), "-r", PREFERENCE,
                              "--dataset", "pairs"], "verdicts.jsonl:2: label 'maybe'"),
        "import --from openai-batch": (["import", str(batch), "--from", "openai-batch",
                                        "-r", PREFERENCE, "--name", "pairs"],
                                       "batch_output.jsonl:6: unknown item id 'p99'"),
    }


@pytest.mark.parametrize("older", OLDER)
@pytest.mark.parametrize("case", ["import (item changed)", "import (bad line)", "labels import",
                                  "judgments import", "import --from openai-batch"])
def test_a_rejected_import_leaves_an_older_store_byte_for_byte_unchanged(
    case: str, older: str, tmp_path: Path
) -> None:
    db = older_store(tmp_path / "old.db", OLDER[older])
    before, schema = fingerprint(db), applied(db)
    args, needle = bad_files(tmp_path)[case]
    outcome = run(*args, "--db", str(db))
    assert outcome.code == 2, outcome
    assert outcome.err.startswith("error: ") and "Traceback" not in outcome.err
    assert needle in outcome.err, outcome.err
    assert applied(db) == schema  # not upgraded
    assert fingerprint(db) == before  # not a byte changed


@pytest.mark.parametrize("older", OLDER)
def test_a_valid_import_upgrades_an_older_store_and_writes(older: str, tmp_path: Path) -> None:
    db = older_store(tmp_path / "old.db", OLDER[older])
    labels = _lines(tmp_path / "labels.jsonl", [{"item_id": "p2", "annotator": "ann",
                                                 "label": "B"}])
    outcome = run("labels", "import", str(labels), "-r", PREFERENCE, "--dataset", "pairs",
                  "--db", str(db))
    assert outcome.code == 0, outcome
    assert applied(db) == known_migrations()
    verdicts = _lines(tmp_path / "verdicts.jsonl", [{"item_id": "p2", "judge": "j",
                                                     "label": "B"}])
    assert run("judgments", "import", str(verdicts), "-r", PREFERENCE, "--dataset", "pairs",
               "--db", str(db)).code == 0
    with open_store(db, create=False) as store:
        current = store.latest_labels(load_rubric(PREFERENCE).sha256, dataset="pairs")
        assert {(lb.item_id, lb.label) for lb in current} == {("p1", "A"), ("p2", "B")}
        assert [j.label for j in store.judgments(dataset="pairs")] == ["B"]


def test_the_items_import_upgrades_in_the_transaction_that_writes(tmp_path: Path) -> None:
    db = older_store(tmp_path / "old.db", OLDER["first schema"])
    more = _lines(tmp_path / "more.jsonl", [{"id": "p5", "input": "Q?", "response_a": "x",
                                             "response_b": "y"}])
    assert run("import", str(more), "--name", "pairs", "--db", str(db)).code == 0
    assert applied(db) == known_migrations()
    with open_store(db, create=False) as store:
        assert store.count_items("pairs") == 4
