"""``judgekit serve`` over real HTTP on 127.0.0.1: auth, every endpoint, its errors, the gate."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.store import Store, open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

N_ITEMS = 30


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, str],
                                                                        Path]]:
    """A store with 30 binary items, a judge's verdicts, three assigned queues, and tokens."""
    tmp = tmp_path_factory.mktemp("serve")
    db = tmp / "judgekit.db"
    store = open_store(db)
    rub, items = seed_store(store, "binary", N_ITEMS)
    record_judgments(store, rub, [
        judgment(rub, "d", item.id, "pass" if i % 3 else "fail") for i, item in enumerate(items)
    ])
    tokens = {role: token(store, f"{role}-user", role) for role in ("read", "write", "admin")}
    tokens.update(ana=token(store, "ana", "annotate"), bo=token(store, "bo", "annotate"))
    store.close()
    assign_queues(db, rub.sha256, "ana,bo", "--overlap", "0.2")
    with running_service(db, tmp) as service:
        yield service, tokens, db


def label_count(db: Path) -> int:
    with open_store(db) as store:
        return int(store._one("SELECT COUNT(*) FROM labels")[0])  # type: ignore[index]


def queue_items(db: Path, annotator: str) -> list[str]:
    with open_store(db) as store:
        name = next(n for n in store.list_queues() if n.endswith(f":{annotator}"))
        found = store.get_queue(name)
        assert found is not None
        return [entry.item_id for entry in found[1]]


ENDPOINTS = ["/api/v1/rubrics", "/api/v1/datasets", "/api/v1/runs", "/api/v1/queues",
             "/api/v1/gate?rubric=correct", "/api/v1/report?rubric=correct",
             "/api/v1/estimate?rubric=correct",
             "/api/v1/openapi.json", "/report/correct"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_every_endpoint_needs_a_token(served: tuple[Service, dict[str, str], Path],
                                      path: str) -> None:
    service, _, _ = served
    missing = service.get(path)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert service.get(path, "jk_not-a-real-token").status_code == 401


def test_roles_are_enforced(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, _ = served
    assert service.get("/api/v1/rubrics", tokens["ana"]).status_code == 403
    assert service.get("/api/v1/report?rubric=correct", tokens["ana"]).status_code == 403
    body = {"rubric": "correct", "labels": [{"item_id": "item-000", "label": "pass",
                                             "annotator": "x"}]}
    assert service.post("/api/v1/labels", body, tokens["read"]).status_code == 403
    judged = {"rubric": "correct", "judgments": [{"item_id": "item-000", "label": "pass",
                                                  "judge": "j"}]}
    assert service.post("/api/v1/judgments", judged, tokens["ana"]).status_code == 403
    assert service.get("/api/v1/rubrics", tokens["admin"]).status_code == 200


def test_read_endpoints(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, _ = served
    rubrics = service.get("/api/v1/rubrics", tokens["read"]).json()
    assert [r["name"] for r in rubrics] == ["correct"]
    assert service.get("/api/v1/datasets", tokens["read"]).json() == [
        {"name": "d", "items": N_ITEMS}]
    runs = service.get("/api/v1/runs", tokens["read"]).json()
    assert [r["id"] for r in runs] == ["run-1"]
    assert service.get("/api/v1/rubrics?x=1", tokens["read"]).status_code == 200
    assert service.get("/api/v1/runs?rubric=nope", tokens["read"]).status_code == 404
    for path in ("report", "estimate", "gate"):  # the run is checked as `report --judge-run`
        missing = service.get(f"/api/v1/{path}?rubric=correct&judge_run=nope", tokens["read"])
        assert missing.status_code == 404
        assert missing.json() == {"detail": "no run 'nope' in the store"}
    spec = service.get("/api/v1/openapi.json", tokens["read"]).json()
    assert {"/api/v1/labels", "/api/v1/judgments", "/api/v1/gate"} <= set(spec["paths"])
    html = service.get("/report/correct", tokens["read"])
    assert html.status_code == 200 and "<html" in html.text.lower()


def test_annotator_sees_only_their_queue(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, _ = served
    mine = service.get("/api/v1/queues", tokens["ana"]).json()
    assert [row["annotator"] for row in mine] == ["ana"]
    everyone = service.get("/api/v1/queues", tokens["read"]).json()
    assert sorted(row["annotator"] for row in everyone) == ["ana", "bo"]
    assert sum(row["total"] for row in everyone) == N_ITEMS + round(0.2 * N_ITEMS)


def test_bad_labels_are_422_naming_the_field_and_store_nothing(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    service, tokens, db = served
    before = label_count(db)
    cases = [
        ({"rubric": "correct", "labels": [{"item_id": "item-000", "label": "maybe",
                                           "annotator": "x"}]}, "'maybe' is not on"),
        ({"rubric": "correct", "labels": [{"item_id": "nope", "label": "pass",
                                           "annotator": "x"}]}, "unknown item id 'nope'"),
        ({"rubric": "correct", "labels": [{"item_id": "item-000", "label": "pass"}]},
         "missing field 'annotator'"),
        ({"rubric": "correct", "labels": [{"item_id": "item-000", "label": "pass",
                                           "annotator": "x", "colour": 1}]},
         "unknown field 'colour'"),
        ({"rubric": "correct", "labels": "x"}, "labels"),
        ({"labels": []}, "rubric"),
    ]
    for body, expected in cases:
        response = service.post("/api/v1/labels", body, tokens["write"])
        assert response.status_code == 422, body
        assert expected in json.dumps(response.json()), (body, response.json())
    # one bad record of two: nothing of either is stored
    mixed = {"rubric": "correct", "labels": [
        {"item_id": "item-000", "label": "pass", "annotator": "x"},
        {"item_id": "item-001", "label": "bogus", "annotator": "x"}]}
    response = service.post("/api/v1/labels", mixed, tokens["write"])
    assert response.status_code == 422
    assert "labels:2" in json.dumps(response.json())
    bad_json = service.get("/api/v1/rubrics", tokens["write"])  # warm
    assert bad_json.status_code == 200
    raw = __import__("httpx2").post(service.url + "/api/v1/labels", content=b"{not json",
                                    headers={"Authorization": f"Bearer {tokens['write']}",
                                             "content-type": "application/json"})
    assert raw.status_code == 422
    assert label_count(db) == before


def test_annotator_labels_as_themselves_only_in_their_queue(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    service, tokens, db = served
    mine, theirs = queue_items(db, "ana"), queue_items(db, "bo")
    only_bo = next(i for i in theirs if i not in mine)
    before = label_count(db)
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": only_bo, "label": "pass"}]}, tokens["ana"])
    assert response.status_code == 422 and "not in a queue assigned to ana" in response.text
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": mine[0], "label": "pass", "annotator": "bo"}]}, tokens["ana"])
    assert response.status_code == 422 and "your own name" in response.text
    assert label_count(db) == before
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": mine[0], "label": "fail", "note": "api"}]}, tokens["ana"])
    assert response.status_code == 200, response.text
    with open_store(db) as store:
        labels = [lb for lb in store.latest_labels(_sha(store)) if lb.annotator == "ana"]
    assert [(lb.item_id, lb.label, lb.blind) for lb in labels] == [(mine[0], "fail", True)]
    progress = service.get("/api/v1/queues", tokens["ana"]).json()[0]
    assert (progress["labeled"], progress["remaining"]) == (1, progress["total"] - 1)


def _sha(store: Store) -> str:
    return str(store.list_rubrics()[0]["sha256"])


def test_post_judgments_all_or_nothing(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, db = served
    bad = {"rubric": "correct", "judgments": [
        {"item_id": "item-000", "judge": "other", "label": "pass"},
        {"item_id": "item-001", "judge": "other", "label": "excellent"}]}
    response = service.post("/api/v1/judgments", bad, tokens["write"])
    assert response.status_code == 422 and "judgments:2" in response.text
    with open_store(db) as store:
        assert store.count_judgments() == N_ITEMS
    good = {"rubric": "correct", "judgments": [
        {"item_id": "item-000", "judge": "other", "label": "pass"},
        {"item_id": "item-001", "judge": "other", "label": "fail"}]}
    response = service.post("/api/v1/judgments", good, tokens["write"])
    assert response.status_code == 200 and response.json()["added"] == 2
    again = service.post("/api/v1/judgments", good, tokens["write"])
    assert again.json() == {"added": 0, "unchanged": 2}


def test_gate_matches_the_report_exit_code(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, db = served
    # label 12 items like the judge, by two people through the API
    mine = queue_items(db, "ana")[:12]
    labels = [{"item_id": i, "label": "pass" if int(i[-3:]) % 3 else "fail"} for i in mine]
    assert service.post("/api/v1/labels", {"rubric": "correct", "labels": labels},
                        tokens["ana"]).status_code == 200
    gate = service.get("/api/v1/gate?rubric=correct&model=judge-model", tokens["read"]).json()
    cli_run = subprocess.run(
        [sys.executable, "-m", "judgekit", "report", "--db", str(db), "--rubric",
         _sha_of(db), "--model", "judge-model", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert gate["exit_code"] == cli_run.returncode
    assert gate["decision"] == json.loads(cli_run.stdout)["verdict"]["decision"]
    report = service.get("/api/v1/report?rubric=correct&model=judge-model", tokens["read"])
    assert report.json()["verdict"]["decision"] == gate["decision"]
    # one line per reason, the same as every report format prints under the decision
    assert gate["reasons"] == report.json()["verdict"]["reasons"]
    assert gate["reasons"][0]["label"] == "Cohen's kappa"
    estimate = service.get("/api/v1/estimate?rubric=correct&model=judge-model", tokens["read"])
    assert estimate.status_code == 200
    assert estimate.json() == report.json()["estimate"]
    assert all(f'"{key}"' in estimate.text for key in ("judge_only", "labels_only", "ppi"))


def _sha_of(db: Path) -> str:
    with open_store(db) as store:
        return _sha(store)


def test_tokens_never_in_clear(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, db = served
    login = __import__("httpx2").post(service.url + "/login", data={"token": tokens["ana"]})
    assert login.status_code == 303
    raw = b"".join(p.read_bytes() for p in db.parent.glob("judgekit.db*"))
    text = service.log()
    for value in tokens.values():
        assert value.encode() not in raw
        assert value not in text
    response = service.get("/api/v1/openapi.json", tokens["read"])
    assert all(value not in response.text for value in tokens.values())


def test_revoked_token_is_refused(served: tuple[Service, dict[str, str], Path]) -> None:
    service, _, db = served
    with open_store(db) as store:
        fresh = token(store, "temp", "read")
    assert service.get("/api/v1/rubrics", fresh).status_code == 200
    result = CliRunner().invoke(cli, ["tokens", "revoke", "--db", str(db), "--name", "temp"])
    assert result.exit_code == 0, result.output
    assert service.get("/api/v1/rubrics", fresh).status_code == 401


def test_login_sets_an_http_only_cookie(served: tuple[Service, dict[str, str], Path]) -> None:
    """The token goes in a POSTed form (tests/integration/test_serve_login.py has the rest)."""
    service, tokens, _ = served
    response = __import__("httpx2").post(service.url + "/login", data={"token": tokens["ana"]},
                                         follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/annotate"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_a_lead_lands_on_progress_agreement_report_and_disagreements(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    """A read or admin token has a page at /: progress per annotator, the decision and its
    reasons, a link to the report, and the items to adjudicate; an annotator is sent on."""
    service, tokens, db = served
    for item_id in queue_items(db, "ana")[:3]:  # ana and bo disagree on a shared item
        assert service.post("/api/v1/labels", {"rubric": "correct", "labels": [
            {"item_id": item_id, "label": "pass"}]}, tokens["ana"]).status_code == 200
    shared = set(queue_items(db, "ana")) & set(queue_items(db, "bo"))
    split = sorted(shared)[0]
    for who, label in (("ana", "pass"), ("bo", "fail")):
        assert service.post("/api/v1/labels", {"rubric": "correct", "labels": [
            {"item_id": split, "label": label}]}, tokens[who]).status_code == 200
    for role in ("read", "admin"):
        page = service.get("/", tokens[role], follow_redirects=True)  # / sends it to /lead
        assert page.status_code == 200, page.text
        text = page.text
        assert "correct 1" in text and "<td>ana</td>" in text and "<td>bo</td>" in text
        # the decision with a link to the report, or (earlier tests imported a second
        # judge's verdicts) why there is no single report yet
        assert ('href="/report/' in text and "(judge vs people)" in text) or (
            "No report yet: judgments of 2 judges exist" in text)
        assert f"<td>d/{split}</td><td>no majority</td>" in text and "--adjudicate" in text
    anonymous = service.get("/")
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login"
    login = __import__("httpx2").post(service.url + "/login", data={
        "token": tokens["read"], "next": "/"}, follow_redirects=False)
    assert login.status_code == 303 and login.headers["location"] == "/lead"
    sent = service.get("/", tokens["ana"], follow_redirects=False)
    assert sent.status_code == 303 and sent.headers["location"] == "/annotate"
