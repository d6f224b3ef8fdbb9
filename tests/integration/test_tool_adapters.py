"""``judgekit import --from TOOL``: real files written by promptfoo, Inspect AI and a Batch API
server (tests/fixtures/*/README.md say how each was made), imported as judge runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.integration.test_judgments_io import PAIRWISE
from tests.support.cli import run_cli as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
def imported(db: Path, rubric_name: str) -> tuple[dict[str, tuple[str, str | None]], dict]:
    """item id -> (status, label) of the plain verdicts, and the import run's summary."""
    rubric = load_rubric(rubric_name)
    with open_store(db) as store:
        rows = store.judgments(rubric_hash=rubric.sha256, variant="")
        (run_record,) = store.list_runs(kind="import")
        return ({r.item_id: (r.status, r.label) for r in rows},
                {"summary": dict(run_record.summary), "model": run_record.model,
                 "raw": {r.item_id: r.raw_text for r in rows},
                 "reasoning": {r.item_id: r.reasoning for r in rows},
                 "items": {i.id: i for i in store.iter_items("run")}})


def test_promptfoo_results(tmp_path: Path) -> None:
    db = tmp_path / "pf.db"
    code, out, err = run("import", str(FIXTURES / "promptfoo" / "results.json"), "--from",
                         "promptfoo", "--rubric", "correctness", "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 4 item(s)" in out and "imported 4 verdict(s)" in out
    assert "judge openai:chat:grader-model" in out
    verdicts, meta = imported(db, "correctness")
    assert verdicts == {"t0": ("ok", "pass"), "t1": ("ok", "pass"), "t2": ("ok", "fail"),
                        "t3": ("ok", "fail")}
    items = meta["items"]
    assert items["t0"].input == "Answer in one word: What is the capital of France?"
    assert (items["t0"].response, items["t2"].response) == ("Paris", "5")
    provenance = meta["summary"]["provenance"]
    assert provenance["tool"] == "promptfoo" and provenance["tool_version"] == "0.121.20"
    assert provenance["grader_model"] == "openai:chat:grader-model"
    assert len(provenance["grader_prompt_sha256"]) == 64
    assert provenance["assertions"] == ["The answer gives the correct number.",
                                        "The answer names the correct city.",
                                        "The answer names the correct planet."]
    assert json.loads(meta["raw"]["t2"]) == {"pass": False, "score": 0, "reason": "Wrong answer."}
    assert meta["reasoning"]["t0"] == "Correct."
    code, out, _ = run("runs", "--kind", "import", "--db", str(db))
    assert "from tool promptfoo, tool_version 0.121.20, grader_model openai:chat:grader-model" \
        in out
    # Importing again adds nothing.
    code, out, _ = run("import", str(FIXTURES / "promptfoo" / "results.json"), "--from",
                       "promptfoo", "--rubric", "correctness", "--name", "run", "--db", str(db))
    assert code == 0 and "imported 0 verdict(s)" in out and "(4 already stored)" in out


def test_inspect_eval_log(tmp_path: Path) -> None:
    pytest.importorskip("backports.zstd")
    db = tmp_path / "inspect.db"
    code, out, err = run("import", str(FIXTURES / "inspect" / "capitals.eval"), "--from",
                         "inspect", "--rubric", "correctness", "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 4 item(s)" in out and "imported 4 verdict(s)" in out
    verdicts, meta = imported(db, "correctness")
    assert verdicts == {"q1": ("ok", "pass"), "q2": ("ok", "pass"), "q3": ("ok", "fail"),
                        "q4": ("ok", "fail")}
    assert meta["model"] == "openai-api/local/grader-model"
    items = meta["items"]
    assert (items["q1"].input, items["q1"].response, items["q1"].reference) == (
        "What is the capital of France?", "Paris", "Paris")
    assert items["q4"].response == "Saturn" and items["q4"].reference == "Jupiter"
    provenance = meta["summary"]["provenance"]
    assert provenance["tool"] == "inspect" and provenance["tool_version"] == "0.3.285"
    assert provenance["task"] == "capitals" and provenance["scorer"] == "model_graded_fact"
    assert provenance["model_under_test"] == "openai-api/local/answer-model"
    assert meta["raw"]["q1"].endswith("GRADE: C") and meta["raw"]["q3"].endswith("GRADE: I")


def test_deepeval_test_run(tmp_path: Path) -> None:
    db = tmp_path / "deepeval.db"
    code, out, err = run("import", str(FIXTURES / "deepeval" / "test_run.json"), "--from",
                         "deepeval", "--rubric", "correctness", "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 4 item(s)" in out and "judge grader-model (Local Model)" in out
    verdicts, meta = imported(db, "correctness")
    assert verdicts == {"q1": ("ok", "pass"), "q2": ("ok", "pass"), "q3": ("ok", "fail"),
                        "q4": ("ok", "fail")}
    items = meta["items"]
    assert (items["q3"].input, items["q3"].response, items["q3"].reference) == (
        "What is 2 + 2?", "5", "4")
    provenance = meta["summary"]["provenance"]
    assert provenance["tool"] == "deepeval" and provenance["metric"] == "Correctness [GEval]"
    assert provenance["threshold"] == 0.5 and len(provenance["grader_prompt_sha256"]) == 64
    assert json.loads(meta["raw"]["q3"]) == {"score": 0.1, "threshold": 0.5, "success": False,
                                             "reason": "Does not match."}


def test_lm_eval_samples(tmp_path: Path) -> None:
    db = tmp_path / "lm.db"
    samples = FIXTURES / "lm-eval" / "samples_capitals.jsonl"
    code, out, err = run("import", str(samples), "--from", "lm-eval", "--rubric", "correctness",
                         "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 4 item(s)" in out and "judge lm-eval:exact_match" in out
    verdicts, meta = imported(db, "correctness")
    assert verdicts == {"q1": ("ok", "pass"), "q2": ("ok", "pass"), "q3": ("ok", "fail"),
                        "q4": ("ok", "fail")}
    items = meta["items"]
    assert items["q1"].input == "Answer in one word: What is the capital of France?"
    assert (items["q3"].response, items["q3"].reference) == ("5", "4")
    provenance = meta["summary"]["provenance"]
    assert provenance["tool"] == "lm-eval" and provenance["tool_version"] == "0.4.13"
    assert provenance["model_under_test"] == "answer-model" and provenance["task"] == "capitals"
    assert json.loads(meta["raw"]["q4"]) == {"exact_match": 0.0}


def test_openai_batch_output(tmp_path: Path) -> None:
    db = tmp_path / "batch.db"
    rubric = tmp_path / "pref.toml"
    rubric.write_text(PAIRWISE)
    shutil.copy(FIXTURES / "openai-batch" / "pairs.jsonl", tmp_path / "run.jsonl")
    assert run("import", str(tmp_path / "run.jsonl"), "--db", str(db))[0] == 0
    code, out, err = run("import", str(FIXTURES / "openai-batch" / "output.jsonl"), "--from",
                         "openai-batch", "--rubric", str(rubric), "--name", "run",
                         "--db", str(db))
    assert code == 0, err
    assert "imported 6 verdict(s)" in out and "judge test-model" in out
    loaded = load_rubric(rubric)
    with open_store(db) as store:
        rows = {(r.item_id, r.variant): (r.status, r.label)
                for r in store.judgments(rubric_hash=loaded.sha256)}
    assert rows == {("p1", ""): ("rate_limited", None), ("p1", "swapped"): ("ok", "A"),
                    ("p2", ""): ("ok", "B"), ("p2", "swapped"): ("ok", "B"),
                    ("p3", ""): ("ok", "tie"), ("p3", "swapped"): ("ok", "tie")}
    # The both-order verdicts give the position probe without an endpoint.
    code, out, err = run("probe", "position", "--imported", "--rubric", str(rubric),
                         "--dataset", "run", "--db", str(db), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["position_consistency"]["n"] == 2  # p1 failed in one order: excluded
    assert result["position_consistency"]["statistic"] == 1.0


def test_bad_tool_files_are_one_line_errors(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    not_promptfoo = tmp_path / "results.json"
    not_promptfoo.write_text('{"results": []}')
    code, _, err = run("import", str(not_promptfoo), "--from", "promptfoo", "--rubric",
                       "correctness", "--db", str(db))
    assert code == 2 and "not a promptfoo results file" in err
    code, _, err = run("import", str(FIXTURES / "promptfoo" / "results.json"), "--from",
                       "promptfoo", "--db", str(db))
    assert code == 2 and "--from promptfoo needs --rubric" in err
    code, _, err = run("import", str(FIXTURES / "promptfoo" / "results.json"), "--from",
                       "promptfoo", "--rubric", "helpfulness", "--db", str(db))
    assert code == 2 and "use a binary rubric" in err
    code, _, err = run("import", str(FIXTURES / "openai-batch" / "output.jsonl"), "--from",
                       "openai-batch", "--rubric", "correctness", "--name", "none",
                       "--db", str(db))
    assert code == 2 and "import the items first" in err
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"not a zip")
    code, _, err = run("import", str(broken), "--from", "inspect", "--rubric", "correctness",
                       "--db", str(db))
    assert code == 2 and "not a readable Inspect .eval log" in err
