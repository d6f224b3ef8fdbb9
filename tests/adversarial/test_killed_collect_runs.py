"""``runs`` counts a run's outcomes from the rows: a ``batch collect`` killed before it
wrote its summary is listed with every judgment it stored, and one that found calls
answered by a live run stands for them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from judgekit.store import open_store
from tests.adversarial.conftest import REPO, run, wait_until
from tests.support.openai_server import OpenAIServer

N = 6000


def _answered(server: OpenAIServer, prepared: Path, output: Path) -> Path:
    """The output file a Batch API would return: each request answered by ``server``."""
    with output.open("w", encoding="utf-8") as handle:
        for n, text in enumerate(prepared.read_text(encoding="utf-8").splitlines()):
            line = json.loads(text)
            status, _, raw = server._completion(line["body"])
            handle.write(json.dumps({"id": f"r{n}", "custom_id": line["custom_id"],
                                     "response": {"status_code": status,
                                                  "body": json.loads(raw)},
                                     "error": None}) + "\n")
    return output


def _runs(db: Path) -> dict[str, dict[str, object]]:
    outcome = run("runs", "--db", str(db), "--format", "json")
    assert outcome.code == 0, outcome.err
    return {row["id"]: row for row in json.loads(outcome.out)}


def test_a_killed_collect_is_listed_with_the_rows_it_stored(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "input": f"What is {k}+1?",
                                        "response": str(k + 1), "reference": str(k + 1)})
                            + "\n" for k in range(N)),
                    encoding="utf-8")
    db = tmp_path / "j.db"
    args = ["-r", "rubrics/correctness.toml", "--data", str(data), "--db", str(db),
            "--base-url", "http://judge.test/v1", "--model", "m"]
    prepared = tmp_path / "req.jsonl"
    assert run("batch", "prepare", *args, "--out", str(prepared)).code == 0
    with OpenAIServer() as server:
        output = _answered(server, prepared, tmp_path / "out.jsonl")
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgekit", "batch", "collect", "--output", str(output),
         "--db", str(db)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def stored() -> int:
        with open_store(db) as store:
            return store.count_judgments()

    wait_until(lambda: stored() >= 1000)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    rows = stored()
    assert 0 < rows < N, "the collect finished before it was killed"
    [batch_run] = [r for r in _runs(db).values() if str(r["id"]).startswith("batch:")]
    assert batch_run["counts"] == {"ok": rows} and batch_run["judged"] == rows
    assert batch_run["total"] == rows and batch_run["finished_at"] is None
    # collected again: the rest is stored, and the summary agrees with the rows
    assert run("batch", "collect", "--output", str(output), "--db", str(db)).code == 0
    listed = _runs(db)[str(batch_run["id"])]
    assert listed["counts"] == {"ok": N} and listed["judged"] == N and listed["total"] == N
