"""A key echoed by the endpoint, or written into its URL, is stored, exported and shown as ***."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.clients import JudgeSpec
from judgekit.errors import InputError
from tests.adversarial.conftest import write_items
from tests.support.hostile_server import HostileServer

KEY = "sk-echo-Secret-Key-0123456789abcdef"
PATH_KEY = "AbCdEf0123456789GhIjKlMnOp"
PARAM_KEY = "param-secret-4711"


def _run(*args: str, env: dict[str, str] | None = None, codes: tuple[int, ...] = (0,)) -> str:
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code in codes, result.output
    return result.output


@pytest.mark.parametrize("path", [f"/{PATH_KEY}/v1", f"/v1;k={PARAM_KEY}"])
def test_echoed_and_url_secrets_never_reach_store_exports_or_output(
    hostile: HostileServer, tmp_path: Path, path: str
) -> None:
    hostile.mode = "echo_key"
    data = write_items(tmp_path / "items.jsonl", 3)
    db = tmp_path / "j.db"
    url = hostile.origin + path
    out = _run("judge", "--rubric", "rubrics/correctness.toml", "--data", str(data),
               "--db", str(db), "--base-url", url, "--model", "m", "--api-key-env", "K",
               env={"K": KEY})
    assert "ok 3" in out
    out += _run("export", "--db", str(db), "-r", "rubrics/correctness.toml", "--format", "jsonl")
    out += _run("export", "--db", str(db), "-r", "rubrics/correctness.toml", "--format", "csv")
    out += _run("runs", "--db", str(db))
    out += _run("report", "--db", str(db), "--rubric", "rubrics/correctness.toml",
                "--format", "json", codes=(0, 3))  # 3: no labels yet
    secrets = (KEY, PATH_KEY, PARAM_KEY)
    assert "***" in out  # the echoed key was there, masked
    for secret in secrets:
        assert secret not in out
        for file in tmp_path.iterdir():
            assert secret.encode() not in file.read_bytes(), (secret, file.name)


def test_a_key_in_the_query_is_refused_even_behind_a_semicolon() -> None:
    for url in (f"http://h/v1?api-key={KEY}", f"http://h/v1?x=1;api-key={KEY}"):
        with pytest.raises(InputError, match="carries credentials") as info:
            JudgeSpec(base_url=url, model="m")
        assert KEY not in str(info.value)


def test_a_key_in_the_path_never_reaches_the_logs(
    hostile: HostileServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from judgekit.judging.runner import run_judgments
    from judgekit.rubrics import load_rubric
    from judgekit.store import open_store
    from tests.adversarial.conftest import make_items

    caplog.set_level(logging.DEBUG)
    hostile.mode = "echo_key"
    spec = JudgeSpec(base_url=f"{hostile.origin}/{PATH_KEY}/v1", model="m", api_key=KEY)
    with open_store(tmp_path / "j.db") as store:
        summary = run_judgments(store, load_rubric("rubrics/correctness.toml"), make_items(2),
                                spec, dataset="d")
    assert summary.counts == {"ok": 2}
    assert "HTTP Request: POST" in caplog.text  # the HTTP stack did log its requests
    assert PATH_KEY not in caplog.text and KEY not in caplog.text
    assert PATH_KEY not in summary.format() and "/***/v1" in summary.base_url
