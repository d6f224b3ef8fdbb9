"""The lead's landing page over real HTTP on 127.0.0.1: what each role sees after logging in.

A ``read`` token used to be refused at login ("may not annotate here") and an admin
saw "No queue is assigned to you yet"; ``/`` was a 404. Now ``/`` sends each role to
its page, ``/lead`` shows progress, agreement so far, the report and the items to
adjudicate to the roles that may see them, and an ``annotate`` token gets none of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx
import pytest

from judgekit.store import open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import Service, assign_queues, running_service, token

N_ITEMS = 24


def _judge_says(index: int) -> str:
    return "pass" if index % 3 else "fail"


def seed_lead_store(db: Path) -> tuple[str, dict[str, str], list[dict[str, str]]]:
    """24 judged items shared out to ana and bo with overlap, and the labels to post (bo
    disagrees on some shared items); returns the rubric's sha256, a token per role, labels."""
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", N_ITEMS)
        record_judgments(store, rub, [judgment(rub, "d", item.id, _judge_says(i))
                                      for i, item in enumerate(items)])
        tokens = {role: token(store, name, role) for name, role in (
            ("ana", "annotate"), ("writer", "write"), ("ada", "adjudicate"), ("root", "admin"),
            ("reader", "read"))}
    assign_queues(db, rub.sha256, "ana,bo", "--overlap", "0.5", "--seed", "0")
    with open_store(db) as store:
        labels = []
        for name in store.list_queues():
            found = store.get_queue(name)
            assert found is not None
            who = found[0]["params"]["annotator"]
            for entry in found[1]:
                i = int(entry.item_id.split("-")[1])
                said = _judge_says(i)
                if who == "bo" and i % 2 == 0:
                    said = "fail" if said == "pass" else "pass"
                labels.append({"item_id": entry.item_id, "label": said, "annotator": who})
    return rub.sha256, tokens, labels


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, str],
                                                                        str]]:
    tmp = tmp_path_factory.mktemp("lead")
    db = tmp / "judgekit.db"
    sha, tokens, labels = seed_lead_store(db)
    with running_service(db, tmp) as service:
        posted = service.post("/api/v1/labels", {"rubric": sha, "labels": labels},
                              tokens["write"])
        assert posted.status_code == 200, posted.text
        yield service, tokens, sha


@contextmanager
def _logged_in(service: Service, secret: str) -> Iterator[tuple[httpx.Client, httpx.Response]]:
    """A browser-like client after posting the login form (cookie kept), and where it
    landed (the form's ``next`` left to its default)."""
    with httpx.Client(base_url=service.url, timeout=60, follow_redirects=True) as client:
        yield client, client.post("/login", data={"token": secret})


def test_root_redirects_to_login_or_the_roles_page(
        served: tuple[Service, dict[str, str], str]) -> None:
    service, tokens, _ = served
    anonymous = service.get("/", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/login"
    for role, page in (("read", "/lead"), ("admin", "/lead"), ("adjudicate", "/lead"),
                       ("annotate", "/annotate")):
        answer = service.get("/", tokens[role], follow_redirects=False)
        assert (answer.status_code, answer.headers["location"]) == (303, page), role


def test_a_read_token_sees_progress_agreement_and_the_report(
        served: tuple[Service, dict[str, str], str]) -> None:
    service, tokens, sha = served
    with _logged_in(service, tokens["read"]) as (client, landed):
        assert landed.status_code == 200, landed.text
        assert str(landed.url) == f"{service.url}/lead"  # straight there, not via /
        page = landed.text
        for shown in ("Progress", "<td>ana</td>", "<td>bo</td>", "Judge vs people",
                      "People vs people", f'href="/report/{sha}"', "To adjudicate",
                      "--adjudicate --annotator NAME"):
            assert shown in page, shown
        assert "/adjudicate?" not in page  # read may not adjudicate
        report = client.get(f"/report/{sha}")
        assert report.status_code == 200 and report.text.lstrip().lower().startswith(
            "<!doctype html"), report.text[:200]


def test_an_annotate_token_gets_no_lead_data(
        served: tuple[Service, dict[str, str], str]) -> None:
    service, tokens, sha = served
    for path in ("/lead", f"/lead?rubric={sha}", f"/adjudicate?rubric={sha}"):
        answer = service.get(path, tokens["annotate"])
        assert answer.status_code == 403, (path, answer.text)
        assert "bo" not in answer.text
    with _logged_in(service, tokens["annotate"]) as (_, landed):
        assert str(landed.url) == f"{service.url}/annotate"
        assert "Judge vs people" not in landed.text


def test_admin_and_adjudicate_tokens_may_adjudicate_in_the_browser(
        served: tuple[Service, dict[str, str], str]) -> None:
    service, tokens, sha = served
    admin = service.get("/lead", tokens["admin"]).text
    assert 'href="/lead"' in service.get("/annotate", tokens["admin"]).text  # was a dead end
    assert "Progress" in admin and f'href="/adjudicate?rubric={sha}"' in admin
    judge = service.get("/lead", tokens["adjudicate"])
    assert judge.status_code == 200
    assert f'href="/adjudicate?rubric={sha}"' in judge.text
    assert "Judge vs people" not in judge.text and "Progress" not in judge.text
    terminal = service.get(f"/adjudicate?rubric={sha}", tokens["adjudicate"])
    assert terminal.status_code == 200 and f"/adjudicate/ws/{sha}" in terminal.text
    assert service.get(f"/adjudicate?rubric={sha}", tokens["read"]).status_code == 403


def test_stored_text_is_escaped_on_the_page(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        seed_store(store, "binary", 4)
        reader = token(store, "<script>alert(1)</script>", "read")
    with running_service(db, tmp_path) as service:
        page = service.get("/lead", reader)
    assert page.status_code == 200, page.text
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text


def test_nothing_to_adjudicate_is_a_page_not_a_session(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 4)
        ada = token(store, "ada", "adjudicate")
    with running_service(db, tmp_path) as service:
        page = service.get(f"/adjudicate?rubric={rub.sha256}", ada)
    assert page.status_code == 200
    assert "Nothing to adjudicate" in page.text and "/adjudicate/ws/" not in page.text


def test_the_adjudication_socket_checks_role_and_origin(
        served: tuple[Service, dict[str, str], str]) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    service, tokens, sha = served
    url = service.url.replace("http://", "ws://") + f"/adjudicate/ws/{sha}"
    for who, origin in (("annotate", service.url), ("read", service.url),
                        ("admin", "http://evil.example"), ("admin", "http://127.0.0.1:1")):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=origin, open_timeout=30,
                    additional_headers={"Cookie": f"judgekit_token={tokens[who]}"})
        assert refused.value.response.status_code == 403, (who, origin)
    with pytest.raises(InvalidStatus):
        connect(url.replace(sha, "0" * 64), origin=service.url, open_timeout=30,
                additional_headers={"Cookie": f"judgekit_token={tokens['admin']}"})


def test_several_rubrics_are_picked_from_a_list(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        first, _ = seed_store(store, "binary", 4)
        second, _ = seed_store(store, "categorical", 4, dataset="e")
        reader = token(store, "lee", "read")
    with running_service(db, tmp_path) as service:
        listing = service.get("/lead", reader).text
        chosen = service.get(f"/lead?rubric={second.name}", reader)
        unknown = service.get("/lead?rubric=nope", reader)
    assert "Pick a rubric." in listing and "Progress" not in listing
    for rub in (first, second):
        assert f'href="/lead?rubric={rub.sha256}"' in listing
    assert chosen.status_code == 200 and "Progress" in chosen.text
    assert f"<h2>{second.name} " in chosen.text and f"<h2>{first.name} " not in chosen.text
    assert unknown.status_code == 404
