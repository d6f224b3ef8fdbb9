"""Every attempt has a total deadline and a size limit; a long answer is stored once."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.clients import JudgeSpec
from judgekit.clients.openai_client import REASONING_MAX_CHARS
from judgekit.judging.runner import run_judgments
from judgekit.store import open_store
from judgekit.types import Rubric
from tests.adversarial.conftest import make_items, write_items
from tests.support.hostile_server import HostileServer


def _spec(server: HostileServer, **kw: object) -> JudgeSpec:
    return JudgeSpec(base_url=server.base_url, model="m", concurrency=2, **kw)  # type: ignore[arg-type]


def test_a_dripping_server_cannot_hold_a_call_past_its_deadline(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    # 4 bytes every 0.2 s: every read is quick, the whole answer takes about 15 s
    hostile.mode, hostile.drip_interval = "drip", 0.2
    with open_store(tmp_path / "j.db") as store:
        summary = run_judgments(store, rubric, make_items(1), _spec(
            hostile, timeout=1.0, max_retries=1), dataset="d")
        [row] = store.judgments(dataset="d")
    assert summary.counts == {"timeout": 1} and summary.requests == 2
    assert row.status == "timeout" and row.label is None
    assert row.error is not None and "no complete answer within 1 s" in row.error
    assert hostile.answered["i0"] == 0


def test_an_endless_body_stops_at_the_size_limit(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    hostile.mode, hostile.endless_seconds = "endless", 30.0
    with open_store(tmp_path / "j.db") as store:
        summary = run_judgments(store, rubric, make_items(1), _spec(
            hostile, timeout=25.0, max_response_bytes=1 << 20), dataset="d")
        [row] = store.judgments(dataset="d")
    assert summary.counts == {"api_error": 1} and summary.requests == 1  # not retried
    assert row.error is not None and "larger than 1,048,576 bytes" in row.error
    # reading stopped at the limit: the server could not push much past it
    assert hostile.bytes_sent < 16 << 20


def test_a_huge_answer_is_refused_with_a_reason_and_not_stored(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    hostile.huge_bytes = 20 << 20
    db = tmp_path / "j.db"
    with open_store(db) as store:
        for mode, dataset in (("huge", "declared"), ("huge_chunked", "chunked")):
            hostile.mode = mode
            summary = run_judgments(store, rubric, make_items(1), _spec(hostile), dataset=dataset)
            [row] = store.judgments(dataset=dataset)
            assert summary.counts == {"api_error": 1}, mode
            assert row.error is not None and "--max-response-bytes" in row.error
            assert row.raw_text is None
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) < 2 << 20


def test_a_long_answer_is_stored_once(
    hostile: HostileServer, tmp_path: Path, rubric: Rubric
) -> None:
    hostile.mode, hostile.huge_bytes = "huge", 3 << 20  # under the default 8 MiB limit
    db = tmp_path / "j.db"
    with open_store(db) as store:
        summary = run_judgments(store, rubric, make_items(1), _spec(hostile), dataset="d")
        [row] = store.judgments(dataset="d")
    assert summary.counts == {"ok": 1} and row.label == "pass"
    assert row.raw_text is not None and len(row.raw_text) > 3 << 20
    assert row.reasoning is not None and len(row.reasoning) <= REASONING_MAX_CHARS + 10
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) < 6 << 20


def test_the_limits_are_options_of_judge(hostile: HostileServer, tmp_path: Path) -> None:
    help_text = CliRunner().invoke(cli, ["judge", "--help"]).output
    assert "--max-response-bytes" in help_text and "total deadline" in help_text
    hostile.mode, hostile.huge_bytes = "huge", 200_000
    data = write_items(tmp_path / "items.jsonl", 2)
    result = CliRunner().invoke(cli, [
        "judge", "--rubric", "rubrics/correctness.toml", "--data", str(data),
        "--db", str(tmp_path / "j.db"), "--base-url", hostile.base_url, "--model", "m",
        "--max-response-bytes", "100000", "--timeout", "30"])
    assert result.exit_code == 0, result.output
    assert "api_error 2" in result.output
