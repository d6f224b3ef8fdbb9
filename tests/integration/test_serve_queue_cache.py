"""The annotate pages of ``judgekit serve`` read who is assigned which queue once, until a queue
is saved, replaced or deleted. Real HTTP to the app behind uvicorn on 127.0.0.1 (in this
process, so the queue reads can be counted), a real SQLite store written by a second
connection as ``judgekit queue assign`` would."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from judgekit.store import Store, open_store
from judgekit.store.labels import QueueEntry
from tests.support.annotate import seed_store
from tests.support.serve import service_in_thread, token

REQUESTS = 8


def entries(n: int) -> list[QueueEntry]:
    return [QueueEntry(i, "d", f"item-{i:03d}", 1.0) for i in range(n)]


def page(url: str, key: str, query: str = "") -> str:
    response = httpx.get(f"{url}/annotate{query}", headers={"Authorization": f"Bearer {key}"},
                         timeout=60)
    assert response.status_code == 200, response.text
    return response.text


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "uncached"])
def test_annotate_pages_read_the_queues_once_until_a_queue_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 12)
        ana, bo = token(store, "ana", "annotate"), token(store, "bo", "annotate")
        store.save_queue("q:ana", rub.sha256, "random", 1, entries(5),
                         params={"annotator": "ana"})
        store.save_queue("q:bo", rub.sha256, "random", 1, entries(3), params={"annotator": "bo"})
    reads: Counter[str] = Counter()
    original = Store.get_queue

    def counted(self: Store, name: str) -> Any:
        if threading.current_thread() is not threading.main_thread():  # the server's reads
            reads[name] += 1
        return original(self, name)

    monkeypatch.setattr(Store, "get_queue", counted)
    with service_in_thread(db, cache=cache) as service:
        for _ in range(REQUESTS):
            assert "/annotate/ws/q%3Aana" in page(service.url, ana)  # her one queue
            assert "/annotate/ws/q%3Abo" in page(service.url, bo)
        assert reads == ({"q:ana": 1, "q:bo": 1} if cache
                         else {"q:ana": 2 * REQUESTS, "q:bo": 2 * REQUESTS})
        with open_store(db) as store:  # another process assigns ana a second queue
            store.save_queue("q2:ana", rub.sha256, "stratified", 2, entries(7),
                             params={"annotator": "ana"})
        listing = page(service.url, ana)
        assert "q2:ana</a> (7 items)" in listing and "q:ana</a> (5 items)" in listing
        with open_store(db) as store:  # the newest queue replaced: same name, other size
            store.save_queue("q2:ana", rub.sha256, "stratified", 3, entries(4),
                             params={"annotator": "ana"}, replace=True)
        assert "q2:ana</a> (4 items)" in page(service.url, ana)
        with open_store(db) as store:  # bo's queue given to ana instead
            store.save_queue("q:bo", rub.sha256, "random", 9, entries(3),
                             params={"annotator": "ana"}, replace=True)
        assert "q:bo</a> (3 items)" in page(service.url, ana)
        assert "No queue is assigned to you yet" in page(service.url, bo)
        assert page(service.url, ana, "?queue=q%3Abo").count("/annotate/ws/q%3Abo") == 1
        if cache:  # read again once after each change, never per request
            assert reads == {"q:ana": 4, "q:bo": 4, "q2:ana": 3}


def test_the_queues_marker_moves_on_every_change(tmp_path: Path) -> None:
    with open_store(tmp_path / "judgekit.db") as store:
        rub, _ = seed_store(store, "binary", 4)
        seen = [store.queues_marker()]
        store.save_queue("a", rub.sha256, "random", 1, entries(2))
        seen.append(store.queues_marker())
        store.save_queue("a", rub.sha256, "random", 1, entries(2))  # identical: no change
        assert store.queues_marker() == seen[-1]
        store.save_queue("a", rub.sha256, "random", 2, entries(3), replace=True)  # newest row
        seen.append(store.queues_marker())
        store.save_queue("b", rub.sha256, "random", 1, entries(1))
        seen.append(store.queues_marker())
        store.save_queue("a", rub.sha256, "random", 3, entries(1), replace=True)  # older row
        seen.append(store.queues_marker())
    assert len(set(seen)) == len(seen)


def _post(url: str, key: str, item_id: str) -> httpx.Response:
    return httpx.post(f"{url}/api/v1/labels", headers={"Authorization": f"Bearer {key}"},
                      json={"rubric": "correct", "labels": [{"item_id": item_id,
                                                             "label": "pass"}]}, timeout=60)


def test_annotate_label_posts_read_the_queues_once_until_a_queue_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each label an annotate token POSTed used to read every queue with all its entries."""
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 12)
        ana = token(store, "ana", "annotate")
        store.save_queue("q:ana", rub.sha256, "random", 1, entries(5),
                         params={"annotator": "ana"})
        store.save_queue("q:bo", rub.sha256, "random", 1, entries(12), params={"annotator": "bo"})
    reads: Counter[str] = Counter()
    original = Store.get_queue

    def counted(self: Store, name: str) -> Any:
        if threading.current_thread() is not threading.main_thread():
            reads[name] += 1
        return original(self, name)

    monkeypatch.setattr(Store, "get_queue", counted)
    with service_in_thread(db) as service:
        for n in range(REQUESTS):
            assert _post(service.url, ana, f"item-{n % 5:03d}").status_code == 200
        outside = _post(service.url, ana, "item-007")
        assert outside.status_code == 422 and "not in a queue assigned to ana" in outside.text
        assert reads == {"q:ana": 1, "q:bo": 1}
        with open_store(db) as store:  # ana gets more items: the next POST sees them
            store.save_queue("q:ana", rub.sha256, "random", 2, entries(9),
                             params={"annotator": "ana"}, replace=True)
        assert _post(service.url, ana, "item-007").status_code == 200
        assert reads == {"q:ana": 2, "q:bo": 2}
