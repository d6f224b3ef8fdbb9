"""Every criterion of a rubric file judged in one call per item (``per_call`` absent): the
request, the verdicts stored per criterion, failures per criterion, the report and the table
across criteria, the cache (reruns, and no sharing with one call per criterion), resume after
a kill, concurrent runs, the expected score per criterion, and what batch says."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from judgekit.store import open_store
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, default_responder, is_probe

RUBRIC = """
name = "summeval"
version = "1"
description = "Summary quality on three criteria."

[scale]
kind = "ordinal"
min = 1
max = 5

[scale.levels]
"1" = "Very poor."
"2" = "Poor."
"3" = "Fair."
"4" = "Good."
"5" = "Very good."

[prompt]
system = "You rate summaries of news articles."
user = "Article: {input}\\n\\nSummary: {response}\\n\\n{scale}"

[criteria.coherence]
description = "The summary is well structured and organised."

[criteria.fluency]
description = "Every sentence is grammatical and reads naturally."

[criteria.fluency.scale]
kind = "ordinal"
min = 1
max = 3
levels = { "1" = "Broken.", "2" = "Some slips.", "3" = "Fluent." }

[criteria.relevance]
description = "The summary keeps the important content of the article."
"""
CRITERIA = ("coherence", "fluency", "relevance")
N = 30


def human(criterion: str, i: int) -> int:
    return 1 + (i % 3) if criterion == "fluency" else 1 + (i % 5)


def index_of(body: dict[str, Any]) -> int:
    return int(re.search(r"Article: doc (\d+)", body["messages"][-1]["content"]).group(1))


def verdicts(i: int) -> dict[str, Any]:
    """Coherence and relevance: the human level; fluency: always 2."""
    return {"coherence": {"reasoning": "Ordered.", "verdict": str(human("coherence", i))},
            "fluency": {"reasoning": "Some slips.", "verdict": "2"},
            "relevance": {"reasoning": "Keeps the point.", "verdict": str(human("relevance", i))}}


def answer(body: dict[str, Any]) -> Reply:
    if is_probe(body):
        return default_responder(body)
    return Reply(json.dumps(verdicts(index_of(body))))


def write_items(path: Path, n: int = N) -> Path:
    path.write_text("".join(json.dumps({"id": f"s{i}", "input": f"doc {i}",
                                        "response": f"summary {i}", "model": f"M{i % 4}"})
                            + "\n" for i in range(n)))
    return path


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, str]:
    rubric = tmp_path / "summeval.toml"
    rubric.write_text(RUBRIC)
    items = write_items(tmp_path / "items.jsonl")
    db = str(tmp_path / "judgekit.db")
    assert run_cli("import", str(items), "--name", "news", "--db", db)[0] == 0
    return rubric, db


def judge(rubric: Path | str, db: str, server: OpenAIServer, *extra: str) -> tuple[int, str, str]:
    return run_cli("judge", "-r", str(rubric), "--dataset", "news", "--db", db,
                   "--base-url", server.base_url, "--model", "judge-m", *extra)


def import_labels(rubric: Path, db: str) -> None:
    labels = rubric.parent / "labels.jsonl"
    for criterion in CRITERIA:
        labels.write_text("".join(json.dumps({"item_id": f"s{i}", "annotator": "h1",
                                              "label": str(human(criterion, i))}) + "\n"
                                  for i in range(N)))
        code, _, err = run_cli("labels", "import", str(labels), "--rubric",
                               f"{rubric}#{criterion}", "--db", db)
        assert code == 0, err


def test_three_criteria_are_judged_in_one_call_per_item_and_reported_per_criterion(
    study: tuple[Path, str],
) -> None:
    rubric, db = study
    with OpenAIServer(answer) as server:
        code, out, err = judge(rubric, db, server)
        assert code == 0, err
        requests = server.judge_requests()
        assert len(requests) == N  # one call per item, not one per criterion
        # the request names every criterion with its levels and asks for one object
        body = requests[0]
        user = body["messages"][-1]["content"]
        for criterion in CRITERIA:
            assert f"{criterion}: " in user
        assert "- 3: Fluent." in user and "- 5: Very good." in user
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["required"] == list(CRITERIA)
        assert schema["properties"]["fluency"]["properties"]["verdict"]["enum"] == ["1", "2", "3"]
        # a rerun makes no request
        code, out2, err = judge(rubric, db, server)
        assert code == 0, err
        assert len(server.judge_requests()) == N
    assert f"{N} items (0 cached, {N} judged now, {N} requests); one call per item answers " \
        "all 3 criteria" in out
    assert f"{N} cached" in out2
    with open_store(db) as store:
        runs = store.list_runs()
        assert len(runs) == 6  # one per criterion, for the run and for the rerun
        whole = next(r for r in store.list_rubrics() if r["name"] == "summeval")
        assert store.get_rubric_text(whole["sha256"]) == RUBRIC  # the prompt is reproducible
        for criterion in CRITERIA:
            rows = [j for j in store.judgments(dataset="news")
                    if j.rubric_name == f"summeval.{criterion}"]
            assert len(rows) == N and {j.status for j in rows} == {"ok"}
            assert {j.sampling["joint_rubric"] for j in rows} == {whole["sha256"]}
        first_runs = runs[:3]
        # tokens and requests counted once per call: on the first criterion's run only
        tokens = sorted(int(r.summary["prompt_tokens"]) for r in first_runs)
        assert tokens == [0, 0, 20 * N]
        assert sum(int(r.summary["requests"]) for r in first_runs) == N
        assert all(r.summary["joint"]["rubric"] == whole["sha256"] for r in first_runs)
        assert {int(r.summary["requests"]) for r in runs[3:]} == {0}
    import_labels(rubric, db)
    code, out, _ = run_cli("report", "-r", str(rubric), "--db", db, "--format", "json",
                           "--resamples", "200")
    summary = json.loads(out)
    by_name = {row["criterion"]: row for row in summary["criteria"]}
    assert list(by_name) == list(CRITERIA)
    assert by_name["coherence"]["statistic"]["statistic"] == pytest.approx(1.0)
    assert by_name["relevance"]["statistic"]["statistic"] == pytest.approx(1.0)
    assert by_name["fluency"]["decision"] == "FAIL"
    assert summary["decision"] == "FAIL" and code == 1
    code, text, _ = run_cli("report", "-r", str(rubric), "--db", db, "--resamples", "200")
    assert "OVERALL: FAIL (FAIL if any criterion fails)" in text and code == 1
    code, one, _ = run_cli("report", "-r", f"{rubric}#relevance", "--db", db, "--format",
                           "json", "--resamples", "200")
    assert json.loads(one)["provenance"]["rubric_name"] == "summeval.relevance"


def faulty(body: dict[str, Any]) -> Reply:
    """Item 0 omits relevance, item 1 rates fluency 7 of 3, item 2 is not JSON."""
    if is_probe(body):
        return default_responder(body)
    i = index_of(body)
    found = verdicts(i)
    if i == 0:
        del found["relevance"]
    elif i == 1:
        found["fluency"]["verdict"] = "7"
    elif i == 2:
        return Reply("The summary is fine on the whole, I would say good.")
    return Reply(json.dumps(found))


class FailingServer(OpenAIServer):
    """Answers item 3's call with HTTP 500, every attempt."""

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if not is_probe(body) and index_of(body) == 3:
            return 500, {"Content-Type": "application/json"}, json.dumps(
                {"error": {"message": "The server had an error.", "type": "server_error"}}
            ).encode()
        return super()._completion(body)


def test_failures_are_recorded_per_criterion(study: tuple[Path, str]) -> None:
    rubric, db = study
    with FailingServer(faulty, json_schema=False, json_object=False) as server:
        code, _, err = judge(rubric, db, server, "--max-retries", "1")
        assert code == 0, err
        assert "response_format" not in server.judge_requests()[0]  # no structured output
    with open_store(db) as store:
        status = {(j.rubric_name.split(".")[1], j.item_id): (j.status, j.label, j.error)
                  for j in store.judgments(dataset="news")}
    assert status[("relevance", "s0")][0] == "parse_error"
    assert "missing" in status[("relevance", "s0")][2]
    assert status[("coherence", "s0")][:2] == ("ok", "1")  # the other criteria are kept
    assert status[("fluency", "s0")][:2] == ("ok", "2")
    assert status[("fluency", "s1")][0] == "parse_error"
    assert "not on the scale" in status[("fluency", "s1")][2]
    assert status[("coherence", "s1")][:2] == ("ok", "2")
    assert {status[(c, "s2")][0] for c in CRITERIA} == {"parse_error"}
    assert {status[(c, "s3")][0] for c in CRITERIA} == {"api_error"}
    assert all(status[(c, "s4")][0] == "ok" for c in CRITERIA)
    # failures are never scores: the report counts them apart
    import_labels(rubric, db)
    code, one, _ = run_cli("report", "-r", f"{rubric}#fluency", "--db", db, "--format", "json",
                           "--resamples", "200")
    counts = json.loads(one)["status_counts"]
    assert counts.get("parse_error") == 2 and counts.get("api_error") == 1


def test_one_call_and_one_call_per_criterion_never_share_the_cache(
    study: tuple[Path, str],
) -> None:
    rubric, db = study
    per_call = rubric.parent / "per_call.toml"
    per_call.write_text(RUBRIC.replace('description = "Summary quality on three criteria."',
                                       'description = "Summary quality on three criteria."\n'
                                       "per_call = true"))
    with OpenAIServer(answer) as server:
        assert judge(rubric, db, server)[0] == 0
        assert len(server.judge_requests()) == N
        code, _, err = judge(per_call, db, server)
        assert code == 0, err
        per_call_requests = server.judge_requests()[N:]
        assert len(per_call_requests) == 3 * N  # none answered by the joint verdicts
        assert judge(rubric, db, server)[0] == 0
        assert len(server.judge_requests()) == 4 * N  # and the joint ones are still cached
    # both judges exist for a criterion: the report asks to choose, it never mixes them
    import_labels(rubric, db)
    code, _, err = run_cli("report", "-r", f"{rubric}#coherence", "--db", db)
    assert code == 2 and "judgments of 2 judges" in err and "joint_rubric" in err
    # editing another criterion changes what coherence was asked with: every item again
    edited = rubric.parent / "edited.toml"
    edited.write_text(RUBRIC.replace("reads naturally", "reads well"))
    with OpenAIServer(answer) as server:
        assert judge(edited, db, server)[0] == 0
        assert len(server.judge_requests()) == N
    code, _, err = run_cli("report", "-r", f"{edited}#coherence", "--db", db)
    assert code == 2 and "judgments of 3 judges" in err


def test_a_judge_run_on_the_whole_file_reads_each_criterion_s_own_run(
    study: tuple[Path, str],
) -> None:
    """With both modes stored, ``report FILE --judge-run R`` picks one judge for every
    criterion when R is a one-call run (each criterion reads its sibling run), and names
    the way out when R judged one criterion alone."""
    import sqlite3

    rubric, db = study
    per_call = rubric.parent / "per_call.toml"
    per_call.write_text(RUBRIC.replace('description = "Summary quality on three criteria."',
                                       'description = "Summary quality on three criteria."\n'
                                       "per_call = true"))
    with OpenAIServer(answer) as server:
        assert judge(rubric, db, server)[0] == 0
        assert judge(per_call, db, server)[0] == 0
    import_labels(rubric, db)
    with sqlite3.connect(db) as conn:
        runs = [(run_id, json.loads(summary)) for run_id, summary in conn.execute(
            "SELECT id, summary FROM runs WHERE kind = 'judge' ORDER BY started_at, rowid")]
    joint = [(run_id, s) for run_id, s in runs if "joint" in s]
    single = [run_id for run_id, s in runs if "joint" not in s]
    assert len(joint) == 3 and len(single) == 3
    siblings = joint[0][1]["joint"]["runs"]
    code, out, err = run_cli("report", "-r", str(rubric), "--db", db, "--format", "json",
                             "--resamples", "100", "--judge-run", joint[-1][0])
    assert code in (0, 1, 3), err
    summary = json.loads(out)
    assert [row["criterion"] for row in summary["criteria"]] == list(CRITERIA)
    for name in CRITERIA:  # each criterion's report is the one its sibling run gives
        code, one, err = run_cli("report", "-r", f"{rubric}#{name}", "--db", db, "--format",
                                 "json", "--resamples", "100", "--judge-run", siblings[name])
        assert code in (0, 1, 3), err
        row = next(r for r in summary["criteria"] if r["criterion"] == name)
        assert row["statistic"] == json.loads(one)["agreement"]["statistics"][
            json.loads(one)["agreement"]["primary"]]
    code, _, err = run_cli("report", "-r", str(rubric), "--db", db, "--judge-run", single[1])
    assert code == 2 and "judged criterion" in err and f"{rubric}#" in err
    assert "Traceback" not in err


def test_a_criterion_prompt_needs_per_call_and_per_call_is_a_boolean(tmp_path: Path) -> None:
    own = tmp_path / "own.toml"
    own.write_text(RUBRIC + '\n[criteria.relevance.prompt]\nuser = "Rate {response}"\n')
    code, out, _ = run_cli("rubric", "check", f"{own}#coherence")
    assert code == 1
    assert "criteria.relevance.prompt: a criterion's own prompt needs per_call = true" in out
    odd = tmp_path / "odd.toml"
    odd.write_text('per_call = "yes"\n' + RUBRIC)
    code, out, _ = run_cli("rubric", "check", f"{odd}#coherence")
    assert code == 1 and "per_call: true (one call per criterion) or false" in out
    # with per_call = true a criterion keeps its own prompt
    own.write_text(own.read_text().replace('version = "1"', 'version = "1"\nper_call = true'))
    code, out, _ = run_cli("rubric", "check", f"{own}#relevance")
    assert code == 0, out


def test_expected_score_per_criterion_from_logprobs(study: tuple[Path, str]) -> None:
    rubric, db = study

    def with_alternatives(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        # the test server puts these alternatives at the last verdict: relevance's
        return Reply(json.dumps(verdicts(index_of(body))), alternatives={"4": 0.5, "2": 0.25})

    with OpenAIServer(with_alternatives) as server:
        code, _, err = judge(rubric, db, server, "--logprobs", "--limit", "5")
        assert code == 0, err
        assert server.judge_requests()[0]["logprobs"] is True
    with open_store(db) as store:
        rows = {(j.rubric_name.split(".")[1], j.item_id): j
                for j in store.judgments(dataset="news")}
    # item s0: relevance verdict "1" at 0.25 of the mass, "4" 0.5, "2" 0.25
    relevance = rows[("relevance", "s0")]
    assert relevance.label == "1"
    assert relevance.score == pytest.approx((1 * 0.25 + 4 * 0.5 + 2 * 0.25) / 1.0)
    assert relevance.confidence == pytest.approx(0.25)
    # the other criteria's verdicts are near certain: their score is their level
    assert rows[("coherence", "s0")].score == pytest.approx(1.0)
    assert rows[("coherence", "s0")].confidence == pytest.approx(1.0)
    assert rows[("fluency", "s3")].score == pytest.approx(2.0)


def test_batch_prepare_on_a_one_call_file_names_per_call(study: tuple[Path, str]) -> None:
    rubric, db = study
    before = Path(db).read_bytes()
    for target in (str(rubric), f"{rubric}#coherence"):
        code, _, err = run_cli("batch", "prepare", "-r", target, "--dataset", "news",
                               "--db", db, "--model", "judge-m", "--out",
                               str(rubric.parent / "batch.jsonl"))
        assert code == 2, err
        assert "judges every criterion in one call" in err and "set per_call = true" in err
        assert len(err.strip().splitlines()) == 1
    assert Path(db).read_bytes() == before


def _judge_process(rubric: Path, db: str, server: OpenAIServer) -> subprocess.Popen[bytes]:
    root = Path(__file__).parents[2]
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", "-r", str(rubric), "--dataset", "news",
         "--db", db, "--base-url", server.base_url, "--model", "judge-m", "--concurrency", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )


@pytest.mark.slow
def test_a_killed_run_resumes_and_concurrent_runs_pay_once(study: tuple[Path, str]) -> None:
    rubric, db = study
    with OpenAIServer(answer, latency=0.1) as server:
        proc = _judge_process(rubric, db, server)
        deadline = time.monotonic() + 60
        while len(server.judge_requests()) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        time.sleep(0.3)
        with open_store(db) as store:
            kept = store.judgments(dataset="news")
        per_item: dict[str, int] = {}
        for j in kept:
            per_item[j.item_id] = per_item.get(j.item_id, 0) + 1
        assert set(per_item.values()) == {3}  # never half an answer
        answered = len(per_item)
        assert 0 < answered < N
        made = len(server.judge_requests())
        # two runs at once finish the rest: each remaining item is asked once
        first, second = _judge_process(rubric, db, server), _judge_process(rubric, db, server)
        for proc in (first, second):
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
        assert len(server.judge_requests()) - made == N - answered
    with open_store(db) as store:
        final = store.judgments(dataset="news")
    assert len(final) == 3 * N and {j.status for j in final} == {"ok"}


def test_rubric_show_prints_the_one_call(study: tuple[Path, str]) -> None:
    rubric, _ = study
    code, out, err = run_cli("rubric", "show", str(rubric), "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    user = shown["messages"][-1]["content"]
    assert "Summary: <the response>" in user and "- 3: Fluent." in user
    assert user.endswith('"verdict": "1" or "2" or "3" or "4" or "5"}}')
    assert shown["verdict_schema"]["required"] == list(CRITERIA)
    code, _, err = run_cli("rubric", "show", str(rubric), "--reverse-levels")
    assert code == 2 and "--reverse-levels" in err


def test_a_joint_run_with_every_call_cached_needs_no_http_client() -> None:
    code = ("import sys, judgekit.judging.joint, judgekit.criteria_joint, judgekit.cli.judge; "
            "print('openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert out.stdout.strip() == "False"


def test_a_reasoning_model_s_drafts_and_fences_read_as_for_one_verdict(
    study: tuple[Path, str],
) -> None:
    rubric, db = study

    def thinking(body: dict[str, Any]) -> Reply:
        if is_probe(body):
            return default_responder(body)
        i = index_of(body)
        draft = json.dumps({"coherence": {"verdict": "5"}})  # a draft in the think block
        return Reply(f"<think>First try: {draft}. No, look again.</think>\n```json\n"
                     f"{json.dumps(verdicts(i))}\n```")

    with OpenAIServer(thinking, reasoning_model=True, json_schema=False,
                      json_object=False) as server:
        code, _, err = judge(rubric, db, server, "--limit", "10")
        assert code == 0, err
        assert all("max_tokens" not in b for b in server.judge_requests())
    # a budget spent on reasoning truncates every criterion's verdict, never a parse_error
    with OpenAIServer(thinking, reasoning_model=True, reasoning_tokens=64) as server:
        code, _, err = judge(rubric, db, server, "--limit", "2", "--max-completion-tokens", "32")
        assert code == 0, err
    with open_store(db) as store:
        rows = store.judgments(dataset="news")
    plain = [j for j in rows if j.sampling.get("max_completion_tokens") == 512]
    assert len(plain) == 30 and {j.status for j in plain} == {"ok"}
    assert {(j.item_id, j.label) for j in plain if j.rubric_name == "summeval.coherence"} == {
        (f"s{i}", str(human("coherence", i))) for i in range(10)}
    short = [j for j in rows if j.sampling.get("max_completion_tokens") == 32]
    assert len(short) == 6 and {j.status for j in short} == {"truncated"}
    assert all("no visible text" in (j.error or "") for j in short)


@pytest.mark.slow
def test_ctrl_c_stores_the_calls_in_flight_on_every_criterion_s_run(
    study: tuple[Path, str],
) -> None:
    rubric, db = study
    with OpenAIServer(answer, latency=0.5) as server:
        proc = _judge_process(rubric, db, server)
        deadline = time.monotonic() + 60
        while len(server.judge_requests()) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err.decode()
        asked = len(server.judge_requests())
        with open_store(db) as store:
            kept = store.judgments(dataset="news")
            runs = store.list_runs()
        answered = len({j.item_id for j in kept})
        assert len(kept) == 3 * answered and answered == asked  # nothing paid is lost
        assert len(runs) == 3
        assert all(r.summary["interrupted"] and r.finished_at is not None for r in runs)
        assert {r.summary["abandoned"] for r in runs} == {N - answered}
        proc = _judge_process(rubric, db, server)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert len(server.judge_requests()) - asked == N - answered
