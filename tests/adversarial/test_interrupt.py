"""Ctrl-C stops sending, stores every answer already on its way, and a second Ctrl-C forces."""

from __future__ import annotations

import signal
from pathlib import Path

from judgekit.store import open_store
from tests.adversarial.conftest import judge_process, wait_until, write_items
from tests.adversarial.conftest import run as run_cli
from tests.support.hostile_server import HostileServer


def test_first_ctrl_c_stores_every_answer_in_flight(hostile: HostileServer, tmp_path: Path) -> None:
    hostile.latency = 1.0  # every call is in flight for a second
    data = write_items(tmp_path / "items.jsonl", 40)
    db = tmp_path / "j.db"
    proc = judge_process(hostile.base_url, data, db, "--concurrency", "4")
    wait_until(lambda: hostile.request_count >= 6, proc=proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "stopping: no new calls" in err and "interrupted: rerun" in err
    with open_store(db) as store:
        stored = {j.item_id: j.status for j in store.judgments(dataset="items")}
        [run] = store.list_runs()
    answered = set(hostile.answered)
    # every request sent was answered, and every answer is stored: nothing paid is lost
    assert set(hostile.requests) == answered
    assert set(stored) == answered and set(stored.values()) == {"ok"}
    assert 0 < len(stored) < 40
    assert run.summary["interrupted"] is True and run.finished_at is not None
    # the summary counts what was made and what was left, never "40 judgments"
    made = len(stored)
    assert f"{made} judged now, 0 cached, {40 - made} not made of 40" in err, err
    assert "40 judgments" not in err
    assert (run.summary["judged"], run.summary["abandoned"]) == (made, 40 - made)
    listed = run_cli("runs", "--db", str(db)).out
    assert f"[{made} judged, 0 cached, {40 - made} not made of 40]" in listed, listed
    # the rerun asks only for what is missing
    before = hostile.request_count
    proc = judge_process(hostile.base_url, data, db, "--concurrency", "4")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert hostile.request_count - before == 40 - len(stored)
    assert max(hostile.requests.values()) == 1


def test_a_second_ctrl_c_stops_at_once(hostile: HostileServer, tmp_path: Path) -> None:
    hostile.latency = 60.0  # answers would come far past the grace period
    data = write_items(tmp_path / "items.jsonl", 4)
    db = tmp_path / "j.db"
    proc = judge_process(hostile.base_url, data, db, "--concurrency", "2")
    wait_until(lambda: hostile.request_count >= 2, proc=proc)
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    wait_until(lambda: "stopping" in (proc.stderr.readline() if proc.stderr else ""))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopping now" in err
    assert not hostile.answered
    with open_store(db) as store:
        assert store.judgments(dataset="items") == []
        assert store.claim_holders() == {}
