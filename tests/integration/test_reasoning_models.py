"""OpenAI's reasoning models as judges: live and by batch, against a server answering as
OpenAI documents for them (HTTP 400 ``unsupported_parameter`` / ``unsupported_value``).

The capability probe learns to send ``max_completion_tokens`` and to leave out a
non-default temperature and the seed; what was sent is each judgment's sampling
provenance. ``--max-completion-tokens``, ``--reasoning-effort`` and
``--extra-body`` reach the request; an answer whose budget went on reasoning is
``truncated`` with that reason.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from judgekit.clients.request import NOT_SENT, ParamSupport, sent_sampling
from judgekit.types import SamplingParams
from tests.support.batch_server import BatchServer
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, is_probe

N = 4


def items(tmp_path: Path) -> Path:
    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{i}", "input": f"What is {i}+1?",
                                        "response": str(i + 1), "reference": str(i + 1)}) + "\n"
                            for i in range(N)), encoding="utf-8")
    return path


def judge(server_url: str, data: Path, db: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("judge", "-r", "correctness", "--data", str(data), "--db", str(db),
                   "--base-url", server_url, "--model", "gpt-5-mini", "--no-progress", *extra)


def rows(db: Path) -> list[tuple[str, dict[str, Any], str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT status, sampling, error, cache_key FROM judgments "
                             "ORDER BY id").fetchall()
    return [(s, json.loads(p), e, k) for s, p, e, k in found]


def judge_bodies(server: OpenAIServer) -> list[dict[str, Any]]:
    return [b for b in server.requests if not is_probe(b)]


def test_a_reasoning_model_judges_with_what_it_accepts(tmp_path: Path) -> None:
    data, db = items(tmp_path), tmp_path / "j.db"
    with OpenAIServer(reasoning_model=True) as server:
        code, out, err = judge(server.base_url, data, db)
        assert code == 0, err
        assert "ok 4" in out
        bodies = judge_bodies(server)
        assert len(bodies) == N
        for body in bodies:
            assert body["max_completion_tokens"] == 512
            assert not {"max_tokens", "temperature", "seed", "logprobs"} & set(body)
            assert body["top_p"] == 1.0  # the default value is taken
        stored = rows(db)
        assert {s for s, *_ in stored} == {"ok"}
        sampling = stored[0][1]
        assert sampling == {"max_completion_tokens": 512, "temperature": NOT_SENT,
                            "seed": NOT_SENT, "top_p": 1.0}
        with sqlite3.connect(db) as conn:
            caps = json.loads(conn.execute("SELECT capabilities FROM capabilities").fetchone()[0])
        assert caps["token_param"] == "max_completion_tokens"
        assert caps["unsupported"] == ["seed", "temperature"] and caps["logprobs"] is False
        # a rerun asks nothing and stands for the same judgments
        before = server.request_count
        code, out, err = judge(server.base_url, data, db)
        assert code == 0 and server.request_count == before, err
        labels = tmp_path / "labels.jsonl"
        labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": "pass",
                                              "annotator": "a"}) + "\n" for i in range(N)))
        assert run_cli("labels", "import", str(labels), "-r", "correctness",
                       "--db", str(db))[0] == 0
        code, out, err = run_cli("report", "-r", "correctness", "--db", str(db))
        assert "temperature=not sent (unsupported)" in out, err
        assert "max_completion_tokens=512" in out


def test_the_same_judge_on_a_model_that_takes_everything_keeps_its_identity() -> None:
    sampling = SamplingParams()
    assert sent_sampling(sampling, ParamSupport()) == sampling.as_dict()
    assert sent_sampling(sampling, None) == sampling.as_dict()
    assert set(sampling.as_dict()) == {"temperature", "max_tokens", "top_p", "seed"}


def test_reasoning_effort_is_sent_only_where_accepted_and_keys_the_call(tmp_path: Path) -> None:
    data = items(tmp_path)
    with OpenAIServer(reasoning_model=True) as server:
        code, _, err = judge(server.base_url, data, tmp_path / "a.db", "--reasoning-effort",
                             "low")
        assert code == 0, err
        assert {b["reasoning_effort"] for b in judge_bodies(server)} == {"low"}
    with OpenAIServer(unsupported=("reasoning_effort",)) as plain:
        db = tmp_path / "b.db"
        code, _, err = judge(plain.base_url, data, db, "--reasoning-effort", "low")
        assert code == 0, err
        assert all("reasoning_effort" not in b for b in judge_bodies(plain))
        assert all(b["temperature"] == 0.0 and b["max_tokens"] == 512
                   for b in judge_bodies(plain))
        with_effort = rows(db)
        assert with_effort[0][1]["reasoning_effort"] == NOT_SENT
        assert judge(plain.base_url, data, db)[0] == 0  # without the flag: another call
        keys = {k for *_, k in rows(db)}
        assert len(keys) == 2 * N


def test_a_budget_spent_on_reasoning_is_truncated_not_a_parse_error(tmp_path: Path) -> None:
    data, db = items(tmp_path), tmp_path / "j.db"
    with OpenAIServer(reasoning_model=True, reasoning_tokens=64) as server:
        code, _out, err = judge(server.base_url, data, db, "--max-completion-tokens", "32")
        assert code == 0, err
        assert {b["max_completion_tokens"] for b in judge_bodies(server)} == {32}
    stored = rows(db)
    assert {s for s, *_ in stored} == {"truncated"}
    assert "no visible text" in (stored[0][2] or "") and "32 reasoning tokens" in stored[0][2]
    assert "--max-completion-tokens" in stored[0][2]


def test_extra_body_reaches_every_request_and_bad_json_is_refused(tmp_path: Path) -> None:
    data, db = items(tmp_path), tmp_path / "j.db"
    with OpenAIServer() as server:
        code, _, err = judge(server.base_url, data, db, "--extra-body",
                             '{"service_tier": "flex"}')
        assert code == 0, err
        assert {b["service_tier"] for b in server.requests} == {"flex"}
        for bad, says in (("{not json", "not JSON"), ("[1]", "JSON object"),
                          ('{"model": "x"}', "may not set model")):
            code, _, err = judge(server.base_url, data, tmp_path / "never.db",
                                 "--extra-body", bad)
            assert code == 2 and says in err and "Traceback" not in err
        assert not (tmp_path / "never.db").exists()


@pytest.mark.parametrize("probed", [True, False])
def test_batch_prepare_uses_the_live_capabilities(tmp_path: Path, probed: bool) -> None:
    data, db = items(tmp_path), tmp_path / "j.db"
    with BatchServer() as server:
        server.completions.reasoning_model = True
        if probed:  # one live call probes the model and stores what it takes
            assert judge(server.base_url, data, db, "--limit", "1")[0] == 0
        out = tmp_path / "req.jsonl"
        code, text, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                                  "--db", str(db), "--base-url", server.base_url,
                                  "--model", "gpt-5-mini", "--out", str(out))
        assert code == 0, err
        bodies = [json.loads(line)["body"] for line in out.read_text().splitlines()]
        if not probed:
            assert all(b["max_tokens"] == 512 for b in bodies)
            assert "no probed capabilities" in text
            return
        assert len(bodies) == N - 1
        assert all("max_tokens" not in b and "temperature" not in b and "seed" not in b
                   for b in bodies)
        assert run_cli("batch", "submit", str(out), "--db", str(db))[0] == 0
        [job] = server.batches
        for _ in range(2):
            run_cli("batch", "status", job, "--db", str(db))
        code, text, err = run_cli("batch", "collect", job, "--db", str(db))
        assert code == 0 and f"{N - 1} stored (ok {N - 1})" in text, err
        stored = rows(db)
        assert len({json.dumps(p, sort_keys=True) for _, p, *_ in stored}) == 1  # one judge
        code, text, err = judge(server.base_url, data, db)
        assert code == 0 and "4 cached" in text, err
        assert len(rows(db)) == len(stored)


def test_a_parameter_no_probe_tried_is_probed_before_it_is_sent(tmp_path: Path) -> None:
    data, db = items(tmp_path), tmp_path / "j.db"
    with OpenAIServer(reasoning_model=True) as server:
        assert judge(server.base_url, data, db, "--limit", "1")[0] == 0
        probes = len(server.probe_requests())
        assert judge(server.base_url, data, db, "--limit", "2")[0] == 0
        assert len(server.probe_requests()) == probes  # nothing new to learn
        code, _, err = judge(server.base_url, data, db, "--reasoning-effort", "high")
        assert code == 0, err
        assert len(server.probe_requests()) > probes
        assert all(b["reasoning_effort"] == "high" for b in judge_bodies(server)[-N:])
    with sqlite3.connect(db) as conn:
        caps = json.loads(conn.execute("SELECT capabilities FROM capabilities").fetchone()[0])
    assert "reasoning_effort" in caps["accepted"]


def test_a_server_that_names_the_parameter_only_in_its_message(tmp_path: Path) -> None:
    """A gateway that answers 400 "temperature is not supported" (no param field, no quotes)."""
    data, db = items(tmp_path), tmp_path / "j.db"
    with OpenAIServer() as server:
        server.inject("bad_request", times=1, message="temperature is not supported here")
        code, _, err = judge(server.base_url, data, db)
        assert code == 0, err
        assert all("temperature" not in b for b in judge_bodies(server))
    assert rows(db)[0][1]["temperature"] == NOT_SENT
