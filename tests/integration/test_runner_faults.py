"""Failures over real HTTP: categories, retries, Retry-After, reruns, and secrets."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from judgekit.clients import JudgeSpec
from judgekit.errors import EndpointError, InputError
from judgekit.judging.runner import run_judgments
from judgekit.rubrics import load_rubric
from judgekit.store import Store
from judgekit.types import Item
from tests.support.openai_server import OpenAIServer, Reply

SECRET = "sk-test-Very-Secret-Key-0123456789"


@pytest.fixture
def rubric():
    return load_rubric("rubrics/correctness.toml")


def items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", input=f"q{k}", response="4", reference="4") for k in range(n)]


def spec(server: OpenAIServer, **kw: Any) -> JudgeSpec:
    return JudgeSpec(base_url=server.base_url, model="m", **kw)


def warm(server: OpenAIServer, store: Store, rubric) -> None:
    """Probe capabilities first so injected faults hit judge calls, not the probe."""
    run_judgments(store, rubric, items(1), spec(server), dataset="warmup")


def statuses(store: Store, dataset: str = "d") -> dict[str, str]:
    return {j.item_id: j.status for j in store.judgments(dataset=dataset)}


def test_429_retry_after_is_honoured(openai_server: OpenAIServer, tmp_db: Store, rubric) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("rate_limit", retry_after=1)
    started = time.perf_counter()
    summary = run_judgments(tmp_db, rubric, items(1), spec(openai_server), dataset="d")
    assert time.perf_counter() - started >= 1.0
    assert summary.counts["ok"] == 1 and summary.requests == 2


def test_transient_errors_are_retried_within_the_run(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("server_error", status=503)
    openai_server.inject("malformed")
    openai_server.inject("status", status=409, message="conflict")
    summary = run_judgments(tmp_db, rubric, items(1), spec(openai_server, concurrency=1),
                            dataset="d")
    assert summary.counts["ok"] == 1 and summary.requests == 4


def test_timeouts_are_retried_then_recorded(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("timeout", seconds=1.5)
    summary = run_judgments(tmp_db, rubric, items(1), spec(openai_server, timeout=0.5),
                            dataset="d")
    assert summary.counts["ok"] == 1 and summary.requests == 2

    openai_server.inject("timeout", times=2, seconds=1.5)
    summary = run_judgments(tmp_db, rubric, items(2)[1:], spec(
        openai_server, timeout=0.5, max_retries=1), dataset="d")
    assert summary.counts["timeout"] == 1
    row = tmp_db.judgments(dataset="d", run_id=summary.run_id)[0]
    assert row.status == "timeout" and row.label is None and row.score is None
    assert row.error is not None and row.error.startswith("no complete answer within 0.5 s")


def test_transient_failures_are_retried_on_the_next_run(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("rate_limit", times=1, retry_after=0)
    openai_server.inject("server_error", times=1)
    no_retry = spec(openai_server, max_retries=0, concurrency=1)
    first = run_judgments(tmp_db, rubric, items(4), no_retry, dataset="d")
    assert first.counts["rate_limited"] == 1 and first.counts["api_error"] == 1
    assert first.counts["ok"] == 2
    for row in tmp_db.judgments(dataset="d"):
        if row.status != "ok":
            assert row.label is None and row.score is None and row.error
            assert row.error.startswith("HTTP 429") or row.error.startswith("HTTP 500")
    before = openai_server.request_count
    second = run_judgments(tmp_db, rubric, items(4), no_retry, dataset="d")
    assert openai_server.request_count - before == 2  # only the two failures
    assert second.counts["ok"] == 4 and set(statuses(tmp_db).values()) == {"ok"}


def test_answered_failures_are_cached_unless_retry_failed(tmp_db: Store, rubric) -> None:
    answers = {"i0": "I think it is fine.", "i1": '{"reasoning": "x", "verdict": "maybe"}'}

    def responder(body: dict[str, Any]) -> Reply:
        text = body["messages"][-1]["content"]
        for item_id, answer in answers.items():
            if f"Question: q{item_id[1:]}\n" in text:
                return Reply(answer)
        return Reply('{"reasoning": "same", "verdict": "pass"}')

    with OpenAIServer(responder) as server:
        warm(server, tmp_db, rubric)
        server.inject("refusal")
        server.inject("truncated")
        one = spec(server, concurrency=1)
        # i0 -> refusal, i1 -> truncated, i2 -> pass; then reruns
        run_judgments(tmp_db, rubric, items(3), one, dataset="d")
        assert statuses(tmp_db) == {"i0": "refusal", "i1": "truncated", "i2": "ok"}
        rows = {r.item_id: r for r in tmp_db.judgments(dataset="d")}
        assert rows["i1"].finish_reason == "length" and rows["i1"].score is None
        assert rows["i0"].raw_text == "I can't help with that."

        before = server.request_count
        cached = run_judgments(tmp_db, rubric, items(3), one, dataset="d")
        assert server.request_count == before and cached.cached == 3

        retried = run_judgments(tmp_db, rubric, items(3), one, dataset="d", retry_failed=True)
        assert server.request_count - before == 2 and retried.judged == 2
        # now i0 answers free text without a verdict, i1 an off-scale verdict
        assert statuses(tmp_db) == {"i0": "parse_error", "i1": "parse_error", "i2": "ok"}
        for row in tmp_db.judgments(dataset="d"):
            if row.status == "parse_error":
                assert row.label is None and row.score is None and row.error
        forced = run_judgments(tmp_db, rubric, items(3), one, dataset="d", force=True)
        assert forced.judged == 3


def test_400_is_not_retried(openai_server: OpenAIServer, tmp_db: Store, rubric) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("bad_request", message="context length exceeded")
    before = openai_server.request_count
    summary = run_judgments(tmp_db, rubric, items(1), spec(openai_server), dataset="d")
    assert openai_server.request_count - before == 1
    assert summary.counts["api_error"] == 1
    row = tmp_db.judgments(dataset="d")[0]
    assert row.error == "HTTP 400: context length exceeded"


def test_401_stops_the_run_without_retrying(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("unauthorized", times=100)
    before = openai_server.request_count
    with pytest.raises(EndpointError, match="HTTP 401"):
        run_judgments(tmp_db, rubric, items(20), spec(openai_server, concurrency=1), dataset="d")
    assert openai_server.request_count - before == 1  # no retry, no further calls
    rows = tmp_db.judgments(dataset="d")
    assert [r.status for r in rows] == ["api_error"]
    runs = [r for r in tmp_db.list_runs() if r.dataset == "d"]
    assert runs[-1].summary["error"] and runs[-1].finished_at


def test_401_without_a_key_says_that_no_key_was_given(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("unauthorized", times=5)
    with pytest.raises(EndpointError, match="no API key was given"):
        run_judgments(tmp_db, rubric, items(2), spec(openai_server, concurrency=1), dataset="d")
    openai_server.inject("unauthorized", times=5)
    with pytest.raises(EndpointError, match="check the API key") as info:
        run_judgments(tmp_db, rubric, items(2), spec(openai_server, concurrency=1,
                                                    api_key="sk-test-secret-value"),
                      dataset="d2")
    assert "sk-test-secret-value" not in str(info.value)


def test_insufficient_quota_is_not_retried(
    openai_server: OpenAIServer, tmp_db: Store, rubric
) -> None:
    warm(openai_server, tmp_db, rubric)
    openai_server.inject("quota", times=5)
    before = openai_server.request_count
    with pytest.raises(EndpointError, match="quota"):
        run_judgments(tmp_db, rubric, items(3), spec(openai_server, concurrency=1), dataset="d")
    assert openai_server.request_count - before == 1


def test_unreachable_endpoint_is_a_clean_error(tmp_db: Store, rubric) -> None:
    with OpenAIServer() as server:
        url = server.base_url
    dead = JudgeSpec(base_url=url, model="m", max_retries=1, timeout=2)
    with pytest.raises(EndpointError, match="not usable"):
        run_judgments(tmp_db, rubric, items(2), dead, dataset="d")
    assert tmp_db.judgments(dataset="d") == []


def test_api_key_never_reaches_db_logs_or_errors(
    tmp_path, rubric, caplog: pytest.LogCaptureFixture
) -> None:
    from judgekit.store import open_store

    caplog.set_level(logging.DEBUG)
    db_path = tmp_path / "secret.db"
    store = open_store(db_path)
    with OpenAIServer(api_key=SECRET) as server:
        for url in (server.base_url.replace("http://", f"http://user:{SECRET}@"),
                    f"{server.base_url}?api-key={SECRET}"):
            with pytest.raises(InputError, match="carries credentials") as bad:
                JudgeSpec(base_url=url, model="m")
            assert SECRET not in str(bad.value)
        keyed = JudgeSpec(base_url=server.base_url, model="m", api_key=SECRET, max_retries=0)
        assert SECRET not in repr(keyed)
        # the server echoes the key in error messages: they must be redacted
        server.inject("bad_request", message=f"invalid key {SECRET}")
        with pytest.raises(EndpointError) as probe_error:
            run_judgments(store, rubric, items(3), keyed, dataset="d")
        assert "invalid key ***" in str(probe_error.value)
        run_judgments(store, rubric, items(1), keyed, dataset="warm")
        server.inject("bad_request", message=f"invalid key {SECRET}")
        summary = run_judgments(store, rubric, items(3), keyed, dataset="d")
        assert server.headers[-1]["authorization"] == f"Bearer {SECRET}"  # it was sent
        with pytest.raises(EndpointError) as info:
            run_judgments(store, rubric, items(4), JudgeSpec(
                base_url=server.base_url, model="m", api_key="sk-wrong-key-12345"), dataset="e")
    assert summary.judged == 3
    errors = [j.error for j in store.judgments(dataset="d") if j.error]
    assert errors == ["HTTP 400: invalid key ***"]
    assert SECRET not in str(info.value) + str(probe_error.value)
    assert SECRET not in summary.format() + caplog.text
    store.close()
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path.name
