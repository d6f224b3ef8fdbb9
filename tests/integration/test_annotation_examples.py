"""The example label file in annotations/ imports cleanly and gives the report its ceiling."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit import stats
from judgekit.cli.main import cli
from judgekit.report import ReportOptions, build_report
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Label

REPO = Path(__file__).resolve().parents[2]
FACTS = REPO / "judgekit" / "data" / "demo" / "facts.jsonl"
RATER_B = REPO / "annotations" / "demo-facts-rater-b.csv"


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(
        cli, ["import", str(FACTS), "--name", "facts", "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        store.save_rubric(rubric)
        gold = [json.loads(line) for line in FACTS.read_text(encoding="utf-8").splitlines()]
        store.add_labels(
            [
                Label("facts", row["id"], rubric.sha256, "reference", row["meta"]["gold"],
                      source="import")
                for row in gold
            ]
        )
    return db


def test_example_labels_import_and_match_the_ceiling(demo_store: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["labels", "import", str(RATER_B), "--rubric", "correctness", "--dataset", "facts",
         "--db", str(demo_store)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output

    rubric = load_rubric("correctness")
    with open_store(demo_store) as store:
        by_annotator: dict[str, dict[str, str]] = {}
        for label in store.latest_labels(rubric.sha256, dataset="facts"):
            assert label.label is not None
            by_annotator.setdefault(label.annotator, {})[label.item_id] = label.label
        assert set(by_annotator) == {"reference", "rater-b"}
        assert len(by_annotator["rater-b"]) == 24
        notes = [row["note"] for row in csv.DictReader(RATER_B.open(encoding="utf-8"))]
        assert sum(1 for note in notes if note) == 3

        report = build_report(store, rubric, ReportOptions(dataset="facts", random_state=0))

    ids = sorted(by_annotator["reference"])
    reference = [by_annotator["reference"][i] for i in ids]
    rater_b = [by_annotator["rater-b"][i] for i in ids]
    expected = stats.krippendorff_alpha([reference, rater_b], level="nominal").statistic
    assert report.ceiling is not None
    assert report.ceiling.n_items == 24
    assert report.ceiling.n_annotators == 2
    assert report.ceiling.stats["krippendorff_alpha"].statistic == pytest.approx(expected)
    assert 0.5 < expected < 1.0  # three disagreements of 24
