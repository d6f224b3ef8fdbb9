"""Three annotators labeling through the API while a judge run writes the same store."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judgekit.cli.main import cli
from judgekit.store import open_store
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import (
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
    assert CliRunner().invoke(cli, ["queue", "assign", "--db", str(db), "--rubric", rub.sha256,
                                    "--annotators", "ana,bo,cy", "--overlap", "0"]).exit_code == 0
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
