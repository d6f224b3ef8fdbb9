"""Two identical judge runs on one store make every call once, and the schema keeps one outcome."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database

from judgekit.clients import JudgeSpec
from judgekit.judging.runner import run_judgments
from judgekit.store import open_store
from judgekit.store.schema import migrations
from judgekit.types import Rubric
from tests.adversarial.conftest import judge_process, make_items, write_items
from tests.support.hostile_server import HostileServer


def test_two_identical_runs_at_once_pay_for_each_call_once(
    hostile: HostileServer, tmp_path: Path
) -> None:
    n = 120
    hostile.latency = 0.05
    hostile.probe_latency = 0.5  # both runs reach the new endpoint's probe at once
    data = write_items(tmp_path / "items.jsonl", n)
    db = tmp_path / "j.db"
    with open_store(db):
        pass  # created before both start, as a user's store would be
    procs = [judge_process(hostile.base_url, data, db, "--concurrency", "4") for _ in range(2)]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert hostile.request_count == n and max(hostile.requests.values()) == 1
    # the capability probe is claimed like a call: paid once (plain, json_schema, logprobs)
    assert hostile.probe_requests == 3
    for out, _ in outputs:
        assert f"{n} judgments" in out and f"ok {n}" in out
    with open_store(db) as store:
        rows = store.judgments(dataset="items", latest_only=False)
        assert len(rows) == n and {r.status for r in rows} == {"ok"}
        assert store.claim_holders() == {}
        # each run stands for every outcome: those it made and those the other run made
        runs = [r.id for r in store.list_runs()]
        held = [store.run_outcome_counts(r) for r in runs]
        assert [h.n_made + h.n_stood_for for h in held] == [n, n]
        assert sum(h.n_made for h in held) == n
        for run_id, other in zip(runs, reversed(runs), strict=True):
            assert len(store.judgments(run_id=run_id)) == n
            assert set(store.run_outcome_counts(run_id).stood_for) <= {other}


def test_the_store_refuses_a_second_finished_outcome_for_one_call(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    spec = JudgeSpec(base_url=hostile.base_url, model="m")
    with open_store(tmp_path / "j.db") as store:
        run_judgments(store, rubric, make_items(2), spec, dataset="d")
        first = store.judgments(dataset="d")[0]
        # a run that lost its claim comes back with an answer superseding nothing
        assert not store.record_claimed(first, "elsewhere:1:x", None)
        with pytest.raises(sqlite3.IntegrityError):
            store.db.conn.execute(
                "INSERT INTO judgments (run_id, dataset, item_id, sample_index, status, "
                "model_requested, base_url, rubric_name, rubric_version, rubric_hash, cache_key, "
                "created_at, supersedes) SELECT run_id, dataset, item_id, sample_index, status, "
                "model_requested, base_url, rubric_name, rubric_version, rubric_hash, cache_key, "
                "created_at, supersedes FROM judgments WHERE cache_key = ?", [first.cache_key])
        store.db.conn.rollback()
        # --force re-judges: a new outcome superseding the old one, history kept
        summary = run_judgments(store, rubric, make_items(2), spec, dataset="d", force=True)
        assert summary.judged == 2 and summary.refused_duplicates == 0
        assert len(store.judgments(dataset="d", latest_only=False)) == 4
        assert len(store.judgments(dataset="d")) == 2


def test_an_old_store_holding_duplicates_migrates_and_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="0006_one_outcome_per_call")
    db.execute("INSERT INTO runs (id, kind, dataset, rubric_hash, model, base_url, "
               "judgekit_version, started_at) VALUES ('r1', 'judge', 'd', 'h', 'm', 'u', '0', 't')")
    for status in ("ok", "api_error", "ok", "ok"):  # two runs at once stored 'ok' thrice
        db.execute("INSERT INTO judgments (run_id, dataset, item_id, sample_index, status, "
                   "model_requested, base_url, rubric_name, rubric_version, rubric_hash, "
                   "cache_key, created_at) VALUES ('r1', 'd', 'i', 0, ?, 'm', 'u', 'n', '1', 'h', "
                   "'k', 't')", [status])
    db.conn.commit()
    db.close()
    with open_store(path) as store:
        rows = store.judgments(dataset="d", latest_only=False)
        assert [r.status for r in rows] == ["ok", "api_error", "ok", "ok"]
        chain = [row[0] for row in store.db.execute(
            "SELECT supersedes FROM judgments ORDER BY id").fetchall()]
        assert chain == [None, None, 1, 3]
        latest = store.latest_judgments_by_key(["k"])["k"]
        assert latest[0] == 4
        # a claim made now supersedes outcome 4; a stale one (superseding 3) is refused
        assert not store.record_claimed(rows[-1], "o:1:x", 3)
        assert store.record_claimed(rows[-1], "o:1:x", 4)
