"""`judgekit runs` lists what a store holds; `judgekit rubric` checks and previews rubrics."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judgekit.cli.main import cli
from tests.support.openai_server import OpenAIServer

REPO = Path(__file__).resolve().parents[2]
FACTS = REPO / "judgekit" / "data" / "demo" / "facts.jsonl"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_runs_lists_judge_runs_with_counts(openai_server: OpenAIServer, tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    code, _ = invoke("judge", "-r", "correctness", "--data", str(FACTS), "--limit", "3",
                     "--db", db, "--base-url", openai_server.base_url, "--model", "m1")
    assert code == 0
    code, _ = invoke("judge", "-r", "correctness", "--data", str(FACTS), "--limit", "3",
                     "--db", db, "--base-url", openai_server.base_url, "--model", "m1")
    assert code == 0
    code, out = invoke("runs", "--db", db, "--format", "json")
    assert code == 0
    runs = json.loads(out)
    assert [r["kind"] for r in runs] == ["judge", "judge"]
    assert runs[0]["judged"] == 3 and runs[0]["cached"] == 0
    assert runs[1]["judged"] == 0 and runs[1]["cached"] == 3
    assert runs[0]["rubric"] == "correctness v1" and runs[0]["model"] == "m1"
    code, text = invoke("runs", "--db", db)
    assert runs[0]["id"] in text and "2 run(s)" in text
    code, out = invoke("runs", "--db", db, "--rubric", "correctness", "--kind", "import")
    assert code == 0 and "no runs" in out
    missing = CliRunner().invoke(cli, ["runs", "--db", db, "--rubric", "preference"])
    assert missing.exit_code != 0 and "no rubric 'preference'" in str(missing.exception)


def test_runs_without_a_store_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["runs", "--db", str(tmp_path / "none.db")])
    assert result.exit_code != 0
    assert "no store at" in str(result.exception)
    assert not (tmp_path / "none.db").exists()


def test_rubric_check_names_the_bad_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nversion = "1"\ndescription = "d"\n[scale]\nkind = "likert"\n'
                   '[prompt]\nsystem = "s"\nuser = "{input}"\n', encoding="utf-8")
    code, out = invoke("rubric", "check", "correctness", "helpfulness", str(bad))
    assert code == 1
    assert out.count("ok ") == 2
    assert "invalid" in out and "scale.kind" in out


def test_rubric_show_renders_the_prompt_for_an_item() -> None:
    code, out = invoke("rubric", "show", "correctness", "--data", str(FACTS), "--item", "q01b",
                       "--format", "json")
    assert code == 0
    shown = json.loads(out)
    user = next(m["content"] for m in shown["messages"] if m["role"] == "user")
    assert "17 + 25 = 32." in user and "42" in user
    assert shown["verdict_schema"]["properties"]["verdict"]["enum"] == ["pass", "fail"]
    code, text = invoke("rubric", "list")
    assert code == 0 and "preference" in text and "safety" in text
