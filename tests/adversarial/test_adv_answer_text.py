"""Any answer text becomes a stored outcome, and the run goes on.

A judge's answer is valid JSON that may still hold text SQLite and every
encoder refuse: an escaped lone surrogate (``"\\ud800"``). Live (``judge``, over
real HTTP to the test server) and in batch (``batch collect``, from the Batch
API test server), such an answer is stored with its text made safe (the
surrogate kept visible as the six characters ``\\ud800``) or as a
``parse_error`` with the reason, and every other item is judged.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.batch_server import BatchServer
from tests.support.cli import run_cli
from tests.support.openai_server import OpenAIServer, Reply, is_probe

N = 8
LONE = "\ud800"


def _item_of(body: dict[str, Any]) -> int:
    text = body["messages"][-1]["content"]
    for index in range(N):
        if f"What is {index}+1?" in text:
            return index
    return -1


def odd_responder(body: dict[str, Any]) -> Reply:
    """Items 1..5 answer with a lone surrogate in a different place each; the rest plainly."""
    if is_probe(body):
        return Reply(json.dumps({"reasoning": "ok", "verdict": "pass"}))
    index = _item_of(body)
    if index == 1:  # in the reasoning, escaped in the HTTP body: a surrogate in the content
        return Reply('{"reasoning": "odd ' + LONE + ' text", "verdict": "pass"}')
    if index == 2:  # escaped twice: the content's own JSON decodes to a surrogate
        return Reply('{"reasoning": "odd \\ud800 text", "verdict": "pass"}')
    if index == 3:  # the verdict itself
        return Reply('{"reasoning": "r", "verdict": "pa' + LONE + 'ss"}')
    if index == 4:  # free text, no JSON at all
        return Reply("I cannot decide " + LONE + LONE)
    if index == 5:  # the model name the server reports
        return Reply('{"reasoning": "r", "verdict": "pass"}', model="m" + LONE)
    return Reply('{"reasoning": "fine", "verdict": "pass"}')


def write_items(path: Path) -> Path:
    path.write_text("".join(
        json.dumps({"id": f"i{i}", "input": f"What is {i}+1?", "response": str(i + 1),
                    "reference": str(i + 1)}) + "\n" for i in range(N)), encoding="utf-8")
    return path


def stored(db: Path) -> dict[str, tuple[str, str | None, str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT item_id, status, raw_text, reasoning, model_returned "
                            "FROM judgments ORDER BY id").fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def check(rows: dict[str, tuple[str, str | None, str | None, str | None]]) -> None:
    assert sorted(rows) == [f"i{i}" for i in range(N)]
    assert rows["i1"][0] == "ok"
    assert "\\ud800" in (rows["i1"][1] or "") and "\\ud800" in (rows["i1"][2] or "")
    assert rows["i2"][0] == "ok" and "\\ud800" in (rows["i2"][2] or "")
    assert rows["i3"][0] == "parse_error"
    assert rows["i4"][0] == "parse_error" and "\\ud800" in (rows["i4"][1] or "")
    assert rows["i5"][0] == "ok" and rows["i5"][3] == "m\\ud800"
    assert all(rows[f"i{i}"][0] == "ok" for i in (0, 6, 7))
    for _status, raw, reasoning, model in rows.values():
        for text in (raw, reasoning, model):
            assert text is None or "\ud800" not in text


def test_judge_stores_every_answer_and_reruns_from_the_cache(tmp_path: Path) -> None:
    data = write_items(tmp_path / "facts.jsonl")
    db = tmp_path / "j.db"
    with OpenAIServer(odd_responder) as server:
        args = ["judge", "-r", "correctness", "--data", str(data), "--db", str(db),
                "--base-url", server.base_url, "--model", "m", "--no-progress"]
        code, _out, err = run_cli(*args)
        assert code == 0, err
        assert "Traceback" not in err
        check(stored(db))
        before = len(server.judge_requests())
        code, _out, err = run_cli(*args)
        assert code == 0, err
        assert len(server.judge_requests()) == before  # every answer is cached, none re-asked
        code, _out, err = run_cli("runs", "--db", str(db))
        assert code == 0, err


def test_batch_collect_stores_every_line(tmp_path: Path) -> None:
    data = write_items(tmp_path / "facts.jsonl")
    db = tmp_path / "j.db"
    with BatchServer(odd_responder) as server:
        code, out, err = run_cli("batch", "prepare", "-r", "correctness", "--data", str(data),
                                 "--db", str(db), "--base-url", server.base_url, "--model",
                                 "m", "--out", str(tmp_path / "req.jsonl"))
        assert code == 0, err
        code, out, err = run_cli("batch", "submit", str(tmp_path / "req.jsonl"), "--db", str(db))
        assert code == 0, err
        [job] = list(server.batches)
        for _ in range(2):
            assert run_cli("batch", "status", job, "--db", str(db))[0] == 0
        code, out, err = run_cli("batch", "collect", job, "--db", str(db))
        assert code == 0, err
        assert f"{N} line(s) read: {N} stored" in out
    check(stored(db))


def test_a_surrogate_logprob_token_gives_no_confidence_not_a_crash() -> None:
    from judgekit.clients.confidence import verdict_confidence
    from judgekit.rubrics import load_rubric

    scale = load_rubric("correctness").scale
    text = '{"reasoning": "x", "verdict": "pass"}'
    tokens = [{"token": LONE, "logprob": -0.1, "top_logprobs": []},
              {"token": text, "logprob": -0.1, "top_logprobs": []}]
    assert verdict_confidence(text, {"content": tokens}, scale, "pass") is None


def test_an_output_line_that_is_not_utf8_is_named_by_its_number(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with OpenAIServer() as server:  # a store to collect into
        assert run_cli("judge", "-r", "correctness", "--data", str(write_items(
            tmp_path / "facts.jsonl")), "--db", str(db), "--base-url", server.base_url,
            "--model", "m", "--no-progress", "--limit", "1")[0] == 0
    good = json.dumps({"id": "r1", "custom_id": "k1", "response": {"status_code": 200,
                       "body": {"choices": []}}, "error": None}).encode()
    output = tmp_path / "out.jsonl"
    output.write_bytes(good + b"\n" + good.replace(b"r1", b"r\xed\xa0\x80") + b"\n")
    code, _, err = run_cli("batch", "collect", "--output", str(output), "--db", str(db))
    assert code == 2 and f"{output}:2: not UTF-8 text" in err


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=3),
    max_leaves=8)


def _field(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(valid, _JSON)


_COMPLETIONS = st.fixed_dictionaries({
    "choices": _field(st.lists(st.fixed_dictionaries({
        "message": _field(st.fixed_dictionaries({"content": _field(st.text(max_size=40)),
                                                 "refusal": _field(st.none())})),
        "finish_reason": _field(st.sampled_from(["stop", "length", "content_filter"])),
        "logprobs": _field(st.fixed_dictionaries({"content": _field(st.lists(
            st.fixed_dictionaries({"token": _field(st.text(max_size=5)),
                                   "logprob": _field(st.floats(max_value=0)),
                                   "bytes": _field(st.lists(st.integers(0, 300)))}),
            max_size=3))})),
    }), min_size=1, max_size=2)),
    "usage": _field(st.fixed_dictionaries({
        "prompt_tokens": _field(st.integers(0, 99)),
        "completion_tokens_details": _field(st.fixed_dictionaries(
            {"reasoning_tokens": _field(st.integers(0, 99))}))})),
    "model": _field(st.text(max_size=10)),
})


@settings(max_examples=400, deadline=None)
@given(_COMPLETIONS)
def test_any_answer_shape_is_an_outcome_never_a_traceback(completion: dict[str, Any]) -> None:
    from judgekit.clients.openai_client import completion_result
    from judgekit.judging.batch.lines import line_result, parse_output_line
    from judgekit.rubrics import load_rubric

    scale = load_rubric("correctness").scale
    live = completion_result(completion, scale, structured=True)
    line = parse_output_line(json.dumps({"custom_id": "k", "error": None, "response": {
        "status_code": 200, "body": completion}}), "out.jsonl:1")
    batch = line_result(line, scale, structured=True)
    assert live.status == batch.status
    assert live.status in ("ok", "parse_error", "refusal", "truncated", "api_error")
