"""Report builds over real HTTP on 127.0.0.1: bounded in time and in number.

One legal POST (100,000 labels from as many annotators) once made every gate and
report cost minutes and gigabytes inside the server, and any number of them could
run at once.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx2 as httpx

from judgekit.store import open_store
from judgekit.types import Label
from tests.support.annotate import judgment, record_judgments, seed_store
from tests.support.serve import running_service, token

N_ANNOTATORS = 20_000
N_ITEMS = 2_000


def crowd_store(tmp: Path) -> tuple[Path, str, str]:
    """2,000 items a judge labeled, and 5 labels by each of 20,000 annotators.

    A report on it takes seconds (25 items with one label each once took minutes, until
    the human ceiling stopped building annotators x items tables)."""
    db = tmp / "judgekit.db"
    with open_store(db) as store:
        rub, items = seed_store(store, "binary", N_ITEMS)
        record_judgments(store, rub, [judgment(rub, "d", it.id, "pass" if i % 2 else "fail")
                                      for i, it in enumerate(items)])
        store.add_labels([Label("d", items[(k * 5 + j * 397) % N_ITEMS].id, rub.sha256, f"a{k}",
                                "pass" if (k * 7 + j) % 3 else "fail")
                          for k in range(N_ANNOTATORS) for j in range(5)])
        return db, token(store, "ci", "read"), rub.sha256


def test_a_slow_report_is_503_with_the_reason(tmp_path: Path) -> None:
    db, ci, _ = crowd_store(tmp_path)
    args = ("--report-timeout", "1", "--max-report-builds", "1")
    with running_service(db, tmp_path, args=args) as service:
        slow = service.get("/api/v1/gate?rubric=correct", ci)
        assert slow.status_code == 503, slow.text
        assert "longer than 1 s" in slow.json()["detail"] and "--report-timeout" in slow.text
        # the first build still runs in the background and holds the only place
        busy = service.get("/api/v1/report?rubric=correct", ci)
        assert busy.status_code == 503 and "--max-report-builds" in busy.text
        assert busy.headers["retry-after"] == "10"
        assert service.get("/api/v1/rubrics", ci).status_code == 200  # the rest still answers
    assert "Traceback" not in service.log()


def test_report_builds_are_limited_in_number(tmp_path: Path) -> None:
    db, ci, _ = crowd_store(tmp_path)
    args = ("--report-timeout", "600", "--max-report-builds", "1")
    with running_service(db, tmp_path, args=args) as service:
        statuses: list[int] = []
        bodies: list[str] = []

        def ask() -> None:
            answer = httpx.get(service.url + "/api/v1/gate?rubric=correct&resamples=100",
                               headers={"Authorization": f"Bearer {ci}"}, timeout=600)
            statuses.append(answer.status_code)
            bodies.append(answer.text[:300])

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert sorted(statuses) == [200, 503, 503], (statuses, bodies)
