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

from judgekit import local
from judgekit.clients import JudgeSpec
from judgekit.datasets import load_items
from judgekit.errors import LocalJudgeError
from judgekit.local import LOCAL_MODEL, LocalJudge
from judgekit.rubrics import load_rubric
from judgekit.runner import run_judgments
from judgekit.store import Store

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
    again = run_judgments(tmp_db, load_rubric("correctness"), facts, spec, dataset="facts")
    assert again.judged == 0 and again.cached == 4


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
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGEKIT_BASE_URL", "JUDGEKIT_DB")}
    done = subprocess.run(
        [sys.executable, "-m", "judgekit", "demo"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    db = tmp_path / "judgekit-demo" / "judgekit.db"
    assert db.exists()
    assert f"database: {db.resolve()}" in done.stdout
    assert "facts: 24 judgments by smollm2-135m-instruct" in done.stdout
    assert "reference labels" in done.stdout
