"""A key revoked mid-run (401) stops the run at once; what was finished stays, claims are freed."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.clients import JudgeSpec
from judgekit.errors import EndpointError
from judgekit.judging.runner import run_judgments
from judgekit.store import open_store
from judgekit.types import Rubric
from tests.adversarial.conftest import make_items
from tests.support.hostile_server import HostileServer


def test_401_mid_run_stops_keeps_finished_and_frees_claims(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    hostile.unauthorized_after = 10
    spec = JudgeSpec(base_url=hostile.base_url, model="m", api_key="sk-revoked-key-0123456789",
                     concurrency=4)
    with open_store(tmp_path / "j.db") as store:
        with pytest.raises(EndpointError, match="refused the request") as info:
            run_judgments(store, rubric, make_items(40), spec, dataset="d")
        assert "sk-revoked" not in str(info.value)
        statuses = [j.status for j in store.judgments(dataset="d")]
        assert statuses.count("ok") == 10
        # the calls already in flight when the first 401 came back, and no more
        assert hostile.request_count <= 10 + spec.concurrency
        assert store.claim_holders() == {}
        [run] = store.list_runs()
        assert run.summary["error"] and run.finished_at is not None
        hostile.unauthorized_after = None
        before = hostile.request_count
        summary = run_judgments(store, rubric, make_items(40), spec, dataset="d")
    assert summary.counts == {"ok": 40} and summary.cached == 10
    assert hostile.request_count - before == 30
