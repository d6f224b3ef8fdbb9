"""``judgekit batch``: prepare -> a real Batch API server (through the real ``openai`` client)
-> collect, and the offline path (``--output FILE`` as ``vllm run-batch`` writes it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.clients import JudgeSpec
from judgekit.errors import InputError, JudgekitError
from judgekit.judging.batch.lines import (
    OutputLine,
    PartWriter,
    line_result,
    parse_output_line,
    request_line,
)
from judgekit.judging.units import unit_for, unit_key
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item, SamplingParams
from tests.support.batch_server import BatchServer, request_line_problems
from tests.support.openai_server import OpenAIServer, is_probe

N = 6


@pytest.fixture
def batch_server() -> Iterator[BatchServer]:
    with BatchServer() as server:
        yield server


def write_items(path: Path, n: int = N, *, pairs: bool = False) -> Path:
    """``n`` items "What is i+1?": single answers with their reference, or pairs (A right)."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            answers = ({"response_a": str(i + 1), "response_b": str(i + 2)} if pairs
                       else {"response": str(i + 1), "reference": str(i + 1)})
            handle.write(json.dumps({"id": f"{'p' if pairs else 'i'}{i}",
                                     "input": f"What is {i}+1?", **answers}) + "\n")
    return path


@dataclass
class Ran:
    code: int
    output: str


def run(*args: str, code: int | None = 0) -> Ran:
    """``judgekit ARGS`` in-process; a JudgekitError ends it as ``main`` does (code, message)."""
    result = CliRunner().invoke(cli, list(args))
    exc = result.exception
    if isinstance(exc, JudgekitError):
        ran = Ran(exc.exit_code, f"{result.output}error: {exc}")
    elif exc is not None and not isinstance(exc, SystemExit):
        raise exc
    else:
        ran = Ran(result.exit_code, result.output)
    assert code is None or ran.code == code, ran.output
    return ran


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(t) for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]


class Setup:
    """Items, a store and the judge options shared by prepare, judge and probe."""

    def __init__(self, tmp_path: Path, base_url: str, n: int = N) -> None:
        self.data = write_items(tmp_path / "facts.jsonl", n)
        self.db = str(tmp_path / "j.db")
        self.base_url = base_url
        self.tmp = tmp_path
        self.judge_args = ["-r", "correctness", "--data", str(self.data), "--db", self.db,
                           "--base-url", base_url, "--model", "m", "--temperature", "0.2",
                           "--seed", "3"]

    def prepare(self, *extra: str, out: str = "req.jsonl") -> Path:
        run("batch", "prepare", *self.judge_args, "--out", str(self.tmp / out), *extra)
        return self.tmp / out

    def judgments(self) -> list[Any]:
        with open_store(self.db) as store:
            return store.judgments(latest_only=False, dataset="facts")


def test_prepared_lines_are_the_live_requests_keyed_by_cache_key(tmp_path: Path) -> None:
    with OpenAIServer() as live:
        setup = Setup(tmp_path, live.base_url)
        prepared = lines(setup.prepare())
        # the live runner's requests for the same calls, in another store
        run("judge", *setup.judge_args[:-6], "--db", str(tmp_path / "live.db"),
            "--base-url", live.base_url, "--model", "m", "--temperature", "0.2", "--seed", "3")
        sent = live.judge_requests()
    assert len(prepared) == len(sent) == N
    for line in prepared:
        assert request_line_problems(json.dumps(line)) == []
    bodies = sorted(json.dumps(b, sort_keys=True) for b in sent)
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in prepared) == bodies
    rubric = load_rubric("correctness")
    spec = JudgeSpec(base_url=live.base_url, model="m",
                     sampling=SamplingParams(temperature=0.2, seed=3))
    items = [Item(id=f"i{i}", input=f"What is {i}+1?", response=str(i + 1),
                  reference=str(i + 1)) for i in range(N)]
    keys = {unit_key(rubric, unit_for(item), spec, dataset="facts") for item in items}
    assert {line["custom_id"] for line in prepared} == keys
    with open_store(setup.db) as store:
        [batch] = store.list_batches()
        assert batch.n_requests == N and batch.kind == "judge"
        assert store.batch_requests(keys).keys() == keys


def test_files_split_at_the_request_and_byte_limits(tmp_path: Path) -> None:
    setup = Setup(tmp_path, "http://judge.test/v1", n=10)
    first = setup.prepare("--max-requests", "4")
    parts = [first, tmp_path / "req.2.jsonl", tmp_path / "req.3.jsonl"]
    assert [len(lines(p)) for p in parts] == [4, 4, 2]
    assert not (tmp_path / "req.4.jsonl").exists()
    size = len(first.read_bytes().splitlines()[0]) + 1
    # the stored dataset, streamed from the store: the same calls, under the same keys
    by_name = [a for a in setup.judge_args if a != str(setup.data)]
    by_name[by_name.index("--data")] = "--dataset"
    by_name.insert(by_name.index("--dataset") + 1, "facts")
    run("batch", "prepare", *by_name, "--max-bytes", str(size * 3), "--force",
        "--out", str(tmp_path / "b.jsonl"))
    assert len(lines(tmp_path / "b.jsonl")) == 3 and len(lines(tmp_path / "b.4.jsonl")) == 1
    split = [line["custom_id"] for p in sorted(tmp_path.glob("b*.jsonl")) for line in lines(p)]
    assert sorted(split) == sorted(line["custom_id"] for p in parts for line in lines(p))
    assert all(p.stat().st_size <= size * 3 for p in tmp_path.glob("b*.jsonl"))
    with open_store(setup.db) as store:
        batches = store.list_batches()
        assert [len(store.batch_files(b.id)) for b in batches] == [3, 4]


def test_round_trip_stores_one_outcome_per_call_with_its_category(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    setup = Setup(tmp_path, batch_server.base_url)
    batch_server.completions.inject("rate_limit")
    batch_server.completions.inject("refusal")
    batch_server.completions.inject("truncated")
    batch_server.completions.inject("server_error")
    path = setup.prepare()
    out = run("batch", "submit", str(path), "--db", setup.db).output
    [job_id] = list(batch_server.batches)
    assert f"as batch {job_id} (validating)" in out
    assert "validating" in run("batch", "status", "--db", setup.db).output
    # still running: nothing to collect yet, nothing stored
    assert "in_progress" in run("batch", "collect", job_id, "--db", setup.db, code=2).output
    assert setup.judgments() == []
    out = run("batch", "collect", job_id, "--db", setup.db).output
    assert "6 stored (ok 2, refusal 1, truncated 1, rate_limited 1, api_error 1)" in out
    stored = setup.judgments()
    assert len(stored) == N and len({j.cache_key for j in stored}) == N
    assert {j.run_id for j in stored} == {f"batch:{job_id}"}
    ok = [j for j in stored if j.status == "ok"]
    assert all(j.label == "pass" and j.score == 1.0 and j.reasoning and j.raw_text
               and j.prompt_tokens == 20 and j.completion_tokens == 10 for j in ok)
    assert all(j.label is None and j.score is None for j in stored if j.status != "ok")
    assert next(j for j in stored if j.status == "api_error").error.startswith("HTTP 500")

    # collecting again stores nothing
    out = run("batch", "collect", job_id, "--db", setup.db).output
    assert "0 stored" in out and "6 already collected" in out
    assert len(setup.judgments()) == N

    # judge with the same arguments calls only the transient failures again
    out = run("judge", *setup.judge_args, "--no-progress").output
    assert "4 cached, 2 judged now" in out
    assert len([b for b in batch_server.chat_bodies if not is_probe(b)]) == 2
    before = batch_server.chat_requests
    assert "6 cached, 0 judged now, 0 requests" in run("judge", *setup.judge_args).output
    assert batch_server.chat_requests == before


def test_a_clean_batch_leaves_judge_nothing_to_do_and_reports_use_it(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    setup = Setup(tmp_path, batch_server.base_url)
    run("batch", "submit", str(setup.prepare()), "--db", setup.db)
    [job_id] = list(batch_server.batches)
    run("batch", "status", job_id, "--db", setup.db)
    run("batch", "status", job_id, "--db", setup.db)
    run("batch", "collect", job_id, "--db", setup.db)
    out = run("judge", *setup.judge_args).output
    assert "6 cached, 0 judged now, 0 requests" in out
    assert batch_server.chat_requests == 0
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": "pass", "annotator": "ann"})
                              + "\n" for i in range(N)), encoding="utf-8")
    run("labels", "import", str(labels), "-r", "correctness", "--db", setup.db)
    report = json.loads(run("report", "-r", "correctness", "--db", setup.db,
                            "--format", "json", code=None).output)
    assert report["n_judgments"] == N and report["status_counts"]["ok"] == N
    assert f"batch:{job_id}" in report["provenance"]["run_ids"]
    assert report["percent_agreement"]["n"] == N
    # everything is prepared already: a second prepare writes nothing
    out = run("batch", "prepare", *setup.judge_args, "--out", str(tmp_path / "again.jsonl"))
    assert "nothing to prepare" in out.output and not (tmp_path / "again.jsonl").exists()


def test_expired_and_cancelled_batches_deliver_partial_output(tmp_path: Path) -> None:
    with BatchServer(outcome="expired", finish=2) as server:
        setup = Setup(tmp_path, server.base_url)
        path = setup.prepare()
        run("batch", "submit", str(path), "--db", setup.db)
        [job_id] = list(server.batches)
        run("batch", "status", job_id, "--db", setup.db)
        out = run("batch", "collect", job_id, "--db", setup.db).output
        assert "6 stored (ok 2, timeout 4)" in out
        expired = [j for j in setup.judgments() if j.status == "timeout"]
        assert all("batch_expired" in (j.error or "") for j in expired)
        # the file is spent: submitting it again is refused; prepare again takes the rest
        assert "already submitted" in run("batch", "submit", str(path), "--db", setup.db,
                                          code=2).output
        rest = setup.prepare(out="rest.jsonl")
        assert len(lines(rest)) == 4
        run("batch", "submit", str(rest), "--db", setup.db)
        second = list(server.batches)[-1]
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        assert client.batches.cancel(second).status == "cancelling"
        out = run("batch", "collect", second, "--db", setup.db).output
        assert "4 stored (ok 2, api_error 2)" in out
        assert len([j for j in setup.judgments() if j.status == "ok"]) == 4


def test_a_failed_batch_stores_nothing_and_can_be_prepared_again(tmp_path: Path) -> None:
    with BatchServer(outcome="failed") as server:
        setup = Setup(tmp_path, server.base_url)
        path = setup.prepare()
        run("batch", "submit", str(path), "--db", setup.db)
        [job_id] = list(server.batches)
        # the prepared calls are in flight until the batch is known to have failed
        assert "6 already in a submitted batch" in run(
            "batch", "prepare", *setup.judge_args, "--out", str(tmp_path / "x.jsonl")).output
        out = run("batch", "collect", job_id, "--db", setup.db)
        assert "failed before running" in out.output
        assert setup.judgments() == []
        assert len(lines(setup.prepare(out="again.jsonl"))) == N


def test_offline_output_reports_unknown_duplicated_and_finished_lines(tmp_path: Path) -> None:
    with OpenAIServer() as live:
        setup = Setup(tmp_path, live.base_url)
        requests = lines(setup.prepare())
        # one call is finished by a live run meanwhile
        run("judge", *setup.judge_args, "--limit", "1")
        output = tmp_path / "out.jsonl"
        with output.open("w", encoding="utf-8") as handle:
            for n, line in enumerate(requests):  # what `vllm run-batch` writes
                status, _, raw = live._completion(line["body"])
                entry = {"id": f"vllm-{n}", "custom_id": line["custom_id"],
                         "response": {"status_code": status, "request_id": f"r{n}",
                                      "body": json.loads(raw)}, "error": None}
                handle.write(json.dumps(entry) + "\n")
                if n == 2:
                    handle.write(json.dumps(entry) + "\n")  # duplicated line
            handle.write(json.dumps({**entry, "custom_id": "not-a-key"}) + "\n")
    out = run("batch", "collect", "--output", str(output), "--db", setup.db).output
    assert "8 line(s) read: 5 stored (ok 5)" in out
    assert "1 duplicated line" in out and "1 call(s) already finished" in out
    assert "1 line(s) with a custom_id no prepared batch" in out and "not-a-key" in out
    stored = setup.judgments()
    assert len(stored) == N and len({j.cache_key for j in stored}) == N
    again = run("batch", "collect", "--output", str(output), "--db", setup.db).output
    assert "0 stored" in again and len(setup.judgments()) == N


def test_a_malformed_line_names_file_and_line_and_stores_nothing(tmp_path: Path) -> None:
    setup = Setup(tmp_path, "http://judge.test/v1")
    requests = lines(setup.prepare())
    output = tmp_path / "out.jsonl"
    good = {"id": "x", "custom_id": requests[0]["custom_id"],
            "response": {"status_code": 200, "body": {"choices": []}}, "error": None}
    output.write_text(json.dumps(good) + "\n" + '{"custom_id": "a", "response": 3}\n')
    result = subprocess.run(
        [sys.executable, "-m", "judgekit", "batch", "collect", "--output", str(output),
         "--db", setup.db], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: {output}:2: response must be an object or null"
    assert setup.judgments() == []
    missing = run("batch", "collect", "--output", str(output), "--db",
                  str(tmp_path / "none.db"), code=2)
    assert "no store at" in missing.output and not (tmp_path / "none.db").exists()
    assert "not a file `judgekit batch prepare` wrote" in run(
        "batch", "submit", str(output), "--db", setup.db, code=2).output


def test_probe_batches_feed_the_probe_like_live_calls(tmp_path: Path) -> None:
    with OpenAIServer() as live:
        setup = Setup(tmp_path, live.base_url)
        requests = lines(setup.prepare("--probe", "position"))
        assert len(requests) == 2 * N  # as written and with the levels reversed
        output = answer_batch(live, requests, tmp_path / "out.jsonl")
        assert "12 stored (ok 12)" in run("batch", "collect", "--output", str(output),
                                          "--db", setup.db).output
        before = live.request_count
        out = run("probe", "position", *setup.judge_args).output
        assert live.request_count == before  # every call came from the batch
        assert "position probe" in out and "12 cached" in out
    with open_store(setup.db) as store:
        runs = {r.id: r.kind for r in store.list_runs()}
    batch_runs = [k for r, k in runs.items() if r.startswith("batch:")]
    assert batch_runs == ["probe:position"]


def answer_batch(live: OpenAIServer, requests: list[dict[str, Any]], output: Path) -> Path:
    """The output file a Batch API would return: each request answered by the live server."""
    with output.open("w", encoding="utf-8") as handle:
        for n, line in enumerate(requests):
            status, _, raw = live._completion(line["body"])
            handle.write(json.dumps({"id": f"r{n}", "custom_id": line["custom_id"],
                                     "response": {"status_code": status,
                                                  "body": json.loads(raw)},
                                     "error": None}) + "\n")
    return output


def test_injection_and_identical_batches_feed_the_live_probes(tmp_path: Path) -> None:
    """Every live probe has a batch path: prepare, collect, then the live probe asks nothing."""
    with OpenAIServer() as live:
        setup = Setup(tmp_path, live.base_url)
        requests = lines(setup.prepare("--probe", "injection", "--templates",
                                       "fake_json,ignore_rubric", out="inj.jsonl"))
        assert len(requests) == N * (1 + 2 * 2)  # plain + 2 templates x 2 positions
        bodies = [line["body"]["messages"][-1]["content"] for line in requests]
        assert sum('"verdict": "pass"}' in body for body in bodies) == 2 * N  # fake_json
        collected = run("batch", "collect", "--output",
                        str(answer_batch(live, requests, tmp_path / "inj-out.jsonl")),
                        "--db", setup.db).output
        assert f"{5 * N} stored (ok {5 * N})" in collected
        before = live.request_count
        out = run("probe", "injection", *setup.judge_args, "--templates",
                  "fake_json,ignore_rubric").output
        assert live.request_count == before  # every call came from the batch
        assert "injection probe" in out and f"{5 * N} cached" in out

        pairs = setup.judge_args.copy()
        pairs[pairs.index("correctness")] = "preference"
        pairs[pairs.index(str(setup.data))] = str(write_items(tmp_path / "pairs.jsonl", pairs=True))
        # one round: the injected side of a pair comes from its id, not from a plain verdict
        run("batch", "prepare", *pairs, "--probe", "injection", "--positions", "end",
            "--out", str(tmp_path / "p1.jsonl"))
        calls = lines(tmp_path / "p1.jsonl")
        assert len(calls) == N * (1 + 3)  # plain + 3 templates at the end
        run("batch", "collect", "--output",
            str(answer_batch(live, calls, tmp_path / "p1-out.jsonl")), "--db", setup.db)
        run("batch", "prepare", *pairs, "--probe", "identical", "--out",
            str(tmp_path / "id.jsonl"))
        identical = lines(tmp_path / "id.jsonl")
        assert len(identical) == N
        run("batch", "collect", "--output",
            str(answer_batch(live, identical, tmp_path / "id-out.jsonl")), "--db", setup.db)
        before = live.request_count
        out = run("probe", "injection", *pairs, "--positions", "end").output
        assert f"{4 * N} cached" in out
        out = run("probe", "identical", *pairs).output
        assert f"{N} cached" in out and "verdicts on identical pairs" in out
        assert live.request_count == before
    with open_store(setup.db) as store:
        kinds = sorted(b.kind for b in store.list_batches())
    assert kinds == ["probe:identical"] + ["probe:injection"] * 2


@pytest.mark.parametrize(("args", "needle"), [
    (["--probe", "injection", "--templates", "nope"], "unknown template 'nope'"),
    (["--probe", "injection", "--positions", "middle"], "unknown position 'middle'"),
    (["--probe", "identical"], "needs a pairwise rubric"),
    (["--probe", "length", "--target", "pass"], "--target goes with --probe injection"),
    (["--probe", "position", "-r", "preference"], "needs pairs"),
])
def test_bad_probe_batches_are_refused_before_the_store_is_made(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    setup = Setup(tmp_path, "http://judge.test/v1", n=2)
    out = run("batch", "prepare", *setup.judge_args, "--out", str(tmp_path / "x.jsonl"), *args,
              code=2).output
    assert needle in out
    assert not Path(setup.db).exists() and not (tmp_path / "x.jsonl").exists()


def completion(status: int, body: Any = None, error: Any = None) -> OutputLine:
    return OutputLine("k", status if error is None else None, body, error, "f:1")


@pytest.mark.parametrize("line,status", [
    (completion(429, {"error": {"message": "slow down", "code": "rate_limit_exceeded"}}),
     "rate_limited"),
    (completion(408, {"error": {"message": "late"}}), "timeout"),
    (completion(500, {"error": {"message": "boom"}}), "api_error"),
    (completion(400, {"error": {"message": "bad"}}), "api_error"),
    (completion(200, "not an object"), "api_error"),
    (completion(0, error={"code": "batch_expired", "message": "late"}), "timeout"),
    (completion(0, error={"code": "batch_cancelled", "message": "stop"}), "api_error"),
    # vllm run-batch: the status in the response, the message as a string or its error response
    (OutputLine("k", 400, None, {"code": None, "message": "bad"}, "f:1"), "api_error"),
    (parse_output_line(json.dumps({"id": "v", "custom_id": "k", "response": {
        "status_code": 429, "request_id": "r", "body": None}, "error": {
        "object": "error", "message": "Too many", "type": "RateLimitError", "code": 429}}),
        "f:1"), "rate_limited"),
    (completion(200, {"choices": [{"message": {"content": "no json here"},
                                   "finish_reason": "stop"}]}), "parse_error"),
    (completion(200, {"choices": [{"message": {"content": '{"verdict": "pa'},
                                   "finish_reason": "length"}]}), "truncated"),
    (completion(200, {"choices": [{"message": {"content": None, "refusal": "no"},
                                   "finish_reason": "stop"}]}), "refusal"),
])
def test_output_lines_take_the_live_failure_categories(line: OutputLine, status: str) -> None:
    result = line_result(line, load_rubric("correctness").scale, structured=True)
    assert result.status == status
    assert (result.verdict is None) == (status in ("rate_limited", "timeout", "api_error"))


def test_a_failed_prepare_leaves_no_file(tmp_path: Path) -> None:
    writer = PartWriter(tmp_path / "r.jsonl", max_requests=1)
    for n in range(3):
        writer.write(request_line(f"k{n}", {"model": "m", "messages": []}))
    assert len(list(tmp_path.iterdir())) == 3
    writer.discard()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="more than the 10 a batch file may hold"):
        PartWriter(tmp_path / "r.jsonl", max_bytes=10).write(b"x" * 11)


def test_probe_batches_prepare_the_probes_calls(tmp_path: Path) -> None:
    setup = Setup(tmp_path, "http://judge.test/v1", n=3)
    consistency = lines(setup.prepare("--probe", "consistency", out="c.jsonl"))
    assert len(consistency) == 5 * 3 and len({line["custom_id"] for line in consistency}) == 15
    length = lines(setup.prepare("--probe", "length", "--levels", "50", out="l.jsonl"))
    assert len(length) == 2 * 3
    # the plain judgment is shared with `judge`: already prepared, but not yet answered
    assert {line["custom_id"] for line in length} & {line["custom_id"] for line in consistency}
    out = run("batch", "prepare", *setup.judge_args, "--probe", "consistency", "--samples", "1",
              code=2).output
    assert "--samples must be at least 2" in out
    with open_store(setup.db) as store:
        assert [b.kind for b in store.list_batches()] == ["probe:consistency", "probe:length"]


def test_vllm_error_lines_keep_their_message() -> None:
    line = parse_output_line(json.dumps({
        "id": "vllm-1", "custom_id": "k", "error": "prompt is too long",
        "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": None}}), "o:3")
    result = line_result(line, load_rubric("correctness").scale, structured=True)
    assert result.status == "api_error" and result.failure is not None
    assert result.failure.message == "HTTP 400: prompt is too long"


def test_a_named_endpoint_prepares_offline_and_submits_anywhere(
    tmp_path: Path, batch_server: BatchServer
) -> None:
    setup = Setup(tmp_path, batch_server.base_url)
    named = [a for a in setup.judge_args if a not in ("--base-url", batch_server.base_url)]
    assert "give --base-url URL or --endpoint-name NAME" in run(
        "batch", "prepare", *named, code=2).output
    run("batch", "prepare", *named, "--endpoint-name", "qwen-pool",
        "--out", str(tmp_path / "req.jsonl"))
    path = tmp_path / "req.jsonl"
    assert "--base-url: the Batch API URL" in run(
        "batch", "submit", str(path), "--db", setup.db, "--endpoint-name", "qwen-pool",
        code=2).output
    assert "prepared for endpoint name:qwen-pool" in run(
        "batch", "submit", str(path), "--db", setup.db, "--base-url", batch_server.base_url,
        code=2).output
    run("batch", "submit", str(path), "--db", setup.db, "--base-url", batch_server.base_url,
        "--endpoint-name", "qwen-pool")
    [job_id] = list(batch_server.batches)
    run("batch", "status", job_id, "--db", setup.db)
    assert "6 stored (ok 6)" in run("batch", "collect", job_id, "--db", setup.db).output
    # the same named judge at any URL finds every call in the cache
    with OpenAIServer() as replica:
        out = run("judge", *named, "--base-url", replica.base_url,
                  "--endpoint-name", "qwen-pool").output
        assert "6 cached, 0 judged now, 0 requests" in out and replica.request_count == 0


def test_a_prepare_failing_midway_leaves_no_rows_and_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from judgekit.judging.batch import prepare as prepare_module

    monkeypatch.setattr(prepare_module, "CHUNK_SIZE", 2)  # several chunks committed first
    rubric = load_rubric("correctness")
    spec = JudgeSpec(base_url="http://judge.test/v1", model="m")

    def units() -> Iterator[Any]:
        for i in range(5):
            yield unit_for(Item(id=f"i{i}", input="q", response="a", reference="a"))
        yield unit_for(Item(id="pair", input="q", response_a="a", response_b="b"))

    with open_store(tmp_path / "j.db") as store:
        with pytest.raises(InputError, match="is binary"):
            prepare_module.prepare_batch(store, rubric, units(), spec, dataset="d",
                                         out=tmp_path / "req.jsonl")
        assert store.list_batches() == []
        assert store.db.execute("SELECT COUNT(*) FROM batch_requests").fetchone()[0] == 0
        assert store.db.execute("SELECT COUNT(*) FROM batches").fetchone()[0] == 0
    assert not (tmp_path / "req.jsonl").exists()


def test_an_answer_echoing_the_api_key_is_stored_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-batch-Secret-0123456789abcdef"
    monkeypatch.setenv("JK_BATCH_KEY", key)
    echo = json.dumps({"reasoning": f"the key is {key}", "verdict": "pass"})
    with BatchServer(lambda body: echo, api_key=key) as server:
        setup = Setup(tmp_path, server.base_url)
        path = setup.prepare()
        keyed = ["--db", setup.db, "--api-key-env", "JK_BATCH_KEY"]
        run("batch", "submit", str(path), *keyed)
        [job_id] = list(server.batches)
        run("batch", "status", job_id, *keyed)
        assert "6 stored (ok 6)" in run("batch", "collect", job_id, *keyed).output
    stored = setup.judgments()
    assert all(key not in (j.raw_text or "") + (j.reasoning or "") for j in stored)
    assert all("***" in (j.reasoning or "") for j in stored)
    assert key.encode() not in Path(setup.db).read_bytes()


@pytest.mark.parametrize("line", [
    OutputLine("c", 200, {"choices": [{"message": {"content": 'KEY {"verdict": "pass"}'},
                                        "finish_reason": "stop"}], "model": "m KEY"}, None, "f:1"),
    OutputLine("c", 500, {"error": {"message": "bad key KEY"}}, None, "f:2"),
    OutputLine("c", None, None, {"code": "batch_expired", "message": "for KEY"}, "f:3"),
])
def test_output_lines_mask_the_key_like_live_answers(line: OutputLine) -> None:
    """Batch lines go through the live path's redaction: answer texts and failure messages."""
    key = "sk-line-Secret-0123456789abcdef"
    echoed = json.loads(json.dumps(line.body).replace("KEY", key)) if line.body else None
    error = {k: v.replace("KEY", key) for k, v in line.error.items()} if line.error else None
    result = line_result(OutputLine(line.custom_id, line.status_code, echoed, error, line.where),
                         load_rubric("rubrics/correctness.toml").scale, structured=False,
                         secrets=(key,))
    texts = [result.raw_text, result.model_returned,
             result.failure.message if result.failure else None]
    assert any("***" in (t or "") for t in texts)
    assert all(key not in (t or "") for t in texts)
