"""Who may say what about a label over ``POST /api/v1/labels``, on a real server on 127.0.0.1.

An adjudication overrides every annotator of its item in the reports, so an
annotate token must not be able to post one (it used to: the label's ``source``
came from the request, and a blind annotator could flip the gate from PASS to
FAIL); nor may it backdate a label or unblind it. Adjudication needs the
``adjudicate`` role (or ``admin``) and is recorded as one.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from judgekit.store import open_store
from judgekit.types import ADJUDICATED_SOURCE
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

N_ITEMS = 60


def _judge_says(index: int) -> str:
    return "pass" if index % 3 else "fail"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, str],
                                                                        Path]]:
    """60 items the judge labeled, two people who agree with it on every item, and tokens."""
    tmp = tmp_path_factory.mktemp("roles")
    db = tmp / "judgekit.db"
    store = open_store(db)
    rub, items = seed_store(store, "binary", N_ITEMS)
    record_judgments(store, rub, [judgment(rub, "d", item.id, _judge_says(i))
                                  for i, item in enumerate(items)])
    tokens = {name: token(store, name, role) for name, role in (
        ("ana", "annotate"), ("writer", "write"), ("ada", "adjudicate"), ("root", "admin"),
        ("reader", "read"))}
    store.close()
    assign_queues(db, rub.sha256, "ana,bo")
    with running_service(db, tmp) as service:
        labels = [{"item_id": f"item-{i:03d}", "label": _judge_says(i), "annotator": who}
                  for i in range(N_ITEMS) for who in ("x", "y")]
        posted = service.post("/api/v1/labels", {"rubric": "correct", "labels": labels},
                              tokens["writer"])
        assert posted.status_code == 200, posted.text
        yield service, tokens, db


def _ana_items(db: Path) -> list[str]:
    with open_store(db) as store:
        name = next(n for n in store.list_queues() if n.endswith(":ana"))
        found = store.get_queue(name)
        assert found is not None
        return [entry.item_id for entry in found[1]]


def _gate(service: Service, tokens: dict[str, str]) -> str:
    response = service.get("/api/v1/gate?rubric=correct&model=judge-model", tokens["reader"])
    assert response.status_code == 200, response.text
    return str(response.json()["decision"])


def _adjudications(db: Path) -> list[tuple[str, str | None, str, str]]:
    with open_store(db) as store:
        sha = store.list_rubrics()[0]["sha256"]
        return [(lb.item_id, lb.label, lb.annotator, lb.source)
                for lb in store.adjudicated_labels(sha)]


def test_an_annotate_token_cannot_adjudicate_or_flip_the_gate(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    service, tokens, db = served
    assert _gate(service, tokens) == "PASS"
    flipped = [{"item_id": i, "label": "fail" if _judge_says(int(i[-3:])) == "pass" else "pass",
                "source": ADJUDICATED_SOURCE} for i in _ana_items(db)]
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": flipped},
                            tokens["ana"])
    assert response.status_code == 403, response.text
    assert "labels:1: field 'source'" in response.text and "may not adjudicate" in response.text
    assert _adjudications(db) == []
    assert _gate(service, tokens) == "PASS"


def test_the_server_stamps_an_annotators_label(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    service, tokens, db = served
    item = _ana_items(db)[0]
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": item, "label": "pass", "created_at": "2001-01-01T00:00:00+00:00",
         "blind": False, "source": "import"}]}, tokens["ana"])
    assert response.status_code == 200, response.text
    with open_store(db) as store:
        sha = store.list_rubrics()[0]["sha256"]
        label = next(lb for lb in store.latest_labels(sha) if lb.annotator == "ana")
    assert (label.item_id, label.blind, label.source) == (item, True, "annotate")
    stamped = datetime.fromisoformat(label.created_at)
    assert abs(stamped - datetime.now(UTC)) < timedelta(minutes=5)


def test_a_write_token_may_not_adjudicate(served: tuple[Service, dict[str, str], Path]) -> None:
    service, tokens, db = served
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "item-001", "label": "pass", "annotator": "x"},
        {"item_id": "item-002", "label": "fail", "annotator": "x", "source": "adjudicate"}]},
        tokens["writer"])
    assert response.status_code == 403 and "labels:2: field 'source'" in response.text
    assert _adjudications(db) == []


def test_adjudicate_and_admin_tokens_adjudicate_as_such(
    served: tuple[Service, dict[str, str], Path],
) -> None:
    service, tokens, db = served
    other = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "item-004", "label": "fail", "annotator": "x"}]}, tokens["ada"])
    assert other.status_code == 422 and "your own name 'ada'" in other.text
    response = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "item-004", "label": "fail", "created_at": "2001-01-01"}]}, tokens["ada"])
    assert response.status_code == 200, response.text
    root = service.post("/api/v1/labels", {"rubric": "correct", "labels": [
        {"item_id": "item-005", "label": "pass", "annotator": "lead",
         "source": ADJUDICATED_SOURCE}]}, tokens["root"])
    assert root.status_code == 200, root.text
    assert _adjudications(db) == [("item-004", "fail", "ada", ADJUDICATED_SOURCE),
                                  ("item-005", "pass", "lead", ADJUDICATED_SOURCE)]
    # an adjudicate token reads nothing and labels nothing else
    assert service.get("/api/v1/report?rubric=correct", tokens["ada"]).status_code == 403
    assert service.get("/api/v1/queues", tokens["ada"]).status_code == 403
