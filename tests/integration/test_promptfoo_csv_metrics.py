"""promptfoo's named metrics (``Metric: NAME`` columns): each its own judge, from the CSV as
from the JSON. tests/fixtures/promptfoo/csv-metrics/ is one promptfoo run written as both
(its README says how); the hand-written CSVs below are promptfoo's shape with the cells
changed, each saying what it tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.adversarial.conftest import fingerprint
from tests.adversarial.conftest import run as run_inproc
from tests.support.cli import run_cli as run

PROMPTFOO = Path(__file__).resolve().parents[1] / "fixtures" / "promptfoo"
METRICS = PROMPTFOO / "csv-metrics"
ROOT = Path(__file__).resolve().parents[2]


def _import(path: Path, db: Path, *extra: str, rubric: str = "correctness") -> str:
    code, out, err = run("import", str(path), "--from", "promptfoo", "--rubric", rubric,
                         "--name", "run", "--db", str(db), *extra)
    assert code == 0, err
    return out


def _graders(out: str) -> dict[str, str]:
    """judge -> grader name, from the import's ``grader: KIND 'NAME' -> judge JUDGE`` lines."""
    found = {}
    for line in out.splitlines():
        if line.strip().startswith("grader: "):
            left, judge = line.split(" -> judge ", 1)
            found[judge] = left.split("'", 1)[1].rsplit("'", 1)[0]
    return found


def _by_grader(db: Path, graders: dict[str, str], rubric: str = "correctness"
               ) -> dict[tuple[str, str], tuple[str | None, float | None]]:
    """(item id, grader) -> (label, score) of the stored verdicts."""
    sha = load_rubric(rubric).sha256
    with open_store(db) as store:
        return {(j.item_id, graders[j.model_requested]): (
            j.label, None if j.score is None else round(j.score, 6))
                for j in store.judgments(rubric_hash=sha)}


def test_csv_and_json_give_the_same_graders_and_verdicts(tmp_path: Path) -> None:
    """One promptfoo run, two files: the same items, the same graders (the metrics), and per
    item and grader the same verdict and score; the blank cell of a test without the
    ``format`` assertion gives no verdict, as the JSON has none."""
    db = tmp_path / "pf.db"
    from_json = _import(METRICS / "results.json", db)
    csv_db = tmp_path / "csv.db"
    from_csv = _import(METRICS / "results.csv", csv_db)
    json_graders, csv_graders = _graders(from_json), _graders(from_csv)
    assert csv_graders == {"promptfoo-csv:correctness": "correctness",
                           "promptfoo-csv:format": "format"}
    assert sorted(json_graders.values()) == sorted(csv_graders.values())
    # the JSON names the grader model; the CSV cannot
    assert "openai:chat:grader-model [correctness]" in json_graders
    expected = {
        ("capital-france", "correctness"): ("pass", 1.0),
        ("capital-france", "format"): ("pass", 1.0),
        ("capital-japan", "correctness"): ("pass", 1.0), ("capital-japan", "format"): ("pass", 1.0),
        ("arithmetic", "correctness"): ("fail", 0.0), ("arithmetic", "format"): ("pass", 1.0),
        ("planet", "correctness"): ("fail", 0.0), ("planet", "format"): ("pass", 1.0),
        ("capital-france-again", "correctness"): ("pass", 1.0),
    }
    assert _by_grader(csv_db, csv_graders) == expected
    assert _by_grader(db, json_graders) == expected
    # the CSV's items are the JSON's: importing it beside the JSON changes none
    assert "(0 new or changed)" in _import(METRICS / "results.csv", db)


def test_the_status_stays_a_grader_of_its_own(tmp_path: Path) -> None:
    """``--grader Status``: the test's overall status (FAIL where one metric failed)."""
    db = tmp_path / "pf.db"
    out = _import(METRICS / "results.csv", db, "--grader", "Status")
    assert "grader: column 'Status' -> judge promptfoo-csv-grader" in out
    found = _by_grader(db, {"promptfoo-csv-grader": "Status"})
    assert found[("arithmetic", "Status")] == ("fail", 0.0)
    one = tmp_path / "one.db"
    out = _import(METRICS / "results.csv", one, "--grader", "format", "--judge", "grader-model")
    assert "imported 4 verdict(s)" in out
    outcome = run_inproc("import", str(METRICS / "results.csv"), "--from", "promptfoo",
                         "--rubric", "correctness", "--grader", "nope",
                         "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("results.csv: no grader 'nope' in the file (graders: "
                               "'correctness', 'format', 'Status')")
    assert not (tmp_path / "x.db").exists()


HEADER = ("Description,question,[p] Answer: {{question}},Status,Score,Named Scores,"
          "Metric: correctness,Metric: format,Grader Reason,Comment\n")


def _row(name: str, status: str, correctness: str, fmt: str,
         reason: str = "Wrong answer.") -> str:
    return f"{name},q {name},a {name},{status},0.50,,{correctness},{fmt},{reason},\n"


def test_a_score_is_a_verdict_by_the_rubrics_scale(tmp_path: Path) -> None:
    """Binary: a test that passed every assertion passed each metric whatever its score;
    otherwise pass from 0.5. Ordinal 1-5: the score placed on 1..5, the nearest level."""
    path = tmp_path / "results.csv"
    path.write_text(HEADER + _row("d1", "FAIL", "0.75", "0.49")
                    + _row("d2", "PASS", "0.30", "1.00", "All assertions passed")
                    + _row("d3", "PASS", "0.30", "", "Aggregate score 0.65 ≥ 0.5 threshold")
                    + _row("d4", "FAIL", "0.50", "0.125"), encoding="utf-8")
    graders = {"promptfoo-csv:correctness": "c", "promptfoo-csv:format": "f"}
    _import(path, tmp_path / "b.db")
    assert _by_grader(tmp_path / "b.db", graders) == {
        ("d1", "c"): ("pass", 0.75), ("d1", "f"): ("fail", 0.49),
        ("d2", "c"): ("pass", 0.30), ("d2", "f"): ("pass", 1.0),
        ("d3", "c"): ("fail", 0.30),  # a threshold decided the test: the score decides
        ("d4", "c"): ("pass", 0.50), ("d4", "f"): ("fail", 0.125),
    }
    rubric = str(ROOT / "rubrics" / "helpfulness.toml")
    _import(path, tmp_path / "o.db", rubric=rubric)
    assert _by_grader(tmp_path / "o.db", graders, rubric) == {
        ("d1", "c"): ("4", 4.0), ("d1", "f"): ("3", 2.96),
        ("d2", "c"): ("2", 2.2), ("d2", "f"): ("5", 5.0),
        ("d3", "c"): ("2", 2.2),
        ("d4", "c"): ("3", 3.0), ("d4", "f"): ("2", 1.5),  # a tie: the higher level
    }


def test_an_older_releases_cell_holds_the_named_scores(tmp_path: Path) -> None:
    """promptfoo 0.118 wrote ``[FAIL] (0.50, correctness: 0.00, format: 1.00)`` into one cell
    (csv-metrics-0.118/, the same config): the same graders and verdicts per answer."""
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    old_graders = _graders(_import(PROMPTFOO / "csv-metrics-0.118" / "results.csv", old))
    new_graders = _graders(_import(METRICS / "results.csv", new))
    assert old_graders == new_graders

    def by_answer(db: Path) -> set[tuple[str, str | None, str, str | None, float | None]]:
        with open_store(db) as store:
            items = {i.id: i for i in store.iter_items("run")}
            return {(items[j.item_id].input, items[j.item_id].response,
                     old_graders[j.model_requested], j.label, j.score)
                    for j in store.judgments()}

    found = by_answer(old)
    assert found == by_answer(new) and len(found) == 9
    with open_store(old) as store:
        raw = {j.item_id: json.loads(j.raw_text or "{}") for j in store.judgments()
               if j.model_requested == "promptfoo-csv:format"}
    assert raw["t2"] == {"metric": "format", "score": 1.0, "status": "FAIL",
                         "reason": "Wrong answer."}


@pytest.mark.parametrize(("text", "needles"), [
    (HEADER + _row("d1", "FAIL", "high", "1.00"),
     ["results.csv:2: column 'Metric: correctness': expected the metric's score (a number "
      "such as 0.75), got 'high'"]),
    (HEADER + _row("d1", "PASS", "1.00", "1.00") + _row("d2", "FAIL", "0.00", "7.00"),
     ["results.csv:3: column 'Metric: format': score 7.00 is outside 0..1"]),
    (HEADER + _row("d1", "FAIL", "Infinity", "1.00"), ["results.csv:2:", "got 'Infinity'"]),
    (HEADER.replace("Metric: format", "Metric: correctness") + _row("d1", "FAIL", "0", "1"),
     ["results.csv:1: not promptfoo's CSV header: column 8 'Metric: correctness': a metric "
      "named twice in one prompt"]),
    (HEADER.replace("Metric: format", "Metric:") + _row("d1", "FAIL", "0", "1"),
     ["results.csv:1:", "column 8 is 'Metric:', expected 'Grader Reason'"]),
    ('question,[p] Answer: {{question}}\nq,"[FAIL] (0.50, correctness 0.00)\n\n5"\n',
     ["results.csv:2: column '[p] Answer: {{question}}': expected 'NAME: SCORE, ...' after "
      "the score, got 'correctness 0.00'"]),
    (HEADER + _row("d1", "ERROR", "", ""), ["results.csv: no metric score in the file"]),
])
def test_a_bad_metric_cell_is_one_line_and_the_store_unchanged(
    text: str, needles: list[str], tmp_path: Path
) -> None:
    db = tmp_path / "pf.db"
    _import(METRICS / "results.json", db)
    before = fingerprint(db)
    path = tmp_path / "results.csv"
    path.write_text(text, encoding="utf-8")
    outcome = run_inproc("import", str(path), "--from", "promptfoo", "--rubric", "correctness",
                         "--name", "run", "--db", str(db))
    outcome.assert_clean_error(*needles)
    assert fingerprint(db) == before


def test_a_rubric_the_scores_cannot_map_to_is_refused(tmp_path: Path) -> None:
    rubric = ROOT / "rubrics" / "safety.toml"  # categorical
    outcome = run_inproc("import", str(METRICS / "results.csv"), "--from", "promptfoo",
                         "--rubric", str(rubric), "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("promptfoo's metric scores are 0..1: use a binary rubric")
    assert not (tmp_path / "x.db").exists()


def test_the_json_import_keeps_the_graders_score_as_the_csv_does(tmp_path: Path) -> None:
    """The JSON's verdict score is the assertion's 0..1 score (the CSV's metric cell), not
    the label's 1/0; a score outside 0..1 leaves the label's."""
    document = json.loads((METRICS / "results.json").read_text(encoding="utf-8"))
    changed = {}
    for result in document["results"]["results"]:
        for component in result["gradingResult"]["componentResults"]:
            if result["testCase"]["description"] == "arithmetic":
                metric = component["assertion"]["metric"]
                component["score"] = 0.25 if metric == "correctness" else 7
                changed[metric] = component["score"]
    assert changed == {"correctness": 0.25, "format": 7}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    db = tmp_path / "pf.db"
    found = _by_grader(db, _graders(_import(path, db)))
    assert found[("arithmetic", "correctness")] == ("fail", 0.25)
    assert found[("arithmetic", "format")] == ("pass", 1.0)


def test_a_metric_named_status_hides_the_overall_status(tmp_path: Path) -> None:
    """``metric: Status`` is a metric like any other; ``--grader Status`` picks it."""
    path = tmp_path / "results.csv"
    path.write_text((METRICS / "results.csv").read_text(encoding="utf-8").replace(
        "Metric: format", "Metric: Status"), encoding="utf-8")
    out = _import(path, tmp_path / "pf.db", "--grader", "Status")
    assert "grader: metric 'Status' -> judge promptfoo-csv:Status" in out
    assert "imported 4 verdict(s)" in out


def test_a_row_without_any_result_is_skipped(tmp_path: Path) -> None:
    """A row whose prompt cells are all blank ran nothing; without descriptions, the other
    rows are still named by their test's number (this was a KeyError)."""
    path = tmp_path / "results.csv"
    path.write_text("question,[p] Answer: {{question}},Status,Score,Named Scores,"
                    "Metric: correctness,Grader Reason,Comment\nq1,,,,,,,\n"
                    "q2,a,PASS,1.00,,1.00,All assertions passed,\n", encoding="utf-8")
    db = tmp_path / "pf.db"
    assert "imported 1 verdict(s)" in _import(path, db)
    assert _by_grader(db, {"promptfoo-csv:correctness": "c"}) == {("t1", "c"): ("pass", 1.0)}
