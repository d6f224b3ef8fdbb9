"""``batch submit`` interrupted at each step makes at most one provider batch per file.

``judgekit batch submit`` runs in its own process against the Batch API test
server (real ``openai`` client, real sockets) and is killed with SIGKILL while
the server holds the upload or the create (after the batch is made) open; the
next ``submit`` or ``status`` must find the batch by its key instead of paying
for a second one. A create answered with HTTP 500 after the batch was made must
not be retried by the client.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.batch_server import BatchServer
from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
N = 4


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer() as found:
        yield found


def prepared(tmp_path: Path, base_url: str) -> tuple[Path, Path]:
    data = tmp_path / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                        "response": str(i + 1), "reference": str(i + 1)}) + "\n"
                            for i in range(N)), encoding="utf-8")
    db, out = tmp_path / "j.db", tmp_path / "req.jsonl"
    code, _, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                           "--db", str(db), "--base-url", base_url, "--model", "m",
                           "--out", str(out))
    assert code == 0, err
    return db, out


def killed_submit(server: BatchServer, db: Path, path: Path, step: str) -> None:
    """Start ``batch submit`` in a process and SIGKILL it once the server is in ``step``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "judgekit", "batch", "submit", str(path),
                             "--db", str(db)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while step not in server.events and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # inside the server's delay
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    proc.kill()
    proc.wait(timeout=10)


def jobs(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT id FROM batch_jobs")]


def intents(db: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT state, job_id FROM batch_submits ORDER BY rowid"))


def test_killed_while_uploading_then_submitted_once(tmp_path: Path, server: BatchServer) -> None:
    db, path = prepared(tmp_path, server.base_url)
    server.delays["upload"] = 5.0
    killed_submit(server, db, path, "upload")
    assert server.batches == {} and jobs(db) == []
    assert intents(db) == [("uploading", None)]  # recorded before anything was sent
    server.delays.clear()
    code, out, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 0, err
    [batch_id] = server.batches
    assert jobs(db) == [batch_id] and f"as batch {batch_id}" in out
    assert intents(db) == [("not_created", None), ("created", batch_id)]
    code, _, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 2 and "already submitted" in err
    assert len(server.batches) == 1


@pytest.mark.parametrize("then", ["submit", "status"])
def test_killed_after_the_create_the_batch_is_found_not_made_again(
    tmp_path: Path, server: BatchServer, then: str
) -> None:
    db, path = prepared(tmp_path, server.base_url)
    server.delays["create"] = 5.0
    killed_submit(server, db, path, "create")
    [batch_id] = server.batches  # the provider made it; the store never heard back
    assert jobs(db) == [] and intents(db) == [("creating", None)]
    assert server.batches[batch_id].metadata["judgekit_submit"]
    server.delays.clear()
    args = ["submit", str(path)] if then == "submit" else ["status"]
    code, out, err = run_cli("batch", *args, "--db", str(db))
    assert code == 0, err
    assert f"found batch {batch_id}" in out and "interrupted submit" in out
    assert jobs(db) == [batch_id] and intents(db) == [("created", batch_id)]
    code, _, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 2 and f"already submitted as batch {batch_id}" in err
    assert list(server.batches) == [batch_id]
    # the recorded job is a normal one: followed and collected
    for _ in range(2):
        assert run_cli("batch", "status", batch_id, "--db", str(db))[0] == 0
    code, out, err = run_cli("batch", "collect", batch_id, "--db", str(db))
    assert code == 0 and f"{N} stored" in out, err


def test_a_create_failing_after_the_provider_acted_is_not_retried(
    tmp_path: Path, server: BatchServer
) -> None:
    db, path = prepared(tmp_path, server.base_url)
    server.create_errors = 3
    code, _, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code != 0 and "may exist" in err
    assert server.events.count("create") == 1 and len(server.batches) == 1
    code, out, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 0 and "found batch" in out, err
    assert len(server.batches) == 1 and jobs(db) == list(server.batches)


def test_a_create_not_listed_yet_waits_then_counts_as_not_made(
    tmp_path: Path, server: BatchServer
) -> None:
    db, path = prepared(tmp_path, server.base_url)
    server.delays["create"] = 5.0
    killed_submit(server, db, path, "create")
    server.batches.clear()  # as if the create had not reached the provider yet
    server.delays.clear()
    code, _, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code != 0 and "does not list that batch yet" in err and server.batches == {}
    with sqlite3.connect(db) as conn:  # the grace period has passed
        conn.execute("UPDATE batch_submits SET updated_at = '2000-01-01T00:00:00+00:00'")
    code, out, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 0 and "submitted" in out, err
    assert len(server.batches) == 1 and jobs(db) == list(server.batches)


@pytest.mark.parametrize(("flag", "value"), [("--max-requests", "60000"),
                                             ("--max-bytes", "300000000")])
def test_limits_beyond_the_batch_api_are_refused(tmp_path: Path, flag: str, value: str) -> None:
    data = tmp_path / "facts.jsonl"
    data.write_text(json.dumps({"id": "i0", "input": "q", "response": "a"}) + "\n")
    code, _, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                           "--db", str(tmp_path / "j.db"), "--base-url", "http://judge.test/v1",
                           "--model", "m", flag, value)
    assert code == 2 and flag in err and "Traceback" not in err
    assert not (tmp_path / "j.db").exists()


def test_the_next_hint_lists_every_file(tmp_path: Path) -> None:
    data = tmp_path / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": f"q{i}", "response": "a",
                                        "reference": "a"}) + "\n" for i in range(5)))
    code, out, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                             "--db", str(tmp_path / "j.db"), "--base-url",
                             "http://judge.test/v1", "--model", "m", "--max-requests", "2",
                             "--out", str(tmp_path / "req.jsonl"))
    assert code == 0, err
    hints = [line.split("judgekit batch submit ")[1] for line in out.splitlines()
             if "judgekit batch submit" in line]
    assert [Path(h).name for h in hints] == ["req.jsonl", "req.2.jsonl", "req.3.jsonl"]


def test_status_lists_the_store_when_the_provider_cannot_be_asked(tmp_path: Path) -> None:
    with BatchServer() as server:
        db, path = prepared(tmp_path, server.base_url)
        server.delays["create"] = 5.0
        killed_submit(server, db, path, "create")
    # the provider is gone: the listing still works, and says what it could not do
    code, out, err = run_cli("batch", "status", "--db", str(db))
    assert code == 0, err
    assert "could not look up an interrupted submit" in err and "not submitted" in out
    assert intents(db) == [("creating", None)]  # kept for the next submit or status


def test_a_store_too_busy_to_record_the_job_loses_no_batch(
    tmp_path: Path, server: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch is made but recording it fails (a store locked past its timeout)."""
    from judgekit.errors import StoreError
    from judgekit.store import Store

    db, path = prepared(tmp_path, server.base_url)

    def busy(self: Store, key: str, job: object) -> None:
        raise StoreError("database is locked")

    with monkeypatch.context() as patched:
        patched.setattr(Store, "record_submitted_job", busy)
        code, _, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code != 0 and "database is locked" in err
    [batch_id] = server.batches
    assert jobs(db) == [] and intents(db) == [("creating", None)]
    code, out, err = run_cli("batch", "submit", str(path), "--db", str(db))
    assert code == 0 and f"found batch {batch_id}" in out, err
    assert list(server.batches) == [batch_id] and jobs(db) == [batch_id]
