"""Replicas and pacing over real HTTP: several test servers on 127.0.0.1, the real ``openai``
client, a real SQLite store. Counts per server and planned schedules, never wall time."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from judgekit.cli.main import cli
from judgekit.clients import JudgeSpec
from judgekit.clients.openai_client import JudgeClient
from judgekit.clients.replicas import TRIP_AFTER
from judgekit.judging.runner import run_judgments
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from judgekit.types import Item, SamplingParams
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, is_probe

RUBRIC = "rubrics/correctness.toml"
N_ITEMS = 40


def write_items(path: Path, n: int = N_ITEMS) -> Path:
    path.write_text("".join(json.dumps({"id": f"i{k}", "input": f"ITEM:i{k} {k}+1?",
                                        "response": str(k + 1), "reference": str(k + 1)}) + "\n"
                            for k in range(n)))
    return path


def judge(*args: str) -> Result:
    return CliRunner().invoke(cli, ["judge", "--rubric", RUBRIC, "--model", "m", "--no-progress",
                                    *args], catch_exceptions=False)


def items_asked(server: OpenAIServer) -> list[str]:
    found = []
    for body in server.judge_requests():
        text = " ".join(str(m.get("content")) for m in body["messages"])
        found.append(re.search(r"ITEM:(\S+)", text).group(1))  # type: ignore[union-attr]
    return found


@pytest.fixture
def healthy() -> Iterator[list[OpenAIServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(OpenAIServer()) for _ in range(2)]


def down_url() -> str:
    """A URL nobody listens on: every attempt is a connection error."""
    server = OpenAIServer()
    url = server.base_url
    server.close_socket()
    return url


@pytest.mark.parametrize("failing", ["http_500", "connection_refused"])
def test_calls_spread_over_replicas_and_a_failing_one_is_worked_around(
    failing: str, healthy: list[OpenAIServer], tmp_path: Path
) -> None:
    data, db = write_items(tmp_path / "facts.jsonl"), tmp_path / "j.db"
    with ExitStack() as stack:
        if failing == "http_500":
            bad = stack.enter_context(OpenAIServer())
            bad.inject("server_error", times=10_000)
            bad_url = bad.base_url
        else:
            bad, bad_url = None, down_url()
        urls = [bad_url, *(s.base_url for s in healthy)]
        args = ["--data", str(data), "--db", str(db), "--endpoint-name", "prod",
                "--concurrency", "4", *(a for url in urls for a in ("--base-url", url))]
        first = judge(*args)
        assert first.exit_code == 0, first.output
        assert f"{N_ITEMS} judged now" in first.output
        # every item answered exactly once, all by the healthy replicas
        answered = Counter(item for s in healthy for item in items_asked(s))
        assert answered == Counter(f"i{k}" for k in range(N_ITEMS))
        per_server = [len(items_asked(s)) for s in healthy]
        assert min(per_server) >= N_ITEMS // 4, per_server  # spread, not all on one
        if bad is not None:
            # its failed calls landed elsewhere, and it was taken out after a few
            assert 1 <= len(bad.judge_requests()) <= TRIP_AFTER + 4
        with open_store(db) as store:
            rows = store.judgments(rubric_hash=load_rubric(RUBRIC).sha256)
            assert len(rows) == N_ITEMS and {r.status for r in rows} == {"ok"}
            assert {r.base_url for r in rows} == {"name:prod"}
            [run] = store.list_runs()
            assert run.base_url == "name:prod"
            # probed on one healthy replica: the failing one's 5xx did not look like "unsupported"
            assert run.capabilities["response_format"] == "json_schema"
            assert run.capabilities["logprobs_used"] is True
            stats = run.summary["replicas"]
            assert [r["url"] for r in stats] == [u.rstrip("/") for u in urls]
            assert stats[0]["failed"] == stats[0]["requests"] >= 1
            assert stats[0]["cool_downs"] >= 1 or stats[0]["requests"] < TRIP_AFTER
            assert [r["failed"] for r in stats[1:]] == [0, 0]
        assert "replica " in first.output
        code, listed, _ = run_cli("runs", "--db", str(db), "--format", "json")
        assert code == 0 and json.loads(listed)[0]["replicas"] == stats
        # a second identical run is one judge: all cached, no request anywhere
        before = [s.request_count for s in healthy] + ([bad.request_count] if bad else [])
        again = judge(*args)
        assert again.exit_code == 0, again.output
        assert f"{N_ITEMS} cached, 0 judged now, 0 requests" in again.output
        after = [s.request_count for s in healthy] + ([bad.request_count] if bad else [])
        assert after == before
        # one replica alone, under the same name, is still that judge
        alone = judge("--data", str(data), "--db", str(db), "--endpoint-name", "prod",
                      "--base-url", healthy[1].base_url)
        assert f"{N_ITEMS} cached" in alone.output


def test_several_urls_without_a_name_are_one_line_and_touch_no_store(
    healthy: list[OpenAIServer], tmp_path: Path
) -> None:
    data, db = write_items(tmp_path / "facts.jsonl"), tmp_path / "j.db"
    common = ("judge", "--rubric", RUBRIC, "--model", "m", "--data", str(data), "--db", str(db))
    code, out, err = run_cli(*common, "--base-url", healthy[0].base_url,
                             "--base-url", healthy[1].base_url)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--endpoint-name" in err and "Traceback" not in err
    assert not db.exists()
    assert [s.request_count for s in healthy] == [0, 0]
    code, _, err = run_cli(*common, "--endpoint-name", "x", "--base-url", healthy[0].base_url,
                           "--base-url", healthy[0].base_url + "/")
    assert code == 2 and "given twice" in err and not db.exists()


def test_replica_urls_with_a_key_in_the_path_are_never_stored(
    healthy: list[OpenAIServer], tmp_path: Path
) -> None:
    secret = "sk-" + "pathKey0123456789ABCDEFabcdef"  # no key-like literal in the source
    data, db = write_items(tmp_path / "facts.jsonl", 6), tmp_path / "j.db"
    keyed = healthy[1].base_url.replace("/v1", f"/{secret}/v1")
    result = judge("--data", str(data), "--db", str(db), "--endpoint-name", "prod",
                   "--base-url", healthy[0].base_url, "--base-url", keyed)
    assert result.exit_code == 0, result.output
    assert secret not in result.output
    assert secret.encode() not in db.read_bytes()
    with open_store(db) as store:
        [run] = store.list_runs()
    assert "/***/v1" in run.summary["replicas"][1]["url"]


def spec_for(*servers: OpenAIServer, **kw: object) -> JudgeSpec:
    return JudgeSpec(base_url=servers[0].base_url, model="m",
                     replica_urls=tuple(s.base_url for s in servers[1:]),
                     identity="name:m" if len(servers) > 1 else None, **kw)  # type: ignore[arg-type]


MESSAGES = [{"role": "user", "content": "ITEM:x Is 1+1=2? Answer pass or fail."}]


def test_spent_request_budget_waits_for_the_reset_the_server_announced() -> None:
    """remaining-requests 0, reset 1s: each next start is planned past the reset and slept."""
    scale = load_rubric(RUBRIC).scale
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(seconds)

    async def three_calls(server: OpenAIServer) -> list:
        async with JudgeClient(spec_for(server)) as client:
            for _ in range(3):
                result = await client.judge(MESSAGES, scale, sleep=sleep)
                assert result.status == "ok"
            return list(client.pool.replicas[0].pacer.schedule)

    with OpenAIServer() as server:
        server.response_headers = {"x-ratelimit-remaining-requests": "0",
                                   "x-ratelimit-reset-requests": "1s",
                                   "x-ratelimit-remaining-tokens": "90000",
                                   "x-ratelimit-reset-tokens": "6m0s"}
        schedule = asyncio.run(three_calls(server))
        assert len(server.judge_requests()) == 3
    assert [p.reason for p in schedule] == ["", "requests", "requests"]
    # each start is planned at least the announced second after the previous one began
    assert all(b.at - a.at >= 1.0 for a, b in itertools.pairwise(schedule))
    assert slept == [p.delay for p in schedule[1:]]
    assert all(0 < d <= 1.0 for d in slept)


def test_tpm_plans_token_throughput_on_the_client_clock() -> None:
    """On an injected clock that moves only by the planned waits, starts are spaced by tokens."""
    scale = load_rubric(RUBRIC).scale
    now = [1000.0]

    async def sleep(seconds: float) -> None:
        target = now[0] + seconds  # concurrent sleepers end at their own planned time
        await asyncio.sleep(0)
        now[0] = max(now[0], target)

    async def calls(server: OpenAIServer) -> list:
        spec = spec_for(server, tpm=600.0, sampling=SamplingParams(max_tokens=50))
        async with JudgeClient(spec, clock=lambda: now[0]) as client:
            for _ in range(2):
                await client.judge(MESSAGES, scale, sleep=sleep)
            await asyncio.gather(*(client.judge(MESSAGES, scale, sleep=sleep)
                                   for _ in range(3)))
            return list(client.pool.replicas[0].pacer.schedule)

    with OpenAIServer() as server:  # every answer reports 20 + 10 tokens used
        schedule = asyncio.run(calls(server))
        assert len(server.judge_requests()) == 5
    estimate = schedule[0].tokens
    assert estimate > 50  # the prompt plus max_tokens
    used, gap = 30 * 60 / 600, estimate * 60 / 600  # seconds of budget at 10 tokens/s
    # one at a time, each start waits for what the last answer really used;
    # three at once each reserve their estimate before any answer
    assert [p.at - 1000.0 for p in schedule] == pytest.approx(
        [0, used, 2 * used, 2 * used + gap, 2 * used + 2 * gap])
    assert [p.reason for p in schedule] == ["", "tpm", "tpm", "tpm", "tpm"]


def test_runner_records_pacing_and_malformed_headers_do_not_stop_a_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rubric = load_rubric(RUBRIC)
    items = [Item(id=f"f{i}", input=f"{i}?", response=str(i), reference=str(i)) for i in range(6)]
    with OpenAIServer() as server, open_store(tmp_path / "j.db") as store:
        server.response_headers = {"x-ratelimit-remaining-requests": "many",
                                   "x-ratelimit-reset-requests": "-5s",
                                   "x-ratelimit-remaining-tokens": "1e400",
                                   "x-ratelimit-reset-tokens": "1 s"}
        with caplog.at_level(logging.DEBUG, logger="judgekit.pacing"):
            summary = run_judgments(store, rubric, items, spec_for(server, rpm=300.0,
                                                                   concurrency=6),
                                    dataset="d", progress=False)
        assert summary.counts == {"ok": 6}
        assert any("ignoring malformed header" in r.getMessage() for r in caplog.records)
        [stats] = summary.replicas
        # 6 starts at once under --rpm 300: the first at once, five spaced 0.2 s apart
        assert stats["waits"] == {"rpm": 5} and stats["requests"] == server.request_count
        assert store.get_run(summary.run_id).summary["replicas"] == [stats]  # type: ignore[union-attr]


def test_tpm_from_the_command_line_holds_starts_back(tmp_path: Path) -> None:
    data, db = write_items(tmp_path / "facts.jsonl", 4), tmp_path / "j.db"
    with OpenAIServer() as server:
        result = judge("--data", str(data), "--db", str(db), "--base-url", server.base_url,
                       "--tpm", "50000", "--concurrency", "4", "--max-tokens", "64")
        assert result.exit_code == 0, result.output
        assert len([b for b in server.requests if not is_probe(b)]) == 4
    assert "paced: " in result.output
    with open_store(db) as store:
        [run] = store.list_runs()
    assert run.summary["replicas"][0]["waits"]["tpm"] >= 1


def test_a_429_moves_the_call_to_another_replica_and_holds_the_limited_one() -> None:
    scale = load_rubric(RUBRIC).scale
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def calls(servers: list[OpenAIServer]) -> list:
        async with JudgeClient(spec_for(*servers)) as client:
            first = await client.judge(MESSAGES, scale, sleep=sleep)
            second = await client.judge(MESSAGES, scale, sleep=sleep)
            return [first, second]

    with OpenAIServer() as limited, OpenAIServer() as other:
        limited.inject("rate_limit", retry_after=30)
        first, second = asyncio.run(calls([limited, other]))
        assert (first.status, first.attempts, second.status) == ("ok", 2, "ok")
        # the retry went to the other replica at once (no 30 s wait), and while the limited
        # one is held back the next call goes there too
        assert slept == [0.0]
        assert (len(limited.judge_requests()), len(other.judge_requests())) == (1, 2)
