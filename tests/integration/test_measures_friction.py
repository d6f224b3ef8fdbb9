"""Friction found reproducing published figures: each fixed where a user meets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_support import PAIRWISE, Row, open_fresh, populate, rubric

from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
ORDINAL = REPO / "rubrics" / "helpfulness.toml"


def _store_with_verdicts(tmp_path: Path) -> str:
    db = str(tmp_path / "judgekit.db")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "input": "q", "response": "r" * i})
                             + "\n" for i in range(1, 4)))
    assert run_cli("import", str(items), "--name", "d", "--db", db)[0] == 0
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("".join(json.dumps({"item_id": f"i{i}", "judge": "j", "label": "3"})
                                + "\n" for i in range(1, 4)))
    assert run_cli("judgments", "import", str(verdicts), "--rubric", str(ORDINAL),
                   "--db", db)[0] == 0
    return db


def test_runs_takes_a_rubric_path_like_every_other_command(tmp_path: Path) -> None:
    db = _store_with_verdicts(tmp_path)
    code, out, err = run_cli("runs", "--db", db, "-r", str(ORDINAL), "--format", "json")
    assert code == 0, err
    runs = json.loads(out)
    assert len(runs) == 1 and runs[0]["rubric"] == "helpfulness v1"
    other = str(REPO / "rubrics" / "correctness.toml")
    code, out, _ = run_cli("runs", "--db", db, "-r", other, "--format", "json")
    assert code == 0 and json.loads(out) == []  # a rubric file with no runs: none listed
    code, _, err = run_cli("runs", "--db", db, "-r", "nosuchrubric")
    assert code == 2 and "no rubric 'nosuchrubric'" in err


def test_a_duplicate_verdict_line_says_whether_the_two_differ(tmp_path: Path) -> None:
    db = _store_with_verdicts(tmp_path)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(
        json.dumps({"item_id": "i1", "judge": "k", "label": "3"}) + "\n"
        + json.dumps({"item_id": "i1", "judge": "k", "label": "3"}) + "\n"
        + json.dumps({"item_id": "i2", "judge": "k", "label": "3"}) + "\n"
        + json.dumps({"item_id": "i2", "judge": "k", "label": "4", "score": 3.5}) + "\n"
    )
    before = Path(db).read_bytes()
    code, out, err = run_cli("judgments", "import", str(twice), "--rubric", str(ORDINAL),
                             "--db", db)
    assert code == 2 and out == ""
    assert "twice.jsonl:2: same verdict as line 1" in err and "a repeat" in err
    assert "twice.jsonl:4: same verdict as line 3" in err and "the two differ" in err
    assert Path(db).read_bytes() == before


def test_the_pairwise_report_shows_agreement_with_ties_once(tmp_path: Path) -> None:
    store = open_fresh(tmp_path)
    rub = rubric(PAIRWISE)
    pairs = [("A", "A")] * 20 + [("B", "B")] * 15 + [("tie", "A")] * 5 + [("A", "B")] * 5
    populate(store, rub, [Row(f"p{i}", j, {"h": h}) for i, (j, h) in enumerate(pairs)])
    store.close()
    db = str(tmp_path / "judgekit.db")
    code, text, err = run_cli("report", "--rubric", str(PAIRWISE), "--db", db)
    assert code in (0, 1, 3), err
    assert text.count("Agreement (ties included)") == 1
    assert "Percent agreement" not in text.split("Human-human")[0]
    code, out, _ = run_cli("report", "--rubric", str(PAIRWISE), "--db", db, "--format", "json",
                           "--primary", "percent_agreement")
    stats = json.loads(out)["agreement"]["statistics"]
    assert stats["percent_agreement"] == stats["agreement_with_ties"]


def test_estimate_help_states_the_clustering_default() -> None:
    code, out, _ = run_cli("estimate", "--help")
    assert code == 0
    assert "else 'prompt' when labeled items share a prompt" in " ".join(out.split())


def test_a_score_off_the_scale_is_not_read_as_the_judges_number(tmp_path: Path) -> None:
    db = str(tmp_path / "judgekit.db")
    n = 12
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "input": f"q{i}", "response": "r"})
                             + "\n" for i in range(n)))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "annotator": "h",
                                          "label": str(1 + i % 5)}) + "\n" for i in range(n)))
    verdicts = tmp_path / "v.jsonl"  # a 0-1 score beside the 1-5 label
    verdicts.write_text("".join(json.dumps({"item_id": f"i{i}", "judge": "j",
                                            "label": str(1 + i % 5), "score": 0.1 * (i % 4)})
                                + "\n" for i in range(n)))
    for args in (["import", str(items), "--name", "d", "--db", db],
                 ["labels", "import", str(labels), "--rubric", str(ORDINAL), "--db", db],
                 ["judgments", "import", str(verdicts), "--rubric", str(ORDINAL), "--db", db]):
        assert run_cli(*args)[0] == 0
    _code, out, _ = run_cli("report", "--rubric", str(ORDINAL), "--db", db, "--format", "json",
                           "--resamples", "100")
    data = json.loads(out)
    assert data["agreement"]["statistics"]["spearman"]["statistic"] == pytest.approx(1.0)
    assert data["agreement"]["judge_scored_items"] == 0
    assert any("carry a score outside the scale's values" in note
               for note in data["provenance"]["notes"])
