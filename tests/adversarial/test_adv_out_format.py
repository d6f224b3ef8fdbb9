"""Every ``--out`` writes the format its suffix names, or refuses a ``--format`` that differs.

``labels export --out labels.csv`` used to write JSONL into the ``.csv`` file, and
``agree labels.csv`` then failed on line 2. Now the suffix picks the format
(``.csv``, ``.jsonl``, ``.json``, ``.md``, ``.html``...) when ``--format`` is not
given, and a ``--format`` the suffix contradicts is an error with no file written.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer

N = 6


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("outfmt")
    data = tmp / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                        "response": str(i + 1), "reference": str(i + 1)}) + "\n"
                            for i in range(N)), encoding="utf-8")
    db = tmp / "j.db"
    with OpenAIServer() as server:
        assert run_cli("judge", "-r", "correctness", "--data", str(data), "--db", str(db),
                       "--base-url", server.base_url, "--model", "m", "--no-progress")[0] == 0
    labels = tmp / "labels.jsonl"
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": "pass" if i % 3 else
                                          "fail", "annotator": a}) + "\n"
                              for i in range(N) for a in ("ann", "bob")))
    assert run_cli("labels", "import", str(labels), "-r", "correctness", "--db", str(db))[0] == 0
    return db


def test_labels_export_to_csv_writes_csv_that_agree_reads(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    code, _, err = run_cli("labels", "export", "-r", "correctness", "--db", str(store),
                           "--out", str(out))
    assert code == 0, err
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 2 * N and rows[0]["item_id"].startswith("i")
    code, _text, err = run_cli("agree", str(out))
    assert code == 0, err
    assert "missing field" not in err


@pytest.mark.parametrize(("args", "name"), [
    (["labels", "export", "-r", "correctness", "--format", "jsonl"], "labels.csv"),
    (["labels", "export", "-r", "correctness", "--format", "csv"], "labels.jsonl"),
    (["export", "-r", "correctness", "--format", "csv"], "judgments.jsonl"),
    (["export", "-r", "correctness", "--format", "jsonl"], "judgments.csv"),
    (["report", "-r", "correctness", "--format", "json"], "report.html"),
    (["report", "-r", "correctness", "--format", "md"], "report.json"),
    (["estimate", "-r", "correctness", "--format", "html"], "estimate.md"),
], ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
def test_a_format_the_suffix_contradicts_is_refused(store: Path, tmp_path: Path,
                                                     args: list[str], name: str) -> None:
    out = tmp_path / name
    code, _, err = run_cli(*args, "--db", str(store), "--out", str(out))
    assert code == 2 and "names" in err and "--format" in err, err
    assert not out.exists()


@pytest.mark.parametrize(("args", "name", "starts"), [
    (["export", "-r", "correctness"], "judgments.csv", "run_id,"),
    (["export", "-r", "correctness"], "judgments.txt", "{"),  # no format named: the default
    (["labels", "export", "-r", "correctness"], "labels.jsonl", "{"),
    (["report", "-r", "correctness"], "report.json", "{"),
    (["report", "-r", "correctness"], "report.md", "#"),
])
def test_the_suffix_picks_the_format(store: Path, tmp_path: Path, args: list[str], name: str,
                                     starts: str) -> None:
    out = tmp_path / name
    code, _, err = run_cli(*args, "--db", str(store), "--out", str(out))
    assert code in (0, 1, 3), err  # a report's verdict is its exit code
    assert out.read_text(encoding="utf-8").startswith(starts)


def test_one_format_commands_refuse_a_name_of_another(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.csv"
    code, _, err = run_cli("labels", "export-tasks", "-r", "correctness", "--db", str(store),
                           "--out", str(out))
    assert code == 2 and "writes json" in err and not out.exists()
    data = tmp_path / "facts.jsonl"
    data.write_text(json.dumps({"id": "i0", "input": "q", "response": "a"}) + "\n")
    fresh = tmp_path / "fresh.db"
    code, _, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                           "--db", str(fresh), "--base-url", "http://judge.test/v1",
                           "--model", "m", "--out", str(tmp_path / "req.csv"))
    assert code == 2 and "writes jsonl" in err and not fresh.exists()
