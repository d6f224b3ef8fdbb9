"""Ctrl-C and cancellation of a run started from a notebook (inside a running event loop).

The blocking ``run_judgments`` runs on a worker thread's loop there, where no
signal arrives; the Ctrl-C lands in the waiting thread and must reach the run:
stop sending, store the answers in flight, raise. Cancelling an awaited run
stops at once but keeps every answer received and releases the run's claims.
Real HTTP to a server on 127.0.0.1, a real SQLite store, a real SIGINT.
"""

from __future__ import annotations

import asyncio
import io
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import judgekit
from judgekit.judging.interrupt import RunInterrupted
from judgekit.store import Store
from judgekit.types import Item
from tests.support.openai_server import OpenAIServer

N = 40
LIMIT_S = 60.0


def items() -> list[Item]:
    return [Item(id=f"i{n}", input=f"What is {n}+1?", response=str(n + 1),
                 reference=str(n + 1)) for n in range(N)]


@contextmanager
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in the main thread, as in a notebook kernel's cell.

    Entered inside the test's running loop: the loop's runner replaces the default
    handler with one that only cancels its task.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def wait_until(condition: Callable[[], bool], limit_s: float = LIMIT_S) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


def send_sigint_when(*conditions: Callable[[], bool]) -> threading.Thread:
    """From a helper thread: for each condition in turn, wait for it, then SIGINT the main
    thread."""
    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        for condition in conditions:
            wait_until(condition)
            signal.pthread_kill(main, signal.SIGINT)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    return thread


def setup(store: Store) -> tuple[judgekit.Rubric, list[Item]]:
    rubric = judgekit.load_rubric("correctness")
    data = items()
    store.import_items("facts", data)
    return rubric, data


async def test_ctrl_c_in_a_cell_stores_the_answers_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.get_running_loop()  # a notebook cell runs inside one
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with OpenAIServer(latency=0.5) as server, judgekit.open_store(tmp_path / "nb.db") as store:
        rubric, data = setup(store)
        spec = judgekit.JudgeSpec(base_url=server.base_url, model="m", concurrency=4)
        helper = send_sigint_when(lambda: len(server.judge_requests()) >= 6)
        with sigint_raises(), pytest.raises(KeyboardInterrupt) as caught:
            judgekit.run_judgments(store, rubric, data, spec, dataset="facts", progress=False)
        assert isinstance(caught.value, RunInterrupted)
        helper.join(timeout=LIMIT_S)
        assert "stopping: no new calls" in stderr.getvalue()
        asked = {r["messages"][-1]["content"] for r in server.judge_requests()}
        stored = store.judgments(dataset="facts")
        [run] = store.list_runs()
        # every call sent was answered in the grace period and stored; nothing more was sent
        assert 0 < len(stored) < N
        assert len(stored) == len(asked) == len(server.judge_requests())
        assert {j.status for j in stored} == {"ok"}
        assert store.claim_holders() == {}
        assert run.summary["interrupted"] is True and run.finished_at is not None
        assert run.summary["judged"] == len(stored)
        # the rerun asks only for the rest
        before = len(server.judge_requests())
        again = judgekit.run_judgments(store, rubric, data, spec, dataset="facts",
                                       progress=False)
        assert again.cached == len(stored) and again.judged == N - len(stored)
        assert len(server.judge_requests()) - before == N - len(stored)


async def test_a_second_ctrl_c_in_a_cell_stops_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with OpenAIServer() as server, judgekit.open_store(tmp_path / "nb.db") as store:
        rubric, data = setup(store)
        spec = judgekit.JudgeSpec(base_url=server.base_url, model="m", concurrency=2)
        judgekit.run_judgments(store, rubric, data[:1], spec, dataset="facts", progress=False)
        server.latency = 30.0  # far past the grace period
        helper = send_sigint_when(lambda: server.in_flight >= 2,
                                  lambda: "stopping:" in stderr.getvalue())
        with sigint_raises(), pytest.raises(KeyboardInterrupt) as caught:
            judgekit.run_judgments(store, rubric, data, spec, dataset="facts", progress=False)
        assert isinstance(caught.value, RunInterrupted)
        helper.join(timeout=LIMIT_S)
        assert "stopping now" in stderr.getvalue()
        assert [j.item_id for j in store.judgments(dataset="facts")] == ["i0"]
        assert store.claim_holders() == {}
        runs = store.list_runs()
        assert runs[-1].summary["interrupted"] is True and runs[-1].finished_at is not None


async def test_ctrl_c_during_an_awaited_run_stores_the_answers_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``await arun_judgments`` runs on the notebook's own loop: its signal handler stops it."""
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    with OpenAIServer(latency=0.5) as server, judgekit.open_store(tmp_path / "nb.db") as store:
        rubric, data = setup(store)
        spec = judgekit.JudgeSpec(base_url=server.base_url, model="m", concurrency=4)
        helper = send_sigint_when(lambda: len(server.judge_requests()) >= 6)
        with sigint_raises(), pytest.raises(KeyboardInterrupt) as caught:
            await judgekit.arun_judgments(store, rubric, data, spec, dataset="facts",
                                          progress=False)
        assert isinstance(caught.value, RunInterrupted)
        helper.join(timeout=LIMIT_S)
        assert "stopping: no new calls" in stderr.getvalue()
        stored = store.judgments(dataset="facts")
        assert 0 < len(stored) < N and len(stored) == len(server.judge_requests())
        assert store.claim_holders() == {}


async def test_cancelling_an_awaited_run_keeps_what_arrived(tmp_path: Path) -> None:
    with OpenAIServer(latency=0.3) as server, judgekit.open_store(tmp_path / "nb.db") as store:
        rubric, data = setup(store)
        spec = judgekit.JudgeSpec(base_url=server.base_url, model="m", concurrency=4)
        task = asyncio.create_task(judgekit.arun_judgments(store, rubric, data, spec,
                                                           dataset="facts", progress=False))
        deadline = time.monotonic() + LIMIT_S
        while len(store.judgments(dataset="facts")) < 5:
            assert time.monotonic() < deadline and not task.done()
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, LIMIT_S)
        stored = store.judgments(dataset="facts")
        [run] = store.list_runs()
        assert 5 <= len(stored) < N and {j.status for j in stored} == {"ok"}
        assert len({j.item_id for j in stored}) == len(stored)
        assert store.claim_holders() == {}
        assert run.summary["interrupted"] is True and run.finished_at is not None
        again = await judgekit.arun_judgments(store, rubric, data, spec, dataset="facts",
                                              progress=False)
        assert again.cached == len(stored) and again.judged == N - len(stored)
