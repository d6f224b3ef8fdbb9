"""``import --from TOOL`` on the files each tool writes by default, with several graders, and
on the shapes and sizes a reader must refuse (tests/fixtures/*/README.md say how each was made)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.adversarial.conftest import fingerprint
from tests.adversarial.conftest import run as run_inproc
from tests.integration.test_judgments_io import PAIRWISE
from tests.support.cli import run_cli as run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TWO = FIXTURES / "promptfoo" / "two-graders"


def verdicts(db: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """(judge, item id) -> (status, label) of the plain correctness verdicts."""
    rubric = load_rubric("correctness")
    with open_store(db) as store:
        return {(r.model_requested, r.item_id): (r.status, r.label)
                for r in store.judgments(rubric_hash=rubric.sha256, variant="")}


def provenances(db: Path) -> dict[str, dict]:
    with open_store(db) as store:
        return {r.model: dict(r.summary["provenance"]) for r in store.list_runs(kind="import")}


@pytest.mark.parametrize("form", ["results.json", "results.jsonl", "results.yaml"])
def test_promptfoo_output_forms_and_two_assertions(form: str, tmp_path: Path) -> None:
    if form.endswith(".yaml"):
        pytest.importorskip("yaml")
    db = tmp_path / "pf.db"
    code, out, err = run("import", str(TWO / form), "--from", "promptfoo", "--rubric",
                         "correctness", "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 8 verdict(s)" in out
    version = "" if form.endswith(".jsonl") else "@0.123.1"  # .jsonl lines carry no version
    correct = f"promptfoo-default-grader{version} [correctness]"
    assert f"grader: assertion 'correctness' -> judge {correct}" in out
    assert "grader: assertion 'concise' -> judge" in out
    found = verdicts(db)
    # Ids are the tests' metadata ids (unique), not t0..t3.
    assert {item for _, item in found} == {"q1", "q2", "q3", "q4"}
    assert found[(correct, "q1")] == ("ok", "pass") and found[(correct, "q4")] == ("ok", "fail")
    with open_store(db) as store:
        items = {i.id: i for i in store.iter_items("run")}
    assert items["q4"].reference == "Jupiter"  # vars.expected kept as the reference
    assert provenances(db)[correct]["assertion"] == "correctness"


def test_promptfoo_one_assertion_and_the_html_refusal(tmp_path: Path) -> None:
    db = tmp_path / "pf.db"
    code, out, err = run("import", str(TWO / "results.json"), "--from", "promptfoo",
                         "--rubric", "correctness", "--assertion", "correctness",
                         "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "imported 4 verdict(s)" in out
    assert {judge for judge, _ in verdicts(db)} == {
        "promptfoo-default-grader@0.123.1 [correctness]"}
    code, _, err = run("import", str(TWO / "results.json"), "--from", "promptfoo",
                       "--rubric", "correctness", "--assertion", "nope", "--db", str(db))
    assert code == 2 and "no assertion 'nope' in the file" in err and "'concise'" in err
    html = tmp_path / "results.html"
    html.write_text("<html></html>")
    code, _, err = run("import", str(html), "--from", "promptfoo", "--rubric",
                       "correctness", "--db", str(db))
    assert code == 2 and "results.json, results.jsonl, results.yaml or results.csv" in err


def test_promptfoo_changed_content_under_the_same_id_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "pf.db"
    args = ("--from", "promptfoo", "--rubric", "correctness", "--name", "run", "--db", str(db))
    assert run("import", str(TWO / "results.json"), *args)[0] == 0
    data = json.loads((TWO / "results.json").read_text())
    data["results"]["results"][2]["response"]["output"] = "four"  # q3 now another answer
    changed = tmp_path / "results.json"
    changed.write_text(json.dumps(data))
    before = fingerprint(db)
    code, _, err = run("import", str(changed), *args)
    assert code == 2 and "'q3'" in err and "--replace" in err
    assert fingerprint(db) == before


def test_inspect_log_with_two_scorers(tmp_path: Path) -> None:
    pytest.importorskip("backports.zstd")
    db = tmp_path / "inspect.db"
    log = FIXTURES / "inspect" / "capitals_scorers.eval"
    code, out, err = run("import", str(log), "--from", "inspect", "--rubric", "correctness",
                         "--name", "run", "--db", str(db))
    assert code == 0, err
    assert "grader: scorer 'includes' -> judge inspect:includes" in out
    assert "grader: scorer 'model_graded_fact' -> judge openai-api/local/grader-model" in out
    found = verdicts(db)
    assert found[("openai-api/local/grader-model", "q3")] == ("ok", "fail")
    assert found[("inspect:includes", "q1")] == ("ok", "pass")
    prov = provenances(db)
    assert prov["inspect:includes"]["scorer"] == "includes"
    assert prov["openai-api/local/grader-model"]["scorer"] == "model_graded_fact"
    db2 = tmp_path / "one.db"
    code, out, err = run("import", str(log), "--from", "inspect", "--rubric", "correctness",
                         "--scorer", "model_graded_fact", "--name", "run", "--db", str(db2))
    assert code == 0, err
    assert {judge for judge, _ in verdicts(db2)} == {"openai-api/local/grader-model"}


@pytest.mark.parametrize("name", ["latest_test_run.json", "evaluation_result.json"])
def test_deepeval_default_file_and_evaluation_result(name: str, tmp_path: Path) -> None:
    db = tmp_path / "de.db"
    path = FIXTURES / "deepeval" / "two-metrics" / name
    code, out, err = run("import", str(path), "--from", "deepeval", "--rubric", "correctness",
                         "--name", "run", "--db", str(db))
    assert code == 0, err
    correct = "grader-model (Local Model) [Correctness [GEval]]"
    assert f"grader: metric 'Correctness [GEval]' -> judge {correct}" in out
    assert "grader: metric 'Conciseness [GEval]'" in out
    found = verdicts(db)
    assert found[(correct, "q1")] == ("ok", "pass") and found[(correct, "q3")] == ("ok", "fail")
    with open_store(db) as store:
        q3 = next(i for i in store.iter_items("run") if i.id == "q3")
    assert (q3.input, q3.response, q3.reference) == ("What is 2 + 2?", "5", "4")
    code, _, err = run("import", str(path), "--from", "deepeval", "--rubric", "correctness",
                       "--metric", "Correctness [GEval]", "--judge", "geval", "--name", "one",
                       "--db", str(tmp_path / "one.db"))
    assert code == 0, err
    assert {judge for judge, _ in verdicts(tmp_path / "one.db")} == {"geval"}
    code, _, err = run("import", str(path), "--from", "deepeval", "--rubric", "correctness",
                       "--judge", "geval", "--db", str(tmp_path / "two.db"))
    assert code == 2 and "pick one with --grader" in err


def test_lm_eval_lines_without_their_fields_are_refused(tmp_path: Path) -> None:
    source = FIXTURES / "lm-eval" / "samples_capitals.jsonl"
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    for field in ("filtered_resps", "arguments", "target", "doc_id", "exact_match"):
        broken = [dict(line) for line in lines]
        del broken[1][field]
        path = tmp_path / "samples_capitals_2026-12-01T11-03-36.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in broken))
        code, _, err = run("import", str(path), "--from", "lm-eval", "--rubric", "correctness",
                           "--db", str(tmp_path / "lm.db"))
        assert code == 2 and f"{path.name}:2:" in err, (field, err)
        assert not (tmp_path / "lm.db").exists()


def test_lm_eval_task_is_the_files(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    shutil.copy(FIXTURES / "lm-eval" / "samples_capitals.jsonl",
                folder / "samples_capitals_2026-12-01T11-03-36.123.jsonl")
    results = json.loads((FIXTURES / "lm-eval" / "results.json").read_text())
    results["results"] = {"arith": {}, **results["results"]}  # a run of two tasks
    (folder / "results_2026-12-01T11-03-36.123.json").write_text(json.dumps(results))
    db = tmp_path / "lm.db"
    code, _, err = run("import", str(folder / "samples_capitals_2026-12-01T11-03-36.123.jsonl"),
                       "--from", "lm-eval", "--rubric", "correctness", "--db", str(db))
    assert code == 0, err
    (provenance,) = provenances(db).values()
    assert provenance["task"] == "capitals" and provenance["tool_version"] == "0.4.13"


@pytest.mark.parametrize(("text", "needle"), [
    ('{"results": {"results": [7]}}', "results.results[0]: expected an object, got a number"),
    ('{"results": {"results": [{"vars": "q", "gradingResult": {}}]}}',
     "results.results[0].vars: expected an object, got a string"),
    ('{"results": {"results": [{"gradingResult": "passed"}]}}',
     "results.results[0].gradingResult: expected an object, got a string"),
])
def test_promptfoo_shapes_it_never_writes(text: str, needle: str, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(text)
    code, out, err = run("import", str(path), "--from", "promptfoo", "--rubric", "correctness",
                         "--db", str(tmp_path / "x.db"))
    assert code == 2 and needle in err and "Traceback" not in err + out
    assert not (tmp_path / "x.db").exists()


# -- Batch output: ids, failed lines, duplicates ------------------------------------------


@pytest.fixture
def batch_store(tmp_path: Path) -> tuple[Path, Path]:
    db, rubric = tmp_path / "b.db", tmp_path / "pref.toml"
    rubric.write_text(PAIRWISE)
    shutil.copy(FIXTURES / "openai-batch" / "pairs.jsonl", tmp_path / "run.jsonl")
    assert run("import", str(tmp_path / "run.jsonl"), "--db", str(db))[0] == 0
    return db, rubric


def _output_lines() -> list[dict]:
    text = (FIXTURES / "openai-batch" / "output.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _rows(db: Path, rubric: Path) -> dict[tuple[str, str], tuple[str, str | None, str | None, str]]:
    loaded = load_rubric(rubric)
    with open_store(db) as store:
        return {(r.item_id, r.variant): (r.status, r.label, r.reasoning, r.model_requested)
                for r in store.judgments(rubric_hash=loaded.sha256)}


def test_batch_failed_lines_keep_judge_error_and_category(
        batch_store: tuple[Path, Path], tmp_path: Path) -> None:
    db, rubric = batch_store
    lines = _output_lines()
    timed_out = next(line for line in lines if line["custom_id"] == "p2::BA")
    timed_out["response"] = None
    timed_out["error"] = {"code": "request_timeout", "message": "The request timed out."}
    path = _write(tmp_path / "output.jsonl", lines)
    code, _, err = run("import", str(path), "--from", "openai-batch", "--rubric", str(rubric),
                         "--name", "run", "--db", str(db))
    assert code == 0, err
    rows = _rows(db, rubric)
    status, label, reasoning, judge = rows[("p1", "")]
    assert (status, label, judge) == ("rate_limited", None, "test-model")  # not "openai-batch"
    assert reasoning and "Rate limit reached" in reasoning
    status, _, reasoning, judge = rows[("p2", "swapped")]
    assert (status, judge) == ("timeout", "test-model")
    assert reasoning and "timed out" in reasoning


def test_batch_ids_from_a_prefix_or_the_request_metadata(
        batch_store: tuple[Path, Path], tmp_path: Path) -> None:
    db, rubric = batch_store
    lines = _output_lines()
    prefixed = [{**line, "custom_id": "judge-" + line["custom_id"]} for line in lines]
    path = _write(tmp_path / "prefixed.jsonl", prefixed)
    args = ("--from", "openai-batch", "--rubric", str(rubric), "--name", "run", "--db", str(db))
    code, _, err = run("import", str(path), *args)
    assert code == 2 and "'judge-p1'" in err  # no such item: the prefix is not stripped
    code, out, err = run("import", str(path), *args, "--strip-prefix", "judge-")
    assert code == 0 and "imported 6 verdict(s)" in out, err
    # Real ids kept in each request's metadata, custom ids req-N.
    requests, renamed = [], []
    for number, line in enumerate(lines):
        item, _, order = line["custom_id"].partition("::")
        custom = f"req-{number}" + (f"::{order}" if order else "")
        renamed.append({**line, "custom_id": custom})
        requests.append({"custom_id": custom, "method": "POST", "url": "/v1/chat/completions",
                         "body": {"model": "test-model", "metadata": {"item": item},
                                  "messages": [{"role": "user", "content": "x"}]}})
    out_path = _write(tmp_path / "renamed.jsonl", renamed)
    req_path = _write(tmp_path / "requests.jsonl", requests)
    db2 = tmp_path / "b2.db"
    shutil.copy(db, db2)
    code, out, err = run("import", str(out_path), "--from", "openai-batch", "--rubric",
                         str(rubric), "--name", "run", "--db", str(db2), "--id-from",
                         "metadata.item", "--requests", str(req_path))
    assert code == 0, err
    assert _rows(db2, rubric)[("p2", "")][:2] == ("ok", "B")


def test_batch_duplicate_lines_are_refused(batch_store: tuple[Path, Path],
                                           tmp_path: Path) -> None:
    db, rubric = batch_store
    lines = _output_lines()
    again = json.loads(json.dumps(next(line for line in lines if line["custom_id"] == "p2")))
    again["response"]["body"]["choices"][0]["message"]["content"] = '{"verdict": "A"}'
    path = _write(tmp_path / "output.jsonl", [*lines, again])
    before = fingerprint(db)
    code, _, err = run("import", str(path), "--from", "openai-batch", "--rubric", str(rubric),
                       "--name", "run", "--db", str(db))
    assert code == 2 and "same call as" in err and "a different verdict" in err, err
    assert fingerprint(db) == before


# -- caps ---------------------------------------------------------------------------------


def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", b'{"eval": {"scorers": [], "pad": "' + b"0" * 50_000_000
                         + b'"}}')
    assert bomb.stat().st_size < 200_000
    outcome = run_inproc("import", str(bomb), "--from", "inspect", "--rubric", "correctness",
                         "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("more than", "bytes uncompressed", "JUDGEKIT_MAX_UNCOMPRESSED_BYTES")
    assert not (tmp_path / "x.db").exists()


def test_stored_text_is_capped(tmp_path: Path) -> None:
    pytest.importorskip("backports.zstd")
    log = FIXTURES / "inspect" / "capitals.eval"
    args = ("import", str(log), "--from", "inspect", "--rubric", "correctness",
            "--db", str(tmp_path / "x.db"))
    outcome = run_inproc(*args, env={"JUDGEKIT_MAX_TEXT_BYTES": "40"})
    outcome.assert_clean_error("over the 40-byte limit", "JUDGEKIT_MAX_TEXT_BYTES")
    assert not (tmp_path / "x.db").exists()
    assert run_inproc(*args).code == 0
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "input": "q" * 100, "response": "r"}) + "\n")
    outcome = run_inproc("import", str(items), "--db", str(tmp_path / "y.db"),
                         env={"JUDGEKIT_MAX_TEXT_BYTES": "50"})
    outcome.assert_clean_error("items.jsonl:1", "'input'", "over the 50-byte limit")


def test_the_file_is_empty_only_when_it_is(tmp_path: Path) -> None:
    blank = tmp_path / "items.jsonl"
    blank.write_text("\n  \n" * 1000)
    outcome = run_inproc("import", str(blank), "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("holds no records")
    assert "the file is empty" not in outcome.err
    blank.write_text("")
    run_inproc("import", str(blank), "--db", str(tmp_path / "x.db")).assert_clean_error(
        "the file is empty")


def test_a_binary_parquet_column_is_named_as_binary(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"id": ["a"], "input": [b"question"], "response": ["r"]}), path)
    outcome = run_inproc("import", str(path), "--db", str(tmp_path / "x.db"))
    outcome.assert_clean_error("'input' must be a string, got binary data")


def test_imported_verdict_text_is_capped(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "input": "q", "response": "r"}) + "\n")
    db = tmp_path / "x.db"
    assert run_inproc("import", str(items), "--db", str(db)).code == 0
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text(json.dumps({"item_id": "a", "judge": "j", "label": "pass",
                                    "reasoning": "why " * 100}) + "\n")
    before = fingerprint(db)
    outcome = run_inproc("judgments", "import", str(verdicts), "--rubric", "correctness",
                         "--db", str(db), env={"JUDGEKIT_MAX_TEXT_BYTES": "100"})
    assert outcome.code == 2 and "verdicts.jsonl:1: field 'reasoning'" in outcome.err
    assert "over the 100-byte limit" in outcome.err
    assert fingerprint(db) == before


def test_a_batch_answer_with_a_lone_surrogate_is_stored_with_it_escaped(
        batch_store: tuple[Path, Path], tmp_path: Path) -> None:
    """A judge's answer is the judge's, whatever it holds: as `batch collect` and a live run
    do, the import stores it with the surrogate written as a visible escape and goes on."""
    db, rubric = batch_store
    lines = _output_lines()
    lines[0]["response"]["body"]["choices"][0]["message"]["content"] = (
        '{"reasoning": "\\ud800", "verdict": "A"}')
    path = _write(tmp_path / "output.jsonl", lines)
    outcome = run_inproc("import", str(path), "--from", "openai-batch", "--rubric", str(rubric),
                         "--name", "run", "--db", str(db))
    assert outcome.code == 0, (outcome.out, outcome.err)
    assert "imported 6 verdict(s)" in outcome.out
    with sqlite3.connect(db) as conn:
        texts = [row[0] or "" for row in conn.execute("SELECT reasoning FROM judgments")]
    assert any("\\ud800" in text for text in texts)


def test_a_parquet_file_that_expands_too_far_is_refused(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "items.parquet"
    rows = 2_000  # one 10,000-character answer repeated: a few KB on disk, 20 MB in memory
    pq.write_table(pa.table({"id": pa.array([str(n) for n in range(rows)]),
                             "input": pa.array(["q"] * rows),
                             "response": pa.array(["r" * 10_000] * rows)}), path)
    assert path.stat().st_size * 100 < 20_000_000
    # A repeated column is legitimate in parquet: over 100x, but under its 512 MB floor.
    assert run_inproc("import", str(path), "--db", str(tmp_path / "ok.db")).code == 0
    outcome = run_inproc("import", str(path), "--db", str(tmp_path / "x.db"),
                         env={"JUDGEKIT_MAX_UNCOMPRESSED_BYTES": "5000000"})
    outcome.assert_clean_error("items.parquet", "bytes uncompressed")
    assert not (tmp_path / "x.db").exists()
