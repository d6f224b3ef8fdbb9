"""``judgekit judge`` and ``judgekit demo`` end to end against the test server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from judgekit.cli import _endpoint as endpoint_module
from judgekit.cli.main import cli
from judgekit.judging.local import LOCAL_MODEL
from judgekit.store import open_store
from tests.support.openai_server import OpenAIServer

SECRET = "sk-cli-Secret-Key-abcdefghijklmnop"


def write_items(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                     "response": str(i + 1), "reference": str(i + 1)}) + "\n")
    return path


def invoke(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_judge_then_rerun(openai_server: OpenAIServer, tmp_path: Path) -> None:
    data = write_items(tmp_path / "facts.jsonl", 6)
    db = str(tmp_path / "j.db")
    args = ["judge", "--rubric", "rubrics/correctness.toml", "--data", str(data), "--db", db,
            "--base-url", openai_server.base_url, "--model", "m", "--temperature", "0.2",
            "--max-tokens", "300", "--top-p", "0.5", "--seed", "3"]
    out = invoke(*args)
    assert "6 judgments (0 cached, 6 judged now" in out and "ok 6" in out
    assert len(openai_server.judge_requests()) == 6
    body = openai_server.judge_requests()[0]
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (
        0.2, 300, 0.5, 3)
    before = openai_server.request_count
    out = invoke(*args)
    assert openai_server.request_count == before
    assert "6 cached, 0 judged now, 0 requests" in out
    invoke(*args, "--force", "--limit", "2")
    assert openai_server.request_count == before + 2
    with open_store(db) as store:
        assert store.count_items("facts") == 6
        assert len(store.judgments(dataset="facts")) == 6
    # a stored dataset can be judged by name
    out = invoke("judge", "-r", "correctness", "--dataset", "facts", "--db", db,
                 "--base-url", openai_server.base_url, "--model", "m2", "--samples", "2")
    assert "12 judgments" in out


def test_logprobs_flag_controls_the_request(openai_server: OpenAIServer, tmp_path: Path) -> None:
    data = write_items(tmp_path / "facts.jsonl", 2)
    common = ["judge", "--rubric", "correctness", "--data", str(data),
              "--base-url", openai_server.base_url, "--model", "m"]
    invoke(*common, "--db", str(tmp_path / "with.db"))
    assert all(body.get("logprobs") is True for body in openai_server.judge_requests())
    with open_store(tmp_path / "with.db") as store:
        assert all(j.confidence is not None for j in store.judgments(dataset="facts"))
    openai_server.clear()
    invoke(*common, "--db", str(tmp_path / "without.db"), "--no-logprobs")
    assert openai_server.judge_requests()
    assert all("logprobs" not in body for body in openai_server.judge_requests())
    with open_store(tmp_path / "without.db") as store:
        assert all(j.confidence is None for j in store.judgments(dataset="facts"))


class ServedLocalJudge:
    """Stands in for the llama.cpp server (same interface as ``LocalJudge``): the test server.

    Its URL is known before it starts, like the real one's; ``starts`` counts
    how often a command actually brought it up.
    """

    starts: ClassVar[int] = 0
    instances: ClassVar[list[ServedLocalJudge]] = []

    def __init__(self) -> None:
        self.server = OpenAIServer(model=LOCAL_MODEL)
        self.base_url = self.server.base_url
        self.identity = "local:test-model.gguf"
        self.started = False
        ServedLocalJudge.instances.append(self)

    def __enter__(self) -> ServedLocalJudge:
        ServedLocalJudge.starts += 1
        self.server.start()
        self.started = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def test_local_judge_starts_only_when_some_call_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(endpoint_module, "LocalJudge", ServedLocalJudge)
    monkeypatch.setattr(ServedLocalJudge, "instances", [])
    monkeypatch.setattr(ServedLocalJudge, "starts", 0)
    monkeypatch.delenv("JUDGEKIT_BASE_URL", raising=False)
    data = write_items(tmp_path / "facts.jsonl", 24)
    args = ["judge", "-r", "correctness", "--data", str(data), "--db", str(tmp_path / "l.db")]
    try:
        first = invoke(*args)
        assert ServedLocalJudge.starts == 1 and "starting the local judge" in first
        assert "24 judged now" in first
        # a new port every time, but the cache key names the model file, not the port
        again = invoke(*args)
        assert ServedLocalJudge.starts == 1, "the local judge was started for cached work"
        assert "every call is cached, the local judge is not started" in again
        assert "24 cached, 0 judged now, 0 requests" in again
        assert [i.server.request_count for i in ServedLocalJudge.instances[1:]] == [0]
        with open_store(tmp_path / "l.db") as store:
            assert {j.base_url for j in store.judgments()} == {"local:test-model.gguf"}
        # new work (--limit keeps 2 of them, --force re-judges): started again
        invoke(*args, "--force", "--limit", "2")
        assert ServedLocalJudge.starts == 2
    finally:
        for judge in ServedLocalJudge.instances:
            if not judge.started:
                judge.server.close_socket()


def test_api_key_from_env_never_printed_or_stored(tmp_path: Path) -> None:
    data = write_items(tmp_path / "facts.jsonl", 3)
    db = tmp_path / "k.db"
    with OpenAIServer(api_key=SECRET) as server:
        out = invoke("judge", "-r", "correctness", "--data", str(data), "--db", str(db),
                     "--base-url", server.base_url, "--model", "m", "--api-key-env", "MY_KEY",
                     env={"MY_KEY": SECRET})
        assert "ok 3" in out and SECRET not in out
        assert {h["authorization"] for h in server.headers} == {f"Bearer {SECRET}"}
        bad = CliRunner().invoke(cli, ["judge", "-r", "correctness", "--data", str(data),
                                       "--db", str(db), "--base-url", server.base_url,
                                       "--model", "other", "--api-key", "sk-wrong-0000"])
        assert bad.exit_code != 0 and "401" in str(bad.exception)
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes()


def test_bad_inputs_are_clean_errors(openai_server: OpenAIServer, tmp_path: Path) -> None:
    db = str(tmp_path / "j.db")
    result = CliRunner().invoke(cli, ["judge", "-r", "correctness", "--db", db,
                                      "--base-url", openai_server.base_url, "--model", "m"])
    assert result.exit_code != 0 and "--data FILE or --dataset NAME" in str(result.exception)
    stored = ["judge", "-r", "correctness", "--db", db, "--dataset", "nope",
              "--base-url", openai_server.base_url, "--model", "m"]
    result = CliRunner().invoke(cli, stored)
    # a stored dataset needs a store: none is created to hold nothing
    assert "no store at" in str(result.exception) and not Path(db).exists()
    (tmp_path / "f.jsonl").write_text(
        '{"id": "a", "input": "x", "response": "y", "reference": "y"}\n')
    assert CliRunner().invoke(cli, ["import", str(tmp_path / "f.jsonl"), "--db", db]).exit_code == 0
    result = CliRunner().invoke(cli, stored)
    assert "no dataset 'nope'" in str(result.exception)
    result = CliRunner().invoke(cli, ["judge", "-r", "correctness", "--db", db, "--data",
                                      str(tmp_path / "f.jsonl"), "--base-url",
                                      openai_server.base_url])
    assert "--model is required" in str(result.exception)
    assert openai_server.request_count == 0


def test_items_the_rubric_cannot_judge_change_nothing(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Single responses under a pairwise rubric: one line, exit 2, no store made or changed."""
    single = tmp_path / "single.jsonl"
    single.write_text('{"id": "a", "input": "x", "response": "y"}\n')
    db = tmp_path / "j.db"
    args = ["judge", "-r", "preference", "--data", str(single), "--db", str(db),
            "--base-url", openai_server.base_url, "--model", "m"]
    result = CliRunner().invoke(cli, args)  # an InputError: `judgekit` exits 2 with its line
    message = "item 'a' has a single response, but rubric 'preference' is pairwise"
    assert result.exit_code != 0 and message in str(result.exception)
    assert not db.exists()
    write_items(tmp_path / "other.jsonl", 2)
    invoke("import", str(tmp_path / "other.jsonl"), "--db", str(db))
    before = db.read_bytes()
    assert message in str(CliRunner().invoke(cli, args).exception)
    assert db.read_bytes() == before
    no_reference = tmp_path / "no_ref.jsonl"
    no_reference.write_text('{"id": "b", "input": "x", "response": "y"}\n')
    result = CliRunner().invoke(cli, ["judge", "-r", "correctness", "--data", str(no_reference),
                                      "--db", str(db), "--base-url", openai_server.base_url,
                                      "--model", "m"])
    assert "item 'b' has no reference" in str(result.exception)
    assert db.read_bytes() == before
    assert openai_server.request_count == 0


def _judge_subprocess(server: OpenAIServer, data: Path, db: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgekit", "judge", "-r", "rubrics/correctness.toml",
         "--data", str(data), "--db", str(db), "--base-url", server.base_url, "--model", "m",
         "--concurrency", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )


@pytest.mark.slow
def test_sigkill_mid_run_loses_no_finished_judgment(tmp_path: Path) -> None:
    n = 60
    data = write_items(tmp_path / "facts.jsonl", n)
    db = tmp_path / "kill.db"
    with OpenAIServer(latency=0.1) as server:
        proc = _judge_subprocess(server, data, db)
        deadline = time.monotonic() + 60
        while len(server.judge_requests()) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.3)  # let in-flight server threads finish their replies
        with open_store(db) as store:
            kept = store.judgments(dataset="facts")
        assert 0 < len(kept) < n
        assert {j.status for j in kept} == {"ok"}
        first_requests = len(server.judge_requests())
        # every completion the dead process had recorded is still there; rerun asks the rest
        proc = _judge_subprocess(server, data, db)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        rerun_requests = len(server.judge_requests()) - first_requests
    assert rerun_requests == n - len(kept)
    with open_store(db) as store:
        final = store.judgments(dataset="facts")
    assert len(final) == n and {j.status for j in final} == {"ok"}
    assert {j.item_id for j in kept} <= {j.item_id for j in final}
    assert f"{len(kept)} cached" in out.decode()


def test_demo_with_an_endpoint(openai_server: OpenAIServer, tmp_path: Path) -> None:
    out_dir = tmp_path / "demo"
    out = invoke("demo", "--out", str(out_dir), "--base-url", openai_server.base_url,
                 "--model", "m")
    db = out_dir / "judgekit.db"
    assert f"database: {db.resolve()}" in out
    with open_store(db) as store:
        facts = store.judgments(dataset="facts")
        pairs = store.judgments(dataset="pairs")
        assert facts and pairs
        assert {j.rubric_name for j in facts} == {"correctness"}
        assert {j.rubric_name for j in pairs} == {"preference"}
        labels = store.latest_labels(facts[0].rubric_hash, annotator="reference")
        assert len(labels) == len(facts) and {lb.source for lb in labels} == {"import"}
        assert {lb.label for lb in labels} == {"pass", "fail"}
        # the position probe re-judged every pair swapped (the originals were cached)
        assert {j.variant for j in pairs} == {"", "swapped"}
        assert sum(j.variant == "swapped" for j in pairs) == 12
        assert [r["probe"] for r in store.probe_results(pairs[0].rubric_hash)] == ["position"]
    assert "position consistency" in out
    # run again: the demo's own database is replaced by a fresh one
    invoke("demo", "--out", str(out_dir), "--base-url", openai_server.base_url, "--model", "m")
    other = tmp_path / "mine.db"
    other.write_bytes(b"precious")
    result = CliRunner().invoke(cli, ["demo", "--db", str(other), "--base-url",
                                      openai_server.base_url, "--model", "m"])
    assert result.exit_code != 0 and other.read_bytes() == b"precious"
