"""``judgekit import`` and ``judgekit export`` against a real SQLite store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli._common import resolve_db_path
from judgekit.cli.main import cli, main
from judgekit.rubrics import REPO_RUBRICS_DIR, load_rubric
from judgekit.store import RunRecord, open_store
from judgekit.types import Judgment

DEMO = Path(__file__).resolve().parents[2] / "judgekit" / "data" / "demo"
CORRECTNESS = str(REPO_RUBRICS_DIR / "correctness.toml")


def invoke(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == 0, result.output
    return result.output


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run the real entry point (which turns JudgekitError into ``error: ...``)."""
    with pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def table_counts(db: Path) -> dict[str, int]:
    with open_store(db) as store:
        return {name: store.count_items(name) for name in store.datasets()}


# -- import ----------------------------------------------------------------------


def test_import_demo_and_reimport_is_a_no_op(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    out = invoke("import", str(DEMO / "facts.jsonl"), "--db", str(db))
    assert "imported 24 item(s)" in out and "dataset 'facts'" in out and "24 new or changed" in out
    again = invoke("import", str(DEMO / "facts.jsonl"), "--db", str(db))
    assert "0 new or changed" in again and again.startswith("checked 24 item(s)")
    invoke("import", str(DEMO / "pairs.jsonl"), "--db", str(db), "--name", "demo-pairs")
    assert table_counts(db) == {"demo-pairs": 12, "facts": 24}
    with open_store(db) as store:
        item = store.get_item("facts", "q01a")
    assert item is not None and item.meta == {"gold": "pass"} and item.reference == "42"


def test_import_uses_env_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("JUDGEKIT_DB", str(db))
    invoke("import", str(DEMO / "pairs.jsonl"), env={"JUDGEKIT_DB": str(db)})
    assert table_counts(db) == {"pairs": 12}
    assert resolve_db_path(None) == db.absolute()
    assert resolve_db_path(tmp_path / "x.db") == (tmp_path / "x.db").absolute()


def test_import_default_db_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEKIT_DB", raising=False)
    invoke("import", str(DEMO / "pairs.jsonl"))
    assert (tmp_path / "judgekit.db").exists()


def test_bad_line_leaves_store_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "j.db"
    invoke("import", str(DEMO / "pairs.jsonl"), "--db", str(db))
    data = tmp_path / "facts.jsonl"
    lines = (DEMO / "facts.jsonl").read_text(encoding="utf-8").splitlines()
    lines[11] = '{"id": "broken", "input": "q"}'
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err = run_main(capsys, "import", str(data), "--db", str(db))
    assert code == 2
    assert err == f"error: {data}:12: missing field 'response' (or 'response_a' and 'response_b')\n"
    assert table_counts(db) == {"pairs": 12}


def test_changed_item_needs_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "j.db"
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "input": "q", "response": "r"}) + "\n")
    invoke("import", str(data), "--db", str(db))
    data.write_text(
        json.dumps({"id": "a", "input": "q", "response": "changed"}) + "\n"
        + json.dumps({"id": "b", "input": "q", "response": "r"}) + "\n"
    )
    code, err = run_main(capsys, "import", str(data), "--db", str(db))
    assert code == 2 and "'a' already exists with different content" in err
    assert table_counts(db) == {"d": 1}
    out = invoke("import", str(data), "--db", str(db), "--replace")
    assert "2 new or changed" in out
    with open_store(db) as store:
        item = store.get_item("d", "a")
    assert item is not None and item.response == "changed"


def test_import_errors_for_missing_and_non_utf8_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "j.db"
    code, err = run_main(capsys, "import", str(tmp_path / "none.jsonl"), "--db", str(db))
    assert code == 2 and err.endswith("none.jsonl: no such file\n")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,input,response\n1,\xc3(,r\n")
    code, err = run_main(capsys, "import", str(bad), "--db", str(db))
    assert code == 2 and f"{bad}:2: not valid UTF-8" in err


# -- export ----------------------------------------------------------------------


def seed_judgments(db: Path) -> str:
    """Store two runs' judgments for the correctness rubric; returns its sha256."""
    rubric = load_rubric(CORRECTNESS)
    with open_store(db) as store:
        store.save_rubric(rubric)
        for run_id, dataset in (("run-1", "facts"), ("run-2", "other")):
            store.create_run(RunRecord(
                id=run_id, kind="judge", dataset=dataset, rubric_hash=rubric.sha256,
                model="m", base_url="http://127.0.0.1:9/v1", sampling={"temperature": 0.0},
                capabilities={}, judgekit_version="0.1.0", started_at="2026-01-01T00:00:00Z",
            ))
            for index, item_id in enumerate(("q01a", "q01b")):
                store.record_judgment(Judgment(
                    run_id=run_id, dataset=dataset, item_id=item_id, sample_index=0,
                    status="ok" if index == 0 else "parse_error",
                    label="pass" if index == 0 else None, score=None,
                    reasoning='said "42", right' if index == 0 else None,
                    raw_text='{"verdict": "pass"}\nline 2', model_requested="m",
                    model_returned="m-1", base_url="http://127.0.0.1:9/v1",
                    sampling={"temperature": 0.0, "seed": 0}, rubric_name=rubric.name,
                    rubric_version=rubric.version, rubric_hash=rubric.sha256,
                    cache_key=f"{run_id}-{item_id}", judgekit_version="0.1.0",
                    finish_reason="stop", prompt_tokens=10, completion_tokens=4,
                ))
    return rubric.sha256


def test_export_jsonl_with_provenance(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    sha = seed_judgments(db)
    out = invoke("export", "--rubric", CORRECTNESS, "--db", str(db), "--dataset", "facts")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [row["item_id"] for row in rows] == ["q01a", "q01b"]
    first = rows[0]
    assert first["rubric_hash"] == sha and first["rubric_name"] == "correctness"
    assert first["model_requested"] == "m" and first["model_returned"] == "m-1"
    assert first["base_url"] == "http://127.0.0.1:9/v1"
    assert first["sampling"] == {"temperature": 0.0, "seed": 0}
    assert first["label"] == "pass" and rows[1]["status"] == "parse_error"
    assert "exported 2 judgments" in out


def test_export_by_run_and_sha_to_csv_file(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    sha = seed_judgments(db)
    target = tmp_path / "out" / "judgments.csv"
    out = invoke("export", "-r", sha, "--db", str(db), "--run", "run-2", "--out", str(target))
    assert "exported 2 judgments" in out and "as csv" in out
    rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert [row["run_id"] for row in rows] == ["run-2", "run-2"]
    assert rows[0]["reasoning"] == 'said "42", right'
    assert rows[0]["raw_text"] == '{"verdict": "pass"}\nline 2'
    assert json.loads(rows[0]["sampling"]) == {"temperature": 0.0, "seed": 0}
    assert rows[1]["label"] == "" and rows[0]["imported"] == "false"
    assert [p.name for p in target.parent.iterdir()] == ["judgments.csv"]


def test_export_format_flag_and_unknown_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "j.db"
    seed_judgments(db)
    target = tmp_path / "all.txt"
    invoke("export", "-r", CORRECTNESS, "--db", str(db), "--format", "jsonl", "--out", str(target))
    assert len(target.read_text().splitlines()) == 4
    # a dataset the store does not hold is an error, not an empty export
    code, err = run_main(capsys, "export", "-r", CORRECTNESS, "--db", str(db),
                         "--dataset", "nope")
    assert code == 2 and "no dataset 'nope'" in err


def test_export_other_rubric_version_selects_nothing(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    seed_judgments(db)
    edited = tmp_path / "correctness.toml"
    edited.write_text(
        Path(CORRECTNESS).read_text(encoding="utf-8").replace('version = "1"', 'version = "2"')
    )
    out = invoke("export", "-r", str(edited), "--db", str(db))
    assert "exported 0 judgments" in out


def test_export_bad_rubric_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nversion = "1"\n[scale]\nkind = "binary"\n')
    code, err = run_main(capsys, "export", "-r", str(bad), "--db", str(tmp_path / "j.db"))
    assert code == 2 and err == f"error: {bad}: prompt: Field required\n"
