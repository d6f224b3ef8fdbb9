"""The real local judge (llama.cpp server + SmolLM2-135M) on a handful of demo items."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from judgekit.clients import JudgeSpec
from judgekit.errors import LocalJudgeError
from judgekit.io.items import load_items
from judgekit.judging import local
from judgekit.judging.local import LOCAL_MODEL, LocalJudge
from judgekit.judging.runner import run_judgments
from judgekit.rubrics import load_rubric
from judgekit.store import Store, open_store

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "judgekit" / "data" / "demo"


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(local.importlib.util, "find_spec",
                        lambda name: None if name == "llama_cpp" else real(name))
    with pytest.raises(LocalJudgeError) as info:
        LocalJudge().start()
    assert "pip install -e '.[local]'" in str(info.value)
    assert "llama_cpp" in str(info.value)


@pytest.fixture(scope="module")
def local_judge() -> Iterator[LocalJudge]:
    with LocalJudge() as judge:
        yield judge


@pytest.mark.e2e
def test_local_judge_judges_demo_items(local_judge: LocalJudge, tmp_db: Store) -> None:
    facts = load_items(DEMO / "facts.jsonl")[:4]
    pairs = load_items(DEMO / "pairs.jsonl")[:2]
    spec = JudgeSpec(base_url=local_judge.base_url, model=LOCAL_MODEL, concurrency=2,
                     timeout=120)
    first = run_judgments(tmp_db, load_rubric("correctness"), facts, spec, dataset="facts")
    second = run_judgments(tmp_db, load_rubric("preference"), pairs, spec, dataset="pairs")
    assert first.judged == 4 and second.judged == 2
    # llama.cpp takes json_object + schema (and answers json_schema with HTTP 500)
    assert first.response_format == "json_object"
    rows = tmp_db.judgments(dataset="facts") + tmp_db.judgments(dataset="pairs")
    assert len(rows) == 6
    for row in rows:
        assert row.model_returned == LOCAL_MODEL and row.raw_text
        assert row.prompt_tokens and row.completion_tokens and row.latency_ms
        if row.status == "ok":
            assert row.label is not None
        else:
            assert row.label is None and row.score is None
    assert sum(r.status == "ok" for r in rows) >= 4  # schema-constrained output parses
    # llama.cpp returns logprobs: every ok verdict carries its confidence
    run = tmp_db.get_run(first.run_id)
    assert run is not None and run.capabilities["logprobs_used"] is True
    confidences = [r.confidence for r in rows if r.status == "ok"]
    assert confidences and all(c is not None and 0.0 < c <= 1.0 for c in confidences)
    again = run_judgments(tmp_db, load_rubric("correctness"), facts, spec, dataset="facts")
    assert again.judged == 0 and again.cached == 4


def _judgekit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGEKIT_BASE_URL", "JUDGEKIT_DB")}
    return subprocess.run([sys.executable, "-m", "judgekit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.e2e
def test_cached_rerun_does_not_start_the_local_judge(tmp_path: Path) -> None:
    args = ("judge", "-r", "correctness", "--data", str(DEMO / "facts.jsonl"), "--limit", "3",
            "--db", str(tmp_path / "r.db"))
    first = _judgekit(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "starting the local judge" in first.stderr and "3 judged now" in first.stdout
    again = _judgekit(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "every call is cached, the local judge is not started" in again.stderr
    assert "3 cached, 0 judged now, 0 requests" in again.stdout
    assert "starting the local judge" not in again.stderr  # no model load


@pytest.mark.e2e
def test_server_stops_on_exit() -> None:
    with LocalJudge() as judge:
        url = f"{judge.base_url}/models"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.status == 200
        process = judge._process
    assert process is not None and process.poll() is not None
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


@pytest.mark.e2e
@pytest.mark.slow
def test_demo_end_to_end(tmp_path: Path) -> None:
    done = _judgekit("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "judgekit-demo" / "judgekit.db"
    assert db.exists()
    assert f"database: {db.resolve()}" in done.stdout
    assert "facts: 24 judgments by smollm2-135m-instruct" in done.stdout
    assert "reference labels" in done.stdout
    # the position probe re-judged the 12 pairs swapped and the report shows it
    assert "5. position probe: 12 pairs judged again with A and B swapped" in done.stdout
    assert "(12 swapped calls" in done.stdout
    with open_store(db) as store:
        pairs = store.judgments(dataset="pairs")
        assert sum(j.variant == "swapped" for j in pairs) == 12
        assert [r["probe"] for r in store.probe_results(pairs[0].rubric_hash)] == ["position"]
    assert "Position consistency" in done.stdout.split("calibration report: pairs")[1]
