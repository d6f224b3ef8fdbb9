"""``POST /api/v1/labels`` parses a rubric once and indexes a dataset's items once, until
items are added. Real HTTP to the app behind uvicorn on 127.0.0.1 (in this process, so the
parser and the index builder can be counted)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judgekit import rubrics
from judgekit.io import fields
from judgekit.store import open_store
from tests.support.annotate import make_items, seed_store
from tests.support.serve import service_in_thread, token

POSTS = 12


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str,
             calls: Counter[str]) -> None:
    original: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "uncached"])
def test_label_posts_parse_the_rubric_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           cache: bool) -> None:
    db = tmp_path / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", POSTS + 2)
        writer = token(store, "lead", "write")
    calls: Counter[str] = Counter()
    counting(monkeypatch, rubrics, "rubric_from_text", calls)
    counting(monkeypatch, fields, "item_dataset_index", calls)
    with service_in_thread(db, cache=cache) as service:
        for n, item in enumerate(items[:POSTS]):
            rubric = rub.name if n % 2 else rub.sha256  # by name or sha256: one rubric
            response = service.post("/api/v1/labels", {"rubric": rubric, "labels": [
                {"item_id": item.id, "annotator": "ana", "label": "pass"}]}, writer)
            assert response.status_code == 200, response.text
        expected = 1 if cache else POSTS
        assert calls == {"rubric_from_text": expected, "item_dataset_index": expected}
        # an unknown item is still refused from the cached index, nothing stored
        response = service.post("/api/v1/labels", {"rubric": rub.sha256, "labels": [
            {"item_id": "new-000", "annotator": "ana", "label": "pass"}]}, writer)
        assert response.status_code == 422 and "unknown item id 'new-000'" in response.text
        # items added to the dataset: the next request sees them
        with open_store(db) as store:
            store.import_items("d", make_items("binary", 1, prefix="new"))
        response = service.post("/api/v1/labels", {"rubric": rub.sha256, "labels": [
            {"item_id": "new-000", "annotator": "ana", "label": "fail"}]}, writer)
        assert response.status_code == 200, response.text
        assert calls["rubric_from_text"] == (1 if cache else POSTS + 2)
        assert calls["item_dataset_index"] == (2 if cache else POSTS + 2)
        # a label naming its dataset uses that dataset's own index
        response = service.post("/api/v1/labels", {"rubric": rub.sha256, "dataset": "d",
                                                   "labels": [{"item_id": items[-1].id,
                                                               "annotator": "bo",
                                                               "label": "pass"}]}, writer)
        assert response.status_code == 200, response.text
    with open_store(db) as store:
        stored = store.latest_labels(rub.sha256)
    assert len(stored) == POSTS + 2
    assert {lb.item_id for lb in stored if lb.label == "fail"} == {"new-000"}
