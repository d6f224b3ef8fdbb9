"""``--endpoint-name``: one model behind several URLs is one judge and one cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.errors import InputError
from judgekit.rubrics import load_rubric
from judgekit.store import open_store
from tests.support.openai_server import OpenAIServer

RUBRIC = "rubrics/correctness.toml"


def judge(data: Path, db: Path, url: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["judge", "--rubric", RUBRIC, "--data", str(data),
                                      "--db", str(db), "--base-url", url, "--model", "m",
                                      "--no-progress", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_replicas_with_one_name_share_the_cache_and_are_one_judge(tmp_path: Path) -> None:
    data = tmp_path / "facts.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{n}", "input": f"{n}+1?", "response": str(n + 1),
                                        "reference": str(n + 1)}) + "\n" for n in range(4)))
    db = tmp_path / "j.db"
    with OpenAIServer() as first, OpenAIServer() as second:
        assert first.base_url != second.base_url
        judge(data, db, first.base_url, "--endpoint-name", "prod-m")
        assert len(first.judge_requests()) == 4
        out = judge(data, db, second.base_url, "--endpoint-name", "prod-m")
        assert "4 cached, 0 judged now" in out
        assert second.judge_requests() == []
        # Without the name, the second URL is another judge and judges everything again.
        judge(data, db, second.base_url)
        assert len(second.judge_requests()) == 4
    with open_store(db) as store:
        rubric = load_rubric(RUBRIC)
        rows = store.judgments(rubric_hash=rubric.sha256)
        assert {r.base_url for r in rows} == {"name:prod-m", second.base_url.rstrip("/")}
        named = [r for r in rows if r.base_url == "name:prod-m"]
        assert len(named) == 4
        assert all(first.base_url.split("//")[1] not in json.dumps(r.sampling) for r in named)


def test_bad_names_are_refused() -> None:
    from judgekit.clients.spec import named_endpoint

    assert named_endpoint(" gpt-4o@eu ") == "name:gpt-4o@eu"
    for bad in ("", "  ", "two words", "tab\there", "esc\x1b"):
        with pytest.raises(InputError, match="--endpoint-name"):
            named_endpoint(bad)
