"""Three annotators labeling through the API while a judge run writes the same store."""

from __future__ import annotations

from pathlib import Path

from judgekit.store import open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import (
    assign_queues,
    judge_writing,
    post_labels_concurrently,
    running_service,
    token,
)

ITEMS = 60


def test_no_lock_errors_and_nothing_lost_under_load(tmp_path: Path) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", ITEMS)
        record_judgments(store, rub, [judgment(rub, "d", it.id, "pass", run_id="writer")
                                      for it in items[:1]])
        tokens = {name: token(store, name, "annotate") for name in ("ana", "bo", "cy")}
    assign_queues(db, rub.sha256, "ana,bo,cy", "--overlap", "0")
    with open_store(db) as store:
        work = {}
        for name, tok in tokens.items():
            queue = next(q for q in store.list_queues() if q.endswith(f":{name}"))
            found = store.get_queue(queue)
            assert found is not None
            work[name] = (tok, [entry.item_id for entry in found[1]])
    with running_service(db, tmp_path) as service, judge_writing(db, tmp_path, "binary",
                                                                  ITEMS) as written:
        latencies, statuses = post_labels_concurrently(service, work, rub.sha256)
    assert statuses == [200] * ITEMS
    assert "locked" not in service.log().lower()
    assert written[0] > 0
    with open_store(db) as store:
        labels = store.latest_labels(rub.sha256)
        assert len(labels) == ITEMS
        assert {lb.annotator for lb in labels} == {"ana", "bo", "cy"}
        assert store.count_judgments(rubric_hash=rub.sha256) == 1 + written[0]
    assert len(latencies) == ITEMS


def test_kill_9_mid_load_loses_no_acknowledged_label(tmp_path: Path) -> None:
    """Every label answered 200 is in the store after the server is killed mid-load."""
    import os
    import signal
    import threading
    import time

    import httpx2 as httpx

    db = tmp_path / "judgekit.db"
    names = ("ana", "bo", "cy", "dee")
    with open_store(db) as store:
        rub, _ = seed_store(store, "binary", 400)
        tokens = {name: token(store, name, "annotate") for name in names}
    assign_queues(db, rub.sha256, ",".join(names), "--overlap", "0")
    with open_store(db) as store:
        mine = {}
        for name in names:
            queue = next(q for q in store.list_queues() if q.endswith(f":{name}"))
            found = store.get_queue(queue)
            assert found is not None
            mine[name] = [entry.item_id for entry in found[1]]
    acknowledged: list[tuple[str, str]] = []
    lock = threading.Lock()
    with running_service(db, tmp_path) as service:
        def annotator(name: str) -> None:
            with httpx.Client(base_url=service.url, timeout=30,
                              headers={"Authorization": f"Bearer {tokens[name]}"}) as client:
                for item_id in mine[name]:
                    try:
                        response = client.post("/api/v1/labels", json={
                            "rubric": rub.sha256, "labels": [{"item_id": item_id,
                                                              "label": "pass"}]})
                    except httpx.HTTPError:
                        return  # the server is gone
                    if response.status_code == 200:
                        with lock:
                            acknowledged.append((name, item_id))

        threads = [threading.Thread(target=annotator, args=(n,)) for n in names]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 120
        while len(acknowledged) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(service.process.pid, signal.SIGKILL)
        for thread in threads:
            thread.join(timeout=60)
    assert len(acknowledged) >= 40
    assert len(acknowledged) < 400  # killed mid-load
    with open_store(db) as store:
        stored = {(lb.annotator, lb.item_id) for lb in store.latest_labels(rub.sha256)}
    assert set(acknowledged) <= stored
