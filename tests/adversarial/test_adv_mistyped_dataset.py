"""A mistyped ``--dataset`` is an error naming the datasets the store holds (exit 2).

Before, ``report`` and the others read a dataset with no data: INSUFFICIENT DATA
(exit 3), an empty export, an empty comparison. Every command that reads a
named dataset now refuses it, with the store unchanged and no output file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer

N = 6


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("mistyped")
    data = tmp / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                        "response": str(i + 1), "reference": str(i + 1)}) + "\n"
                            for i in range(N)), encoding="utf-8")
    db = tmp / "j.db"
    with OpenAIServer() as server:
        code, _, err = run_cli("judge", "-r", "correctness", "--data", str(data), "--db",
                               str(db), "--base-url", server.base_url, "--model", "m",
                               "--no-progress")
        assert code == 0, err
    labels = tmp / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": "pass", "annotator": a})
                              + "\n" for i in range(N) for a in ("ann", "bob")))
    assert run_cli("labels", "import", str(labels), "-r", "correctness", "--db", str(db))[0] == 0
    return db


COMMANDS = [
    ["report", "-r", "correctness"],
    ["report", "-r", "correctness", "--format", "json"],
    ["estimate", "-r", "correctness"],
    ["plan", "--estimate", "ppi", "-r", "correctness"],
    ["export", "-r", "correctness"],
    ["labels", "export", "-r", "correctness"],
    ["labels", "disagreements", "-r", "correctness"],
    ["compare", "judges", "-r", "correctness"],
    ["agree", "--rubric", "correctness"],
    ["queue", "assign", "-r", "correctness", "--annotators", "ann,bob"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_mistyped_dataset_names_the_stored_ones(store: Path, tmp_path: Path,
                                                   args: list[str]) -> None:
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    code, out, err = run_cli(*args, "--db", str(store), "--dataset", "fcats")
    assert code == 2, (out, err)
    assert "no dataset 'fcats' in" in err and "(datasets: 'facts')" in err
    assert "INSUFFICIENT" not in out and "Traceback" not in err
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_the_right_dataset_still_works(store: Path) -> None:
    code, out, err = run_cli("export", "-r", "correctness", "--db", str(store),
                             "--dataset", "facts")
    assert code == 0 and len(out.splitlines()) == N, err
