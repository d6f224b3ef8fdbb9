"""``judgekit split`` and ``judgekit align`` end to end against the test server.

A scripted judge (tests/support/scripted_judge.py) is wrong on a third of the items until
its prompt holds few-shot examples or the keyword a hand-written candidate adds; the
human labels are the truth it is scored against.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store
from judgekit.types import Item, Label
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer
from tests.support.scripted_judge import KEYWORD, MARKER, OPTIMIZER_MODEL, marker, scripted_judge

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / "rubrics" / "correctness.toml"
ORDINAL = REPO / "rubrics" / "helpfulness.toml"
DATASET = "qa"


def seed_store(path: Path, n: int = 200) -> tuple[dict[str, str], Path]:
    """``n`` labeled items, two per question (they share a prompt); labels are the truth."""
    rubric = load_rubric(BINARY)
    truth = {f"i{i}": ("pass" if (i * 7919) % 5 < 3 else "fail") for i in range(n)}
    items = [Item(f"i{i}", f"question {i // 2}?", response=f"answer {i} {marker(f'i{i}')}",
                  reference="the reference") for i in range(n)]
    with open_store(path) as store:
        store.import_items(DATASET, items)
        store.save_rubric(rubric)
        store.add_labels([
            Label(DATASET, item_id, rubric.sha256, "ann", label,
                  note="the answer misses the point" if label == "fail" else None)
            for item_id, label in truth.items()])
    return truth, path


def judge_args(db: Path, server: OpenAIServer, *extra: str) -> list[str]:
    # the winning rubric goes beside the store unless the test says where (a later --out wins)
    return ["align", "--rubric", str(BINARY), "--db", str(db), "--base-url", server.base_url,
            "--model", "judge-model", "--concurrency", "4", "--no-progress", "--out",
            str(db.parent / "correctness.aligned.toml"), *extra]


def keyword_candidate(tmp_path: Path) -> Path:
    text = BINARY.read_text().replace(
        'version = "1"', 'version = "1-careful"\nchanges = "asks for care"').replace(
        "You are a strict grader.", f"You are a strict grader. {KEYWORD}: read the whole answer.")
    path = tmp_path / "careful.toml"
    path.write_text(text)
    return path


def parts_of(store: Store) -> dict[str, str]:
    rubric = load_rubric(BINARY)
    record = store.get_split(rubric.sha256, "")
    assert record is not None
    return {row.item_id: row.part for row in store.split_items(record.id)}


def test_split_is_grouped_stratified_and_drawn_once(tmp_path: Path) -> None:
    _truth, db = seed_store(tmp_path / "s.db")
    code, out, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db), "--seed", "3",
                             "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert sum(data["counts"].values()) == 200 and data["seed"] == 3
    assert abs(data["counts"]["test"] - 70) <= 4 and abs(data["counts"]["train"] - 60) <= 4
    for part, labels in data["labels"].items():  # stratified: about 60% pass in each part
        assert abs(labels["pass"] / data["counts"][part] - 0.6) < 0.08, (part, labels)
    with open_store(db) as store:
        parts = parts_of(store)
    for i in range(0, 200, 2):  # two items of one question never straddle parts
        assert parts[f"i{i}"] == parts[f"i{i + 1}"]
    code, _, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db), "--seed", "4")
    assert code == 2 and "never redrawn" in err and "--seed" in err
    # newly labeled items join by the rule; nobody moves
    rubric = load_rubric(BINARY)
    with open_store(db) as store:
        store.import_items(DATASET, [
            Item("late0", "question 5?", response="late"),  # shares i10/i11's prompt
            Item("late1", "a new question?", response="late")])
        store.add_labels([Label(DATASET, "late0", rubric.sha256, "ann", "pass"),
                          Label(DATASET, "late1", rubric.sha256, "ann", "fail")])
    code, out, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db), "--format",
                             "json")
    assert code == 0, err
    assert json.loads(out)["added"] == 2
    with open_store(db) as store:
        after = parts_of(store)
    assert {k: v for k, v in after.items() if k in parts} == parts
    assert after["late0"] == parts["i10"]


def test_too_few_labels_says_how_many_are_missing(tmp_path: Path) -> None:
    _, db = seed_store(tmp_path / "few.db", n=30)
    code, _, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db))
    assert code == 2
    assert "30 labeled item(s)" in err and "needs at least 58 (28 missing)" in err
    with open_store(db) as store:
        assert store.get_split(load_rubric(BINARY).sha256, "") is None


def test_align_finds_the_candidate_and_confirms_it_on_test(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "a.db")
    with OpenAIServer(scripted_judge(truth)) as server:
        check_align(tmp_path, db, server)


def check_align(tmp_path: Path, db: Path, server: OpenAIServer) -> None:
    out_path = tmp_path / "aligned.toml"
    candidate = str(keyword_candidate(tmp_path))
    code, out, err = run_cli(*judge_args(db, server, "--examples", "4", "--candidate",
                                         candidate, "--out", str(out_path), "--format", "json"))
    assert code == 0, err
    requests = server.judge_requests()
    result = json.loads(out)
    assert "up to" in err and "judge call(s)" in err  # the estimate, before any call
    dev = result["dev"]
    assert dev[-1]["name"] == "baseline"  # both candidates beat it on dev
    assert result["picked"]["name"] in ("examples-4", "careful")
    test = result["test"]
    assert test["improvement_shown"] and test["difference"]["ci_low"] > 0
    assert test["n"] == result["split"]["counts"]["test"]
    assert "held-out labels" in test["sentence"] and "->" in test["sentence"]
    assert result["test_uses_before"] == 0 and result["written"] == str(out_path)
    written = load_rubric(out_path)
    assert written.sha256 == result["picked"]["sha256"]
    assert written.parent == load_rubric(BINARY).sha256 or result["picked"]["name"] == "careful"
    # no dev or test item ever appears in a prompt except as the item being judged
    with open_store(db) as store:
        parts = parts_of(store)
    for body in requests:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        assert {parts[i] for i in MARKER.findall(system)} <= {"train"}
        assert len(MARKER.findall(user)) == 1
    examples = [body for body in requests if "Examples judged by people" in
                body["messages"][0]["content"]]
    assert examples and all(parts[MARKER.search(b["messages"][-1]["content"]).group(1)]  # type: ignore[union-attr]
                            != "train" for b in examples)
    # status tells the test use; a second look is counted and warned about
    code, out, _ = run_cli("align", "status", "--rubric", str(BINARY), "--db", str(db))
    assert code == 0 and "test split used 1 time(s)" in out
    server.clear()
    code, out, err = run_cli(*judge_args(db, server, "--examples", "4", "--candidate", candidate,
                                         "--pick", result["picked"]["name"], "--out",
                                         str(out_path)))
    assert code == 0, err
    assert server.judge_requests() == []  # everything cached
    assert "used 1 time(s) before" in out and "label fresh items" in out
    assert "test used 2 time(s)" in out


def test_nothing_helps_no_improvement_shown(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "n.db")
    out_path = tmp_path / "none.toml"
    with OpenAIServer(scripted_judge(truth, helped=False)) as server:
        code, out, err = run_cli(*judge_args(db, server, "--examples", "4", "--candidate",
                                             str(keyword_candidate(tmp_path)), "--out",
                                             str(out_path)))
    assert code == 0, err
    assert "no improvement shown" in out and "no rubric written" in out
    assert "selected on dev" in out
    assert not out_path.exists()


def test_other_scale_candidate_refused_store_unchanged(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "o.db")
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, "--candidate", str(ORDINAL)))
        assert server.judge_requests() == []
    assert code == 2 and "differs from the baseline's binary" in err
    with open_store(db) as store:
        assert store.get_split(load_rubric(BINARY).sha256, "") is None


def test_candidate_with_a_test_item_as_example_refused(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "l.db")
    code, _, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db))
    assert code == 0, err
    with open_store(db) as store:
        test_item = next(k for k, v in parts_of(store).items() if v == "test")
    leaky = tmp_path / "leaky.toml"
    leaky.write_text(BINARY.read_text().replace('version = "1"', 'version = "leaky"') + (
        f'\n[[examples]]\nitem_id = "{test_item}"\ndataset = "{DATASET}"\nlabel = "pass"\n'
        'input = "q"\nresponse = "r"\n'))
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, "--examples", "0", "--candidate",
                                           str(leaky)))
        assert server.judge_requests() == []
    assert code == 2 and f"example item {test_item!r} is in the test split" in err


def test_optimizer_garbage_and_invalid_rubrics_are_counted(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "opt.db")
    replies = {
        1: "I think the judge should be nicer.",  # garbage: no JSON
        2: json.dumps({"instructions": "Grade {answer} strictly."}),  # invalid placeholder
        3: json.dumps({"instructions": f"{KEYWORD}: compare the final answers only."}),
    }
    server = OpenAIServer(scripted_judge(truth, optimizer_reply=replies.__getitem__))
    with server:
        code, out, err = run_cli(*judge_args(db, server, "--examples", "0", "--revisions", "3",
                                             "--optimizer-model", OPTIMIZER_MODEL,
                                             "--format", "json"))
        assert code == 0, err
        optimizer_bodies = [b for b in server.requests if b.get("model") == OPTIMIZER_MODEL]
        server.clear()
        code, _, err = run_cli(*judge_args(db, server, "--examples", "0", "--revisions", "3",
                                           "--optimizer-model", OPTIMIZER_MODEL))
        assert code == 0, err
        assert server.requests == []  # proposals and judgments stored: nothing asked again
    result = json.loads(out)
    statuses = [p["status"] for p in result["proposals"]]
    assert statuses == ["garbage", "invalid_rubric", "ok"] and result["proposals_skipped"] == 2
    assert result["picked"]["name"] == "revision-3" and result["test"]["improvement_shown"]
    assert "1 revision(s) proposed, 2 skipped" in err
    with open_store(db) as store:
        parts = parts_of(store)
    assert len(optimizer_bodies) == 3
    for body in optimizer_bodies:  # the optimizer sees train items only
        text = json.dumps(body["messages"])
        assert {parts[i] for i in MARKER.findall(text)} <= {"train"}


def test_killed_align_resumes_without_paying_twice(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "k.db")
    with OpenAIServer(scripted_judge(truth), latency=0.02) as server:
        args = judge_args(db, server, "--examples", "4", "--samples", "3")
        args[args.index("--concurrency") + 1] = "1"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen([sys.executable, "-m", "judgekit", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(server.judge_requests()) < 150 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first = len(server.judge_requests())
        assert first >= 150
        code, out, err = run_cli(*args)
        assert code == 0, err
        bodies = server.judge_requests()
    with sqlite3.connect(db) as conn:
        rows, calls = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT cache_key) FROM judgments").fetchone()
        votes = conn.execute("SELECT COUNT(*) FROM judgments WHERE rubric_version LIKE "
                             "'%samples3' AND variant = ''").fetchone()[0]
    assert rows == calls  # no call was made (and stored) twice, no vote taken twice
    assert votes == 70  # the samples' one vote per dev item (a row, not a call)
    calls -= votes
    # what one uninterrupted run makes: the baseline on train (60), baseline, examples and
    # 3 samples on dev (70 + 70 + 210), baseline and examples on test (70 + 70); a resumed
    # run that chose other examples would have made more
    assert calls == 60 + 70 + 70 + 210 + 70 + 70
    assert len(bodies) <= calls + 1  # at most the one call in flight when killed is repeated
    assert "held-out labels" in out


@pytest.mark.parametrize("fractions", [("0.5", "0.3", "0.3")])
def test_fractions_must_add_up(tmp_path: Path, fractions: tuple[str, str, str]) -> None:
    _, db = seed_store(tmp_path / "f.db")
    code, _, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db), "--train",
                           fractions[0], "--dev", fractions[1], "--test", fractions[2])
    assert code == 2 and "must add up to 1" in err


def test_budget_stops_before_exceeding_and_a_rerun_continues(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "b.db")
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, "--examples", "4", "--max-calls", "40"))
        assert code == 2 and "--max-calls 40: judging baseline on train needs 60" in err
        assert server.judge_requests() == []  # refused before any call
        code, _, err = run_cli(*judge_args(db, server, "--examples", "4", "--max-calls", "100"))
        assert code == 2 and "judging baseline on dev needs 70 more call(s) after 60" in err
        assert len(server.judge_requests()) == 60
        server.clear()
        code, out, err = run_cli(*judge_args(db, server, "--examples", "4"))
        assert code == 0, err
        assert len(server.judge_requests()) == 70 + 70 + 70 + 70  # train not paid again
    assert "held-out labels" in out


def test_report_has_an_alignment_section(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "r.db")
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, "--examples", "4", "--out",
                                           str(tmp_path / "w.toml")))
        assert code == 0, err
        code, out, err = run_cli("report", "--rubric", str(BINARY), "--db", str(db),
                                 "--format", "json")
    assert code in (0, 1, 3), err
    alignment = json.loads(out)["alignment"]
    assert alignment["test_uses"] == 1 and alignment["latest"]["test"]["improvement_shown"]
    assert alignment["split"]["counts"]["test"] == 70
    code, out, _ = run_cli("report", "--rubric", str(tmp_path / "w.toml"), "--db", str(db))
    assert "Alignment" in out and "held-out result" in out


@pytest.mark.parametrize(("extra", "message"), [
    (("--examples", "0"), "no candidate to try"),
    (("--pick", "nope"), "--pick nope: no such candidate (have: examples-4)"),
    (("--samples", "1"), "needs 2 or more samples"),
])
def test_bad_options_refused_before_any_call(tmp_path: Path, extra: tuple[str, ...],
                                             message: str) -> None:
    truth, db = seed_store(tmp_path / "x.db")
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, *extra))
        assert server.requests == []
    assert code == 2 and message in err, err
    with open_store(db) as store:
        assert store.get_split(load_rubric(BINARY).sha256, "") is None


def test_status_without_a_split(tmp_path: Path) -> None:
    _, db = seed_store(tmp_path / "st.db")
    code, _, err = run_cli("align", "status", "--rubric", str(BINARY), "--db", str(db))
    assert code == 2 and "no split for rubric correctness" in err


def test_jury_of_stored_runs_costs_no_call(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "j.db")
    rubric = load_rubric(BINARY)
    with OpenAIServer(scripted_judge(truth, per_model=True)) as server:
        for model in ("m1", "m2", "m3"):
            code, _, err = run_cli("judge", "--rubric", str(BINARY), "--dataset", DATASET,
                                   "--db", str(db), "--base-url", server.base_url, "--model",
                                   model, "--no-progress")
            assert code == 0, err
        with open_store(db) as store:
            runs = [run.id for run in store.list_runs(rubric_hash=rubric.sha256)]
            judged = {run.model: {j.item_id: j.label for j in store.judgments(run_id=run.id)}
                      for run in store.list_runs(rubric_hash=rubric.sha256)}
        server.clear()
        args = judge_args(db, server, "--examples", "0", "--pick", "jury-3", "--format", "json")
        args[args.index("--model") + 1] = "m1"
        jury_args = [a for run in runs for a in ("--jury-run", run)]
        code, out, err = run_cli(*args, *jury_args)
        assert code == 0, err
        # only the baseline's own calls: dev and test (the jury reads stored verdicts)
        assert {b["model"] for b in server.judge_requests()} <= {"m1"}
    result = json.loads(out)
    assert result["picked"]["name"] == "jury-3" and "m2 (run" in result["picked"]["changes"]
    jury_dev = next(d for d in result["dev"] if d["name"] == "jury-3")
    with open_store(db) as store:
        dev = [k for k, v in parts_of(store).items() if v == "dev"]
    majority = [Counter(judged[m][i] for m in judged).most_common(1)[0][0] for i in dev]
    agree = sum(v == truth[i] for v, i in zip(majority, dev, strict=True)) / len(dev)
    assert jury_dev["agreement"]["statistic"] == pytest.approx(agree)


def test_broken_candidate_file_named_with_its_line(tmp_path: Path) -> None:
    truth, db = seed_store(tmp_path / "bad.db")
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "correctness"\nversion = \n')
    with OpenAIServer(scripted_judge(truth)) as server:
        code, _, err = run_cli(*judge_args(db, server, "--candidate", str(broken)))
        assert server.requests == []
    assert code == 2 and f"{broken}:2: invalid TOML" in err and "Traceback" not in err


def test_a_store_from_before_align_is_upgraded_by_split(tmp_path: Path) -> None:
    _, db = seed_store(tmp_path / "old.db")
    with sqlite3.connect(db) as conn:  # the store as the previous judgekit left it
        conn.executescript(
            "DROP TABLE split_uses; DROP TABLE split_items; DROP TABLE splits; "
            "DROP TABLE align_proposals; "
            "DELETE FROM _sqlite_migrations WHERE name = '0010_align_splits';")
    code, out, err = run_cli("split", "--rubric", str(BINARY), "--db", str(db))
    assert code == 0, err
    assert "  train    60 labeled item(s)" in out
    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations")]
        assert "0010_align_splits" in names
        assert conn.execute("SELECT COUNT(*) FROM split_items").fetchone()[0] == 200
