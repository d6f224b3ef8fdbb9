"""Request bodies over real HTTP on 127.0.0.1: types, ranges, surrogates, echoes, no 500s.

Every case here used to be accepted wrongly or answered 500: a lone UTF-16
surrogate (valid JSON, not text), negative or NaN ``seconds``, ``flagged: "yes"``,
a numeric annotator, a 1 MB name echoed back whole. A property test then throws
arbitrary JSON bodies at every route that takes one, and no answer may be a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgekit.store import open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

N_ITEMS = 20
Served = tuple[Service, dict[str, str], Path]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("validation")
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", N_ITEMS)
        record_judgments(store, rub, [judgment(rub, "d", it.id, "pass") for it in items])
        record_judgments(store, rub, [judgment(rub, "d", it.id, "fail", model="other-model",
                                               run_id="run-2") for it in items])
        tokens = {role: token(store, f"{role}-user", role) for role in ("read", "write")}
        tokens["ana"] = token(store, "ana", "annotate")
        tokens["slash"] = token(store, "a/b", "annotate")
    assign_queues(db, rub.sha256, "ana,a/b")
    with running_service(db, tmp) as service:
        yield service, tokens, db


def raw_post(service: Service, path: str, body: str | bytes, token: str) -> httpx.Response:
    """POST text as it is (a ``\\ud800`` escape must reach the server unchanged)."""
    return httpx.post(service.url + path, content=body, timeout=60, headers={
        "Authorization": f"Bearer {token}", "content-type": "application/json"})


def label_count(db: Path) -> int:
    with open_store(db) as store:
        return int(store._one("SELECT COUNT(*) FROM labels")[0])  # type: ignore[index]


def test_a_lone_surrogate_is_422_naming_the_record_and_field(served: Served) -> None:
    service, tokens, db = served
    before = label_count(db)
    body = ('{"rubric": "correct", "labels": [{"item_id": "item-000", "label": "pass", '
            '"annotator": "x"}, {"item_id": "item-001", "label": "pass", "annotator": "x", '
            '"note": "bad \\ud800 text"}]}')
    response = raw_post(service, "/api/v1/labels", body, tokens["write"])
    assert response.status_code == 422, response.text
    assert response.json()["detail"] == [
        "labels:2: field 'note' holds a lone surrogate (e.g. \\ud800), which is not valid "
        "Unicode text"]
    verdicts = ('{"rubric": "correct", "judgments": [{"item_id": "item-000", "judge": "j\\udc00",'
                ' "label": "pass"}]}')
    response = raw_post(service, "/api/v1/judgments", verdicts, tokens["write"])
    assert response.status_code == 422, response.text
    assert "judgments:1: field 'judge' holds a lone surrogate" in response.text
    unknown = raw_post(service, "/api/v1/labels",
                       '{"rubric": "c\\ud800", "labels": []}', tokens["write"])
    assert unknown.status_code == 422 and "lone surrogate" in unknown.text
    assert label_count(db) == before


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("seconds", "-1", "labels:1: field 'seconds' must be at least 0.0, got -1"),
    ("seconds", "NaN", "labels:1: field 'seconds' must be a finite number, got nan"),
    ("seconds", "1e999", "labels:1: field 'seconds' must be a finite number, got inf"),
    ("seconds", '"5"', "labels:1: field 'seconds' must be a finite number, got '5'"),
    ("flagged", '"yes"', "labels:1: field 'flagged' must be true or false, got 'yes'"),
    ("blind", "1", "labels:1: field 'blind' must be true or false, got 1"),
    ("annotator", "12345", "labels:1: field 'annotator' must be a string, got number 12345"),
    ("note", json.dumps("n" * 10_001), "field 'note' is longer than 10,000 characters (10,001)"),
    ("annotator", json.dumps("a" * 201), "field 'annotator' is longer than 200 characters"),
])
def test_bad_types_and_ranges_are_refused(served: Served, field: str, value: str,
                                          expected: str) -> None:
    service, tokens, db = served
    before = label_count(db)
    record = {"item_id": "item-000", "label": "pass", "annotator": "x"}
    text = json.dumps({"rubric": "correct", "labels": [{**record, field: "@"}]})
    response = raw_post(service, "/api/v1/labels", text.replace('"@"', value), tokens["write"])
    assert response.status_code == 422, response.text
    assert any(expected in line for line in response.json()["detail"]), response.text
    assert label_count(db) == before


def test_echoed_values_are_cut(served: Served) -> None:
    service, tokens, _ = served
    huge = "z" * 1_000_000
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "item-000", "label": "pass", "annotator": huge}]}, tokens["ana"])
    assert response.status_code == 422
    assert len(response.content) < 2_000, len(response.content)
    response = service.post("/api/v1/labels", {"rubric": huge, "labels": []}, tokens["write"])
    assert response.status_code == 422 and len(response.content) < 2_000
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "x" * 900, "label": "pass", "annotator": "x"}]}, tokens["write"])
    assert response.status_code == 422 and "unknown item id" in response.text
    assert len(response.content) < 2_000


def test_gate_names_query_parameters(served: Served) -> None:
    service, tokens, _ = served
    response = service.get("/api/v1/gate?rubric=correct", tokens["read"])
    assert response.status_code == 422
    assert "model=NAME" in response.text and "judge_run=RUN_ID" in response.text
    assert "--model" not in response.text and "--judge-run" not in response.text


def test_static_files_need_a_token(served: Served) -> None:
    service, tokens, _ = served
    assert service.get("/static/textual/js/textual.js").status_code == 401
    assert service.get("/static/textual/js/textual.js", tokens["ana"]).status_code == 200
    assert service.get("/static/textual/../app.py", tokens["ana"]).status_code == 404


def test_an_annotator_with_a_slash_in_the_name_opens_the_app(served: Served) -> None:
    from websockets.sync.client import connect

    service, tokens, _ = served
    page = service.get("/annotate", tokens["slash"])
    assert page.status_code == 200, page.text
    url = page.text.split('data-session-websocket-url="')[1].split('"')[0]
    with connect(url + "?width=80&height=24", origin=service.url,
                 additional_headers={"Cookie": f"judgekit_token={tokens['slash']}"}) as ws:
        first = ws.recv(timeout=60)
        assert first


# -- no 500 for any body ------------------------------------------------------------------

_TEXT = st.text(st.characters(codec=None, categories=None), max_size=12)
_SCALAR = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats() | _TEXT | \
    st.sampled_from(["item-000", "item-001", "pass", "fail", "x", "ana", "correct", "adjudicate"])
_JSON = st.recursive(_SCALAR, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
    _TEXT, kids, max_size=3), max_leaves=8)
_RECORD = st.dictionaries(
    st.sampled_from(["item_id", "label", "annotator", "note", "flagged", "blind", "seconds",
                     "dataset", "created_at", "source", "judge", "score", "sample", "order",
                     "orientation", "status", "raw", "reasoning", "bogus"]), _JSON, max_size=6)
_BODY = _JSON | st.fixed_dictionaries({
    "rubric": st.sampled_from(["correct", "nope"]) | _JSON,
}, optional={"labels": st.lists(_RECORD, max_size=3) | _JSON,
             "judgments": st.lists(_RECORD, max_size=3) | _JSON,
             "dataset": st.sampled_from(["d", "e"]) | _JSON, "judge": _JSON})


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=_BODY, route=st.sampled_from(["/api/v1/labels", "/api/v1/judgments"]),
       who=st.sampled_from(["write", "ana", "read"]))
def test_no_body_is_a_500(served: Served, body: Any, route: str, who: str) -> None:
    service, tokens, _ = served
    text = json.dumps(body, ensure_ascii=True)  # keeps lone surrogates as \\udXXX escapes
    response = raw_post(service, route, text, tokens[who])
    assert response.status_code < 500, (response.status_code, text, response.text)
    assert response.status_code in (200, 403, 404, 413, 422), (response.status_code, text)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(params=st.dictionaries(st.sampled_from(["rubric", "dataset", "model", "judge_run",
                                               "min_agreement", "resamples"]),
                              st.text(max_size=10) | st.sampled_from(["correct", "0.5", "200"]),
                              max_size=4),
       route=st.sampled_from(["/api/v1/gate", "/api/v1/estimate", "/api/v1/runs",
                              "/api/v1/queues", "/report/correct"]))
def test_no_query_is_a_500(served: Served, params: dict[str, str], route: str) -> None:
    service, tokens, _ = served
    response = httpx.get(service.url + route, params=params, timeout=120,
                         headers={"Authorization": f"Bearer {tokens['read']}"})
    assert response.status_code < 500, (route, params, response.text)


def test_the_log_has_no_traceback(served: Served) -> None:
    service, _, _ = served
    log = service.log()
    assert "Traceback" not in log and "Exception in ASGI" not in log, log[-3000:]
