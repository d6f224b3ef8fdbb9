"""Label Studio: a queue out as tasks (blind unless asked for the judge's predictions); an
export back in."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.support.cli import run_cli as run
from tests.support.openai_server import OpenAIServer

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "label-studio" / "export.json"


def judged_store(tmp_path: Path, server: OpenAIServer) -> Path:
    data = tmp_path / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{n}", "input": f"What is {n}+1?",
                                        "response": str(n + 1), "reference": str(n + 1)}) + "\n"
                            for n in range(5)))
    db = tmp_path / "ls.db"
    result = CliRunner().invoke(cli, ["judge", "--rubric", "correctness", "--data", str(data),
                                      "--db", str(db), "--base-url", server.base_url,
                                      "--model", "m", "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db


def test_export_tasks_is_blind_by_default(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """Annotators must not see the judge unless asked: no task carries a prediction."""
    db = judged_store(tmp_path, openai_server)
    out = tmp_path / "tasks.json"
    code, stdout, err = run("labels", "export-tasks", "--rubric", "correctness", "--db", str(db),
                            "--sample", "3", "--seed", "1", "--out", str(out))
    assert code == 0, err
    assert "wrote 3 task(s)" in stdout and "blind: no judge predictions" in stdout
    tasks = json.loads(out.read_text())
    assert len(tasks) == 3 and all("predictions" not in t for t in tasks)
    assert "pass" not in json.dumps([t["meta"] for t in tasks])
    first = tasks[0]
    assert set(first["data"]) == {"item_id", "dataset", "input", "response", "reference"}
    assert first["data"]["dataset"] == "facts"
    assert [t["meta"]["position"] for t in tasks] == [0, 1, 2]
    config = out.with_suffix(".xml").read_text()
    assert '<Choices name="label" toName="response"' in config
    assert '<Choice value="pass"/>' in config and '<Choice value="fail"/>' in config
    # The tasks carry a reference, so the config shows it (correctness compares against it).
    assert '<Text name="reference" value="$reference"/>' in config
    # the old spelling of blind still runs, and is still blind
    code, _, err = run("labels", "export-tasks", "--rubric", "correctness", "--db", str(db),
                       "--sample", "3", "--no-predictions", "--out", str(out))
    assert code == 0, err
    assert all("predictions" not in t for t in json.loads(out.read_text()))
    code, _, err = run("labels", "export-tasks", "--rubric", "correctness", "--db", str(db),
                       "--out", str(db))
    assert code == 2 and "store" in err
    code, help_text, _ = run("labels", "export-tasks", "--help")
    assert code == 0 and "--with-judge-predictions" in help_text
    assert "--no-predictions" not in help_text


def test_export_tasks_with_judge_predictions(tmp_path: Path,
                                             openai_server: OpenAIServer) -> None:
    db = judged_store(tmp_path, openai_server)
    out = tmp_path / "tasks.json"
    code, stdout, err = run("labels", "export-tasks", "--rubric", "correctness", "--db", str(db),
                            "--sample", "3", "--seed", "1", "--with-judge-predictions",
                            "--out", str(out))
    assert code == 0, err
    assert "wrote 3 task(s)" in stdout and "3 with the judge's prediction" in stdout
    tasks = json.loads(out.read_text())
    assert len(tasks) == 3
    (prediction,) = tasks[0]["predictions"]
    assert prediction["model_version"] == "m"
    assert prediction["result"] == [{"from_name": "label", "to_name": "response",
                                     "type": "choices", "value": {"choices": ["pass"]}}]
    # labels made on these tasks come back as not blind
    for task in tasks:
        task["annotations"] = [{"completed_by": 3, "result": [
            {"type": "choices", "value": {"choices": ["pass"]}}]}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    code, _, err = run("labels", "import", str(export), "--from", "label-studio",
                       "--rubric", "correctness", "--db", str(db))
    assert code == 0, err
    with open_store(db) as store:
        labels = store.latest_labels(load_rubric("correctness").sha256)
    assert len(labels) == 3 and {lb.blind for lb in labels} == {False}


def test_import_label_studio_export(tmp_path: Path, openai_server: OpenAIServer) -> None:
    db = judged_store(tmp_path, openai_server)
    code, out, err = run("labels", "import", str(FIXTURE), "--from", "label-studio",
                         "--rubric", "correctness", "--db", str(db))
    assert code == 0, err
    assert "imported 3 label(s)" in out and "ana@example.com" in out
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        labels = {(lb.item_id, lb.annotator): lb
                  for lb in store.latest_labels(rubric.sha256, include_skips=True)}
    assert set(labels) == {("i0", "ana@example.com"), ("i0", "8"), ("i1", "ana@example.com")}
    ana = labels[("i0", "ana@example.com")]
    assert (ana.label, ana.note, ana.blind, ana.seconds) == ("pass", "looks right", True, 12.5)
    assert labels[("i0", "8")].label == "fail"
    # Made on a task that showed the judge's prediction: not blind.
    assert labels[("i1", "ana@example.com")].blind is False
    code, out, _ = run("labels", "import", str(FIXTURE), "--from", "label-studio",
                       "--rubric", "correctness", "--db", str(db))
    assert code == 0 and "imported 0 label(s)" in out


def test_label_studio_errors(tmp_path: Path, openai_server: OpenAIServer) -> None:
    db = judged_store(tmp_path, openai_server)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"data": {"item_id": "nope"},
                                "annotations": [{"completed_by": 1, "result": [
                                    {"type": "choices", "value": {"choices": ["maybe"]}}]}]}]))
    code, _, err = run("labels", "import", str(bad), "--from", "label-studio", "--rubric",
                       "correctness", "--db", str(db))
    assert code == 2 and "nothing was imported" in err
    assert "label 'maybe' is not on the 'correctness' scale" in err
    bad.write_text('{"tasks": []}')
    code, _, err = run("labels", "import", str(bad), "--from", "label-studio", "--rubric",
                       "correctness", "--db", str(db))
    assert code == 2 and "not a Label Studio JSON export" in err


def test_import_argilla_records(tmp_path: Path, openai_server: OpenAIServer) -> None:
    """Records serialised by Argilla 2.8's SDK (tests/fixtures/argilla/README.md)."""
    db = judged_store(tmp_path, openai_server)
    path = FIXTURE.parents[1] / "argilla" / "records.json"
    code, out, err = run("labels", "import", str(path), "--from", "argilla", "--rubric",
                         "correctness", "--db", str(db))
    assert code == 0, err
    assert "imported 4 label(s)" in out
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        labels = {(lb.item_id, lb.annotator[:4]): (lb.label, lb.blind)
                  for lb in store.latest_labels(rubric.sha256)}
    # i0 showed the judge's suggestion: its labels are not blind.
    assert labels == {("i0", "6f1c"): ("pass", False), ("i0", "0b8e"): ("fail", False),
                      ("i1", "6f1c"): ("pass", True), ("i1", "0b8e"): ("fail", True)}
